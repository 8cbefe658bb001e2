package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// The lossless family compares the information the adapter handed its
// caller with what the CLI's actual output (the bytes the fakes wrote,
// faults included) holds, as the oracle's model reads it
// (conformance/oracle; no adapter's translation, the reference's neither): assistant text, tool
// calls (input, result, success, error), file changes and usage. It
// judges information, not naming or shape: tool ids and names, whether a
// result is a string or an object holding it, and (for native adapters)
// the adapter's own event shapes are the adapter's choice. Unified and shim
// adapters have a fixed event model, so their text must match exactly and
// their tools one to one; a native adapter hands its caller its own view
// of the stream, so every piece of information must be found in its
// events, wherever it put it.
var (
	CheckLosslessText = register(&Check{Family: FamilyLossless, Rule: rule("lossless/text", "MUST",
		"The assistant text the CLI sent reaches the caller: for unified and shim adapters exactly (concatenated, nothing lost, nothing invented, the answer told apart from thinking); for native adapters every text block, in whatever events the adapter uses.", srcLossless),
		Applies: losslessApplies, Judge: unlessCut(judgeLosslessText)})
	CheckLosslessTools = register(&Check{Family: FamilyLossless, Rule: rule("lossless/tools", "MUST",
		"Every tool call the CLI reported reaches the caller with its input, result, success and error, paired with the right call; ids, names and shapes are the adapter's choice.", srcLossless),
		Applies: losslessApplies, Judge: unlessCut(judgeLosslessTools)})
	CheckLosslessUsage = register(&Check{Family: FamilyLossless, Rule: rule("lossless/usage", "MUST",
		"The token usage the CLI reported (input and output tokens, and Claude's total_cost_usd where the adapter hands on the CLI's own view) reaches the caller.", srcUsage),
		Applies: losslessApplies, Judge: unlessCut(judgeLosslessUsage)})
	CheckLosslessEvents = register(&Check{Family: FamilyLossless, Rule: rule("lossless/events", "INFO",
		"Whether a native adapter hands its caller the CLI's events unchanged (control messages aside), in order. Informational: re-serialising or adding events loses nothing.", srcNativeEvents),
		Applies: func(c *Case, h *Hello) (bool, string) {
			if ok, why := losslessApplies(c, h); !ok {
				return false, why
			}
			if h == nil || h.Profile != "native" {
				return false, "applies to native adapters only"
			}
			return true, ""
		}, Judge: judgeNativeEvents})
)

func losslessApplies(c *Case, h *Hello) (bool, string) {
	if c.Expect.LineSize > 0 || c.Expect.TurnFails || c.Expect.Cancelled || c.Expect.Stall {
		return false, "the CLI's output is incomplete or judged by another family in this case"
	}
	return true, ""
}

// unlessCut skips a lossless check where the adapter stopped the CLI
// before the CLI ended a turn, and reported that turn failed: what the CLI
// would have written is unknown (a fake writes its whole turn at once, a
// real CLI as the turn goes, so the same adapter loses more on the one
// than on the other), and lifecycle/reports-success judges the failure.
// An adapter that stops the CLI and reports the turn successful is judged
// on what the CLI had written.
func unlessCut(judge func(*Observation) Outcome) func(*Observation) Outcome {
	return func(o *Observation) Outcome {
		if cutByAdapter(o) {
			return Outcome{Skip: true, Actual: "the adapter stopped the CLI before the CLI ended its turn and reported the turn failed: lifecycle/reports-success judges it"}
		}
		return judge(o)
	}
}

// cutByAdapter reports whether the adapter signalled or killed a CLI, a
// turn of the CLI's stream has no terminal event, and the adapter
// reported a turn failed.
func cutByAdapter(o *Observation) bool {
	failed := false
	for _, r := range o.TurnEnds() {
		failed = failed || !r.OK
	}
	if !failed {
		return false
	}
	stopped := false
	for _, r := range o.Fake {
		stopped = stopped || r.Kind == "signal" || r.Kind == "exit" && r.Action == killedOutright
	}
	if !stopped {
		return false
	}
	for _, t := range o.cliTurns() {
		if t.format == formatStream && terminalOf(o.Case.Agent, t.lines) == nil {
			return true
		}
	}
	return false
}

