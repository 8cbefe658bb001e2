package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fixtures/acpfixtures"
	"github.com/agentconform/agentconform/transcript"
)

// AgentGeminiACP is the agent of the cases of Agent Client Protocol
// clients of Gemini CLI: an adapter that names it in its hello (an
// editor's back end, an AI SDK provider, a bridge) runs `gemini --acp`
// (or the deprecated `--experimental-acp`) for a start with that agent and
// speaks ACP on its stdio as the client. It is judged on the ACP fixtures
// (package fixtures/acpfixtures), which the fake gemini replays in both
// directions, by the checks of checks_acpclient.go and the harness-level
// checks (acpClientGeneric). Adapters of `gemini -p` never get these
// cases, and ACP agents (run --profile acp) are judged by the acp family
// instead.
const AgentGeminiACP = "gemini-acp"

// acpClientFixture is the fixture name a case of AgentGeminiACP gives the
// fakes for an ACP scenario: the fake gemini, started with --acp, replays
// the ACP fixture of the scenario ("gemini/acp-plain-text" replays
// fixtures/acpfixtures/gemini/plain-text.jsonl), named as its capture is.
func acpClientFixture(scenario string) string { return "gemini/acp-" + scenario }

// acpClientGeneric are the harness-level checks that judge a client of
// gemini --acp as they judge any adapter: its records, its end, the
// processes it leaves. The others judge the CLIs' JSON streams and are
// SKIP on these cases (as on the app-server cases).
var acpClientGeneric = appServerGeneric

// acpClientSkip says why chk does not judge case c ("" when it does): the
// checks of ACP clients judge only the cases of AgentGeminiACP, and of the
// other checks only acpClientGeneric judge them.
func acpClientSkip(chk *Check, c *Case) string {
	return surfaceSkip(chk, c, AgentGeminiACP, "/acp-client-", acpClientGeneric,
		"judges the CLIs' JSON streams or an ACP agent, not a client of gemini --acp", "applies to clients of gemini --acp only")
}

