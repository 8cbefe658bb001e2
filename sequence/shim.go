package sequence

import (
	"github.com/agentconform/agentconform/finding"
)

// shim checks the output of an adapter against the Claude-compatible shim
// contract (docs/protocols/shim.md): system init once and first, text and tool lines,
// each tool_use answered before more text, result as the terminal message
// of each turn, then message_stop, with usage at least once per completed
// turn.
//
// The contract has no explicit turn delimiter on the output side, so this
// checker reads it as follows (docs/protocols/shim.md#order and
// #errors):
//   - A turn opens with its first text, thinking, assistant, tool, error or
//     interrupt line and is closed by result.
//   - After result come only message_stop and usage (both count for the
//     closed turn). A new turn starts with a user line (one that is not just
//     a carrier of tool_result blocks); without one, text, thinking,
//     assistant and tool lines and a second result after result are
//     violations, reported once, after which they are taken as a new turn.
//   - An error or interrupt after result is allowed without a user line: it
//     opens a turn of its own that needs its own result (docs/protocols/shim.md#errors: emit
//     result even after errors; interrupt, then result).
//   - A tool_use may repeat an id only to retry a call that is still
//     pending, or that was answered with is_error true or left unanswered
//     (docs/protocols/shim.md#errors: retries reuse the id); repeating an id that was answered
//     successfully is a duplicate.
//   - Only the top-level tool_use and tool_result lines are paired; tool
//     blocks inside pass-through assistant/user messages are not, since a
//     shim may emit both forms of one call.
type shim struct {
	max        int64
	init       place
	initNoted  bool
	startupErr bool // an error came before init: a bare result may close it
	phase      turnPhase
	opened     place
	result     place
	resultErr  bool // the result has is_error true
	resultUse  bool // the result carries a usage object
	stopped    bool // message_stop after the result
	usage      bool // a usage line in this turn
	interrupt  bool // an interrupt line in this turn
	errAt      place
	textNoted  string // the pending tool_use already reported by a text line
	tools      calls
	last       place
	seen       bool
}

func newShim(opts Options) *shim {
	max := opts.ShimMaxLine
	if max <= 0 {
		max = DefaultShimMaxLine
	}
	return &shim{max: max}
}

// Observe checks one event.
func (s *shim) Observe(ev Event, report func(finding.Finding)) {
	p := at(ev)
	if ev.Len > s.max {
		f := p.finding(ShimMaxLine, "",
			"line of %d bytes exceeds the %d-byte budget of the parser, which drops it; chunk long text into several text lines", ev.Len, s.max)
		report(f)
	}
	if ev.Obj == nil {
		return
	}
	typ, _ := str(ev.Obj, "type")
	switch typ {
	case "system", "text", "tool_use", "tool_result", "usage", "result",
		"message_stop", "error", "thinking", "assistant", "user", "interrupt":
	default:
		return // stream_event (debug only) and unknown types
	}
	s.seen, s.last = true, p
	switch typ {
	case "system":
		switch sub, _ := str(ev.Obj, "subtype"); sub {
		case "init":
			if s.init.line > 0 {
				report(p.finding(ShimInitOnce, "",
					"second system init (the first was at line %d): init is emitted once per session", s.init.line))
				return
			}
			s.init = p
		case "error":
			s.startupErr = s.startupErr || s.init.line == 0
			if s.errAt.line == 0 {
				s.errAt = p
			}
		}
		return
	case "error":
		s.startupErr = s.startupErr || s.init.line == 0
		s.openOwnTurn(p, report)
		if s.errAt.line == 0 {
			s.errAt = p
		}
		return
	}
	if s.init.line == 0 && !s.initNoted {
		closing := typ == "result" || typ == "usage" || typ == "message_stop"
		if !(s.startupErr && closing) {
			s.initNoted = true
			report(p.finding(ShimInitFirst, "/type", "%s before system init: init is emitted first", typ))
		}
	}
	switch typ {
	case "user":
		if !toolResultCarrier(ev.Obj) {
			s.userTurn(p, report)
		}
	case "interrupt":
		s.openOwnTurn(p, report)
		s.interrupt = true
	case "text", "thinking", "assistant":
		s.content(p, typ, report)
		if typ == "text" && s.tools.pending() > 0 {
			if id, u := s.tools.oldestOpen(); id != s.textNoted {
				s.textNoted = id
				report(p.finding(ShimResultBeforeText, "",
					"text while the tool_use %s at line %d still awaits its tool_result", quote(id), u.line))
			}
		}
	case "tool_use":
		s.content(p, typ, report)
		s.toolUse(ev, report)
	case "tool_result":
		s.content(p, typ, report)
		s.toolResult(ev, report)
	case "usage":
		s.usage = true
	case "result":
		s.closeTurn(ev, report)
	case "message_stop":
		if s.phase != turnClosed {
			report(p.finding(ShimMessageStopAfterResult, "/type",
				"message_stop before the turn's result: it is emitted after result"))
			return
		}
		s.stopped = true
	}
}