// summary is what the lossless checks compare.
type summary struct {
	Text string
	// Answer is the part of Text that is the assistant's answer: without
	// thinking, notices and error strings (a unified textChunk of role
	// assistant, a shim text that is not thinking).
	Answer string
	// Pieces are the text cut where something else (a tool) came between:
	// a native adapter must carry each, wherever it put it.
	Pieces [][]string
	Tools  []tool
	Files  []file
	Usage  []usage
}

type tool struct {
	ID, Name string
	Input    any
	Result   any
	Success  bool
	Error    string
	// LeftOpen is a tool the CLI started and never completed (Codex's
	// background command, docs/protocols/codex.md#items-at-turn-end): it
	// has no outcome to hand on, whatever the adapter closes it with.
	LeftOpen bool
}

type file struct{ Path, Change string }

type usage struct {
	Input, Output, Cached, Reasoning, Total int64
	// CacheWrite is Claude's cache_creation_input_tokens, and Cost its
	// result's total_cost_usd (native only).
	CacheWrite int64
	Cost       float64
}

// summaries returns what the adapter must hand on (the profile's view of
// the oracle's model) and what it did, made once per observation: the
// lossless checks share them. A native adapter's events are judged
// against the unified view (the most complete); its own summary is not
// made (see infoIndex).
func (o *Observation) summaries() (want, got summary, err error) {
	m := o.memoized()
	m.summariesOnce.Do(func() {
		if o.Hello == nil {
			m.err = fmt.Errorf("no hello")
			return
		}
		profile := o.Hello.Profile
		if profile == "native" {
			profile = "unified"
		}
		if m.want, m.err = expectedSummary(o, profile); m.err == nil && o.Hello.Profile != "native" {
			m.got = actualSummary(o)
		}
	})
	return m.want, m.got, m.err
}

// losslessDiff runs compare on the summaries, or reports why there is no
// model to compare with.
func losslessDiff(o *Observation, compare func(want, got summary) []string) Outcome {
	want, got, err := o.summaries()
	if err != nil {
		return Outcome{Info: true, Actual: "no model of the CLI's output: " + err.Error()}
	}
	if problems := compare(want, got); len(problems) > 0 {
		if len(problems) > 12 {
			problems = append(problems[:12], fmt.Sprintf("... and %d more", len(problems)-12))
		}
		return Outcome{Expected: "the information of the CLI's output (the oracle's model of what it wrote)", Actual: strings.Join(problems, "\n")}
	}
	return pass()
}

func judgeLosslessText(o *Observation) Outcome {
	if o.Hello != nil && o.Hello.Profile == "native" {
		idx := o.infoIndex()
		return losslessDiff(o, func(want, _ summary) []string {
			var out []string
			for _, p := range want.Pieces {
				if !idx.hasText(p) {
					out = append(out, "text not handed on: "+strconv.Quote(clip(strings.Join(p, ""), 300)))
				}
			}
			return out
		})
	}
	streams := o.streams()
	want, got, err := o.summaries()
	if err != nil {
		return Outcome{Info: true, Actual: "no model of the CLI's output: " + err.Error()}
	}
	w, g := want.Text, got.Text
	if !streams {
		// A text or JSON answer carries no chunking: surrounding white
		// space is no content.
		w, g = strings.TrimSpace(w), strings.TrimSpace(g)
	}
	if d := cmp.Diff(w, g); d != "" {
		return Outcome{Expected: "the assistant text the CLI sent, exactly", Actual: "the adapter's text differs (see diff)", Diff: clip(d, 6000)}
	}
	wa, ga := want.Answer, got.Answer
	if !streams {
		wa, ga = strings.TrimSpace(wa), strings.TrimSpace(ga)
	}
	if d := cmp.Diff(wa, ga); d != "" {
		return Outcome{Expected: "the assistant's answer apart from its thinking (and the CLI's notices)",
			Actual: "the adapter's answer differs (see diff): thinking or a notice shown as the answer, or the answer shown as something else", Diff: clip(d, 6000)}
	}
	return pass()
}

func judgeLosslessTools(o *Observation) Outcome {
	if o.Hello != nil && o.Hello.Profile == "native" {
		idx := o.infoIndex()
		return losslessDiff(o, func(want, _ summary) []string {
			var out []string
			for i, t := range want.Tools {
				out = append(out, idx.missingTool(i, t)...)
			}
			for _, f := range want.Files {
				if !idx.hasAtom(f.Path) {
					out = append(out, "file change not handed on: "+f.Path)
				}
			}
			return out
		})
	}
	return losslessDiff(o, func(want, got summary) []string {
		out := compareTools(want.Tools, got.Tools)
		if d := cmp.Diff(want.Files, got.Files); d != "" {
			out = append(out, "file changes differ:\n"+d)
		}
		return out
	})
}

