//go:build unix

package recorder

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/redact/redacttest"
	"github.com/agentconform/agentconform/transcript"
)

// sameKeys reports whether b has the shape of a: the same keys, array
// lengths and non-string values (strings may differ).
func sameKeys(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !sameKeys(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameKeys(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		_, ok := b.(string)
		return ok
	}
	return reflect.DeepEqual(a, b)
}

// TestCorpusIsRedactedInRecordings records a CLI that prints every line
// of the corpus of fake credentials (44 kinds: one split across two
// streamed text deltas, two base64-encoded, URL passwords of every
// character RFC 3986 allows, one JSON-escaped): none of them is in the
// transcript, neither as it is nor in a decoded string, and every stdout
// line is still JSON with its keys, only strings replaced.
func TestCorpusIsRedactedInRecordings(t *testing.T) {
	corpus := redacttest.Corpus()
	var lines []string
	for _, c := range corpus {
		lines = append(lines, c.Lines...)
	}
	file := filepath.Join(t.TempDir(), "stdout.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := run(t, Config{Env: testEnv(t, t.TempDir(), "lines", "RECORDER_TEST_LINES="+file), CLIVersion: "1"})
	text, tr := written(t, res)
	var missed []string
	for _, c := range corpus {
		if left := redacttest.Survivors(text, c.Secrets); len(left) > 0 {
			missed = append(missed, c.Kind)
			t.Errorf("%s: %q is in the recording", c.Kind, left)
		}
	}
	if len(missed) > 0 {
		t.Errorf("%d of %d kinds came through unredacted: %s", len(missed), len(corpus), strings.Join(missed, ", "))
	}
	var outs []string
	for _, st := range tr.Steps {
		if st.Op == transcript.OpOut {
			outs = append(outs, st.Text)
		}
	}
	if len(outs) != len(lines) {
		t.Fatalf("%d stdout steps, want %d", len(outs), len(lines))
	}
	for i, l := range outs {
		var before, after any
		json.Unmarshal([]byte(lines[i]), &before)
		if err := json.Unmarshal([]byte(l), &after); err != nil {
			t.Errorf("stdout line %d is no longer JSON: %v\n%s", i+1, err, l)
		} else if !sameKeys(before, after) {
			t.Errorf("stdout line %d changed shape:\n%s\n%s", i+1, lines[i], l)
		}
	}
	if res.Redactions.Total() < len(corpus) {
		t.Errorf("redactions: %v", res.Redactions)
	}
}
