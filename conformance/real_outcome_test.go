package conformance

import (
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// TestRealOutcome: a real Claude whose turn failed by itself sets the
// case's expectation; one that ended because the adapter ended its input
// (the end logged, or the CLI's silent exit 0 without a result, which
// stream-json input ends only with) leaves the case as it is.
func TestRealOutcome(t *testing.T) {
	argv := []string{"claude", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
	init := `{"type":"system","subtype":"init","session_id":"s1"}` + "\n"
	failed := `{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s1"}` + "\n"
	zero, one := 0, 1
	obs := func(wire string, log ...fakecli.Observation) *Observation {
		return &Observation{Case: &Case{Agent: "claude", real: &realCase{}},
			Fake: append([]fakecli.Observation{{Kind: "start", PID: 7, Argv: argv},
				{Kind: "stdin", PID: 7, Text: `{"type":"user"}`}}, log...),
			Wire: []WireProcess{{PID: 7, Argv: argv, Bytes: []byte(wire)}}}
	}
	for _, tc := range []struct {
		name    string
		o       *Observation
		changed bool
	}{
		{"the CLI's own failed result", obs(init+failed, fakecli.Observation{Kind: "exit", PID: 7, Code: &one}), true},
		{"silent exit 0 without a result: its input ended", obs(init, fakecli.Observation{Kind: "exit", PID: 7, Code: &zero}), false},
		{"input ended before the result", obs(init, fakecli.Observation{Kind: "stdin_closed", PID: 7, TMS: 1}, fakecli.Observation{Kind: "exit", PID: 7, Code: &zero}), false},
		{"stopped by the adapter", obs(init, fakecli.Observation{Kind: "signal", PID: 7, Signal: "SIGTERM"}, fakecli.Observation{Kind: "exit", PID: 7, Code: &one}), false},
	} {
		c, note := realOutcome(tc.o.Case, tc.o)
		if changed := c != tc.o.Case; changed != tc.changed || (note != "") != tc.changed {
			t.Errorf("%s: case changed %v, note %q; want changed %v", tc.name, changed, note, tc.changed)
		}
	}
}
