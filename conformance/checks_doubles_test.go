package conformance

import (
	"strings"
	"testing"
)

// TestDoublesCountHookCopies: what Claude hands an SDK's PostToolUse hook
// (the tool's response, in a hook_callback control request) is a copy the
// CLI wrote; an adapter that passes it on beside the tool's result doubles
// nothing, and one that passes the result on twice with no hook still
// does.
func TestDoublesCountHookCopies(t *testing.T) {
	const out = "the tool printed this line"
	argv := []string{"claude", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
	lines := []string{
		`{"type":"system","subtype":"init","session_id":"s1"}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo"}}]},"session_id":"s1"}`,
		`{"type":"control_request","request_id":"r1","request":{"subtype":"hook_callback","callback_id":"hook_0","input":{"hook_event_name":"PostToolUse","tool_response":{"stdout":"` + out + `"}}}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"` + out + `"}]},"session_id":"s1"}`,
		`{"type":"result","subtype":"success","session_id":"s1"}`,
	}
	events := []Event{
		{Obj: map[string]any{"update": map[string]any{"_meta": map[string]any{"toolResponse": map[string]any{"stdout": out}}}}},
		{Obj: map[string]any{"update": map[string]any{"content": out}}},
	}
	obs := func(wire []string) *Observation {
		return &Observation{Case: &Case{Agent: "claude"}, Hello: &Hello{Profile: "native"},
			Wire:   []WireProcess{{PID: 7, Argv: argv, Bytes: []byte(strings.Join(wire, "\n") + "\n")}},
			Events: events}
	}
	if got := doubledText(obs(lines)); len(got) != 0 {
		t.Errorf("the hook's copy and the result: %q, want no double", got)
	}
	noHook := append(append([]string(nil), lines[:2]...), lines[3:]...)
	if got := doubledText(obs(noHook)); len(got) != 1 || !strings.Contains(got[0], "handed on in 2 events; the CLI wrote it in 1 lines") {
		t.Errorf("the result twice with no hook: %q, want one double", got)
	}
}