// toolResultCarrier reports whether a user line only carries tool_result
// blocks (a pass-through of Claude's shape) rather than starting a turn.
func toolResultCarrier(o map[string]any) bool {
	content := list(obj(o, "message"), "content")
	if len(content) == 0 {
		return false
	}
	for _, b := range content {
		blk, _ := b.(map[string]any)
		if t, _ := str(blk, "type"); t != "tool_result" {
			return false
		}
	}
	return true
}

// content handles a line that belongs to a turn's body.
func (s *shim) content(p place, typ string, report func(finding.Finding)) {
	switch s.phase {
	case turnClosed:
		report(p.finding(ShimResultTerminal, "/type",
			"%s after the result at line %d closed the turn; a new turn starts with a user line", typ, s.result.line))
		s.finish(report)
		s.phase, s.opened = turnOpen, p
	case noTurn:
		s.phase, s.opened = turnOpen, p
	}
}

// openOwnTurn handles error and interrupt lines, which may follow a result
// without a user line and then need a result of their own.
func (s *shim) openOwnTurn(p place, report func(finding.Finding)) {
	switch s.phase {
	case turnClosed:
		s.finish(report)
		s.phase, s.opened = turnOpen, p
	case noTurn:
		s.phase, s.opened = turnOpen, p
	}
}

// userTurn starts a new user turn.
func (s *shim) userTurn(p place, report func(finding.Finding)) {
	switch s.phase {
	case turnOpen:
		report(p.finding(ShimTurnResult, "",
			"a new user turn starts while the turn opened at line %d has no result", s.opened.line))
		s.closeTools(p, true, report)
	case turnClosed:
		s.finish(report)
	}
	s.unresolvedError(report)
	s.reset()
}

func (s *shim) toolUse(ev Event, report func(finding.Finding)) {
	id, ok := str(ev.Obj, "id")
	if !ok || id == "" {
		return
	}
	p := at(ev)
	prev := s.tools.get(id)
	switch prev.state {
	case callOpen:
		s.tools.reopen(id, p) // a retry of a pending call
		return
	case callAnswered:
		report(p.finding(ShimToolUseUnique, "/id",
			"tool_use id %s repeats the tool_use at line %d, which was answered successfully at line %d", quote(id), prev.use.line, prev.res.line))
		return
	case callEarly:
		s.tools.use(id, p)
		report(prev.res.finding(ShimToolResultAfterUse, "/tool_use_id",
			"tool_result for %s comes before its tool_use at line %d", quote(id), p.line))
		return
	}
	if s.tools.pending() > 0 {
		oid, u := s.tools.oldestOpen()
		report(p.finding(ShimSequential, "/id",
			"tool_use %s while the tool_use %s at line %d still awaits its tool_result: tool calls are emitted one at a time", quote(id), quote(oid), u.line))
	}
	if prev.state == callNone {
		s.tools.use(id, p)
	} else {
		s.tools.reopen(id, p) // a retry after an error result or an abandoned call
	}
}