func judgeLosslessUsage(o *Observation) Outcome {
	if o.Hello != nil && o.Hello.Profile == "native" {
		idx := o.infoIndex()
		var out []string
		for _, u := range rawUsage(o) {
			if !idx.hasUsage(u) {
				out = append(out, fmt.Sprintf("usage not handed on: %d input, %d output tokens", u.Input, u.Output))
			}
			if u.Cost > 0 && !idx.nums[u.Cost] {
				out = append(out, fmt.Sprintf("cost not handed on: total_cost_usd %v", u.Cost))
			}
		}
		if len(out) > 0 {
			return Outcome{Expected: "the token counts of the CLI's terminal events", Actual: strings.Join(out, "\n")}
		}
		return pass()
	}
	return losslessDiff(o, func(want, got summary) []string {
		if d := cmp.Diff(want.Usage, got.Usage); d != "" {
			return []string{"usage differs:\n" + d}
		}
		return nil
	})
}

// compareTools compares the CLI's tool calls (the model's) with a unified or shim
// adapter's, one to one in the order they started: ids and names are the
// adapter's; input, result, success and error must carry the same
// information, whatever shape the adapter gave them.
func compareTools(want, got []tool) []string {
	var out []string
	if len(want) != len(got) {
		out = append(out, fmt.Sprintf("%d tool calls, want %d (the CLI's)", len(got), len(want)))
	}
	for i := 0; i < len(want) && i < len(got); i++ {
		w, g := want[i], got[i]
		name := fmt.Sprintf("tool call %d (%s %s, the adapter's %s)", i+1, w.Name, w.ID, g.ID)
		if miss := missingAtoms(w.Input, atomsOf(g.Input)); len(miss) > 0 {
			out = append(out, name+": input lost "+quoteAll(miss))
		}
		// The result and the CLI's own error message may be in either the
		// adapter's result or its error.
		if miss := missingAtoms([]any{w.Result, w.Error}, atomsOf(g.Result, g.Error)); len(miss) > 0 {
			out = append(out, name+": result lost "+quoteAll(miss))
		}
		// A call the CLI left open has no outcome to hand on
		// (docs/protocols/codex.md#items-at-turn-end): whatever the
		// adapter closes it with.
		if w.Success != g.Success && !w.LeftOpen {
			out = append(out, fmt.Sprintf("%s: success %v, want %v", name, g.Success, w.Success))
		}
	}
	return out
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(clip(s, 200))
	}
	return strings.Join(q, ", ")
}

func actualSummary(o *Observation) summary {
	objs := make([]map[string]any, 0, len(o.Events))
	for _, e := range o.Events {
		objs = append(objs, e.Obj)
	}
	return summarize(o.Hello.Profile, objs, nil)
}

