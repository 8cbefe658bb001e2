package conformance

import (
	"fmt"
	"strconv"
	"strings"
)

// srcDoubles is the section that says nothing reaches the caller twice.
const srcDoubles = "docs/protocols/unified.md#no-doubles"

// CheckNoDoubles is lossless/no-doubles: what a turn's caller is handed,
// counted against the CLI's own lines. The other lossless checks ask
// whether every piece of information arrived; this one asks whether some
// arrived twice, which they let pass (a second turnCompleted, a tool
// result handed on again, a native adapter's terminal event written
// twice).
var CheckNoDoubles = register(&Check{Family: FamilyLossless, Rule: rule("lossless/no-doubles", "MUST",
	"Nothing reaches the caller more often than the CLI wrote it, whatever the profile: no turn's terminal event, text block, tool call or tool result is handed on twice. Counted against the CLI's own lines: Claude's partial deltas beside its whole message, and the last text block its result repeats, are the CLI's repetition, not the adapter's.", srcDoubles),
	Applies: doublesApplies, Judge: judgeNoDoubles})

// doublesApplies: every case of the JSONL streams but the line-size
// ladder (whose one long line the buffer checks judge).
func doublesApplies(c *Case, _ *Hello) (bool, string) {
	switch c.Agent {
	case "claude", "codex", "gemini":
	default:
		return false, "applies to the JSONL streams of claude, codex and gemini (the JSON-RPC clients have checks of their own)"
	}
	if c.Expect.LineSize > 0 {
		return false, "a case of one long line, which the buffer checks judge"
	}
	return true, ""
}

// hookCallback reports whether a Claude line is the CLI's call of an SDK
// hook (a control_request of subtype hook_callback).
func hookCallback(obj map[string]any) bool {
	return str(obj, "type") == "control_request" && str(obj, "request", "subtype") == "hook_callback"
}

// doublesPerPathMax bounds the text per JSON path that the repeated-text
// count searches: a case of many megabytes (the volume cases) is judged on
// whole values only.
const doublesPerPathMax = 1 << 20

// doublesMinPiece is the shortest text block looked for inside the
// concatenation of a path's strings: a shorter one ("hi") is found inside
// other words as often as not.
const doublesMinPiece = 16

func judgeNoDoubles(o *Observation) Outcome {
	if o.Hello == nil {
		return Outcome{Skip: true, Actual: "no hello"}
	}
	streamed := false
	for _, t := range o.cliTurns() {
		streamed = streamed || t.format == formatStream
	}
	if !streamed {
		return Outcome{Skip: true, Actual: "no CLI turn wrote a JSON stream: there are no lines to count against"}
	}
	var problems []string
	problems = append(problems, doubledEndings(o)...)
	problems = append(problems, doubledTools(o)...)
	problems = append(problems, doubledLines(o)...)
	problems = append(problems, doubledText(o)...)
	if len(problems) == 0 {
		return pass()
	}
	if len(problems) > 12 {
		problems = append(problems[:12], fmt.Sprintf("... and %d more", len(problems)-12))
	}
	return Outcome{Expected: "each terminal event, text block, tool call and tool result handed on no more often than the CLI wrote it",
		Actual: strings.Join(problems, "\n")}
}

// turnsAskedOrEnded is how many turns the runner asked for (start and send) or
// the adapter reported, whichever is more.
func turnsAskedOrEnded(o *Observation) int {
	n := 0
	for _, s := range o.Sent {
		if s.Op == "start" || s.Op == "send" {
			n++
		}
	}
	return max(n, len(o.TurnEnds()))
}

// eventsByTurn splits the events at the turn_end records (the events
// after the last one are a turn of their own).
func eventsByTurn(o *Observation) [][]Event {
	var out [][]Event
	start := 0
	for _, r := range o.Records {
		if r.Kind == "turn_end" && r.EventsBefore >= start && r.EventsBefore <= len(o.Events) {
			out = append(out, o.Events[start:r.EventsBefore])
			start = r.EventsBefore
		}
	}
	return append(out, o.Events[start:])
}

