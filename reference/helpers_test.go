package reference

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/reference/unified"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
	"github.com/agentconform/agentconform/validate"
)

// testOpts is the deterministic translator configuration of the tests.
func testOpts() Options {
	return Options{
		Clock: FixedClock(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)),
		NewID: CounterIDs("e"),
		Cwd:   "/home/user/project",
	}
}

// turnLines is one turn of a recorded stream: the prompt (if known), the
// CLI's stdout lines, and how the turn ended for the driver.
type turnLines struct {
	prompt string
	lines  [][]byte
	end    TurnEnd
}

// translate runs a translator over turns and returns every event.
func translate[E any](t *testing.T, tr Translator[E], turns []turnLines) ([]E, []TurnResult) {
	t.Helper()
	var out []E
	var results []TurnResult
	for _, turn := range turns {
		out = append(out, tr.BeginTurn(turn.prompt)...)
		for _, l := range turn.lines {
			evs, err := tr.Line(l)
			if err != nil {
				t.Errorf("Line(%.80s): %v", l, err)
			}
			out = append(out, evs...)
		}
		evs, res := tr.EndTurn(turn.end)
		out = append(out, evs...)
		results = append(results, res)
	}
	return append(out, tr.EndSession(nil)...), results
}

func unifiedOf(t *testing.T, agent Agent, turns []turnLines) ([]unified.Event, []TurnResult) {
	t.Helper()
	tr, err := NewUnified(agent, testOpts())
	if err != nil {
		t.Fatal(err)
	}
	return translate(t, tr, turns)
}

func shimOf(t *testing.T, agent Agent, turns []turnLines) ([]ShimEvent, []TurnResult) {
	t.Helper()
	tr, err := NewShim(agent, testOpts())
	if err != nil {
		t.Fatal(err)
	}
	return translate(t, tr, turns)
}

// encode writes events as JSONL.
func encode[E any](t *testing.T, evs []E) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("marshal %T: %v", ev, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// checkStream validates a unified or shim stream strictly (drift is a
// violation) and fails the test on any violation or warning.
func checkStream(t *testing.T, name string, profile Profile, stream []byte) {
	t.Helper()
	opts := validate.Options{Strict: true}
	switch profile {
	case ProfileUnified:
		opts.Dialect, opts.Profile = schemas.UnifiedEvents, schemas.Unified
	case ProfileShim:
		opts.Dialect, opts.Profile = schemas.ShimEvents, schemas.Shim
	}
	var found []string
	res, err := validate.Stream(context.Background(), bytes.NewReader(stream), name, opts,
		func(f finding.Finding, sev finding.Severity) { found = append(found, sev.String()+": "+f.String()) })
	if err != nil {
		t.Fatalf("%s: validate: %v", name, err)
	}
	if res.Violations > 0 || res.Warnings > 0 || len(res.Drift) > 0 {
		t.Errorf("%s (%s): %d violations, %d warnings, drift %v:\n%s\nstream:\n%s",
			name, profile, res.Violations, res.Warnings, res.Drift, strings.Join(found, "\n"), clipForLog(stream))
	}
}

func clipForLog(b []byte) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if len(l) > 300 {
			l = l[:300] + "..."
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// readLines reads a JSONL file's non-empty lines.
func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			out = append(out, append([]byte(nil), l...))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

const capturesDir = "../testdata/captures"

// captureTurns loads a real capture's stdout as turns: Codex and Gemini
// captures are one process (one turn); Claude's split after each result,
// with the prompts from the .stdin.jsonl file when there is one.
func captureTurns(t *testing.T, agent Agent, name string) []turnLines {
	t.Helper()
	lines := readLines(t, filepath.Join(capturesDir, string(agent), name+".stdout.jsonl"))
	if agent != Claude {
		return []turnLines{{lines: lines}}
	}
	var prompts []string
	if stdin := filepath.Join(capturesDir, "claude", name+".stdin.jsonl"); fileExists(stdin) {
		for _, l := range readLines(t, stdin) {
			var m struct {
				Type    string `json:"type"`
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(l, &m) == nil && m.Type == "user" {
				prompts = append(prompts, textOf(m.Message.Content))
			}
		}
	}
	return splitClaudeTurns(lines, prompts)
}

// splitClaudeTurns cuts a Claude stream after each result line.
func splitClaudeTurns(lines [][]byte, prompts []string) []turnLines {
	var turns []turnLines
	cur := turnLines{}
	for _, l := range lines {
		cur.lines = append(cur.lines, l)
		if bytes.Contains(l, []byte(`"type":"result"`)) {
			turns = append(turns, cur)
			cur = turnLines{}
		}
	}
	if len(cur.lines) > 0 {
		turns = append(turns, cur)
	}
	for i := range turns {
		if i < len(prompts) {
			turns[i].prompt = prompts[i]
		}
	}
	return turns
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// captureNames lists the captures of one CLI.
func captureNames(t *testing.T, agent Agent) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(capturesDir, string(agent), "*.stdout.jsonl"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no captures for %s: %v", agent, err)
	}
	var names []string
	for _, p := range m {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".stdout.jsonl"))
	}
	return names
}

// fixtureTurns replays a fixture transcript's stdout along one path, as the
// fake would without interference: each process part is a turn (Claude:
// one part, cut after each result); an `in` step with cases takes the case
// whose goto is branch, else the first; the part's exit code becomes the
// turn's error when it is not 0.
func fixtureTurns(t *testing.T, name, branch string) (Agent, []turnLines) {
	t.Helper()
	tr, err := fixtures.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := ParseAgent(tr.Header.CLI)
	if err != nil {
		t.Fatal(err)
	}
	var turns []turnLines
	for _, part := range tr.Processes() {
		lines, code := walkPart(t, part, branch)
		if agent == Claude {
			turns = append(turns, splitClaudeTurns(lines, nil)...)
			continue
		}
		turn := turnLines{lines: lines}
		if code != 0 {
			turn.end.Err = exitError(code)
		}
		turns = append(turns, turn)
	}
	return agent, turns
}

type exitError int

func (e exitError) Error() string { return "exited with status " + itoa(int(e)) }

func walkPart(t *testing.T, steps []transcript.Step, branch string) ([][]byte, int) {
	t.Helper()
	labels := transcript.Labels(steps)
	var lines [][]byte
	for i, n := 0, 0; i < len(steps); i, n = i+1, n+1 {
		if n > 100000 {
			t.Fatal("fixture walk does not end")
		}
		s := steps[i]
		switch s.Op {
		case transcript.OpOut:
			lines = append(lines, []byte(s.Text))
		case transcript.OpGoto:
			i = labels[s.Label]
		case transcript.OpIn:
			for _, c := range s.Cases {
				if c.Goto == branch || branch == "" {
					i = labels[c.Goto]
					break
				}
			}
		case transcript.OpExit:
			return lines, s.Code
		case transcript.OpExitSignal:
			return lines, 128 + 15
		}
	}
	return lines, 0
}
