package reference

import (
	"time"

	"github.com/agentconform/agentconform/reference/unified"
)

// unifiedRenderer turns facts into unified events, stamping each with a
// fresh id, the session id and the clock.
type unifiedRenderer struct {
	agent Agent
	opts  Options
	clock func() time.Time
	newID func() string
	sid   string
}

func newUnifiedRenderer(agent Agent, opts Options) *unifiedRenderer {
	return &unifiedRenderer{agent: agent, opts: opts, clock: opts.clock(), newID: opts.newID()}
}

func (r *unifiedRenderer) base() unified.Base {
	return unified.Base{ID: r.newID(), SessionID: r.sid, Timestamp: r.clock().UTC().Format(time.RFC3339Nano)}
}

func (r *unifiedRenderer) render(f fact) []unified.Event {
	switch f := f.(type) {
	case factSession:
		r.sid = f.id
		cfg := &unified.SessionConfig{
			AgentType:        string(r.agent),
			WorkingDirectory: first(f.cwd, r.opts.Cwd),
			Model:            first(f.model, r.opts.Model),
			ApprovalMode:     f.approvalMode,
			SandboxMode:      f.sandboxMode,
		}
		return []unified.Event{&unified.SessionStarted{Base: r.base(), AgentType: string(r.agent), Config: cfg}}
	case factPrompt:
		return []unified.Event{&unified.TextChunk{Base: r.base(), Content: f.text, Role: unified.RolePtr(unified.RoleUser)}}
	case factText:
		return []unified.Event{r.text(f.kind, f.text, f.partial)}
	case factToolStart:
		return []unified.Event{&unified.ToolStarted{Base: r.base(), ToolID: f.id, ToolName: f.name, Arguments: f.input}}
	case factToolProgress:
		return []unified.Event{&unified.ToolProgress{Base: r.base(), ToolID: f.id, Output: f.output}}
	case factToolEnd:
		return []unified.Event{&unified.ToolCompleted{Base: r.base(), ToolID: f.id, Success: f.ok, Result: f.result, Error: f.errText}}
	case factFile:
		return []unified.Event{&unified.FileChanged{Base: r.base(), FilePath: f.path, ChangeType: f.change}}
	case factTurnEnd:
		return r.turnEnd(f)
	case factSessionEnd:
		return []unified.Event{&unified.SessionEnded{Base: r.base(), Reason: f.reason, Error: f.errText, FinalUsage: f.total.unified()}}
	}
	return nil // factTurnBegin: the prompt is the caller's own, not the CLI's
}

func (r *unifiedRenderer) text(kind textKind, text string, partial bool) unified.Event {
	var role *unified.Role
	switch kind {
	case textAnswer:
		role = unified.RolePtr(unified.RoleAssistant)
	case textUser:
		role = unified.RolePtr(unified.RoleUser)
	}
	return &unified.TextChunk{Base: r.base(), Content: text, IsPartial: partial, Role: role}
}

// turnEnd renders a turn the CLI closed as turnCompleted. The error strings
// of a failed turn that does not end the session (Claude keeps going) are
// text with no role, so that they reach the caller; when the turn ends the
// session, sessionEnded carries the error instead. A turn the CLI never
// closed (interrupted, or the CLI died) has no turnCompleted.
func (r *unifiedRenderer) turnEnd(f factTurnEnd) []unified.Event {
	if f.term == nil {
		return nil
	}
	var out []unified.Event
	if f.term.failed && !f.sessionOver {
		for _, e := range f.term.errors {
			out = append(out, r.text(textNotice, e, false))
		}
	}
	return append(out, &unified.TurnCompleted{Base: r.base(), Usage: f.term.usage.unified(), DurationMs: f.term.durationMs})
}

// first returns the first non-empty string.
func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
