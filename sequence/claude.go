package sequence

import (
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/finding"
)

// turnPhase is where a Claude stream stands between system/init and result.
type turnPhase int

const (
	noTurn     turnPhase = iota // nothing of a turn seen yet
	turnOpen                    // init (or turn messages) seen, no result yet
	turnClosed                  // the last turn's result seen
)

// claude checks Claude Code stdout, and with Options.Both the stdin side of
// a transcript too (In events go to the stdin checks, and control requests
// are paired across the two directions).
//
// A turn is opened by system/init and closed by result (docs/protocols/claude.md#turn-order).
// Assistant and user messages outside a turn are reported once and then
// taken as implicitly opening one, so that a stream missing its init yields
// one finding rather than one per line. User messages with isReplay true
// are echoes of stdin (--replay-user-messages, slash-command output) and
// may come between turns.
type claude struct {
	stdin   claudeStdin
	ctl     *control
	phase   turnPhase
	opened  place // what opened the current turn
	closed  place // the result that closed the last turn
	tools   calls
	sid     string
	sidAt   place
	results int // the result_index the next result should carry
	last    place
	// interrupted: the open turn's last message is the user interrupt
	// marker (interruptMarker), after which the CLI may exit with no result.
	interrupted bool
}

// interruptMarker is the user message Claude Code writes when a turn is
// interrupted before the model has answered. After it the CLI writes an
// error result, or in other runs exits 0 at once without one
// (docs/protocols/claude.md#sigint-startup): a stream that ends right
// after it is not cut short.
const interruptMarker = "[Request interrupted by user]"

func newClaude(opts Options) *claude {
	ctl := &control{both: opts.Both}
	return &claude{ctl: ctl, stdin: claudeStdin{ctl: ctl}}
}

// Observe checks one event; In events are stdin lines of a transcript.
func (c *claude) Observe(ev Event, report func(finding.Finding)) {
	if ev.Obj == nil {
		return
	}
	if ev.Dir == In {
		c.stdin.observe(ev, report)
		return
	}
	c.last = at(ev)
	typ, _ := str(ev.Obj, "type")
	switch typ {
	case "system", "assistant", "user", "result":
		c.interrupted = typ == "user" && !isTrue(ev.Obj, "isReplay") && isInterruptMarker(ev.Obj)
	}
	switch typ {
	case "system":
		c.session(ev, report)
		if sub, _ := str(ev.Obj, "subtype"); sub == "init" {
			c.init(ev, report)
		}
	case "assistant":
		c.session(ev, report)
		c.inTurn(ev, "assistant", report)
		c.toolUses(ev, report)
	case "user":
		c.session(ev, report)
		if isTrue(ev.Obj, "isReplay") {
			return
		}
		c.inTurn(ev, "user", report)
		c.toolResults(ev, report)
	case "result":
		c.session(ev, report)
		c.result(ev, report)
	case "control_request":
		c.ctl.request(ev, report)
	case "control_response":
		c.ctl.response(ev, report)
	case "control_cancel_request":
		c.ctl.cancel(ev, report)
	case "conversation_reset":
		c.session(ev, report)
		c.sid = "" // the conversation continues under a new id
	case "stream_event", "tool_progress", "tool_use_summary", "auth_status",
		"rate_limit_event", "prompt_suggestion", "active_goal":
		c.session(ev, report)
	}
}

// session checks that session_id stays the same.
func (c *claude) session(ev Event, report func(finding.Finding)) {
	sid, ok := str(ev.Obj, "session_id")
	if !ok || sid == "" {
		return
	}
	if c.sid == "" {
		c.sid, c.sidAt = strings.Clone(sid), at(ev)
		return
	}
	if sid != c.sid {
		f := at(ev).finding(ClaudeSessionConstant, "/session_id",
			"session_id %s differs from %s, first seen at line %d", quote(sid), quote(c.sid), c.sidAt.line)
		f.Expected, f.Actual = c.sid, sid
		report(f)
	}
}

