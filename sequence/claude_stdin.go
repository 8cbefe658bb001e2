package sequence

import (
	"github.com/agentconform/agentconform/finding"
)

// claudeStdin checks lines written to Claude Code's stdin: the control
// envelope of interrupts, line types that only make sense on stdout, and
// (through the shared control ledger) request ids and responses.
type claudeStdin struct {
	ctl *control
}

// claudeStdoutOnly are the stdout message types (docs/protocols/claude.md#stdout) that
// have no meaning on stdin. Types in neither list are unknown and ignored.
var claudeStdoutOnly = map[string]bool{
	"system": true, "assistant": true, "result": true, "stream_event": true,
	"tool_progress": true, "tool_use_summary": true, "auth_status": true,
	"rate_limit_event": true, "prompt_suggestion": true, "conversation_reset": true,
	"active_goal": true,
}

// observe checks one stdin line; ev.Dir must be In.
func (s *claudeStdin) observe(ev Event, report func(finding.Finding)) {
	if ev.Obj == nil {
		return
	}
	typ, _ := str(ev.Obj, "type")
	if s.bareInterrupt(ev, typ, report) {
		return
	}
	switch typ {
	case "control_request":
		s.ctl.request(ev, report)
	case "control_response":
		s.ctl.response(ev, report)
	case "control_cancel_request":
		s.ctl.cancel(ev, report)
	case "user", "keep_alive":
		// session_id on stdin is free-form ("" from query(), "default"
		// from ClaudeSDKClient, or a caller's choice); the CLI keeps its own.
	default:
		if claudeStdoutOnly[typ] {
			report(at(ev).finding(ClaudeStdinDirection, "/type",
				"%s is a stdout message type; written to stdin it does nothing", quote(typ)))
		}
	}
}

// bareInterrupt reports an interrupt written without the control envelope:
// {"subtype":"interrupt"} (no type, or type "interrupt"), or a
// control_request whose subtype sits at the top level instead of inside
// "request". The CLI ignores such a line, so the turn keeps running.
func (s *claudeStdin) bareInterrupt(ev Event, typ string, report func(finding.Finding)) bool {
	sub, _ := str(ev.Obj, "subtype")
	inner, _ := str(obj(ev.Obj, "request"), "subtype")
	var why string
	switch {
	case typ == "control_request":
		if inner == "" && sub == "interrupt" {
			why = `control_request with "subtype":"interrupt" at the top level instead of inside "request"`
		}
	case typ == "interrupt":
		why = `{"type":"interrupt"} is not a stdin message type`
	case typ == "" && (sub == "interrupt" || inner == "interrupt"):
		why = "interrupt without the control_request envelope"
	}
	if why == "" {
		return false
	}
	report(at(ev).finding(ClaudeStdinInterruptEnvelope, "",
		`%s: the CLI silently ignores this line, so nothing is interrupted; send {"type":"control_request","request_id":"…","request":{"subtype":"interrupt"}}`, why))
	return true
}

// claudeStdinChecker is the "claude-stdin" dialect: a stdin file on its
// own. Every event is taken as In whatever its Dir says, since callers of a
// single-direction file leave Dir at its zero value.
type claudeStdinChecker struct {
	s claudeStdin
}

func newClaudeStdinChecker() *claudeStdinChecker {
	return &claudeStdinChecker{s: claudeStdin{ctl: &control{}}}
}

// Observe checks one stdin line.
func (c *claudeStdinChecker) Observe(ev Event, report func(finding.Finding)) {
	ev.Dir = In
	c.s.observe(ev, report)
}

// End has nothing to report: without stdout, no request can be known to
// be unanswered.
func (c *claudeStdinChecker) End(report func(finding.Finding)) {}
