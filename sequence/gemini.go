package sequence

import (
	"github.com/agentconform/agentconform/finding"
)

// gemini checks `gemini -o stream-json` stdout: init, one user message,
// assistant deltas and tool calls, then result as the last line
// (docs/protocols/gemini.md#turn-order). Tool calls pair tool_use.tool_id with
// tool_result.tool_id; parallel calls put all uses before their results.
type gemini struct {
	seen       bool
	init       place
	initNoted  bool // an event before init was reported
	result     place
	afterNoted bool // an event after result was reported
	users      int
	tools      calls
	last       place
}

func newGemini() *gemini { return &gemini{} }

// Observe checks one event.
func (g *gemini) Observe(ev Event, report func(finding.Finding)) {
	if ev.Obj == nil {
		return
	}
	typ, _ := str(ev.Obj, "type")
	switch typ {
	case "init", "message", "tool_use", "tool_result", "error", "result":
	default:
		return
	}
	p := at(ev)
	g.seen, g.last = true, p
	if g.result.line > 0 && !g.afterNoted {
		g.afterNoted = true
		what := typ
		if typ == "result" {
			what = "second result"
		}
		report(p.finding(GeminiResultLast, "/type",
			"%s after the result at line %d: result is the last line", what, g.result.line))
	}
	if typ == "init" {
		if g.init.line > 0 {
			report(p.finding(GeminiInitOnce, "",
				"second init (the first was at line %d)", g.init.line))
			return
		}
		g.init = p
		return
	}
	if g.init.line == 0 && !g.initNoted && !(typ == "result" && isErrorResult(ev)) {
		g.initNoted = true
		report(p.finding(GeminiInitFirst, "/type", "%s before init: init is the first line", typ))
	}
	switch typ {
	case "message":
		if role, _ := str(ev.Obj, "role"); role == "user" {
			g.users++
			if g.users == 2 {
				report(p.finding(GeminiOneUser, "/role",
					"second user message: a Gemini process carries exactly one user turn"))
			}
		}
	case "tool_use":
		g.toolUse(ev, report)
	case "tool_result":
		g.toolResult(ev, report)
	case "result":
		g.end(ev, report)
	}
}

func (g *gemini) toolUse(ev Event, report func(finding.Finding)) {
	id, ok := str(ev.Obj, "tool_id")
	if !ok || id == "" {
		return
	}
	p := at(ev)
	switch prev := g.tools.use(id, p); prev.state {
	case callOpen, callAnswered, callFailed, callAbandoned:
		report(p.finding(GeminiToolUseUnique, "/tool_id",
			"tool_use tool_id %s repeats the tool_use at line %d", quote(id), prev.use.line))
	case callEarly:
		report(prev.res.finding(GeminiToolResultAfterUse, "/tool_id",
			"tool_result for %s comes before its tool_use at line %d", quote(id), p.line))
	}
}

func (g *gemini) toolResult(ev Event, report func(finding.Finding)) {
	id, ok := str(ev.Obj, "tool_id")
	if !ok || id == "" {
		return
	}
	p := at(ev)
	prev, full := g.tools.result(id, p, false)
	switch {
	case full:
		report(p.finding(GeminiToolResultKnown, "/tool_id",
			"tool_result names tool_id %s, which no earlier tool_use has", quote(id)))
	case prev.state == callAnswered || prev.state == callFailed:
		report(p.finding(GeminiToolResultOnce, "/tool_id",
			"second tool_result for %s (the tool_use at line %d was answered at line %d)", quote(id), prev.use.line, prev.res.line))
	case prev.state == callEarly:
		report(p.finding(GeminiToolResultOnce, "/tool_id",
			"second tool_result for %s (an earlier one at line %d)", quote(id), prev.res.line))
	}
}

// end handles result: the run is over.
func (g *gemini) end(ev Event, report func(finding.Finding)) {
	p := at(ev)
	if g.result.line > 0 {
		return // a second result was reported above
	}
	g.result = p
	failed := isErrorResult(ev)
	if g.users == 0 && g.init.line > 0 && !failed {
		report(p.finding(GeminiOneUser, "",
			"result without any user message after init"))
	}
	g.closeTools(p, failed, report)
}

// isErrorResult reports a result with status error. The CLI writes one for
// an error wherever it happens (handleError in packages/cli/src/utils/
// errors.ts): before init (resuming the chat failed) or between init and
// the user message (an @-file reference that cannot be read), as well as
// after the turn began.
func isErrorResult(ev Event) bool {
	status, _ := str(ev.Obj, "status")
	return status == "error"
}

func (g *gemini) closeTools(p place, forgive bool, report func(finding.Finding)) {
	var unanswered func(string, place)
	if !forgive {
		unanswered = func(id string, u place) {
			report(u.finding(GeminiToolUseAnswered, "/tool_id",
				"tool_use %s got no tool_result before the result at line %d", quote(id), p.line))
		}
	}
	g.tools.closeTurn(unanswered, func(id string, r place) {
		report(r.finding(GeminiToolResultKnown, "/tool_id",
			"tool_result names tool_id %s, but no tool_use with that id came before line %d", quote(id), p.line))
	})
}

// End reports a run that stopped before its result.
func (g *gemini) End(report func(finding.Finding)) {
	if !g.seen || g.result.line > 0 {
		return
	}
	report(g.last.finding(GeminiTruncated, "",
		"the stream ends without a result (%d tool_use(s) unanswered); this is how a real Gemini run looks after SIGINT or SIGTERM, and when the CLI exits without draining a full stdout pipe (cut at a multiple of 64 KiB): exit 0, no result",
		g.tools.pending()))
	g.closeTools(g.last, true, report)
}
