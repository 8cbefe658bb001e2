package dialect

import (
	"encoding/json"
	"testing"
)

func TestDetect(t *testing.T) {
	tests := map[string]Dialect{
		`{"type":"system","subtype":"init","uuid":"u","session_id":"s"}`:                                                  Claude,
		`{"type":"control_response","response":{"subtype":"success","request_id":"r"}}`:                                   Claude,
		`{"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool"}}`:                                Claude,
		`{"type":"control_request","request_id":"r","request":{"subtype":"initialize"}}`:                                  ClaudeStdin,
		`{"type":"control_response","response":{"request_id":"r","response":{"behavior":"allow"}}}`:                       ClaudeStdin,
		`{"type":"user","session_id":"","message":{"role":"user","content":"hi"}}`:                                        ClaudeStdin,
		`{"type":"thread.started","thread_id":"t"}`:                                                                       Codex,
		`{"type":"init","timestamp":"2025-01-01T00:00:00Z","session_id":"s","model":"m"}`:                                 Gemini,
		`{"type":"sessionStarted","id":"1","sessionId":"s","timestamp":"t","agentType":"codex"}`:                          UnifiedEvents,
		`{"type":"system","subtype":"init","session_id":"s","model":"m","cwd":"/","permissionMode":"default","tools":[]}`: ShimEvents,
		`{"type":"text","content":"hi"}`:                                                                                  ShimEvents,
	}
	for line, want := range tests {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		got, ok := Detect([]map[string]any{{"type": "keep_alive"}, m})
		if !ok || got != want {
			t.Errorf("%s: Detect = %q, %v; want %q", line, got, ok, want)
		}
	}
	if d, ok := Detect([]map[string]any{{"type": "keep_alive"}}); ok {
		t.Errorf("keep_alive alone decided %q", d)
	}
}
