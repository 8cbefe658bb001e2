//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runProblems is what a results file says of its problems.
type runProblems struct {
	Runs []struct {
		Cases []struct {
			ID string `json:"id"`
		} `json:"cases"`
		Problems []struct {
			Check     string   `json:"check"`
			Reason    string   `json:"reason"`
			Cases     []string `json:"cases"`
			Example   string   `json:"example"`
			Reproduce string   `json:"reproduce"`
			Follows   []struct {
				Check string   `json:"check"`
				Cases []string `json:"cases"`
			} `json:"follows"`
		} `json:"problems"`
	} `json:"runs"`
}

// runShell runs a shell command line in dir, in a process group of its
// own that is killed when it ends or after five minutes, and returns its
// stdout and exit code.
func runShell(t *testing.T, dir, line string, env ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, stderr.String())
	}
	return stdout.String(), code
}

func readProblems(t *testing.T, path string) runProblems {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r runProblems
	if err := json.Unmarshal(data, &r); err != nil || len(r.Runs) != 1 {
		t.Fatalf("%s: %v (%d runs)", path, err, len(r.Runs))
	}
	return r
}

// TestLostTailProblemReproduces runs the lost-tail adapter
// (conformance/testdata/adapters/lost-tail.py, which loses the last line
// of every turn and takes a CLI's exit 0 for success) on a turn of each
// CLI and on a CLI that exits 0 without its terminal event: the summary
// opens with one problem, the lost end in four cases, with the usage and
// text lost with it under it; the adapter's second bug stays a problem of
// its own; and the first problem's reproduce command, run as printed,
// reproduces it: one of its cases, the same check failing for the same
// reason.
func TestLostTailProblemReproduces(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true, so the lost-tail adapter must run, but python3 is not on PATH")
		}
		t.Skip("python3 is not on PATH")
	}
	exe := agentconformBinary(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "conformance", "testdata", "adapters", "lost-tail.py"))
	if err != nil {
		t.Fatal(err)
	}
	adapter := "python3 " + script
	dir := t.TempDir()
	env := []string{"TMPDIR=" + dir, "NO_COLOR=1", "GITHUB_ACTIONS="}
	line := shellQuote(exe) + " run --adapter " + shellQuote(adapter) + " -o first.json"
	for _, c := range []string{"codex/plain-text", "codex/single-tool", "claude/plain-text", "gemini/plain-text", "codex/single-tool/exit-0-no-terminal"} {
		line += " --case " + c
	}
	out, code := runShell(t, dir, line, env...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (new failures):\n%s", code, out)
	}
	summary := out[strings.Index(out, "\n"+adapter+": ")+1:]
	lines := strings.Split(summary, "\n")
	if !strings.HasPrefix(lines[0], adapter+": 2 problems (") || lines[2] != "FAIL lifecycle/ending-delivered: 4 cases (claude 1, codex 2, gemini 1)" {
		t.Errorf("the summary does not open with the lost end in 4 cases:\n%s", summary)
	}
	for _, want := range []string{
		"\n  With it, lost with the end of the turn: lossless/usage in 4 cases, lossless/text in 2 cases\n",
		"\nFAIL lifecycle/reports-failure [codex/single-tool/exit-0-no-terminal]\n",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	if strings.Contains(summary, "\nFAIL lossless/") {
		t.Errorf("a lost usage or text shown beside the lost end:\n%s", summary)
	}
	first := readProblems(t, filepath.Join(dir, "first.json")).Runs[0]
	if len(first.Problems) != 2 {
		t.Fatalf("%d problems, want 2: %+v", len(first.Problems), first.Problems)
	}
	p := first.Problems[0]
	if p.Check != "lifecycle/ending-delivered" || len(p.Cases) != 4 || len(p.Follows) != 2 || first.Problems[1].Check != "lifecycle/reports-failure" {
		t.Errorf("problems %+v", first.Problems)
	}

	// The reproduce command, as printed.
	prefix := "agentconform run --adapter " + shellQuote(adapter) + " --case " + p.Example + " "
	if !strings.HasPrefix(p.Reproduce, prefix) || !strings.Contains(summary, "  Reproduce: "+p.Reproduce+"\n") {
		t.Fatalf("reproduce command %q (summary:\n%s)", p.Reproduce, summary)
	}
	_, code = runShell(t, dir, shellQuote(exe)+strings.TrimPrefix(p.Reproduce, "agentconform")+" -o again.json", env...)
	again := readProblems(t, filepath.Join(dir, "again.json")).Runs[0]
	if code != 1 || len(again.Cases) != 1 || again.Cases[0].ID != p.Example || len(again.Problems) == 0 {
		t.Fatalf("the reproduce command: exit %d, cases %+v, problems %+v", code, again.Cases, again.Problems)
	}
	if got := again.Problems[0]; got.Check != p.Check || got.Reason != p.Reason || len(got.Cases) != 1 {
		t.Errorf("the reproduce command found %s %q in %v; want %s %q in %s", got.Check, got.Reason, got.Cases, p.Check, p.Reason, p.Example)
	}
}