// init opens a turn.
func (c *claude) init(ev Event, report func(finding.Finding)) {
	p := at(ev)
	if c.phase == turnOpen {
		report(p.finding(ClaudeResultBeforeNextInit, "",
			"system/init opens a new turn, but the turn opened at line %d has no result", c.opened.line))
		c.closeTools(p, true, report) // the missing result is the finding; its calls are not re-reported
	}
	c.phase, c.opened = turnOpen, p
}

// inTurn checks that an assistant or user message belongs to an open turn.
func (c *claude) inTurn(ev Event, what string, report func(finding.Finding)) {
	p := at(ev)
	switch c.phase {
	case noTurn:
		report(p.finding(ClaudeInitFirst, "",
			"%s message before any system/init: every turn starts with system/init", what))
	case turnClosed:
		report(p.finding(ClaudeOneResult, "",
			"%s message after the result at line %d closed the turn, with no system/init opening a new one", what, c.closed.line))
	default:
		return
	}
	c.phase, c.opened = turnOpen, p
}

// toolUses records the tool_use blocks of an assistant message.
func (c *claude) toolUses(ev Event, report func(finding.Finding)) {
	supersedes := len(list(ev.Obj, "supersedes")) > 0
	for i, b := range list(obj(ev.Obj, "message"), "content") {
		blk, _ := b.(map[string]any)
		if t, _ := str(blk, "type"); t != "tool_use" {
			continue
		}
		id, ok := str(blk, "id")
		if !ok || id == "" {
			continue
		}
		p := at(ev)
		ptr := finding.Pointer("message", "content", strconv.Itoa(i), "id")
		switch prev := c.tools.use(id, p); prev.state {
		case callOpen, callAnswered, callFailed, callAbandoned:
			if supersedes {
				continue // a superseding message repeats the blocks it replaces
			}
			report(p.finding(ClaudeToolUseUnique, ptr,
				"tool_use id %s repeats the tool_use at line %d", quote(id), prev.use.line))
		case callEarly:
			report(prev.res.finding(ClaudeToolResultAfterUse, "",
				"tool_result for %s comes before its tool_use at line %d", quote(id), p.line))
		}
	}
}

// toolResults records the tool_result blocks of a user message.
func (c *claude) toolResults(ev Event, report func(finding.Finding)) {
	for i, b := range list(obj(ev.Obj, "message"), "content") {
		blk, _ := b.(map[string]any)
		if t, _ := str(blk, "type"); t != "tool_result" {
			continue
		}
		id, ok := str(blk, "tool_use_id")
		if !ok || id == "" {
			continue
		}
		p := at(ev)
		ptr := finding.Pointer("message", "content", strconv.Itoa(i), "tool_use_id")
		prev, full := c.tools.result(id, p, false)
		switch {
		case full:
			report(p.finding(ClaudeToolResultKnown, ptr,
				"tool_result names tool_use_id %s, which no earlier tool_use has", quote(id)))
		case prev.state == callAnswered || prev.state == callFailed:
			report(p.finding(ClaudeToolResultOnce, ptr,
				"second tool_result for %s (the tool_use at line %d was answered at line %d)", quote(id), prev.use.line, prev.res.line))
		case prev.state == callEarly:
			report(p.finding(ClaudeToolResultOnce, ptr,
				"second tool_result for %s (an earlier one at line %d)", quote(id), prev.res.line))
		}
	}
}

