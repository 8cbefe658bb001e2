package unified

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/schemas"
)

func i64(v int64) *int64 { return &v }

func base(id string) Base {
	return Base{ID: id, SessionID: "s1", Timestamp: "2026-11-21T00:00:00Z"}
}

// every returns one event of each type, with zero values in the required
// fields where that matters (success false, empty content).
func every() []Event {
	return []Event{
		&SessionStarted{Base: base("e1"), AgentType: "codex", Config: &SessionConfig{AgentType: "codex", Model: "m"}},
		&TextChunk{Base: base("e2"), Content: "", IsPartial: false, Role: nil},
		&TextChunk{Base: base("e3"), Content: "hi", IsPartial: true, Role: RolePtr(RoleAssistant)},
		&ToolStarted{Base: base("e4"), ToolID: "t1", ToolName: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)},
		&ToolProgress{Base: base("e5"), ToolID: "t1", Output: "a\n"},
		&ToolCompleted{Base: base("e6"), ToolID: "t1", Success: false, Error: "exit code 2", Result: json.RawMessage(`"a\n"`)},
		&FileChanged{Base: base("e7"), FilePath: "/p/x", ChangeType: ChangeCreated},
		&TurnCompleted{Base: base("e8"), Usage: &TokenUsage{InputTokens: 10, OutputTokens: 2, CachedTokens: i64(0), TotalTokens: 12}, DurationMs: i64(5)},
		&SessionEnded{Base: base("e9"), Reason: ReasonFailed, Error: "boom"},
	}
}

func TestMarshalKeepsRequiredFieldsAndType(t *testing.T) {
	want := []string{
		`{"type":"sessionStarted","id":"e1","sessionId":"s1","timestamp":"2026-11-21T00:00:00Z","agentType":"codex","config":{"agentType":"codex","model":"m"}}`,
		`{"type":"textChunk","id":"e2","sessionId":"s1","timestamp":"2026-11-21T00:00:00Z","content":"","isPartial":false,"role":null}`,
		`{"type":"textChunk","id":"e3","sessionId":"s1","timestamp":"2026-11-21T00:00:00Z","content":"hi","isPartial":true,"role":"assistant"}`,
		`{"type":"toolStarted","id":"e4","sessionId":"s1","timestamp":"2026-11-21T00:00:00Z","toolId":"t1","toolName":"shell","arguments":{"command":"ls"}}`,
		`{"type":"toolProgress","id":"e5","sessionId":"s1","timestamp":"2026-11-21T00:00:00Z","toolId":"t1","output":"a\n"}`,
		`{"type":"toolCompleted","id":"e6","sessionId":"s1","timestamp":"2026-11-21T00:00:00Z","toolId":"t1","success":false,"result":"a\n","error":"exit code 2"}`,
		`{"type":"fileChanged","id":"e7","sessionId":"s1","timestamp":"2026-11-21T00:00:00Z","filePath":"/p/x","changeType":"created"}`,
		`{"type":"turnCompleted","id":"e8","sessionId":"s1","timestamp":"2026-11-21T00:00:00Z","usage":{"inputTokens":10,"outputTokens":2,"cachedTokens":0,"totalTokens":12},"durationMs":5}`,
		`{"type":"sessionEnded","id":"e9","sessionId":"s1","timestamp":"2026-11-21T00:00:00Z","reason":"failed","error":"boom"}`,
	}
	for i, ev := range every() {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("%T: %v", ev, err)
		}
		if string(b) != want[i] {
			t.Errorf("%T:\n got %s\nwant %s", ev, b, want[i])
		}
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	for _, ev := range every() {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", b, err)
		}
		if got.EventType() != ev.EventType() {
			t.Errorf("type %s, want %s", got.EventType(), ev.EventType())
		}
		if diff := cmp.Diff(ev, got); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", ev.EventType(), diff)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	if _, err := Decode([]byte(`{"type":"reasoning"}`)); !errors.Is(err, ErrUnknownType) {
		t.Errorf("unknown type: err %v, want ErrUnknownType", err)
	}
	if _, err := Decode([]byte(`{"type":`)); err == nil || errors.Is(err, ErrUnknownType) {
		t.Errorf("broken JSON: err %v, want a syntax error", err)
	}
	if _, err := Decode([]byte(`{"type":"textChunk","content":5}`)); err == nil {
		t.Error("content 5: no error")
	}
}

// TestEventsMatchSchema checks every event type against the unified
// profile's schema, so that the Go types and the contract cannot drift
// apart: no problems and no unknown fields.
func TestEventsMatchSchema(t *testing.T) {
	v, err := schemas.Load(schemas.Unified, schemas.UnifiedEvents, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range every() {
		b, _ := json.Marshal(ev)
		var obj map[string]any
		if err := json.Unmarshal(b, &obj); err != nil {
			t.Fatal(err)
		}
		res := v.Validate(obj)
		if len(res.Problems) > 0 || len(res.Drift) > 0 {
			t.Errorf("%s: problems %+v drift %+v", b, res.Problems, res.Drift)
		}
	}
	// The test can fail: a missing required field is a problem.
	var obj map[string]any
	_ = json.Unmarshal([]byte(`{"type":"toolCompleted","id":"x","sessionId":"s","timestamp":"2026-11-21T00:00:00Z","toolId":"t"}`), &obj)
	if res := v.Validate(obj); len(res.Problems) == 0 {
		t.Error("toolCompleted without success: no problem reported")
	}
}

func TestNewCoversEveryType(t *testing.T) {
	for _, ty := range []Type{TypeSessionStarted, TypeTextChunk, TypeToolStarted, TypeToolProgress,
		TypeToolCompleted, TypeFileChanged, TypeTurnCompleted, TypeSessionEnded} {
		ev := New(ty)
		if ev == nil || ev.EventType() != ty {
			t.Errorf("New(%s) = %v", ty, ev)
		}
		if !strings.HasPrefix(string(ty), strings.ToLower(string(ty[:1]))) {
			t.Errorf("type %s is not camelCase", ty)
		}
	}
	if New("nope") != nil {
		t.Error("New(nope) != nil")
	}
}
