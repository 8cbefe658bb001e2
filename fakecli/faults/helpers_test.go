package faults

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentconform/agentconform/transcript"
)

// captures are the real CLI streams the tests run faults on.
var captures = []string{
	"claude/a_plain_text.stdout.jsonl",
	"claude/b_tool_bash.stdout.jsonl",
	"claude/f_bidi_multiturn.stdout.jsonl",
	"claude/f_bidi_permission_allow.transcript.jsonl",
	"codex/a_plain_text.stdout.jsonl",
	"codex/b_single_command.stdout.jsonl",
	"codex/c_mixed_items.stdout.jsonl",
	"gemini/plain_text.stdout.jsonl",
	"gemini/tool_single.stdout.jsonl",
	"gemini/tool_multi.stdout.jsonl",
}

// load reads a capture (relative to testdata/captures) as one process's
// steps, and its CLI.
func load(t testing.TB, name string) (string, []transcript.Step) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "captures", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := transcript.Load(f, name, transcript.Options{})
	if err != nil {
		t.Fatalf("loading %s: %v", name, err)
	}
	procs := tr.Processes()
	if len(procs) != 1 {
		t.Fatalf("%s: %d processes, want 1", name, len(procs))
	}
	return tr.Header.CLI, procs[0]
}

// mustParse parses a spec and stubs the clock: sleeps are recorded, not
// slept.
func mustParse(t testing.TB, spec string, seed int64) (*Plan, *sleeps) {
	t.Helper()
	p, err := Parse(spec, seed)
	if err != nil {
		t.Fatalf("Parse(%q): %v", spec, err)
	}
	if p == nil {
		t.Fatalf("Parse(%q) gave a nil plan", spec)
	}
	s := &sleeps{}
	p.sleep = s.sleep
	return p, s
}

// run applies a spec's step faults to a capture.
func run(t testing.TB, spec string, seed int64, name string) (before, after []transcript.Step, applied []Applied) {
	t.Helper()
	cli, steps := load(t, name)
	p, _ := mustParse(t, spec, seed)
	orig := append([]transcript.Step(nil), steps...)
	after = p.Steps(cli, steps)
	if !sameSteps(steps, orig) {
		t.Fatalf("Steps modified its input")
	}
	return orig, after, p.Applied()
}

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(d time.Duration) {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
}

func (s *sleeps) total() time.Duration {
	var sum time.Duration
	for _, d := range s.d {
		sum += d
	}
	return sum
}

// recorder keeps every Write it gets, separately.
type recorder struct {
	writes [][]byte
}

func (r *recorder) Write(b []byte) (int, error) {
	r.writes = append(r.writes, append([]byte(nil), b...))
	return len(b), nil
}

func (r *recorder) joined() []byte { return bytes.Join(r.writes, nil) }

// lines are the stdout lines of steps as the engine writes them.
func lines(steps []transcript.Step) [][]byte {
	var out [][]byte
	for _, s := range steps {
		if s.Op == transcript.OpOut {
			l := s.Text
			if !s.NoNewline {
				l += "\n"
			}
			out = append(out, []byte(l))
		}
	}
	return out
}

func outTexts(steps []transcript.Step) []string {
	var out []string
	for _, s := range steps {
		if s.Op == transcript.OpOut {
			out = append(out, s.Text)
		}
	}
	return out
}

func sameSteps(a, b []transcript.Step) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ja, _ := json.Marshal(a[i])
		jb, _ := json.Marshal(b[i])
		if !bytes.Equal(ja, jb) || a[i].Line != b[i].Line {
			return false
		}
	}
	return true
}

// decode decodes a JSON line into a map, failing the test if it is not one.
func decode(t testing.TB, line string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("line is not a JSON object: %v: %.200s", err, line)
	}
	return m
}

// changed returns the indexes of out texts that differ, for two lists of
// equal length.
func changed(t testing.TB, a, b []string) []int {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d stdout lines, want %d", len(b), len(a))
	}
	var idx []int
	for i := range a {
		if a[i] != b[i] {
			idx = append(idx, i)
		}
	}
	return idx
}

func onlyApplied(t testing.TB, applied []Applied, fault string) Applied {
	t.Helper()
	if len(applied) != 1 || applied[0].Fault != fault {
		t.Fatalf("Applied = %+v, want one %s", applied, fault)
	}
	return applied[0]
}

func itoa(n int) string { return strconv.Itoa(n) }

func join(s []string) string { return strings.Join(s, ",") }

// stepsOf makes a process of out lines and exit 0.
func stepsOf(texts ...string) []transcript.Step {
	var steps []transcript.Step
	for i, s := range texts {
		steps = append(steps, transcript.Step{Line: i + 1, Op: transcript.OpOut, Text: s})
	}
	return append(steps, transcript.Step{Op: transcript.OpExit})
}
