//go:build unix

package fakecli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// spinTranscript writes a Codex transcript whose steps are lines.
func spinTranscript(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "loop.jsonl")
	body := `{"transcript":"agentconform/v1","cli":"codex","cli_version":"0.1.0"}` + "\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// spinRun starts codex exec on a transcript with stdin a pipe, keeps stdin
// open for hold, closes it, and waits (at most 10 s more) for the fake to
// end. It returns how it ended, the CPU time it used and the wall time it
// ran.
func spinRun(t *testing.T, path string, hold time.Duration) (res result, cpu, wall time.Duration, exited bool) {
	t.Helper()
	f := fakecli.Start(t, fakecli.Options{Transcript: path})
	cmd, _, cancel := command(t, f, "codex", []string{"exec", "--json", "--skip-git-repo-check", "go"}, cmdOpts{})
	defer cancel()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
		exited = true
	case <-time.After(hold):
		stdin.Close()
		select {
		case werr = <-done:
			exited = true
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			werr = <-done
		}
	}
	wall = time.Since(start)
	res = finished(t, cmd, werr, stdout.String(), stderr.String())
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return res, cpu, wall, exited
}

// TestLoopWithoutAWaitIsRejected: a transcript that loops back through a
// zero delay, with nothing that writes, reads or sleeps in the loop, is
// refused when the fake loads it, with the file, the line and what the
// loop lacks; the fake does not spin.
func TestLoopWithoutAWaitIsRejected(t *testing.T) {
	path := spinTranscript(t,
		`{"out":"{\"type\":\"thread.started\",\"thread_id\":\"t1\"}"}`,
		`{"label":"again"}`,
		`{"delay_ms":0}`,
		`{"goto":"again"}`,
	)
	res, cpu, wall, exited := spinRun(t, path, 200*time.Millisecond)
	if !exited {
		t.Fatalf("the fake still ran %v after stdin closed (CPU %v); stderr: %s", wall, cpu, clip(res.stderr))
	}
	want := path + ":5: byte "
	if !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "loops back to line 3") ||
		!strings.Contains(res.stderr, "expected an out, err or in step, or a delay_ms above 0, in the loop") {
		t.Errorf("stderr does not name %s... and what the loop lacks:\n%s", want, res.stderr)
	}
	if res.code == 0 || res.stdout != "" {
		t.Errorf("exit %d, stdout %q: want a failure before any output", res.code, res.stdout)
	}
	if cpu > 500*time.Millisecond {
		t.Errorf("the fake used %v of CPU in %v", cpu, wall)
	}
}

// TestOptionalReadAtEOFEndsTheWait: a loop whose only wait is an optional
// read blocks while stdin is open (no CPU), and once stdin closes the
// fake ends instead of running the loop for ever.
func TestOptionalReadAtEOFEndsTheWait(t *testing.T) {
	path := spinTranscript(t,
		`{"out":"{\"type\":\"thread.started\",\"thread_id\":\"t1\"}"}`,
		`{"label":"more"}`,
		`{"in":"more input","optional":true}`,
		`{"goto":"more"}`,
	)
	hold := 2 * time.Second
	res, cpu, wall, exited := spinRun(t, path, hold)
	if !exited {
		t.Fatalf("the fake still ran 10 s after stdin closed, using %v of CPU in %v", cpu, wall)
	}
	if wall < hold {
		t.Fatalf("the fake ended after %v, before stdin closed: %d %s", wall, res.code, res.stderr)
	}
	if cpu > 500*time.Millisecond {
		t.Errorf("the fake used %v of CPU in %v", cpu, wall)
	}
	if res.code != 0 || !strings.Contains(res.stdout, "thread.started") {
		t.Errorf("exit %d, stdout %q, stderr %s", res.code, res.stdout, clip(res.stderr))
	}
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}
