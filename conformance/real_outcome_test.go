package conformance

import (
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// TestRealOutcome: a real CLI whose turn failed by itself sets the case's
// expectation; one whose turn ended because the adapter ended its input
// (the end logged, or Claude's silent exit 0 without a result, which
// stream-json input ends only with) or stopped it leaves the case as it
// is, and so does a text answer that is empty with exit 0 (the CLI's own
// success: Gemini CLI's loop detection).
func TestRealOutcome(t *testing.T) {
	check := func(name string, o *Observation, want bool) {
		t.Helper()
		c, note := realOutcome(o.Case, o)
		if changed := c != o.Case; changed != want || (note != "") != want {
			t.Errorf("%s: case changed %v, note %q; want changed %v", name, changed, note, want)
		}
	}
	zero, one := 0, 1
	argv := []string{"claude", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
	init := `{"type":"system","subtype":"init","session_id":"s1"}` + "\n"
	failed := `{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s1"}` + "\n"
	claude := func(wire string, log ...fakecli.Observation) *Observation {
		return &Observation{Case: &Case{Agent: "claude", real: &realCase{}},
			Fake: append([]fakecli.Observation{{Kind: "start", PID: 7, Argv: argv},
				{Kind: "stdin", PID: 7, Text: `{"type":"user"}`}}, log...),
			Wire: []WireProcess{{PID: 7, Argv: argv, Bytes: []byte(wire)}}}
	}
	check("the CLI's own failed result", claude(init+failed, fakecli.Observation{Kind: "exit", PID: 7, Code: &one}), true)
	check("silent exit 0 without a result: its input ended", claude(init, fakecli.Observation{Kind: "exit", PID: 7, Code: &zero}), false)
	check("input ended before the result", claude(init, fakecli.Observation{Kind: "stdin_closed", PID: 7, TMS: 1}, fakecli.Observation{Kind: "exit", PID: 7, Code: &zero}), false)
	check("stopped by the adapter", claude(init, fakecli.Observation{Kind: "signal", PID: 7, Signal: "SIGTERM"}, fakecli.Observation{Kind: "exit", PID: 7, Code: &one}), false)

	gemini := func(code *int) *Observation {
		a := []string{"gemini", "-p", "hi"}
		return &Observation{Case: &Case{Agent: "gemini", real: &realCase{}},
			Fake: []fakecli.Observation{{Kind: "start", PID: 8, Argv: a}, {Kind: "exit", PID: 8, Code: code}},
			Wire: []WireProcess{{PID: 8, Argv: a}}}
	}
	check("gemini text, empty, exit 0", gemini(&zero), false)
	check("gemini text, empty, exit 1", gemini(&one), true)

	acp := func(fails bool, answer string, code *int) *Observation {
		a := []string{"gemini", "--experimental-acp"}
		return &Observation{Case: &Case{Agent: AgentGeminiACP, real: &realCase{}, Expect: Expect{TurnFails: fails}},
			Fake: []fakecli.Observation{{Kind: "start", PID: 9, Argv: a},
				{Kind: "stdin", PID: 9, Text: `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}`},
				{Kind: "exit", PID: 9, Code: code}},
			Wire: []WireProcess{{PID: 9, Argv: a, Bytes: []byte(answer)}}}
	}
	ended := `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}` + "\n"
	refused := `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"quota"}}` + "\n"
	check("acp: the prompt answered, exit 1 after the close", acp(false, ended, &one), false)
	check("acp: the prompt answered with an error", acp(false, refused, &zero), true)
	check("acp: a failing fixture's prompt answered", acp(true, ended, &zero), true)
	check("acp: no answer, exit 1", acp(false, "", &one), true)
	check("acp: no answer, exit 0 (the client closed it)", acp(false, "", &zero), false)
}
