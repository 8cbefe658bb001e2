package conformance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/capture"
	"github.com/agentconform/agentconform/conformance/internal/broken"
	"github.com/agentconform/agentconform/fakecli"
)

// standInCLIs are RealCLIs whose "real" CLIs are this test binary's fakes
// replaying the case's fixture, so that a run on the real CLIs is tested
// without them: the wrapper, the stage, the relay and the runner all run
// as they do on the real ones, and the verdicts must be the fakes'.
func standInCLIs(t *testing.T) *RealCLIs { return standInCLIsRunning(t, "") }

// standInCLIsRunning is standInCLIs whose stand-ins first run pre, a shell
// command (a tool's background process, say).
func standInCLIsRunning(t *testing.T, pre string) *RealCLIs {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fakes := filepath.Join(dir, "fakes")
	if err := os.Mkdir(fakes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fakecli.Install(fakes, exe, false); err != nil {
		t.Fatal(err)
	}
	r := &RealCLIs{Binaries: map[string]*capture.Binary{}, WorkDir: filepath.Join(dir, "stages")}
	for _, cli := range []string{"claude", "codex", "gemini"} {
		// The wrapper gives the CLI none of the fakes' settings: the
		// stand-in takes its fixture from the case's name.
		script := "#!/bin/sh\n" + pre + "\nfixture=$(printf %s \"$AGENTCONFORM_CASE\" | cut -d/ -f1,2)\n" +
			"exec env AGENTCONFORM_FIXTURE=\"$fixture\" AGENTCONFORM_SESSIONS=\"$HOME/fake-sessions\" " + filepath.Join(fakes, cli) + " \"$@\"\n"
		path := filepath.Join(dir, cli+"-stand-in")
		if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		r.Binaries[cli] = &capture.Binary{CLI: cli, Path: path, Version: "0.0.0-stand-in", Source: "flag"}
	}
	return r
}

// standInWaitsForF is a stand-in's wait for the file $f to be removed (for at
// most a minute): what it started in the background is then set up.
const standInWaitsForF = `i=0; while [ -e "$f" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done`

// runOn runs mode's adapter on the cases globs selects, on the fakes or,
// with real, on real.
func runOn(t *testing.T, mode broken.Bug, real *RealCLIs, globs ...string) *Results {
	t.Helper()
	cfg := Config{Adapter: testAdapter(t, mode), Match: globs, Timeout: 60 * time.Second, WorkDir: t.TempDir(), Real: real}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// failing lists each case's failed checks, "case check", of the cases
// that ran (not SKIP).
func failing(res *Results) map[string]bool {
	out := map[string]bool{}
	for _, c := range res.Cases {
		if c.Verdict == Skip {
			continue
		}
		for _, r := range c.Checks {
			if r.Verdict.Failed(false) {
				out[c.ID+" "+r.Check] = true
			}
		}
	}
	return out
}

// TestRealStandIn: on stand-ins for the real CLIs the reference adapter
// passes what a real CLI can play, every such case says what played it,
// and a case only a fake can play is SKIP with the reason.
func TestRealStandIn(t *testing.T) {
	t.Parallel()
	var ids []string
	for _, cli := range []string{"claude", "codex", "gemini"} {
		ids = append(ids, cli+"/single-tool", cli+"/single-tool/crlf", cli+"/single-tool/killed")
	}
	res := runOn(t, broken.ReferenceUnified, standInCLIs(t), append(ids, "codex/multi-turn", "claude/permission-deny")...)
	if res.Meta.CLI != "real" {
		t.Errorf("Meta.CLI = %q, want real", res.Meta.CLI)
	}
	played := 0
	for _, c := range res.Cases {
		switch {
		case strings.HasSuffix(c.ID, "/killed"):
			if c.Verdict != Skip || !strings.Contains(c.Checks[0].Actual, "die needs the fake CLI") {
				t.Errorf("%s: %s (%s), want SKIP: a death at a chosen line needs the fake", c.ID, c.Verdict, c.Checks[0].Actual)
			}
		case c.Verdict != Pass:
			for _, r := range c.Checks {
				if r.Verdict.Failed(true) {
					t.Errorf("%s: %s %s: %s", c.ID, r.Check, r.Verdict, r.Actual)
				}
			}
		default:
			played++
			if c.Real == nil || c.Real.Version != "0.0.0-stand-in" || c.CLIVersion != "0.0.0-stand-in" {
				t.Errorf("%s: real %+v, CLI version %q: want the stand-in's", c.ID, c.Real, c.CLIVersion)
			}
		}
	}
	if played != 8 {
		t.Errorf("%d cases played and passed, want 8 (3 single-tool, 3 crlf, multi-turn, permission-deny)", played)
	}
}

// TestRealStandInCatchesBugs: an adapter's bug fails the same checks on
// the real CLIs as on the fakes.
func TestRealStandInCatchesBugs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode  broken.Bug
		globs []string
		check string
	}{
		{broken.DropTextChunk, []string{"claude/single-tool", "codex/single-tool", "gemini/single-tool"}, "lossless/text"},
		{broken.SuccessOnFailure, []string{"claude/api-error-429", "codex/api-error-429", "gemini/api-error-429"}, "lifecycle/reports-failure"},
		{broken.CodexStdinOpen, []string{"codex/single-tool"}, "invocation/stdin-closed"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			fake := failing(runOn(t, tc.mode, nil, tc.globs...))
			real := failing(runOn(t, tc.mode, standInCLIs(t), tc.globs...))
			n := 0
			for k := range fake {
				if strings.HasSuffix(k, " "+tc.check) {
					n++
					if !real[k] {
						t.Errorf("%s fails on the fakes, not on the stand-ins for the real CLIs", k)
					}
				}
			}
			if n == 0 {
				t.Fatalf("no %s failure on the fakes: the planted bug is not caught at all (%v)", tc.check, fake)
			}
		})
	}
}

