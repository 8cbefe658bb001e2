package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/acp/acpschema"
	"github.com/agentconform/agentconform/acp/editor"
)

// The acp family judges an Agent Client Protocol agent (an editor's view
// of a program that wraps a CLI) run with `--profile acp`: agentconform's
// editor (acp/editor) drives it and logs both directions; these checks
// read that log. The other families judge the same run as they judge any
// native adapter (the editor hands on the agent's session/update params
// and prompt results as events, and reports each turn by its stopReason).
const (
	srcACPFraming     = "docs/protocols/acp.md#framing; docs/protocols/acp.md#ids; docs/protocols/acp.md#schema"
	srcACPPrompt      = "docs/protocols/acp.md#prompt-turn"
	srcACPCancel      = "docs/protocols/acp.md#cancellation"
	srcACPTools       = "docs/protocols/acp.md#tool-calls"
	srcACPFailure     = "docs/protocols/acp.md#errors"
	srcACPText        = "docs/protocols/acp.md#content"
	acpWireMaxLineLen = 256 << 20
)

// FamilyACP is the family of the checks of ACP agents.
const FamilyACP Family = "acp"

func init() { Families = append(Families, FamilyACP) }

var (
	CheckACPProtocol = register(&Check{Family: FamilyACP, Rule: rule("acp/protocol", "MUST",
		"Every line the agent writes on stdout is a JSON-RPC 2.0 message valid under the ACP schema; its responses answer the editor's requests by id, each once; its own requests have ids of their own; its updates name the session.", srcACPFraming),
		Applies: acpApplies, Judge: judgeACPProtocol})
	CheckACPPromptAnswered = register(&Check{Family: FamilyACP, Rule: rule("acp/prompt-answered", "MUST",
		"Every session/prompt gets exactly one response, whatever the CLI does (fails, dies, stalls, is cancelled): a result with a stopReason, or a JSON-RPC error.", srcACPPrompt),
		Applies: acpApplies, Judge: judgeACPPromptAnswered})
	CheckACPCancelled = register(&Check{Family: FamilyACP, Rule: rule("acp/cancelled", "MUST",
		"A session/prompt the editor cancelled (session/cancel while it ran) is answered with stopReason cancelled: not end_turn, not an error.", srcACPCancel),
		Applies: acpApplies, Judge: judgeACPCancelled})
	CheckACPToolFinal = register(&Check{Family: FamilyACP, Rule: rule("acp/tool-final", "MUST",
		"Every tool call a turn starts reaches status completed or failed (or its permission is turned down) before the turn's response, unless the turn was cancelled: no tool call is left pending in the editor.", srcACPTools),
		Applies: acpApplies, Judge: judgeACPToolFinal})
	CheckACPFailure = register(&Check{Family: FamilyACP, Rule: rule("acp/failure-reported", "MUST",
		"A turn the CLI failed (an API error, a crash, a stream cut short) is answered with a JSON-RPC error or a stopReason other than end_turn: never end_turn, which the editor shows as a successful answer (an empty one when no text came).", srcACPFailure),
		Applies: func(c *Case, h *Hello) (bool, string) {
			if ok, why := acpApplies(c, h); !ok {
				return false, why
			}
			if !c.Expect.TurnFails || c.Expect.Stall {
				return false, "the CLI does not fail a turn in this case"
			}
			return true, ""
		}, Judge: judgeACPFailure})
	CheckACPText = register(&Check{Family: FamilyACP, Rule: rule("acp/text", "MUST",
		"The assistant text the CLI sent reaches the editor byte for byte in agent_message_chunk updates: every piece of it, in order, with every multibyte character whole (a character split across two reads of the CLI's stdout is joined, never two U+FFFD).", srcACPText),
		Applies: func(c *Case, h *Hello) (bool, string) {
			if ok, why := acpApplies(c, h); !ok {
				return false, why
			}
			return losslessApplies(c, h)
		}, Judge: judgeACPText})
)

// acpApplies: the acp family judges runs of agentconform's ACP editor.
func acpApplies(_ *Case, h *Hello) (bool, string) {
	if h == nil || h.Protocol != editor.Protocol {
		return false, "applies to ACP agents (run --profile acp) only"
	}
	return true, ""
}

// acpWire is the editor's wire log of a case, as a trace.
type acpWire struct {
	trace *acp.Trace
	// closed is the index of the entry before which the editor closed the
	// agent's stdin (len(entries) when it did not), and exit the agent's
	// exit ("" when it did not exit).
	closed int
	exit   string
	// gaveUp is set when the editor gave a prompt up: the agent wrote
	// nothing for editor.Silence and did not answer session/cancel.
	gaveUp bool
	err    error
}

// readACPWire reads the wire log the editor wrote next to the fakes'
// observation log, once per observation.
func readACPWire(o *Observation) *acpWire {
	m := o.memoized()
	m.acpOnce.Do(func() { m.acp = parseACPWire(o) })
	return m.acp
}