// acpClientCases are the cases of clients of gemini --acp, when agents
// names AgentGeminiACP: every ACP fixture as recorded (the permission
// fixture under both policies, the cancel fixture interrupted in its
// window and then a second turn, the load fixture as a start that loads
// the recorded session, and one that loads a session the agent does not
// have), the unicode fixture with every character split across reads,
// and faults of the pipe and of the protocol on the single-tool session.
func acpClientCases(agents []string) ([]*Case, error) {
	if !slices.Contains(agents, AgentGeminiACP) {
		return nil, nil
	}
	byScenario := map[string]*transcript.Transcript{}
	var cases []*Case
	for _, name := range acpfixtures.Names() {
		t, err := acpfixtures.Load(name)
		if err != nil {
			return nil, err
		}
		scenario := t.Header.Scenario
		byScenario[scenario] = t
		c := &Case{ID: AgentGeminiACP + "/" + scenario, Agent: AgentGeminiACP, Fixture: acpClientFixture(scenario), Permission: "allow",
			Prompts: acpClientPrompts(t, 0), Description: t.Header.Description, CLIVersion: t.Header.CLIVersion}
		switch {
		case scenario == "cancel":
			// Interrupted in the window the fixture has after its command
			// started; the runner then sends one more prompt.
			c.Prompts = c.Prompts[:1]
			c.Interrupt = &InterruptPlan{AfterEvents: acpLinesUntil(t, `"sessionUpdate":"tool_call"`), ThenTurn: true}
			c.Expect.Cancelled = true
		case strings.HasPrefix(scenario, "api-error"):
			c.Expect.TurnFails = true
		case scenario == "load":
			// One client process that loads the session the fixture's
			// first process made, and prompts in it.
			c.Resume = recordedACPSession(t)
			c.Prompts = acpClientPrompts(t, 1)
			c.Description = "session/load of an earlier session (its history streamed back, partly after the load's response), then a prompt in it"
		case scenario == "permission" || scenario == "fs":
			// The agent waits for the client's answers: a client that never
			// answers is closed once quiet, not left to time out.
			c.CloseWhenQuiet = 5 * time.Second
		}
		cases = append(cases, c)
		switch scenario {
		case "permission":
			deny := *c
			deny.ID = c.ID + "/policy-deny"
			deny.Permission = "deny"
			deny.Description = "the same session with a deny policy: the client must pick a reject option"
			cases = append(cases, &deny)
			// The agent's request crosses the client's session/cancel: it
			// is written once the client has cancelled, and the client must
			// answer it with the cancelled outcome, not the policy.
			at := acpLinesUntil(t, `"method":"session/request_permission"`)
			cases = append(cases, &Case{ID: c.ID + "/request-after-cancel", Agent: AgentGeminiACP, Fixture: c.Fixture,
				Faults: "latency:ms=3000,line=" + strconv.Itoa(at), Permission: "allow", Prompts: c.Prompts, CLIVersion: c.CLIVersion,
				Interrupt: &InterruptPlan{AfterEvents: at - 1}, Expect: Expect{Cancelled: true},
				Description: fmt.Sprintf("interrupt while the agent is about to ask permission: its request (line %d) is written 3 s later, after the client's session/cancel, which it reads only then; the client must answer it with the cancelled outcome", at)})
		case "unicode":
			cases = append(cases, withSplitCharacters(c))
		case "load":
			unknown := *c
			unknown.ID = c.ID + "/unknown-session"
			unknown.Resume = "00000000-0000-4000-8000-000000000000"
			unknown.Expect = Expect{TurnFails: true, UnknownSession: true}
			unknown.Description = "session/load of a session the agent does not have: it answers -32603 (No previous sessions found for this project.) and the turn fails"
			cases = append(cases, &unknown)
		}
	}
	t := byScenario["single-tool"]
	if t == nil {
		return cases, nil
	}
	base := AgentGeminiACP + "/single-tool"
	one := acpClientPrompts(t, 0)
	outs := countOut(t.Steps)
	for _, v := range []struct {
		variant, faults, description string
		expect                       Expect
		quiet                        time.Duration
	}{
		{"slicer", "slicer:max=7,delay_us=300", "every stdout line cut into writes of at most 7 bytes, 0.3 ms apart", Expect{}, 0},
		{"killed", "die:signal=SIGKILL,after=" + strconv.Itoa(outs-2), "the agent is killed by SIGKILL in the middle of the turn, before its answer to session/prompt", Expect{TurnFails: true}, 0},
		{"exit-mid-line", "exit_mid_line:code=1", "the agent dies half way through its answer to session/prompt (the line cut, no newline) and exits 1", Expect{TurnFails: true}, 0},
		{"stall", "stall:after=" + strconv.Itoa(outs-2), "the agent stops writing in the middle of the turn and stays alive; the runner closes", Expect{TurnFails: true, Stall: true}, 500 * time.Millisecond},
		{"prompt-unanswered", "answer_never:method=session/prompt,nth=1", "the agent never answers session/prompt (its updates all come) and stays alive; the runner closes", Expect{TurnFails: true, Stall: true}, 500 * time.Millisecond},
		{"answer-twice", "answer_twice:method=session/prompt,nth=1", "the agent answers session/prompt twice (the same id): the second answer names no pending request", Expect{Unknown: true}, 0},
		{"unknown-update", "acp_unknown_update:nth=2", "a session/update of a kind no client knows, in the middle of the turn", Expect{Unknown: true}, 0},
		{"unknown-field", "acp_unknown_field:nth=2", "a field no client knows inside an update", Expect{Unknown: true}, 0},
		{"unknown-method", "unknown_method:after=" + strconv.Itoa(outs-3), "a notification of a method no client knows, in the middle of the turn", Expect{Unknown: true}, 0},
		{"unknown-request", "unknown_request:after=" + strconv.Itoa(outs-3), "a request of a method no client knows, which the agent waits to see answered (with an error) before it goes on", Expect{Unknown: true}, 5 * time.Second},
	} {
		cases = append(cases, &Case{ID: base + "/" + v.variant, Agent: AgentGeminiACP, Fixture: acpClientFixture("single-tool"), Faults: v.faults,
			Permission: "allow", Prompts: one, Expect: v.expect, CloseWhenQuiet: v.quiet, Description: v.description, CLIVersion: t.Header.CLIVersion})
	}
	// Cancel where the fixture has no cancelled branch: the fake answers
	// session/cancel as Gemini CLI does, skipping the rest of the turn.
	at := acpLinesUntil(t, `"sessionUpdate":"tool_call"`)
	cases = append(cases, &Case{ID: base + "/cancel-while-running", Agent: AgentGeminiACP, Fixture: acpClientFixture("single-tool"),
		Faults: "stall:after=" + strconv.Itoa(at), Permission: "allow", Prompts: one, CLIVersion: t.Header.CLIVersion,
		Interrupt: &InterruptPlan{AfterEvents: at}, Expect: Expect{Cancelled: true, Stall: true},
		Description: fmt.Sprintf("interrupt once the tool call started (the agent stalls after its line %d): session/cancel, and the prompt answers cancelled", at)})
	return cases, nil
}

