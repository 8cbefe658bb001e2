package reference

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/reference/unified"
)

// TestMain lets the test binary act as the fake claude, codex and gemini.
func TestMain(m *testing.M) { fakecli.Main(m) }

// testDeadline bounds every process test.
const testDeadline = 60 * time.Second

// fakeConfig is a session config that runs agent against fakes, with
// short grace periods and deterministic events.
func fakeConfig(t *testing.T, agent Agent, fakes *fakecli.Fakes) Config {
	t.Helper()
	return Config{
		Agent:          agent,
		Cwd:            t.TempDir(),
		Env:            fakes.Env(),
		InterruptGrace: 2 * time.Second,
		StopGrace:      2 * time.Second,
		Clock:          FixedClock(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)),
		NewID:          CounterIDs("e"),
		Logf:           t.Logf,
	}
}

// collector gathers a session's events; onEvent, if set, sees each one as
// it arrives (to interrupt at the right moment).
type collector struct {
	mu      sync.Mutex
	events  []unified.Event
	onEvent func(unified.Event)
}

func (c *collector) add(ev unified.Event) {
	c.mu.Lock()
	c.events = append(c.events, ev)
	f := c.onEvent
	c.mu.Unlock()
	if f != nil {
		f(ev)
	}
}

func (c *collector) all() []unified.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.events)
}

// sessionRun is what runTurns saw.
type sessionRun struct {
	events   []unified.Event
	results  []TurnResult
	closeErr error
	elapsed  time.Duration
}

// runTurns runs prompts as the turns of one unified session and closes it,
// all within the test deadline. during, if set, is called with the session
// and every event as it arrives.
func runTurns(t *testing.T, cfg Config, prompts []string, during func(s *Session[unified.Event], ev unified.Event)) sessionRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	start := time.Now()
	c := &collector{}
	s, err := StartUnified(ctx, cfg, c.add)
	if err != nil {
		t.Fatalf("StartUnified: %v", err)
	}
	if during != nil {
		c.onEvent = func(ev unified.Event) { during(s, ev) }
	}
	var run sessionRun
	for _, p := range prompts {
		res, err := s.Prompt(ctx, p)
		if err != nil {
			t.Fatalf("Prompt(%q): %v", p, err)
		}
		run.results = append(run.results, res)
	}
	run.closeErr = s.Close(ctx)
	run.elapsed = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("the session outlived the test deadline of %s", testDeadline)
	}
	run.events = c.all()
	return run
}

// oracle is what the translator makes of a fixture's stdout along branch,
// for a session configured as cfg (with fresh deterministic ids).
func oracle(t *testing.T, fixture, branch string, cfg Config) []unified.Event {
	t.Helper()
	cfg.NewID = CounterIDs("e")
	agent, turns := fixtureTurns(t, fixture, branch)
	tr, err := NewUnified(agent, cfg.TranslatorOptions())
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := translate(t, tr, turns)
	return evs
}

// sameEvents compares two event streams line by line as JSON.
func sameEvents(t *testing.T, want, got []unified.Event) {
	t.Helper()
	if diff := cmp.Diff(lines(t, want), lines(t, got)); diff != "" {
		t.Errorf("events differ from the oracle (-want +got):\n%s", diff)
	}
}

func lines(t *testing.T, evs []unified.Event) []string {
	t.Helper()
	return strings.Split(strings.TrimSpace(string(encode(t, evs))), "\n")
}

// ofType returns the events of one type.
func ofType[T unified.Event](evs []unified.Event) []T {
	var out []T
	for _, ev := range evs {
		if x, ok := ev.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// observations reads the fakes' observation log.
func observations(t *testing.T, fakes *fakecli.Fakes) []fakecli.Observation {
	t.Helper()
	obs, err := fakes.Observations()
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// obsOf returns the observations of one kind.
func obsOf(obs []fakecli.Observation, kind string) []fakecli.Observation {
	var out []fakecli.Observation
	for _, o := range obs {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// stdinObjects decodes the JSON lines the fakes read on stdin.
func stdinObjects(t *testing.T, obs []fakecli.Observation) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, o := range obsOf(obs, "stdin") {
		var m map[string]any
		if json.Unmarshal([]byte(o.Text), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// writeTranscript writes an agentconform/v1 transcript for a fake and
// returns its path.
func writeTranscript(t *testing.T, cli string, steps ...string) string {
	t.Helper()
	version := map[string]string{"claude": "2.1.329", "codex": "0.169.0", "gemini": "0.61.0"}[cli]
	head := `{"transcript":"agentconform/v1","cli":"` + cli + `","cli_version":"` + version + `","scenario":"test","source":"synthesized"}`
	p := filepath.Join(t.TempDir(), cli+".jsonl")
	if err := os.WriteFile(p, []byte(head+"\n"+strings.Join(steps, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// out is a transcript step writing line.
func out(line string) string {
	b, _ := json.Marshal(map[string]string{"out": line})
	return string(b)
}