// TestRealToolLeftover: a process a real CLI's tool leaves in a session of
// its own (as Claude Code leaves a completed command's background
// processes) is not the adapter's leftover: out of its reach, it fails
// neither lifecycle check, and the case records it; the wrapper's canary
// is never among the leftovers.
func TestRealToolLeftover(t *testing.T) {
	t.Parallel()
	// The stand-in goes on once the tool's process is in its session (a
	// loaded machine may run the CLI to its end before a background
	// process it forked has called setsid).
	real := standInCLIsRunning(t, `f=$(mktemp); setsid sh -c 'rm -f "$1"; exec sleep 30' _ "$f" </dev/null >/dev/null 2>&1 &`+"\n"+standInWaitsForF)
	res := runOn(t, broken.ReferenceUnified, real, "codex/single-tool")
	if len(res.Cases) != 1 {
		t.Fatalf("%d cases", len(res.Cases))
	}
	c := res.Cases[0]
	for _, r := range c.Checks {
		if r.Verdict.Failed(true) {
			t.Errorf("%s %s: %s\n%s", r.Check, r.Verdict, r.Actual, c.Wire)
		}
	}
	if !strings.Contains(c.Wire, "sleep 30") {
		t.Errorf("the tool's leftover is not in the wire excerpt:\n%s", c.Wire)
	}
	if strings.Contains(c.Wire, ": cat\n") {
		t.Errorf("the canary is among the leftovers:\n%s", c.Wire)
	}
}

// TestRealCLISessionLeftover: a process the real CLI leaves in its own
// session (not a tool's session of its own: a launcher's child in a
// process group of its own, say) is a leftover like any other.
func TestRealCLISessionLeftover(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl makes the process group here")
	}
	real := standInCLIsRunning(t, `f=$(mktemp); perl -e 'setpgrp(0,0); unlink $ARGV[0]; sleep 31' "$f" </dev/null >/dev/null 2>&1 &`+"\n"+standInWaitsForF)
	res := runOn(t, broken.ReferenceUnified, real, "codex/single-tool")
	found := false
	for _, r := range res.Cases[0].Checks {
		if r.Check == "lifecycle/no-stray-process" {
			found = r.Verdict == Fail && strings.Contains(r.Actual, "sleep 31")
		}
	}
	if !found {
		t.Errorf("lifecycle/no-stray-process did not fail on a process the CLI left in its own session:\n%s", res.Cases[0].Wire)
	}
}