func parseACPWire(o *Observation) *acpWire {
	w := &acpWire{}
	f, err := os.Open(filepath.Join(o.Dir, editor.WireLogName))
	if err != nil {
		w.err = fmt.Errorf("no wire log of the editor: %w", err)
		return w
	}
	defer f.Close()
	var entries []acp.Entry
	w.closed = -1
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), acpWireMaxLineLen)
	n := 0
	for sc.Scan() {
		n++
		var rec struct {
			Dir   string `json:"dir"`
			TMS   int64  `json:"t_ms"`
			Line  string `json:"line"`
			Event string `json:"event"`
			How   string `json:"how"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch rec.Dir {
		case "in", "out":
			from := acp.Agent
			if rec.Dir == "in" {
				from = acp.Client
			}
			e := acp.NewEntry(from, []byte(rec.Line))
			e.Line, e.TMS = n, rec.TMS
			entries = append(entries, e)
		case "meta":
			switch rec.Event {
			case "stdin_closed":
				if w.closed < 0 {
					w.closed = len(entries)
				}
			case "exit":
				w.exit = rec.How
			case "gave_up":
				w.gaveUp = true
			}
		}
	}
	if w.closed < 0 {
		w.closed = len(entries)
	}
	w.trace = acp.NewTrace(entries)
	return w
}

func acpNoWire(w *acpWire) (Outcome, bool) {
	if w.err != nil {
		return Outcome{Expected: "the editor's wire log", Actual: w.err.Error()}, true
	}
	if len(w.trace.Entries) == 0 {
		return Outcome{Skip: true, Actual: "the editor exchanged nothing with the agent"}, true
	}
	return Outcome{}, false
}

func (w *acpWire) line(i int) string {
	e := w.trace.Entries[i]
	dir := "editor → agent"
	if e.From == acp.Agent {
		dir = "agent → editor"
	}
	return fmt.Sprintf("%.3fs %s: %s", float64(e.TMS)/1000, dir, clip(string(e.Raw), 300))
}

func judgeACPProtocol(o *Observation) Outcome {
	w := readACPWire(o)
	if out, stop := acpNoWire(w); stop {
		return out
	}
	sv, err := acpschema.Schema()
	if err != nil {
		return Outcome{Info: true, Actual: err.Error()}
	}
	agentRules := map[string]bool{acp.RuleMessage.ID: true, acp.RuleResponsePairs.ID: true, acp.RuleIDUnique.ID: true,
		acp.RuleSchema.ID: true, acp.RuleSessionKnown.ID: true, acp.RuleToolLate.ID: true}
	var problems []string
	for _, f := range acp.Check(w.trace, "", acp.CheckOptions{Partial: true, Schema: sv}) {
		if !agentRules[f.Rule.ID] {
			continue
		}
		// Only what the agent wrote: the editor's own lines are agentconform's.
		i := entryAt(w.trace, f.Line)
		if i >= 0 && w.trace.Entries[i].From != acp.Agent {
			continue
		}
		// A prompt answered twice is acp/prompt-answered's.
		if c := w.trace.CallAt(i); f.Rule == acp.RuleResponsePairs && c != nil && c.Method == acp.MethodSessionPrompt {
			continue
		}
		p := fmt.Sprintf("%s: %s", f.Rule.ID, f.Message)
		if f.Pointer != "" {
			p += " (at " + f.Pointer + ")"
		}
		if i := entryAt(w.trace, f.Line); i >= 0 {
			p += "\n    " + w.line(i)
		}
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		if len(problems) > 8 {
			problems = append(problems[:8], fmt.Sprintf("... and %d more", len(problems)-8))
		}
		return Outcome{Expected: "JSON-RPC 2.0 messages valid under the ACP schema " + acpschema.SchemaVersion + ", responses paired with requests by id", Actual: strings.Join(problems, "\n")}
	}
	return pass()
}

// entryAt is the index of the trace entry read from wire log line n.
func entryAt(t *acp.Trace, n int) int {
	for i, e := range t.Entries {
		if e.Line == n {
			return i
		}
	}
	return -1
}

func judgeACPPromptAnswered(o *Observation) Outcome {
	w := readACPWire(o)
	if out, stop := acpNoWire(w); stop {
		return out
	}
	if len(w.trace.Prompts) == 0 {
		return Outcome{Skip: true, Actual: "the editor sent no session/prompt (the session did not start)"}
	}
	for _, p := range w.trace.Prompts {
		if p.End < 0 {
			how := "the editor closed the agent's stdin without one"
			if w.closed < len(w.trace.Entries) || w.exit != "" {
				how = "none came"
			}
			if p.Cancelled() {
				how += fmt.Sprintf(", even after session/cancel (%s)", w.line(p.Cancel))
			}
			if w.gaveUp {
				how = fmt.Sprintf("none came: the agent wrote nothing and used no CPU for %v, and then wrote nothing after session/cancel for %v", editor.Silence, editor.CancelWait)
			}
			if w.exit != "" {
				how += "; the agent then exited (" + w.exit + ")"
			}
			return Outcome{Expected: "one response to session/prompt", Actual: how + "\n    " + w.line(p.Call.Request)}
		}
		if len(p.Call.Responses) > 1 {
			return Outcome{Expected: "one response to session/prompt", Actual: fmt.Sprintf("%d responses:\n    %s\n    %s", len(p.Call.Responses), w.line(p.Call.Responses[0]), w.line(p.Call.Responses[1]))}
		}
	}
	return pass()
}

func judgeACPCancelled(o *Observation) Outcome {
	w := readACPWire(o)
	if out, stop := acpNoWire(w); stop {
		return out
	}
	judged := false
	for _, p := range w.trace.Prompts {
		if !p.Cancelled() || p.End < 0 {
			continue
		}
		judged = true
		if p.StopReason == acp.StopCancelled {
			continue
		}
		got := "stopReason " + p.StopReason
		if p.Error != nil {
			got = fmt.Sprintf("a JSON-RPC error %d %q", p.Error.Code, clip(p.Error.Message, 160))
		}
		return Outcome{Expected: "stopReason cancelled", Actual: fmt.Sprintf("%s after session/cancel:\n    %s\n    %s", got, w.line(p.Cancel), w.line(p.End))}
	}
	if !judged {
		return Outcome{Skip: true, Actual: "no answered session/prompt was cancelled in this case"}
	}
	return pass()
}

func judgeACPToolFinal(o *Observation) Outcome {
	w := readACPWire(o)
	if out, stop := acpNoWire(w); stop {
		return out
	}
	for _, p := range w.trace.Prompts {
		if p.End < 0 || p.StopReason == acp.StopCancelled {
			continue
		}
		for _, tc := range p.Tools {
			if tc.Final >= 0 && tc.Final < p.End || tc.Rejected >= 0 && tc.Rejected < p.End {
				continue
			}
			end := "stopReason " + p.StopReason
			if p.Error != nil {
				end = fmt.Sprintf("JSON-RPC error %d", p.Error.Code)
			}
			title := ""
			if tc.Title != "" {
				title = fmt.Sprintf(" (%q)", clip(tc.Title, 80))
			}
			return Outcome{Expected: "every tool call completed or failed before the turn's response",
				Actual: fmt.Sprintf("tool call %s%s is still %s when the turn ends (%s):\n    %s\n    %s", tc.ID, title, tc.Status, end, w.line(tc.First), w.line(p.End))}
		}
	}
	return pass()
}

func judgeACPFailure(o *Observation) Outcome {
	w := readACPWire(o)
	if out, stop := acpNoWire(w); stop {
		return out
	}
	if allTurnsCompleted(o) {
		// The CLI completed every turn and failed only after (an exit
		// status after its result): that is no turn's failure.
		return Outcome{Skip: true, Actual: "every turn of the CLI completed; it failed only after them"}
	}
	// The turn the CLI fails is the last prompt that was answered (the
	// cases fail the turn they run).
	var p *acp.Prompt
	for _, q := range w.trace.Prompts {
		if q.End >= 0 {
			p = q
		}
	}
	if p == nil {
		return Outcome{Skip: true, Actual: "no session/prompt was answered (acp/prompt-answered judges that)"}
	}
	if p.Error != nil || p.StopReason != acp.StopEndTurn {
		return pass()
	}
	what := "an empty success: end_turn with no agent_message_chunk text"
	if strings.TrimSpace(p.Text) != "" {
		what = fmt.Sprintf("end_turn, the failure shown as an answer (the turn's text: %q)", clip(p.Text, 160))
	}
	return Outcome{Expected: "a JSON-RPC error (or a stopReason other than end_turn)", Actual: what + "\n    " + w.line(p.End)}
}

func judgeACPText(o *Observation) Outcome {
	w := readACPWire(o)
	if out, stop := acpNoWire(w); stop {
		return out
	}
	want, _, err := o.summaries()
	if err != nil {
		return Outcome{Info: true, Actual: "no model of the CLI's output: " + err.Error()}
	}
	var got strings.Builder
	for _, p := range w.trace.Prompts {
		got.WriteString(p.Text)
	}
	text := got.String()
	if bad := strings.Count(text, string(utf8.RuneError)); bad > strings.Count(want.Text, string(utf8.RuneError)) {
		return Outcome{Expected: "the CLI's text, every character whole", Actual: fmt.Sprintf("%d U+FFFD in the agent_message_chunk text where the CLI wrote none: a multibyte character cut across two reads was decoded by halves\n    text: %q", bad, clip(text, 240))}
	}
	at := 0
	for _, pieces := range want.Pieces {
		for _, piece := range pieces {
			if piece == "" {
				continue
			}
			i := strings.Index(text[at:], piece)
			if i < 0 {
				where := "not in the agent_message_chunk text"
				if strings.Contains(text, piece) {
					where = "out of order in the agent_message_chunk text"
				}
				return Outcome{Expected: "every piece of the CLI's text, in order, byte for byte",
					Actual: fmt.Sprintf("the CLI's text %q is %s: %q", clip(piece, 160), where, clip(text, 240))}
			}
			at += i + len(piece)
		}
	}
	return pass()
}
