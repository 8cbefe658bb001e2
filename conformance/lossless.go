package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/conformance/reference"
	"github.com/agentconform/agentconform/conformance/unified"
)

// The lossless family compares what the adapter handed its caller with
// what the reference translation of the CLI's actual output (the bytes the
// fakes wrote, faults included) hands over: assistant text (concatenated,
// so chunking does not matter), tool calls (ids, names, inputs, results,
// success, errors), file changes, and usage. Generated event ids and
// timestamps are not compared. For native adapters the events themselves
// must equal the CLI's (control messages aside).
var (
	CheckLosslessText = register(&Check{Family: FamilyLossless, Rule: rule("lossless/text", "MUST",
		"The assistant text the adapter hands its caller, concatenated, is exactly the text the CLI sent: nothing lost, nothing invented.", "seed 000 §7.1 (Lossless); "+srcIssue),
		Applies: losslessApplies, Judge: judgeLossless(func(s summary) any { return s.Text })})
	CheckLosslessTools = register(&Check{Family: FamilyLossless, Rule: rule("lossless/tools", "MUST",
		"Every tool call the CLI reported reaches the caller with its id, name, input, result, success and error, and no other.", "seed 000 §7.1 (Lossless); "+srcIssue),
		Applies: losslessApplies, Judge: judgeLossless(func(s summary) any {
			return struct {
				Tools []tool
				Files []file
			}{s.Tools, s.Files}
		})})
	CheckLosslessUsage = register(&Check{Family: FamilyLossless, Rule: rule("lossless/usage", "MUST",
		"The token usage the CLI reported reaches the caller unchanged.", "seed 000 §7.2 TokenUsage; seed 001 §6; "+srcIssue),
		Applies: losslessApplies, Judge: judgeLossless(func(s summary) any { return s.Usage })})
	CheckLosslessEvents = register(&Check{Family: FamilyLossless, Rule: rule("lossless/events", "MUST",
		"A native adapter hands its caller exactly the CLI's events (control messages aside), in order.", "protocols.md §1.2, §2.2, §3.2; "+srcIssue),
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
	if h != nil && h.Profile == "native" {
		return false, "native adapters are judged by lossless/events"
	}
	return true, ""
}

// summary is what the lossless checks compare.
type summary struct {
	Text  string
	Tools []tool
	Files []file
	Usage []usage
}

type tool struct {
	ID, Name string
	Input    any
	Result   any
	Success  bool
	Error    string
}

type file struct{ Path, Change string }

type usage struct{ Input, Output, Cached, Reasoning, Total int64 }

// summaries returns the reference translation's summary and the
// adapter's, made once per observation: the three lossless checks share
// them, and the reference translation was most of the runner's own time
// on the fuzzer's short cases.
func (o *Observation) summaries() (want, got summary, err error) {
	m := o.memoized()
	m.summariesOnce.Do(func() {
		if m.want, m.err = expectedSummary(o); m.err == nil {
			m.got = actualSummary(o)
		}
	})
	return m.want, m.got, m.err
}

func judgeLossless(pick func(summary) any) func(o *Observation) Outcome {
	return func(o *Observation) Outcome {
		want, got, err := o.summaries()
		if err != nil {
			return Outcome{Info: true, Actual: "no reference translation: " + err.Error()}
		}
		if d := cmp.Diff(pick(want), pick(got)); d != "" {
			return Outcome{Expected: "what the reference translation of the CLI's output hands over", Actual: "the adapter's events differ (see diff)", Diff: clip(d, 6000)}
		}
		return pass()
	}
}

// expectedSummary translates the wire with the reference translator of the
// adapter's profile, turn by turn.
func expectedSummary(o *Observation) (summary, error) {
	if o.Hello == nil {
		return summary{}, fmt.Errorf("no hello")
	}
	agent, err := reference.ParseAgent(o.Case.Agent)
	if err != nil {
		return summary{}, err
	}
	opts := reference.Options{Clock: func() time.Time { return time.Unix(0, 0).UTC() }, NewID: reference.CounterIDs("oracle-")}
	turns := wireTurns(o)
	prompts := sentPrompts(o)
	switch o.Hello.Profile {
	case "unified":
		tr, err := reference.NewUnified(agent, opts)
		if err != nil {
			return summary{}, err
		}
		var evs []unified.Event
		runTranslator(tr, turns, prompts, func(e []unified.Event) { evs = append(evs, e...) })
		var raws [][]byte
		for _, e := range evs {
			b, err := json.Marshal(e)
			if err != nil {
				return summary{}, err
			}
			raws = append(raws, b)
		}
		return summarize("unified", decodeAll(raws)), nil
	case "shim":
		tr, err := reference.NewShim(agent, opts)
		if err != nil {
			return summary{}, err
		}
		var raws [][]byte
		runTranslator(tr, turns, prompts, func(es []reference.ShimEvent) {
			for _, e := range es {
				if b, err := json.Marshal(e); err == nil {
					raws = append(raws, b)
				}
			}
		})
		return summarize("shim", decodeAll(raws)), nil
	}
	return summary{}, fmt.Errorf("profile %q has no reference translation", o.Hello.Profile)
}

func runTranslator[E any](tr reference.Translator[E], turns [][]WireLine, prompts []string, out func([]E)) {
	for i, lines := range turns {
		p := ""
		if i < len(prompts) {
			p = prompts[i]
		}
		out(tr.BeginTurn(p))
		for _, l := range lines {
			evs, _ := tr.Line(l.Raw)
			out(evs)
		}
		evs, _ := tr.EndTurn(reference.TurnEnd{})
		out(evs)
	}
	out(tr.EndSession(nil))
}

// wireTurns splits the CLI's output into turns: one per process for Codex
// and Gemini, and at each result for Claude (which keeps one process).
func wireTurns(o *Observation) [][]WireLine {
	procs := o.wireLines()
	if o.Case.Agent != "claude" {
		return procs
	}
	var turns [][]WireLine
	for _, lines := range procs {
		var cur []WireLine
		for _, l := range lines {
			cur = append(cur, l)
			if l.Obj != nil && l.Obj["type"] == "result" {
				turns = append(turns, cur)
				cur = nil
			}
		}
		if len(cur) > 0 {
			turns = append(turns, cur)
		}
	}
	return turns
}

func sentPrompts(o *Observation) []string {
	var out []string
	for _, s := range o.Sent {
		if s.Op == "start" || s.Op == "send" {
			var m map[string]any
			json.Unmarshal([]byte(s.Line), &m)
			p, _ := m["prompt"].(string)
			out = append(out, p)
		}
	}
	return out
}

func decodeAll(raws [][]byte) []map[string]any {
	var out []map[string]any
	for _, r := range raws {
		var m map[string]any
		if json.Unmarshal(r, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func actualSummary(o *Observation) summary {
	objs := make([]map[string]any, 0, len(o.Events))
	for _, e := range o.Events {
		objs = append(objs, e.Obj)
	}
	return summarize(o.Hello.Profile, objs)
}

// summarize projects unified or shim events onto what lossless compares.
func summarize(profile string, events []map[string]any) summary {
	var s summary
	var text strings.Builder
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
		switch profile {
		case "unified":
			switch e["type"] {
			case "textChunk":
				if e["role"] != "user" {
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
					s.Usage = append(s.Usage, usage{num(u, "inputTokens"), num(u, "outputTokens"), num(u, "cachedTokens"), num(u, "reasoningTokens"), num(u, "totalTokens")})
				}
			}
		case "shim":
			switch e["type"] {
			case "text":
				text.WriteString(str(e, "content"))
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
	s.Text = text.String()
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
	var want []map[string]any
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if l.Obj != nil && !controlTypes[str(l.Obj, "type")] {
				want = append(want, l.Obj)
			}
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