// result closes the turn.
func (c *claude) result(ev Event, report func(finding.Finding)) {
	p := at(ev)
	c.resultIndex(ev, report)
	switch c.phase {
	case noTurn:
		// A run that fails before its first turn writes its result alone:
		// a startup failure, or a refused session (num_turns 0: an
		// unknown --resume id, testdata/captures/claude/2.1.331/
		// resume-unknown-id.jsonl).
		_, startup := ev.Obj["startup_failure_reason"]
		noTurnRan := isTrue(ev.Obj, "is_error") && numIs(ev.Obj, "num_turns", 0)
		if !startup && !noTurnRan {
			report(p.finding(ClaudeInitFirst, "",
				"result before any system/init: every turn starts with system/init"))
		}
	case turnClosed:
		report(p.finding(ClaudeOneResult, "",
			"second result for the turn already closed by the result at line %d", c.closed.line))
	}
	c.closeTools(p, !claudeCompleted(ev.Obj), report)
	c.phase, c.closed = turnClosed, p
}

// claudeCompleted reports whether a result says its turn completed
// normally; after anything else (an interrupt, a max-turns or budget stop,
// an API error) tool calls may legitimately be left unanswered.
func claudeCompleted(r map[string]any) bool {
	if sub, ok := str(r, "subtype"); ok && sub != "success" {
		return false
	}
	if isTrue(r, "is_error") {
		return false
	}
	if tr, ok := str(r, "terminal_reason"); ok && tr != "completed" {
		return false
	}
	return true
}

// closeTools ends the turn's tool bookkeeping at p: unanswered uses are
// reported unless forgiven, early results are reported as unknown.
func (c *claude) closeTools(p place, forgive bool, report func(finding.Finding)) {
	var unanswered func(string, place)
	if !forgive {
		unanswered = func(id string, u place) {
			report(u.finding(ClaudeToolUseAnswered, "",
				"tool_use %s got no tool_result before the turn's result at line %d", quote(id), p.line))
		}
	}
	c.tools.closeTurn(unanswered, func(id string, r place) {
		report(r.finding(ClaudeToolResultKnown, "",
			"tool_result names tool_use_id %s, but no tool_use with that id came before the turn ended at line %d", quote(id), p.line))
	})
}

// resultIndex checks result_index against the number of results so far.
func (c *claude) resultIndex(ev Event, report func(finding.Finding)) {
	want := c.results
	c.results++
	n, ok := number(ev.Obj["result_index"])
	if !ok {
		return
	}
	got := int(n)
	if float64(got) != n {
		return // not an integer: the schema layer reports it
	}
	c.results = got + 1
	if got == want {
		return
	}
	var f finding.Finding
	if got > want {
		f = at(ev).finding(ClaudeResultIndex, "/result_index",
			"result_index %d where %d was expected: %d result(s) lost", got, want, got-want)
	} else {
		f = at(ev).finding(ClaudeResultIndex, "/result_index",
			"result_index %d where %d was expected: the count went back", got, want)
	}
	f.Expected, f.Actual = strconv.Itoa(want), strconv.Itoa(got)
	report(f)
}

// End reports a turn left open and, on a transcript, unanswered requests.
func (c *claude) End(report func(finding.Finding)) {
	if c.phase == turnOpen && !c.interrupted {
		report(c.last.finding(ClaudeTruncated, "",
			"the stream ends mid-turn: the turn opened at line %d has no result (%d tool_use(s) unanswered); this is how a killed CLI looks: SIGTERM gives no result and exit 143",
			c.opened.line, c.tools.pending()))
	}
	c.closeTools(c.last, true, report)
	c.ctl.end(report)
}

// isInterruptMarker reports whether a user message is interruptMarker
// alone (its content the text, or one text block of it).
func isInterruptMarker(obj map[string]any) bool {
	msg, _ := obj["message"].(map[string]any)
	switch c := msg["content"].(type) {
	case string:
		return c == interruptMarker
	case []any:
		if len(c) != 1 {
			return false
		}
		b, _ := c[0].(map[string]any)
		return b["type"] == "text" && b["text"] == interruptMarker
	}
	return false
}

// numIs reports whether obj[key] is the number n.
func numIs(obj map[string]any, key string, n float64) bool {
	v, ok := obj[key].(float64)
	return ok && v == n
}
