package sequence

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/finding"
)

// capturesDir holds genuine output of the real CLIs (see its README).
const capturesDir = "../testdata/captures"

// readJSONL decodes a JSONL file into events, with numbers as json.Number
// as the CLI's own decoder may keep them.
func readJSONL(t *testing.T, path string) []Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	var off int64
	for i, raw := range bytes.SplitAfter(data, []byte("\n")) {
		line := bytes.TrimRight(raw, "\r\n")
		if len(line) > 0 {
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
			evs = append(evs, Event{Line: i + 1, Offset: off, Len: int64(len(line)), Obj: obj})
		}
		off += int64(len(raw))
	}
	return evs
}

// readTranscript decodes a Claude transcript: each record's "line" becomes
// an event, "in" records on stdin and "out" records on stdout; err and meta
// records are skipped. Line numbers are those of the transcript file.
func readTranscript(t *testing.T, path string) []Event {
	t.Helper()
	var evs []Event
	for _, rec := range readJSONL(t, path) {
		dir, _ := str(rec.Obj, "dir")
		raw, _ := str(rec.Obj, "line")
		var d Direction
		switch dir {
		case "in":
			d = In
		case "out":
			d = Out
		default:
			continue
		}
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("%s:%d: inner line: %v", path, rec.Line, err)
		}
		rec.Obj, rec.Dir, rec.Len = obj, d, int64(len(raw))
		evs = append(evs, rec)
	}
	return evs
}

// TestCapturesHaveNoViolations runs every real capture through its dialect:
// what the real CLIs wrote must not break a MUST rule.
func TestCapturesHaveNoViolations(t *testing.T) {
	type job struct {
		pattern, dialect string
		opts             Options
		read             func(*testing.T, string) []Event
	}
	jobs := []job{
		{"claude/*.stdout.jsonl", "claude", Options{}, readJSONL},
		{"claude/*.stdin.jsonl", "claude-stdin", Options{}, readJSONL},
		{"claude/*.transcript.jsonl", "claude", Options{Both: true}, readTranscript},
		{"codex/*.stdout.jsonl", "codex", Options{}, readJSONL},
		{"gemini/*.stdout.jsonl", "gemini", Options{}, readJSONL},
	}
	total := 0
	for _, j := range jobs {
		files, err := filepath.Glob(filepath.Join(capturesDir, j.pattern))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("no captures match %s", j.pattern)
		}
		for _, f := range files {
			total++
			t.Run(filepath.ToSlash(strings.TrimPrefix(f, capturesDir+string(filepath.Separator))), func(t *testing.T) {
				evs := j.read(t, f)
				if len(evs) == 0 {
					t.Fatal("no events")
				}
				c, err := New(j.dialect, j.opts)
				if err != nil {
					t.Fatal(err)
				}
				var all []finding.Finding
				report := func(x finding.Finding) { all = append(all, x) }
				for _, ev := range evs {
					c.Observe(ev, report)
				}
				c.End(report)
				for _, x := range all {
					if x.Rule.Level == finding.Must {
						t.Errorf("MUST finding on a real capture: %v", x)
					} else {
						t.Logf("%v", x)
					}
				}
			})
		}
	}
	if total < 10 {
		t.Errorf("only %d capture files found", total)
	}
}

// A real capture cut short is how a killed CLI looks; the checker must say
// so. This guards against the capture test passing vacuously.
func TestCapturesCutShortAreTruncated(t *testing.T) {
	for _, tc := range []struct{ file, dialect, rule string }{
		{"claude/b_tool_bash.stdout.jsonl", "claude", ClaudeTruncated.ID},
		{"codex/c_mixed_items.stdout.jsonl", "codex", CodexTruncated.ID},
		{"gemini/tool_multi.stdout.jsonl", "gemini", GeminiTruncated.ID},
	} {
		evs := readJSONL(t, filepath.Join(capturesDir, filepath.FromSlash(tc.file)))
		c, _ := New(tc.dialect, Options{})
		var got []finding.Finding
		report := func(x finding.Finding) { got = append(got, x) }
		for _, ev := range evs[:len(evs)-1] {
			c.Observe(ev, report)
		}
		c.End(report)
		if len(got) != 1 || got[0].Rule.ID != tc.rule {
			t.Errorf("%s without its last line: got %s, want one %s", tc.file, dump(got), tc.rule)
		}
	}
}
