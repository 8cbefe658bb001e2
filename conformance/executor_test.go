package conformance

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentconform/agentconform/conformance/internal/broken"
)

// TestExecutorReusesDirectories runs cases through one Executor, one
// after another and two at a time, and checks that every case sees what
// Exec gives it (the same events, records and fake log), that nothing of
// a case is left for the next (the directories are emptied) and that
// Close removes everything.
func TestExecutorReusesDirectories(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	cfg := Config{Adapter: testAdapter(t, broken.ReferenceUnified), FakeExe: exe, WorkDir: filepath.Join(work, "x")}
	x, err := NewExecutor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cases := []*Case{
		{ID: "exec/codex/single-tool", Agent: "codex", Fixture: "codex/single-tool", Permission: "allow", Prompts: []string{"p"}},
		{ID: "exec/claude/plain-text", Agent: "claude", Fixture: "claude/plain-text", Permission: "allow", Prompts: []string{"p"}},
		{ID: "exec/gemini/single-tool", Agent: "gemini", Fixture: "gemini/single-tool", Permission: "allow", Prompts: []string{"p"}, Seed: 7},
	}
	summary := func(o *Observation) (int, int, int, int) {
		return len(o.Events), len(o.Records), len(o.Fake), len(o.Wire)
	}
	want := map[string][4]int{}
	for _, c := range cases {
		o, err := Exec(context.Background(), Config{Adapter: cfg.Adapter, FakeExe: exe, WorkDir: filepath.Join(work, "one")}, c)
		if err != nil {
			t.Fatal(err)
		}
		e, r, f, w := summary(o)
		want[c.ID] = [4]int{e, r, f, w}
		if out := CheckEnds.Judge(o); !out.OK {
			t.Fatalf("%s through Exec: %s", c.ID, out.Actual)
		}
	}
	check := func(c *Case) {
		o, err := x.Exec(context.Background(), c)
		if err != nil {
			t.Error(err)
			return
		}
		e, r, f, w := summary(o)
		if got := [4]int{e, r, f, w}; got != want[c.ID] {
			t.Errorf("%s: events, records, fake records, wire processes %v through the Executor, %v through Exec", c.ID, got, want[c.ID])
		}
		for _, chk := range []*Check{CheckEnds, CheckLosslessText, CheckLosslessTools} {
			if out := chk.Judge(o); !out.OK && !out.Info {
				t.Errorf("%s: %s: %s %s", c.ID, chk.ID, out.Actual, out.Diff)
			}
		}
		if o.Dir != "" {
			t.Errorf("%s: Dir %q of a reused directory", c.ID, o.Dir)
		}
	}
	for round := 0; round < 2; round++ {
		for _, c := range cases {
			check(c)
		}
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() { defer wg.Done(); check(c) }()
	}
	wg.Wait()

	// Every free directory is empty but for its subdirectories.
	dirs, _ := filepath.Glob(filepath.Join(cfg.WorkDir, "case-*"))
	if len(dirs) == 0 || len(dirs) > len(cases) {
		t.Errorf("%d case directories for %d concurrent cases", len(dirs), len(cases))
	}
	for _, d := range dirs {
		filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				t.Errorf("left behind: %s", p)
			}
			return nil
		})
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.WorkDir); !os.IsNotExist(err) {
		left, _ := os.ReadDir(cfg.WorkDir)
		if len(left) > 0 {
			t.Errorf("Close left %d entries in the work directory", len(left))
		}
	}
}
