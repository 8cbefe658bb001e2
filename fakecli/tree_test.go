//go:build linux

package fakecli_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// treeArgs are the invocations of the interrupt fixture the process-fault
// tests run (stdin is /dev/null).
var treeArgs = map[string][]string{
	"claude": {"-p", "hi", "--output-format", "stream-json", "--verbose"},
	"codex":  {"exec", "--json", "--skip-git-repo-check", "hi"},
	"gemini": {"-p", "hi", "-o", "stream-json", "-y"},
}

// startTree starts cli behind the launcher fault (and more faults) in a
// process group of its own, stdout discarded, and waits until the CLI
// child has written its first line. It returns the launcher's command and the
// child's pid; the test's cleanup kills the group.
func startTree(t *testing.T, cli, faults string) (*exec.Cmd, *fakecli.Fakes, int) {
	t.Helper()
	f := fakecli.Start(t, fakecli.Options{Fixture: cli + "/interrupt", Faults: faults})
	cmd, _, cancel := command(t, f, cli, treeArgs[cli], cmdOpts{})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cancel()
		cmd.Wait()
	})
	child := waitRecord(t, f, func(r fakecli.Observation) bool { return r.Kind == "start" }).PID
	// Signals go once the CLI is in its turn (it has written a line), as
	// the runner's do: before its first step it would not ignore them yet.
	waitRecord(t, f, func(r fakecli.Observation) bool { return r.Kind == "out" && r.PID == child })
	return cmd, f, child
}

// waitRecord waits for the first log record that ok accepts.
func waitRecord(t *testing.T, f *fakecli.Fakes, ok func(fakecli.Observation) bool) fakecli.Observation {
	t.Helper()
	for end := time.Now().Add(lineTimeout); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		log, _ := f.Observations()
		for _, r := range log {
			if ok(r) {
				return r
			}
		}
	}
	log, _ := f.Observations()
	t.Fatalf("no such record within %v; log: %+v", lineTimeout, log)
	return fakecli.Observation{}
}

// signalsOf lists the signals pid logged.
func signalsOf(f *fakecli.Fakes, pid int) []string {
	log, _ := f.Observations()
	var out []string
	for _, r := range log {
		if r.PID == pid && r.Kind == "signal" {
			out = append(out, r.Signal)
		}
	}
	return out
}

// running reports whether pid is alive and not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// waitGone waits for pid to be gone; it fails the test if it is not.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for end := time.Now().Add(lineTimeout); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if !running(pid) {
			return
		}
	}
	t.Fatalf("%s (pid %d) still running after %v", what, pid, lineTimeout)
}

// settle gives a signal time to be handled (or ignored).
func settle() { time.Sleep(300 * time.Millisecond) }

func TestLauncherCodexForwardsTheFirstSignal(t *testing.T) {
	t.Parallel()
	// The child ignores SIGINT, so the forwarded SIGINT does not end it;
	// the launcher then swallows SIGTERM (child.killed is true).
	cmd, f, child := startTree(t, "codex", "launcher:style=codex;ignore_signal:signal=SIGINT")
	if child == cmd.Process.Pid {
		t.Fatal("the CLI runs as the process started: no launcher")
	}
	syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
	waitRecord(t, f, func(r fakecli.Observation) bool { return r.PID == child && r.Kind == "signal" })
	syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	settle()
	if got := signalsOf(f, child); !slices.Equal(got, []string{"SIGINT"}) {
		t.Errorf("the child got %v, want the first signal only, [SIGINT]", got)
	}
	if !running(cmd.Process.Pid) || !running(child) {
		t.Fatal("the launcher or its child died of a signal the launcher swallowed")
	}
	// SIGKILL to the launcher alone leaves the child running.
	syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	settle()
	if !running(child) {
		t.Error("the child died with its launcher; the real one goes on")
	}
}

func TestLauncherCodexEndsAsTheChild(t *testing.T) {
	t.Parallel()
	cmd, f, child := startTree(t, "codex", "launcher:style=codex")
	syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	err := cmd.Wait()
	r := finished(t, cmd, err, "", "")
	if !r.signaled || r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("launcher ended with %+v, want death by SIGTERM as its child", r)
	}
	if got := signalsOf(f, child); !slices.Equal(got, []string{"SIGTERM"}) {
		t.Errorf("the child got %v, want [SIGTERM]", got)
	}
	log, _ := f.Observations()
	var detail string
	for _, r := range log {
		if r.Kind == "fault" && r.Fault == "launcher" {
			detail = r.Detail
		}
	}
	if !regexp.MustCompile(`^started by the codex launcher, pid ` + strconv.Itoa(cmd.Process.Pid) + ` `).MatchString(detail) {
		t.Errorf("the child's log says %q about its launcher", detail)
	}
}

func TestLauncherGeminiForwardsNothing(t *testing.T) {
	t.Parallel()
	cmd, f, child := startTree(t, "gemini", "launcher:style=gemini")
	syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
	syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	settle()
	if got := signalsOf(f, child); len(got) > 0 {
		t.Errorf("the child got %v through a launcher that forwards nothing", got)
	}
	if !running(cmd.Process.Pid) || !running(child) {
		t.Fatal("the launcher or its child died of signals the launcher ignores")
	}
	// The process group reaches the child, which exits 0; so does the
	// launcher.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	err := cmd.Wait()
	if r := finished(t, cmd, err, "", ""); r.signaled || r.code != 0 {
		t.Errorf("launcher ended with %+v, want exit 0 as its child", r)
	}
	if got := signalsOf(f, child); !slices.Equal(got, []string{"SIGINT"}) {
		t.Errorf("the child got %v, want [SIGINT]", got)
	}
}

func TestLauncherClaudeDiesAlone(t *testing.T) {
	t.Parallel()
	cmd, f, child := startTree(t, "claude", "launcher:style=claude")
	syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	err := cmd.Wait()
	if r := finished(t, cmd, err, "", ""); !r.signaled || r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("launcher ended with %+v, want death by SIGTERM", r)
	}
	settle()
	if got := signalsOf(f, child); len(got) > 0 {
		t.Errorf("the child got %v; the launcher forwards nothing", got)
	}
	if !running(child) {
		t.Error("the child died with its launcher")
	}
}

func TestLauncherCodexForwardsEvery(t *testing.T) {
	t.Parallel()
	// codex.js of 0.171.0: the child ignores SIGINT, so the forwarded
	// SIGINT does not end it; the SIGTERM after it is passed on too, and
	// the launcher ends as the child did, by SIGTERM.
	cmd, f, child := startTree(t, "codex", "launcher:style=codex,forward=every;ignore_signal:signal=SIGINT")
	syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
	waitRecord(t, f, func(r fakecli.Observation) bool { return r.PID == child && r.Kind == "signal" })
	syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	waitGone(t, cmd.Process.Pid, "the launcher after the second signal")
	err := cmd.Wait()
	if r := finished(t, cmd, err, "", ""); !r.signaled || r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("launcher ended with %+v, want death by SIGTERM as its child", r)
	}
	if got := signalsOf(f, child); !slices.Equal(got, []string{"SIGINT", "SIGTERM"}) {
		t.Errorf("the child got %v, want both signals, [SIGINT SIGTERM]", got)
	}
}
