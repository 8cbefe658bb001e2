package conformance

import (
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// TestLosslessCutByAdapter: a lossless check is SKIP only where the
// adapter stopped the CLI before the CLI ended its turn and reported the
// turn failed; an adapter that cuts the turn and reports it successful is
// judged on what the CLI had written (and fails for what it lost).
func TestLosslessCutByAdapter(t *testing.T) {
	argv := []string{"codex", "exec", "--json", "hi"}
	wire := []byte(`{"type":"thread.started","thread_id":"t1"}` + "\n" +
		`{"type":"turn.started"}` + "\n" +
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Half of the answer."}}` + "\n")
	obs := func(ok bool, log ...fakecli.Observation) *Observation {
		o := &Observation{Case: &Case{Agent: "codex"}, Hello: &Hello{Profile: "unified"},
			Fake:    append([]fakecli.Observation{{Kind: "start", PID: 10, Argv: argv}}, log...),
			Wire:    []WireProcess{{PID: 10, Argv: argv, Bytes: wire}},
			Records: []Record{{Kind: "hello"}, {Kind: "turn_end", OK: ok}, {Kind: "end"}}}
		return o
	}
	term := fakecli.Observation{Kind: "signal", PID: 10, Signal: "SIGTERM"}
	judge := unlessCut(judgeLosslessText)
	for _, tc := range []struct {
		name string
		o    *Observation
		skip bool
	}{
		{"stopped, reported failed", obs(false, term), true},
		{"killed outright, reported failed", obs(false, fakecli.Observation{Kind: "exit", PID: 10, Signal: "SIGKILL", Action: killedOutright}), true},
		{"stopped, reported successful", obs(true, term), false},
		{"not stopped (the CLI died), reported failed", obs(false), false},
	} {
		out := judge(tc.o)
		if out.Skip != tc.skip {
			t.Errorf("%s: %+v, want skip %v", tc.name, out, tc.skip)
		}
		if !tc.skip && (out.OK || !strings.Contains(out.Actual+out.Diff, "Half of the answer.")) {
			t.Errorf("%s: %+v, want the text the adapter lost", tc.name, out)
		}
	}
}
