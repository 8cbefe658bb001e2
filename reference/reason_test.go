package reference

import (
	"testing"
)

// TestTurnReasons checks the reason a translated turn ends with, for the
// fixtures that end each way and for Gemini's typed errors.
func TestTurnReasons(t *testing.T) {
	for _, tc := range []struct {
		fixture, branch string
		want            []string // per turn
	}{
		{"claude/plain-text", "default", []string{ReasonCompleted}},
		{"claude/api-error", "default", []string{ReasonFailed}},
		{"claude/max-turns", "default", []string{ReasonMaxTurns}},
		{"codex/api-error", "default", []string{ReasonFailed}},
		{"codex/multi-turn", "default", []string{ReasonCompleted, ReasonCompleted}},
		{"gemini/api-error-429", "default", []string{ReasonFailed}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			agent, turns := fixtureTurns(t, tc.fixture, tc.branch)
			_, res := unifiedOf(t, agent, turns)
			var got []string
			for _, r := range res {
				got = append(got, r.Reason)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("reasons %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("reasons %q, want %q", got, tc.want)
				}
			}
		})
	}
	aborted := `{"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"aborted_tools","errors":["[ede_diagnostic] result_type=user"],"session_id":"s","num_turns":1,"duration_ms":1}`
	if _, res := unifiedOf(t, Claude, []turnLines{{lines: [][]byte{[]byte(aborted)}}}); len(res) != 1 || res[0].Reason != ReasonCancelled {
		t.Errorf("claude result aborted_tools: %+v, want reason %s", res, ReasonCancelled)
	}
	for _, tc := range []struct {
		typ, want string
	}{
		{"FatalTurnLimitedError", ReasonMaxTurns},
		{"FatalCancellationError", ReasonCancelled},
		{"unknown", ReasonFailed},
	} {
		line := `{"type":"result","timestamp":"2026-11-21T00:00:00.000Z","status":"error","error":{"type":"` + tc.typ + `","message":"m"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0}}`
		_, res := unifiedOf(t, Gemini, []turnLines{{lines: [][]byte{[]byte(line)}}})
		if len(res) != 1 || res[0].Reason != tc.want {
			t.Errorf("gemini result error type %s: %+v, want reason %s", tc.typ, res, tc.want)
		}
	}
}
