//go:build unix

package fakecli_test

import (
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// TestFaults runs codex/plain-text under faults of each kind: a pipe
// writer (slicer: same bytes, one per write; limit_data: cut, exit 0), a
// step rewrite (exit_code, die by a signal), and a bad spec (a harness
// error). Every applied fault is in the observation log.
func TestFaults(t *testing.T) {
	fx, err := loadFixture("codex/plain-text")
	if err != nil {
		t.Fatal(err)
	}
	want := walk(t, fx.Processes()[0]).stdout
	run := func(t *testing.T, spec string) (result, []fakecli.Observation) {
		f := fakecli.Start(t, fakecli.Options{Fixture: "codex/plain-text", Faults: spec})
		r := runFake(t, f, "codex", append(codexExec, "hi"), cmdOpts{})
		obs, err := f.Observations()
		if err != nil {
			t.Fatal(err)
		}
		return r, obs
	}
	faultsOf := func(obs []fakecli.Observation) []string {
		var names []string
		for _, o := range obs {
			if o.Kind == "fault" {
				names = append(names, o.Fault)
			}
		}
		return names
	}
	t.Run("slicer", func(t *testing.T) {
		r, obs := run(t, "slicer:max=1")
		if r.code != 0 || r.stdout != want {
			t.Errorf("exit %d, stdout\n%s", r.code, r.stdout)
		}
		if got := faultsOf(obs); len(got) != 1 || got[0] != "slicer" {
			t.Errorf("fault records %v", got)
		}
	})
	t.Run("limit_data", func(t *testing.T) {
		r, obs := run(t, "limit_data:bytes=100")
		if r.code != 0 || r.stdout != want[:100] {
			t.Errorf("exit %d, stdout %q", r.code, r.stdout)
		}
		if got := faultsOf(obs); len(got) != 1 || got[0] != "limit_data" {
			t.Errorf("fault records %v", got)
		}
	})
	t.Run("exit_code", func(t *testing.T) {
		r, _ := run(t, "exit_code:code=3")
		if r.code != 3 || r.stdout != want {
			t.Errorf("exit %d, stdout\n%s", r.code, r.stdout)
		}
	})
	t.Run("die", func(t *testing.T) {
		r, obs := run(t, "die:signal=SIGTERM,after=2")
		if !r.signaled || r.code != 143 {
			t.Errorf("status %d (signaled %v), want death by SIGTERM", r.code, r.signaled)
		}
		if n := strings.Count(r.stdout, "\n"); n != 2 {
			t.Errorf("%d lines before dying, want 2:\n%s", n, r.stdout)
		}
		if last := obs[len(obs)-1]; last.Kind != "exit" || last.Signal != "SIGTERM" {
			t.Errorf("last record %+v", last)
		}
	})
	t.Run("bad spec", func(t *testing.T) {
		r, _ := run(t, "no_such_fault")
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "AGENTCONFORM_FAULTS") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}