func (s *shim) toolResult(ev Event, report func(finding.Finding)) {
	id, ok := str(ev.Obj, "tool_use_id")
	if !ok || id == "" {
		return
	}
	p := at(ev)
	prev, full := s.tools.result(id, p, isTrue(ev.Obj, "is_error"))
	switch {
	case full:
		report(p.finding(ShimToolResultKnown, "/tool_use_id",
			"tool_result names tool_use_id %s, which no earlier tool_use has", quote(id)))
	case prev.state == callAnswered || prev.state == callFailed:
		report(p.finding(ShimToolResultOnce, "/tool_use_id",
			"second tool_result for %s (the tool_use at line %d was answered at line %d)", quote(id), prev.use.line, prev.res.line))
	case prev.state == callEarly:
		report(p.finding(ShimToolResultOnce, "/tool_use_id",
			"second tool_result for %s (an earlier one at line %d)", quote(id), prev.res.line))
	}
}

// closeTurn handles result.
func (s *shim) closeTurn(ev Event, report func(finding.Finding)) {
	p := at(ev)
	if s.phase == turnClosed {
		report(p.finding(ShimResultTerminal, "/type",
			"second result for the turn closed by the result at line %d", s.result.line))
		return
	}
	isErr := isTrue(ev.Obj, "is_error")
	sub, _ := str(ev.Obj, "subtype")
	s.closeTools(p, isErr || sub == "cancelled" || s.interrupt, report)
	s.phase, s.result, s.resultErr = turnClosed, p, isErr
	s.resultUse = obj(ev.Obj, "usage") != nil
	s.errAt = place{}
}

func (s *shim) closeTools(p place, forgive bool, report func(finding.Finding)) {
	var unanswered func(string, place)
	if !forgive {
		unanswered = func(id string, u place) {
			report(u.finding(ShimToolUseAnswered, "/id",
				"tool_use %s got no tool_result before the result at line %d", quote(id), p.line))
		}
	}
	s.tools.closeTurn(unanswered, func(id string, r place) {
		report(r.finding(ShimToolResultKnown, "/tool_use_id",
			"tool_result names tool_use_id %s, but no tool_use with that id came before line %d", quote(id), p.line))
	})
	s.textNoted = ""
}

// finish checks what a closed turn owes after its result: message_stop
// and usage. It is called when the next turn starts or the stream ends.
func (s *shim) finish(report func(finding.Finding)) {
	if !s.stopped {
		report(s.result.finding(ShimMessageStop, "",
			"no message_stop after the result at line %d", s.result.line))
	}
	if !s.usage && !s.resultErr {
		extra := ""
		if s.resultUse {
			extra = " (result.usage is there, but the contract asks for a usage line)"
		}
		report(s.result.finding(ShimUsage, "",
			"the turn completed by the result at line %d has no usage line%s", s.result.line, extra))
	}
	s.reset()
}

// reset clears the per-turn state.
func (s *shim) reset() {
	s.phase = noTurn
	s.usage, s.stopped, s.interrupt, s.resultErr, s.resultUse = false, false, false, false, false
	s.textNoted = ""
}

// unresolvedError reports an error that no result followed.
func (s *shim) unresolvedError(report func(finding.Finding)) {
	if s.errAt.line == 0 {
		return
	}
	report(s.errAt.finding(ShimErrorResult, "",
		"error at line %d is not followed by a result; emit result even after errors so that the UI leaves the streaming state", s.errAt.line))
	s.errAt = place{}
}

// End reports a last turn without result and the debts of a closed one.
func (s *shim) End(report func(finding.Finding)) {
	switch s.phase {
	case turnOpen:
		report(s.last.finding(ShimTruncated, "",
			"the stream ends mid-turn: the turn opened at line %d has no result (%d tool_use(s) unanswered)", s.opened.line, s.tools.pending()))
		s.closeTools(s.last, true, report)
	case turnClosed:
		s.finish(report)
	}
	s.unresolvedError(report)
}
