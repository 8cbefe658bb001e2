package reference

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The shim's line budget is about 100 KB (Yume's parser; the
// shim/line/max-size rule). Text is cut into pieces of at most
// shimChunkBytes, which stay under the budget even if every byte needs a
// six-byte JSON escape; tool results, inputs and error messages longer than
// that are clipped, with a note of how much was cut.
const (
	shimChunkBytes = 16 << 10
	shimInputBytes = 64 << 10
)

// shimRenderer turns facts into shim lines (docs/protocols/shim.md).
type shimRenderer struct {
	agent Agent
	opts  Options
	order shimOrder

	initDone    bool
	turn        int
	prompt      string // the current turn's prompt, waiting for the init
	promptDue   bool
	promptOut   bool   // the current turn's user line is out
	interrupted bool   // an interrupt line is out in this turn
	lastError   string // the last error line of this turn

	// snapshots holds the state of snapshot tools (todo lists) by id.
	snapshots map[string]*snapshotTool
}

// snapshotTool is a todo list the shim renders as one call per state.
type snapshotTool struct {
	name string
	n    int    // calls rendered so far
	last string // the last state rendered (compact JSON input)
}

func newShimRenderer(agent Agent, opts Options) *shimRenderer {
	return &shimRenderer{agent: agent, opts: opts}
}

func (r *shimRenderer) render(f fact) []ShimEvent {
	switch f := f.(type) {
	case factSession:
		if r.initDone {
			return nil
		}
		r.initDone = true
		mode := shimPermissionMode(f.permissionMode, r.opts.Permission)
		out := []ShimEvent{&ShimInit{SessionID: f.id, Model: first(f.model, r.opts.Model), Cwd: first(f.cwd, r.opts.Cwd), PermissionMode: mode, Tools: f.tools}}
		if r.promptDue {
			out = append(out, r.user(r.prompt))
		}
		return out
	case factTurnBegin:
		r.turn = f.turn
		r.promptDue, r.promptOut, r.interrupted, r.lastError = false, false, false, ""
		if f.prompt == "" {
			return nil
		}
		if !r.initDone {
			r.prompt, r.promptDue = f.prompt, true
			return nil
		}
		return []ShimEvent{r.user(f.prompt)}
	case factPrompt:
		if r.promptOut || r.promptDue {
			return nil // the caller's prompt is already (or about to be) out
		}
		return []ShimEvent{r.user(f.text)}
	case factText:
		return append(r.opening(), r.text(f)...)
	case factToolStart:
		if f.snapshot {
			if r.snapshots == nil {
				r.snapshots = map[string]*snapshotTool{}
			}
			st := &snapshotTool{name: f.shimName}
			r.snapshots[f.id] = st
			return append(r.opening(), r.snapshot(f.id, st, f.input)...)
		}
		input := f.input
		if len(input) > shimInputBytes {
			input = object("truncated_input", clip(string(input)))
		}
		return append(r.opening(), r.order.push(&ShimToolUse{ID: f.id, Name: f.shimName, Input: input})...)
	case factToolProgress:
		if st := r.snapshots[f.id]; st != nil {
			return append(r.opening(), r.snapshot(f.id, st, object("items", json.RawMessage(f.output)))...)
		}
	case factToolEnd:
		if st := r.snapshots[f.id]; st != nil {
			delete(r.snapshots, f.id)
			if !f.ok || !isObject(f.result) {
				return nil
			}
			return append(r.opening(), r.snapshot(f.id, st, f.result)...)
		}
		return append(r.opening(), r.order.push(&ShimToolResult{ToolUseID: f.id, Content: shimContent(f), IsError: !f.ok})...)
	case factTurnEnd:
		return append(r.opening(), r.turnEnd(f)...)
	}
	return nil // other progress, file changes and the session's end have no shim line
}

// snapshot renders one state of a snapshot tool as a tool_use answered at
// once, unless the state is the one rendered last. The first call keeps
// the tool's id; later ones are id.2, id.3, ...
func (r *shimRenderer) snapshot(id string, st *snapshotTool, input json.RawMessage) []ShimEvent {
	state := string(compact(input))
	if st.n > 0 && state == st.last {
		return nil
	}
	st.n++
	st.last = state
	callID := id
	if st.n > 1 {
		callID = id + "." + itoa(st.n)
	}
	out := r.order.push(&ShimToolUse{ID: callID, Name: st.name, Input: compact(input)})
	return append(out, r.order.push(&ShimToolResult{ToolUseID: callID, Content: jsonString("ok")})...)
}

