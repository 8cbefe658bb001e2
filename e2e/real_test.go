//go:build unix

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/capture"
	"github.com/agentconform/agentconform/capture/proctree"
	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/reports"
)

// envRealE2E turns on the tests that run adapters on the real CLIs: they
// need npm (a CLI not on PATH is installed into the cache) and take a
// minute or two. .ci/run sets it.
const envRealE2E = "AGENTCONFORM_REAL_E2E"

// TestRealCodex runs the reference adapters and the official Codex SDK on
// the real Codex CLI, as `agentconform run --cli fake,real --case
// 'codex/*'` does: offline, the built-in mock model API playing each
// case's scenario, the recording wrapper (package realcli) between the
// adapter and the CLI. On the real CLI no reference adapter fails a
// check, the SDK fails only what its baseline lists, and every verdict
// is the one the same adapter got on the fakes: a difference is a
// fidelity bug of the fake Codex (or of the wrapper), and fails the test
// with both runs' findings.
func TestRealCodex(t *testing.T) {
	if os.Getenv(envRealE2E) != "1" {
		t.Skip("set " + envRealE2E + "=1 to run adapters on the real Codex CLI (npm installs it into the cache when it is not on PATH)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := capture.Locate(ctx, "codex", capture.LocateOptions{Install: true, Log: t.Logf})
	if err != nil {
		t.Fatalf("the real codex: %v", err)
	}
	t.Logf("real codex %s (%s)", bin.Version, bin.Source)
	// Where the runner stands, for a leftover's sessions: 0 is a session
	// led from outside this pid namespace (a container's, a sandbox's).
	ns, _ := os.Readlink("/proc/self/ns/pid")
	if self, err := proctree.Read(os.Getpid()); err == nil {
		t.Logf("runner: pid %d, session %d, pid namespace %s", self.PID, self.SID, ns)
	}
	real := &conformance.RealCLIs{Binaries: map[string]*capture.Binary{"codex": bin}}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var adapters []conformance.Adapter
	for _, p := range []string{"unified", "shim"} {
		args := append([]string{referenceArg}, conformance.ReferenceArgs(p, conformance.ReferenceStallAfter)...)
		adapters = append(adapters, conformance.Adapter{Name: "reference/" + p, Command: func(ctx context.Context) *exec.Cmd {
			return exec.CommandContext(ctx, exe, args...)
		}})
	}
	driver := requireDriver(t, codexSDK)
	adapters = append(adapters, conformance.Adapter{Name: codexSDK.name(), Command: func(ctx context.Context) *exec.Cmd {
		return exec.CommandContext(ctx, nodePath, driver)
	}})
	bl, err := conformance.ReadBaseline(filepath.Join(driversDir, codexSDK.dir, codexSDK.baseline()))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range adapters {
		t.Run(a.Name, func(t *testing.T) {
			cfg := conformance.Config{Adapter: a, FakeExe: exe, Seed: 1, Match: []string{"codex/*"}, WorkDir: t.TempDir()}
			if a.Name == codexSDK.name() {
				cfg.Baseline = bl
			}
			fake, err := conformance.Run(ctx, cfg)
			if err != nil {
				t.Fatalf("on the fakes: %v", err)
			}
			rcfg := cfg
			rcfg.Adapter.Name = conformance.RealRunName(a.Name)
			rcfg.Real, rcfg.Timeout, rcfg.WorkDir = real, conformance.RealTimeout, t.TempDir()
			rcfg.Pool = conformance.NewPoolWaiting(0, 1)
			if strings.HasPrefix(a.Name, "reference/") {
				// The reference adapters' watchdog, for the real CLI's
				// start-up and its silent tools (RealStallAfter).
				args := append([]string{referenceArg}, conformance.ReferenceArgs(strings.TrimPrefix(a.Name, "reference/"), conformance.RealStallAfter)...)
				rcfg.Adapter.Command = func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, exe, args...) }
			}
			rres, err := conformance.Run(ctx, rcfg)
			if err != nil {
				t.Fatalf("on the real codex: %v", err)
			}
			played := 0
			for _, c := range rres.Cases {
				if c.Real == nil {
					continue
				}
				played++
				for _, r := range c.Checks {
					if r.Verdict.Failed(false) && !r.Baselined {
						t.Errorf("on the real codex: %s %s %s: %s", c.ID, r.Check, r.Verdict, firstLine(r.Actual))
					}
				}
				if len(c.Real.Leaks) > 0 {
					t.Errorf("%s: the real codex tried to leave loopback: %v", c.ID, c.Real.Leaks)
				}
			}
			if played < 20 {
				t.Errorf("%d codex cases played on the real CLI, want at least 20", played)
			}
			f := reports.CompareFidelity(reports.NewDocument(fake, rres))
			if len(f.Adapters) != 1 {
				t.Fatalf("no fidelity comparison: %+v", f)
			}
			af := f.Adapters[0]
			t.Logf("%s: %d cases on both, %d only on the fakes; %d of %d (case, check) pairs agree (%.1f%%)", a.Name, af.Cases, af.RealSkipped, af.Agree, af.Pairs, 100*af.Agreement())
			for _, d := range af.Differ {
				t.Errorf("fake and real differ: %s %s: fake %s (%s), real %s (%s)", d.Case, d.Check, d.Fake, firstLine(d.FakeActual), d.Real, firstLine(d.RealActual))
			}
			if t.Failed() {
				var b strings.Builder
				reports.WriteFidelityText(&b, f)
				t.Log(b.String())
			}
		})
	}
}
