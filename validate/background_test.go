package validate

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCodexBackgroundCommandCapture: real Codex 0.169.0 ended a turn with
// turn.completed while a command it had moved to the background was still
// running, never completing that command's item (the exec JSONL processor
// completes at turn end only the running plan and the items the thread's
// stored history lists). That stream is clean; the rule that once flagged
// it still catches a plan left open, and the stream cut before its
// terminal event is still truncated.
func TestCodexBackgroundCommandCapture(t *testing.T) {
	const file = "../testdata/captures/codex/0.169.0/background-command.jsonl"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	capture := string(data)
	if !strings.Contains(capture, `\"type\":\"item.started\",\"item\":{\"id\":\"item_1\",\"type\":\"command_execution\"`) ||
		strings.Contains(capture, `\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\"`) {
		t.Fatal("the capture no longer shows a command left open at turn end")
	}
	got, res := collect(t, strings.NewReader(capture), Options{})
	if len(got) != 0 || res.Violations != 0 || res.Warnings != 0 {
		t.Errorf("the real stream: %v", got)
	}

	started := outStep(t, `{"type":"item.started","item":{"id":"item_9","type":"todo_list","items":[{"text":"Start the server","completed":false}]}}`)
	turnEnd := `{"out":"{\"type\":\"turn.completed\"`
	i := strings.Index(capture, turnEnd)
	if i < 0 {
		t.Fatal("no turn.completed step")
	}
	for _, tc := range []struct {
		name, input string
		want        []string
	}{
		{"plan left open", capture[:i] + started + "\n" + capture[i:], []string{"codex/item/todo-list-closed-at-turn-end@10"}},
		{"no terminal event", capture[:i] + capture[i+strings.IndexByte(capture[i:], '\n')+1:], []string{"codex/stream/truncated@8"}},
	} {
		got, _ := collect(t, strings.NewReader(tc.input), Options{})
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// outStep is an agentconform/v1 step that writes line on stdout.
func outStep(t *testing.T, line string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"out": line})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