// opening is the user line a later turn needs before its first line when
// neither the caller nor the CLI gave its prompt: after a result, only a
// user line may open a new turn.
func (r *shimRenderer) opening() []ShimEvent {
	if r.turn <= 1 || r.promptOut || !r.initDone {
		return nil
	}
	return []ShimEvent{r.user("")}
}

// shimPermissionMode is the shim's permissionMode (default, interactive,
// auto, deny): the adapter's policy when it has one, else Claude's own mode
// mapped, else default.
func shimPermissionMode(claudeMode string, p Permission) string {
	switch p {
	case PermissionAllow:
		return "auto"
	case PermissionDeny:
		return "deny"
	}
	switch claudeMode {
	case "bypassPermissions":
		return "auto"
	case "dontAsk":
		return "deny"
	}
	return "default"
}

func (r *shimRenderer) user(prompt string) ShimEvent {
	r.promptDue, r.promptOut = false, true
	return &ShimUser{Message: ShimUserMessage{Role: "user", Content: prompt}}
}

func (r *shimRenderer) text(f factText) []ShimEvent {
	var out []ShimEvent
	switch f.kind {
	case textAnswer:
		for _, piece := range chunks(f.text) {
			out = append(out, r.order.push(&ShimText{Content: piece})...)
		}
	case textReasoning:
		for _, piece := range chunks(f.text) {
			out = append(out, r.order.push(&ShimThinking{IsThinking: true, Thought: piece})...)
		}
	case textNotice:
		r.lastError = clip(f.text)
		out = r.order.push(&ShimError{Message: r.lastError})
	case textUser:
		// Claude's "[Request interrupted by user...]": a user line would
		// open a new turn, so it becomes the shim's interrupt line.
		if strings.Contains(f.text, "interrupted") && !r.interrupted {
			r.interrupted = true
			out = r.order.push(&ShimInterrupt{})
		}
	}
	return out
}

// shimContent is a tool result's content: a string as itself, an object
// as itself, anything else as its text; clipped to the line budget.
func shimContent(f factToolEnd) json.RawMessage {
	res := f.result
	if isNull(res) {
		return jsonString(clip(f.errText))
	}
	if isObject(res) && len(res) <= shimChunkBytes {
		return res
	}
	if f.isText && utf8.ValidString(f.text) {
		if f.detail != "" && !strings.Contains(f.text, f.detail) {
			// The CLI's error message says more than the result (the
			// path a tool did not find): it goes after it.
			return jsonString(clip(f.text + "\n" + f.detail))
		}
		return jsonString(clip(f.text)) // textOf(jsonString(text)) is text
	}
	return jsonString(clip(textOf(res)))
}

func (r *shimRenderer) turnEnd(f factTurnEnd) []ShimEvent {
	out := r.order.flush()
	res := &ShimResult{IsError: f.outcome != outcomeCompleted}
	switch f.outcome {
	case outcomeCompleted:
		res.Subtype = "success"
	case outcomeCancelled:
		res.Subtype = "cancelled"
		if !r.interrupted {
			r.interrupted = true
			out = append(out, &ShimInterrupt{})
		}
	default:
		res.Subtype = "error_during_execution"
		if msg := clip(f.errText); msg != "" && msg != r.lastError {
			out = append(out, &ShimError{Message: msg})
		}
	}
	if t := f.term; t != nil {
		if t.subtype != "" {
			res.Subtype = t.subtype
		}
		res.Errors, res.DurationMs, res.TotalCostUSD = t.errors, t.durationMs, t.costUSD
		if t.usage != nil {
			tok := shimTokens(t.usage)
			res.Usage = &tok
			out = append(out, &ShimUsage{ShimTokens: tok})
		}
	}
	if res.IsError && len(res.Errors) == 0 && f.errText != "" {
		res.Errors = []string{clip(f.errText)}
	}
	return append(out, res, &ShimMessageStop{})
}

func shimTokens(u *usage) ShimTokens {
	return ShimTokens{
		InputTokens:              u.uncached,
		OutputTokens:             u.output,
		CacheCreationInputTokens: ptr(u.cacheWrite),
		CacheReadInputTokens:     ptr(u.cacheRead),
	}
}

// chunks cuts s into pieces of at most shimChunkBytes, at rune boundaries.
func chunks(s string) []string {
	if len(s) <= shimChunkBytes {
		return []string{s}
	}
	var out []string
	for len(s) > shimChunkBytes {
		cut := shimChunkBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = shimChunkBytes
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

// clip shortens s to about shimChunkBytes, at a rune boundary, noting how
// many bytes were cut.
func clip(s string) string {
	if len(s) <= shimChunkBytes {
		return s
	}
	cut := shimChunkBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[... " + itoa(len(s)-cut) + " more bytes cut to fit the shim's line budget]"
}