// summarize projects unified or shim events onto what lossless compares.
// An event {"type":"agentconform.answer"} stands for the next of answers
// (a turn the CLI answered in text or JSON).
func summarize(profile string, events []map[string]any, answers []string) summary {
	var s summary
	var text, answer strings.Builder
	var piece []string
	addText := func(t string) {
		text.WriteString(t)
		if t != "" {
			piece = append(piece, t)
		}
	}
	endPiece := func() {
		if len(piece) > 0 {
			s.Pieces = append(s.Pieces, piece)
			piece = nil
		}
	}
	tools := map[string]*tool{}
	var order []string
	toolFor := func(id string) *tool {
		t, ok := tools[id]
		if !ok {
			t = &tool{ID: id}
			tools[id] = t
			order = append(order, id)
		}
		return t
	}
	for _, e := range events {
		typ := str(e, "type")
		if typ == "agentconform.answer" {
			// The answer of a text or JSON turn is the assistant's answer,
			// nothing else: text and answer alike.
			endPiece()
			if len(answers) > 0 {
				addText(answers[0])
				answer.WriteString(answers[0])
				answers = answers[1:]
			}
			endPiece()
			continue
		}
		if typ != "textChunk" && typ != "text" {
			endPiece()
		}
		switch profile {
		case "unified":
			switch typ {
			case "textChunk":
				switch e["role"] {
				case "assistant":
					addText(str(e, "content"))
					answer.WriteString(str(e, "content"))
				case "user":
				default:
					// Thinking, notices and error strings: text the caller
					// gets, but no part of the answer a native adapter
					// must carry.
					endPiece()
					text.WriteString(str(e, "content"))
				}
			case "toolStarted":
				t := toolFor(str(e, "toolId"))
				t.Name, t.Input = str(e, "toolName"), e["arguments"]
			case "toolCompleted":
				t := toolFor(str(e, "toolId"))
				t.Result, t.Error = e["result"], str(e, "error")
				t.Success, _ = e["success"].(bool)
			case "fileChanged":
				s.Files = append(s.Files, file{Path: str(e, "filePath"), Change: str(e, "changeType")})
			case "turnCompleted":
				if u, ok := e["usage"].(map[string]any); ok {
					s.Usage = append(s.Usage, usage{Input: num(u, "inputTokens"), Output: num(u, "outputTokens"), Cached: num(u, "cachedTokens"), Reasoning: num(u, "reasoningTokens"), Total: num(u, "totalTokens")})
				}
			}
		case "shim":
			switch typ {
			case "text":
				addText(str(e, "content"))
				if thinking, _ := e["is_thinking"].(bool); !thinking {
					answer.WriteString(str(e, "content"))
				}
			case "tool_use":
				t := toolFor(str(e, "id"))
				t.Name, t.Input = str(e, "name"), e["input"]
			case "tool_result":
				t := toolFor(str(e, "tool_use_id"))
				t.Result = e["content"]
				isErr, _ := e["is_error"].(bool)
				t.Success = !isErr
			case "usage":
				s.Usage = append(s.Usage, usage{Input: num(e, "input_tokens"), Output: num(e, "output_tokens"), Cached: num(e, "cache_read_input_tokens")})
			}
		}
	}
	endPiece()
	s.Text = text.String()
	s.Answer = answer.String()
	for _, id := range order {
		s.Tools = append(s.Tools, *tools[id])
	}
	sort.SliceStable(s.Files, func(i, j int) bool { return s.Files[i].Path < s.Files[j].Path })
	return s
}

func num(m map[string]any, k string) int64 {
	switch v := m[k].(type) {
	case float64:
		return int64(v)
	case json.Number:
		n, _ := v.Int64()
		return n
	}
	return 0
}

// controlTypes are the Claude stdout lines that belong to the control
// protocol, not to the conversation a native adapter hands over.
var controlTypes = map[string]bool{"control_request": true, "control_response": true, "control_cancel_request": true, "keep_alive": true}

func judgeNativeEvents(o *Observation) Outcome {
	if !o.handsOnCLIEvents() {
		return Outcome{Skip: true, Actual: "the adapter hands its caller events of its own, not the CLI's"}
	}
	var want []map[string]any
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if l.Obj == nil || controlTypes[str(l.Obj, "type")] {
				continue
			}
			if hostOnly, _ := l.Obj["sdk_host_only"].(bool); hostOnly {
				// Claude marks the lines only its SDK host reads (session
				// state for the SDK's own bookkeeping): not the caller's.
				continue
			}
			want = append(want, l.Obj)
		}
	}
	var got []map[string]any
	for _, e := range o.Events {
		got = append(got, e.Obj)
	}
	if d := cmp.Diff(want, got); d != "" {
		return Outcome{Expected: fmt.Sprintf("the CLI's %d events", len(want)), Actual: fmt.Sprintf("%d events that differ (see diff)", len(got)), Diff: clip(d, 6000)}
	}
	return pass()
}

// handsOnCLIEvents reports whether a native adapter passes the CLI's own
// events on (one of its events has a type the CLI wrote), rather than
// events of its own making.
func (o *Observation) handsOnCLIEvents() bool {
	var all []WireLine
	for _, lines := range o.wireLines() {
		all = append(all, lines...)
	}
	return passesOnCLIEvents(o.Events, all)
}

// passesOnCLIEvents reports whether one of evs has a type the CLI wrote in lines:
// the adapter passes the CLI's own events on.
func passesOnCLIEvents(evs []Event, lines []WireLine) bool {
	types := map[string]bool{}
	for _, l := range lines {
		if t := str(l.Obj, "type"); t != "" {
			types[t] = true
		}
	}
	for _, e := range evs {
		if types[str(e.Obj, "type")] {
			return true
		}
	}
	return false
}