// doubledEndings counts the ends of turns: a unified turnCompleted or a
// shim result once per turn at most, and the CLI's own terminal events
// (Claude and Gemini result, Codex turn.completed or turn.failed) no more
// often than the CLI wrote them where a native adapter hands on the CLI's
// events.
func doubledEndings(o *Observation) []string {
	var want string
	switch o.Hello.Profile {
	case "unified":
		want = "turnCompleted"
	case "shim":
		want = "result"
	case "native":
		if !o.handsOnCLIEvents() {
			return nil // its own view: its ending is its own, judged by its text
		}
		terminal := func(typ string) bool {
			if o.Case.Agent == "codex" {
				return typ == "turn.completed" || typ == "turn.failed"
			}
			return typ == "result"
		}
		cli, got := 0, 0
		var typ string
		for _, lines := range o.wireLines() {
			for _, l := range lines {
				if l.Obj != nil && terminal(str(l.Obj, "type")) {
					cli++
					typ = str(l.Obj, "type")
				}
			}
		}
		for _, e := range o.Events {
			if terminal(str(e.Obj, "type")) {
				got++
				typ = str(e.Obj, "type")
			}
		}
		if got > cli {
			return []string{fmt.Sprintf("the CLI's terminal event (%s) handed on %d times; the CLI wrote %d", typ, got, cli)}
		}
		return nil
	default:
		return nil
	}
	var out []string
	total := 0
	for i, evs := range eventsByTurn(o) {
		n := 0
		for _, e := range evs {
			if str(e.Obj, "type") == want {
				n++
			}
		}
		total += n
		if n > 1 {
			out = append(out, fmt.Sprintf("turn %d: %d %s events, one per turn", i+1, n, want))
		}
	}
	if asked := turnsAskedOrEnded(o); len(out) == 0 && total > asked {
		out = append(out, fmt.Sprintf("%d %s events for the %d turns of the session", total, want, asked))
	}
	return out
}

// doubledTools counts a unified or shim adapter's tool calls and results:
// one start and one completion per call id in a turn, and no more calls
// than the CLI reported.
func doubledTools(o *Observation) []string {
	var startType, startID, endType, endID string
	switch o.Hello.Profile {
	case "unified":
		startType, startID, endType, endID = "toolStarted", "toolId", "toolCompleted", "toolId"
	case "shim":
		startType, startID, endType, endID = "tool_use", "id", "tool_result", "tool_use_id"
	default:
		return nil
	}
	var out []string
	started := 0
	for i, evs := range eventsByTurn(o) {
		starts, ends := map[string]int{}, map[string]int{}
		for _, e := range evs {
			switch str(e.Obj, "type") {
			case startType:
				starts[str(e.Obj, startID)]++
				started++
			case endType:
				ends[str(e.Obj, endID)]++
			}
		}
		for _, id := range sortedKeys(starts) {
			if n := starts[id]; n > 1 {
				out = append(out, fmt.Sprintf("turn %d: tool call %s started %d times (%s)", i+1, strconv.Quote(id), n, startType))
			}
		}
		for _, id := range sortedKeys(ends) {
			if n := ends[id]; n > 1 {
				out = append(out, fmt.Sprintf("turn %d: the result of tool call %s handed on %d times (%s)", i+1, strconv.Quote(id), n, endType))
			}
		}
	}
	if calls := cliToolCalls(o); len(out) == 0 && started > calls {
		out = append(out, fmt.Sprintf("%d %s events for the CLI's %d tool calls", started, startType, calls))
	}
	return out
}

// cliToolCalls counts the tool calls the CLIs wrote: Claude's tool_use
// blocks, Codex's tool items (every item but messages, reasoning and
// errors) and Gemini's tool_use lines, each call once per process, and
// each line of a Codex todo_list (a plan's every state).
func cliToolCalls(o *Observation) int {
	n := 0
	for _, lines := range o.wireLines() {
		seen := map[string]bool{}
		for i, l := range lines {
			for _, id := range toolCallIDs(o.Case.Agent, l.Obj) {
				if str(l.Obj, "item", "type") == "todo_list" {
					// Each state of Codex's plan is a call of its own to an
					// adapter that shows it as Claude's TodoWrite.
					id += "#" + strconv.Itoa(i)
				}
				if !seen[id] {
					seen[id] = true
					n++
				}
			}
		}
	}
	return n
}