// acpClientPrompts are the prompts of the session/prompt requests the
// recorded client sent in process part (0: the first process), as their
// first text block says.
func acpClientPrompts(t *transcript.Transcript, part int) []string {
	var out []string
	procs := t.Processes()
	if part < len(procs) {
		for _, s := range procs[part] {
			if s.Op == transcript.OpLabel && s.Label != "" && len(out) > 0 {
				break // a branch: the main path's prompts are in
			}
			if s.Op != transcript.OpIn || s.Match == nil || s.Match["method"] != acp.MethodSessionPrompt || s.Recorded == "" {
				continue
			}
			var m struct {
				Params struct {
					Prompt []struct {
						Text string `json:"text"`
					} `json:"prompt"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(s.Recorded), &m) == nil && len(m.Params.Prompt) > 0 && m.Params.Prompt[0].Text != "" {
				out = append(out, m.Params.Prompt[0].Text)
			}
		}
	}
	if len(out) == 0 {
		out = []string{"Please do what the fixture " + t.Header.Scenario + " shows."}
	}
	return out
}

// acpLinesUntil counts the agent's stdout lines of the first process up
// to and including the first one that contains marker.
func acpLinesUntil(t *transcript.Transcript, marker string) int {
	n := 0
	for _, s := range t.Processes()[0] {
		if s.Op != transcript.OpOut {
			continue
		}
		n++
		if strings.Contains(s.Text, marker) {
			return n
		}
	}
	return n
}

// recordedACPSession is the session id a fixture's session/load asks for.
func recordedACPSession(t *transcript.Transcript) string {
	for _, s := range t.Steps {
		if s.Op == transcript.OpIn && s.Match != nil && s.Match["method"] == acp.MethodSessionLoad && s.Recorded != "" {
			var m struct {
				Params struct {
					SessionID string `json:"sessionId"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(s.Recorded), &m) == nil {
				return m.Params.SessionID
			}
		}
	}
	return ""
}

// acpClientProc is one `gemini --acp` process of a case: both directions
// of its stdio in the order the agent saw them (what it wrote, and each
// client line where it read it), followed as an ACP session.
type acpClientProc struct {
	PID   int
	Argv  []string
	Trace *acp.Trace
	// Matched is, per entry of the client, what the fake made of it (its
	// stdin record's matched: "step", "control", "ignored", "malformed",
	// "unmatched", "unread"); "" for the agent's entries.
	Matched []string
	// Signals are the signals the process got, with the number of trace
	// entries before each.
	Signals []acpSignal
}

// acpSignal is a signal an agent process got, and when.
type acpSignal struct {
	Name   string
	Before int // trace entries before it
}

// isACPArgv reports whether argv starts Gemini CLI's ACP mode.
func isACPArgv(argv []string) bool {
	return slices.Contains(argv, "--acp") || slices.Contains(argv, "--experimental-acp")
}

// acpClientProcs follows every `gemini --acp` process of the case through
// the fakes' log: each stdout line of the process (its wire copy, one line
// per out record, in order) and each stdin line it read (its stdin
// records), interleaved as the log has them. Lines the process wrote after
// its last log record (a process killed before it flushed its log) come
// last, unless snapshot says log is the log as it stood at some moment
// (FakeAtTurnEnd): then only the lines it records are.
func (o *Observation) acpClientProcs(log []fakecli.Observation, snapshot bool) []*acpClientProc {
	wires := map[int][]byte{}
	for _, w := range o.Wire {
		wires[w.PID] = w.Bytes
	}
	var out []*acpClientProc
	for _, s := range o.FakeStarts() {
		if s.CLI != "gemini" || !isACPArgv(s.Argv) {
			continue
		}
		lines := splitWireLines(wires[s.PID])
		var entries []acp.Entry
		var matched []string
		var sigs []acpSignal
		next := 0
		for _, r := range log {
			if r.PID != s.PID {
				continue
			}
			switch r.Kind {
			case "out":
				if next < len(lines) {
					e := acp.NewEntry(acp.Agent, lines[next])
					e.TMS = r.TMS
					entries = append(entries, e)
					matched = append(matched, "")
					next++
				}
			case "stdin":
				e := acp.NewEntry(acp.Client, []byte(r.Text))
				e.TMS = r.TMS
				entries = append(entries, e)
				matched = append(matched, r.Matched)
			case "signal":
				sigs = append(sigs, acpSignal{Name: r.Signal, Before: len(entries)})
			}
		}
		if snapshot {
			lines = lines[:next]
		}
		for ; next < len(lines); next++ {
			entries = append(entries, acp.NewEntry(acp.Agent, lines[next]))
			matched = append(matched, "")
		}
		out = append(out, &acpClientProc{PID: s.PID, Argv: s.Argv, Trace: acp.NewTrace(entries), Matched: matched, Signals: sigs})
	}
	return out
}

// splitWireLines splits a process's stdout into lines, without their
// "\n" (and a "\r" before it); a last line without a newline is kept.
func splitWireLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, bytes.TrimSuffix(b[:i], []byte("\r")))
		b = b[i+1:]
	}
	return out
}

// acpPrompts are the session/prompt turns of every ACP process of the
// case, in order.
func acpPrompts(procs []*acpClientProc) []*acp.Prompt {
	var out []*acp.Prompt
	for _, p := range procs {
		out = append(out, p.Trace.Prompts...)
	}
	return out
}

// turnsAsked is how many turns the runner asked for (start and send).
func (o *Observation) turnsAsked() int {
	n := 0
	for _, s := range o.Sent {
		if s.Op == "start" || s.Op == "send" {
			n++
		}
	}
	return n
}

// entryText is an entry's line, clipped for a report.
func entryText(t *acp.Trace, i int) string {
	if i < 0 || i >= len(t.Entries) {
		return ""
	}
	return clip(string(t.Entries[i].Raw), 200)
}