// toolCallIDs returns the ids of the tool calls one CLI line announces.
func toolCallIDs(agent string, obj map[string]any) []string {
	var out []string
	switch agent {
	case "claude":
		if obj["type"] != "assistant" {
			break
		}
		msg, _ := obj["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			if m, _ := b.(map[string]any); strings.HasSuffix(str(m, "type"), "tool_use") && str(m, "id") != "" {
				out = append(out, str(m, "id"))
			}
		}
	case "codex":
		switch str(obj, "item", "type") {
		case "", "agent_message", "reasoning", "error":
		default:
			if strings.HasPrefix(str(obj, "type"), "item.") {
				out = append(out, str(obj, "item", "id"))
			}
		}
	case "gemini":
		if obj["type"] == "tool_use" {
			out = append(out, str(obj, "tool_id"))
		}
	}
	return out
}

// doubledLines counts, where a native adapter hands on the CLI's own
// events, the copies of every CLI line that names itself (a Claude line's
// uuid, a Codex item's id, a Gemini tool call's id): no line is handed on
// more often than the CLI wrote it.
func doubledLines(o *Observation) []string {
	if o.Hello.Profile != "native" || !o.handsOnCLIEvents() {
		return nil
	}
	cli := map[string]int{}
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if k := lineKey(o.Case.Agent, l.Obj); k != "" {
				cli[k]++
			}
		}
	}
	got := map[string]int{}
	for _, e := range o.Events {
		if k := lineKey(o.Case.Agent, e.Obj); k != "" && cli[k] > 0 {
			got[k]++
		}
	}
	var out []string
	for _, k := range sortedKeys(got) {
		if got[k] > cli[k] {
			out = append(out, fmt.Sprintf("the CLI's line %s handed on %d times; the CLI wrote it %d", k, got[k], cli[k]))
		}
	}
	return out
}

// lineKey names a CLI line by what makes it one of a kind: a Claude
// message's, result's or partial message's uuid, a Codex item event's
// item id, a Gemini tool_use's or tool_result's tool id; "" for a line
// that names nothing (counted as text, or as a terminal event).
func lineKey(agent string, obj map[string]any) string {
	if obj == nil {
		return ""
	}
	typ := str(obj, "type")
	var id string
	switch agent {
	case "claude":
		switch typ {
		case "assistant", "user", "result", "stream_event":
			id = str(obj, "uuid")
		}
	case "codex":
		if strings.HasPrefix(typ, "item.") {
			id = str(obj, "item", "id")
		}
	case "gemini":
		if typ == "tool_use" || typ == "tool_result" {
			id = str(obj, "tool_id")
		}
	}
	if id == "" {
		return ""
	}
	return typ + " " + id
}

// doubledText counts the CLI's text blocks and tool results in the
// adapter's events: the events holding one as a whole value, against the
// CLI lines holding it; and (for a block long enough to tell, in paths of
// reasonable size) its repeats inside the concatenation of one JSON path's
// strings, where text streamed as deltas lands, against the most any one
// path of the CLI's lines holds it.
func doubledText(o *Observation) []string {
	kinds := map[string]string{} // normalised block -> what it is
	var order []string
	var cliEvents []Event
	for _, t := range o.cliTurns() {
		if t.format != formatStream {
			continue
		}
		for _, l := range t.lines {
			if l.Obj != nil && hookCallback(l.Obj) {
				// What the CLI hands an SDK's hook (PostToolUse's
				// tool_response) is a copy the CLI wrote: an adapter that
				// passes it on besides the tool's result doubles nothing.
				cliEvents = append(cliEvents, Event{Obj: l.Obj})
				continue
			}
			if l.Obj == nil || controlTypes[str(l.Obj, "type")] {
				continue
			}
			cliEvents = append(cliEvents, Event{Obj: l.Obj})
			for _, b := range textUnits(o.Case.Agent, l.Obj) {
				n := normText(b.text)
				if n == "" {
					continue
				}
				if _, ok := kinds[n]; !ok {
					kinds[n] = b.kind
					order = append(order, n)
				}
			}
		}
	}
	if len(order) == 0 {
		return nil
	}
	count := func(events []Event) map[string]int {
		m := map[string]int{}
		for _, e := range events {
			if errorEvent(e.Obj) {
				continue
			}
			seen := map[string]bool{}
			eachReported(e.Obj, func(s string) {
				n := normText(s)
				if _, ok := kinds[n]; ok && !seen[n] {
					seen[n] = true
					m[n]++
				}
			})
		}
		return m
	}
	cliN, gotN := count(cliEvents), count(o.Events)
	var out []string
	flagged := map[string]bool{}
	for _, n := range order {
		if gotN[n] > cliN[n] {
			flagged[n] = true
			out = append(out, fmt.Sprintf("%s %s handed on in %d events; the CLI wrote it in %d lines", kinds[n], strconv.Quote(clip(n, 120)), gotN[n], cliN[n]))
		}
	}
	// Repeats inside one path's concatenated strings: text deltas that
	// come again whole (the deltas, then the whole block, as one stream of
	// text), in a native adapter's events of its own shape (a unified or
	// shim adapter's text is compared exactly, lossless/text). Only where
	// both sides are small enough to search (their lines' bytes bound
	// their strings').
	if o.Hello.Profile != "native" || rawSize(o.Events) > doublesPerPathMax || rawSize(cliEvents) > doublesPerPathMax {
		return out
	}
	got := o.infoIndex().paths
	cliPaths := buildIndex(cliEvents).paths
	for _, n := range order {
		if flagged[n] || len(n) < doublesMinPiece {
			continue
		}
		most := 0
		for _, p := range cliPaths {
			most = max(most, strings.Count(p, n))
		}
		for _, path := range sortedKeys(got) {
			if c := strings.Count(got[path], n); c > most && most > 0 {
				out = append(out, fmt.Sprintf("%s %s repeated %d times in the strings at %s; the CLI's lines hold it at most %d times in one place", kinds[n], strconv.Quote(clip(n, 120)), c, path, most))
				break
			}
		}
	}
	return out
}

// rawSize is the bytes of the events' lines (an event made of a decoded
// CLI line has none: it is counted by its strings).
func rawSize(events []Event) int {
	n := 0
	for _, e := range events {
		if e.Raw != nil {
			n += len(e.Raw)
			continue
		}
		eachString(e.Obj, func(s string) { n += len(s) })
	}
	return n
}

// textUnit is a text block or a tool's result a CLI line carries.
type textUnit struct{ kind, text string }

// textUnits returns the text blocks and tool results of one CLI line:
// Claude's assistant text blocks and tool_result contents, Codex's agent
// messages and command outputs, Gemini's assistant messages and tool
// outputs.
func textUnits(agent string, obj map[string]any) []textUnit {
	var out []textUnit
	switch agent {
	case "claude":
		msg, _ := obj["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			m, _ := b.(map[string]any)
			switch {
			case obj["type"] == "assistant" && m["type"] == "text":
				out = append(out, textUnit{"text block", str(m, "text")})
			case obj["type"] == "user" && m["type"] == "tool_result":
				switch c := m["content"].(type) {
				case string:
					out = append(out, textUnit{"tool result", c})
				case []any:
					for _, part := range c {
						if pm, ok := part.(map[string]any); ok && pm["type"] == "text" {
							out = append(out, textUnit{"tool result", str(pm, "text")})
						}
					}
				}
			}
		}
	case "codex":
		if obj["type"] != "item.completed" {
			break
		}
		switch str(obj, "item", "type") {
		case "agent_message":
			out = append(out, textUnit{"text block", str(obj, "item", "text")})
		case "command_execution":
			out = append(out, textUnit{"tool result", str(obj, "item", "aggregated_output")})
		}
	case "gemini":
		switch str(obj, "type") {
		case "message":
			if obj["role"] == "assistant" {
				out = append(out, textUnit{"text block", str(obj, "content")})
			}
		case "tool_result":
			out = append(out, textUnit{"tool result", str(obj, "output")})
		}
	}
	return out
}

// errorEvent reports whether an event is an error report (its type names
// an error): a failed turn's message is handed on as text and as the
// error, two roles the caller tells apart, and lossless/error-text asks
// for the second.
func errorEvent(obj map[string]any) bool {
	return strings.Contains(strings.ToLower(str(obj, "type")), "error")
}

// errorKeys are the members whose strings report an error rather than
// carry text.
var errorKeys = map[string]bool{"error": true, "errors": true, "error_message": true, "errorMessage": true, "errorText": true}

// eachReported calls fn with every string of v that is not inside an
// error member.
func eachReported(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case map[string]any:
		for k, c := range x {
			if !errorKeys[k] {
				eachReported(c, fn)
			}
		}
	case []any:
		for _, c := range x {
			eachReported(c, fn)
		}
	}
}
