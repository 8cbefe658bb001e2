//go:build linux

package conformance

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/realcli"
)

func TestRunMarks(t *testing.T) {
	env := []byte("PATH=/bin\x00FOO_" + envRunMark + "=x\x00" + envRunMark + "=abc\x00" + envRunMark + "=\x00HOME=/h")
	if got, want := runMarks(env), []string{"abc", ""}; !slices.Equal(got, want) {
		t.Errorf("runMarks = %q, want %q (a key that only ends in the mark's name is another variable)", got, want)
	}
	if got := runMarks(nil); got != nil {
		t.Errorf("runMarks(nil) = %q", got)
	}
}

// TestLeftoverFoundByMark: a process of the case that left its process
// group is found by the mark in its environment, also when another case
// read its environment first (the cache), and one of another case's is not.
func TestLeftoverFoundByMark(t *testing.T) {
	start := func(mark string) *exec.Cmd {
		cmd := exec.Command("sleep", "30")
		cmd.Env = []string{envRunMark + "=" + mark}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group of its own
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	since := time.Now()
	mine, other := start("mark-mine"), start("mark-other")
	find := func(mark string) []int {
		var pids []int
		for _, l := range findLeftovers(0, mark, since, nil, nil) {
			pids = append(pids, l.PID)
		}
		return pids
	}
	for range 2 { // the second time from the cache
		if got := find("mark-mine"); !slices.Contains(got, mine.Process.Pid) || slices.Contains(got, other.Process.Pid) {
			t.Errorf("leftovers of mark-mine: %v; want %d and not %d", got, mine.Process.Pid, other.Process.Pid)
		}
		if got := find("mark-other"); !slices.Contains(got, other.Process.Pid) || slices.Contains(got, mine.Process.Pid) {
			t.Errorf("leftovers of mark-other: %v; want %d and not %d", got, other.Process.Pid, mine.Process.Pid)
		}
	}
}

// TestLeftoverEmptyEnvironNotKept: a process whose environment read empty
// (as one does in the middle of an exec) is looked at again later: once
// it runs a program with the case's mark, it is found. The empty read was
// cached once, and a grandchild read then by a concurrent case passed as
// no leftover of its own case.
func TestLeftoverEmptyEnvironNotKept(t *testing.T) {
	envPath, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env command")
	}
	sleepPath, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	cmd := exec.Command("sh", "-c", `read go; exec "$0" `+envRunMark+`=mark-late "$1" 30`, envPath, sleepPath)
	cmd.Env = []string{} // empty: what a read in the exec window shows (and no PATH)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	found := func() bool {
		return slices.ContainsFunc(findLeftovers(0, "mark-late", since, nil, nil), func(l Leftover) bool { return l.PID == pid })
	}
	if found() {
		t.Fatalf("pid %d found by a mark it does not carry yet", pid)
	}
	in.Write([]byte("go\n"))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if argv := procArgv(pid); len(argv) > 0 && argv[0] == sleepPath {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not exec sleep: %q", pid, procArgv(pid))
		}
	}
	if !found() {
		t.Errorf("pid %d, which now carries the mark, is not found: its empty environment was kept from before its exec", pid)
	}
}

// TestRealCLIChildIsTheCLI: the program a real CLI's wrapper started (its
// child, with the real CLI's mark) is the CLI as the wrapper is, as a fake
// in its place is one process; what that program started (a launcher's
// CLI) is another process of the case, as a fake launcher's child is.
func TestRealCLIChildIsTheCLI(t *testing.T) {
	since := time.Now()
	wrapper := exec.Command("sh", "-c", "(sleep 33; true) & sleep 31; wait")
	wrapper.Env = []string{"PATH=/bin:/usr/bin", envRunMark + "=mark-real", realcli.EnvCLI + "=codex"}
	wrapper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := wrapper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-wrapper.Process.Pid, syscall.SIGKILL); wrapper.Wait() })
	fakes := map[int][]string{wrapper.Process.Pid: {"codex", "exec"}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := findLeftovers(0, "mark-real", since, fakes, nil)
		var cli, other []string
		for _, l := range left {
			if l.CLI {
				cli = append(cli, l.Argv[0])
			} else {
				other = append(other, strings.Join(l.Argv, " "))
			}
		}
		// the wrapper, its two children (the subshell and sleep 31); the
		// subshell's sleep 33 is another process
		if len(cli) == 3 && len(other) == 1 && strings.Contains(other[0], "sleep 33") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CLI processes %q, others %q; want the wrapper and its two children, and sleep 33", cli, other)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRealToolUnreadableLater: a real CLI's tool process in a session of
// its own stays a tool's when its environment, read once, can no longer
// be read (Codex makes its processes undumpable: on a runner without the
// privilege to read them, /proc/PID/environ is refused). Judged on a
// second read that failed, the sandbox a racing interrupt left behind was
// the adapter's stray process.
func TestRealToolUnreadableLater(t *testing.T) {
	since := time.Now()
	tool := exec.Command("sleep", "32")
	tool.Env = []string{envRunMark + "=mark-tool", realcli.EnvCLI + "=codex"}
	tool.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // a session of its own, as the CLIs run commands
	if err := tool.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tool.Process.Kill(); tool.Wait() })
	pid := tool.Process.Pid
	cliSessions := map[int]bool{-1: true} // the CLI's session: not the tool's
	judge := func() (Leftover, bool) {
		for _, l := range findLeftovers(0, "mark-tool", since, nil, cliSessions) {
			if l.PID == pid {
				return l, true
			}
		}
		return Leftover{}, false
	}
	l, ok := judge()
	if !ok || !l.Tool || l.Session != pid {
		t.Fatalf("first look: %+v (found %v); want a tool's process in session %d", l, ok, pid)
	}
	read := readEnviron
	readEnviron = func(int) ([]byte, error) { return nil, syscall.EACCES }
	defer func() { readEnviron = read }()
	if l, ok := judge(); !ok || !l.Tool {
		t.Errorf("once its environment is refused: %+v (found %v); want the same tool's process", l, ok)
	}
}

// TestRealToolCutRead: a read of a process's environment that an exec or
// an exit cut short (after the runner's mark, before the real CLI's) must
// not decide what the process is: the sandbox a real Codex left running
// in a session of its own was judged the adapter's stray process on such
// a read, twice in CI.
func TestRealToolCutRead(t *testing.T) {
	since := time.Now()
	tool := exec.Command("sleep", "33")
	tool.Env = []string{envRunMark + "=mark-cut", "PADDING=" + strings.Repeat("x", 200), realcli.EnvCLI + "=codex"}
	tool.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := tool.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tool.Process.Kill(); tool.Wait() })
	pid := tool.Process.Pid
	read := readEnviron
	cut := false
	readEnviron = func(p int) ([]byte, error) {
		env, err := read(p)
		if p == pid && !cut && err == nil {
			cut = true
			return env[:bytes.Index(env, []byte("PADDING="))+20], nil // cut inside the padding
		}
		return env, err
	}
	defer func() { readEnviron = read }()
	for _, l := range findLeftovers(0, "mark-cut", since, nil, map[int]bool{-1: true}) {
		if l.PID == pid {
			if !cut || !l.Tool {
				t.Fatalf("%+v (first read cut: %v); want a tool's process, judged on a whole environment", l, cut)
			}
			return
		}
	}
	t.Fatalf("pid %d not found", pid)
}

// TestRealToolSessionOutsideNamespace: in a pid namespace whose session
// leader is outside it (a container's, a CI sandbox's), the wrapper's
// getsid says 0 and its start record names no session. The real CLI's
// tool in a session of its own is still a tool's: judged with no CLI
// session known, the sandbox a real Codex left running was the adapter's
// stray process, in CI three times and never on a machine whose session
// was visible.
func TestRealToolSessionOutsideNamespace(t *testing.T) {
	since := time.Now()
	tool := exec.Command("sleep", "34")
	tool.Env = []string{envRunMark + "=mark-ns", realcli.EnvCLI + "=codex"}
	tool.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := tool.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tool.Process.Kill(); tool.Wait() })
	pid := tool.Process.Pid
	// The wrapper's start record as it is written there: no sid.
	log := []fakecli.Observation{{Kind: "start", PID: 1, CLI: "codex", Transcript: realcli.TranscriptPrefix + "codex@0.171.0"}}
	sessions := cliSessions(log)
	if !sessions[0] || len(sessions) != 1 {
		t.Fatalf("sessions of a start record without sid: %v; want the session read as 0", sessions)
	}
	for _, l := range findLeftovers(0, "mark-ns", since, nil, sessions) {
		if l.PID == pid {
			if !l.Tool {
				t.Fatalf("%+v; want a tool's process (a session of its own, %d)", l, pid)
			}
			return
		}
	}
	t.Fatalf("pid %d not found", pid)
}

// TestRealProcessInvisibleSession: a process whose session reads 0 (led
// from outside the namespace, as the runner's and the CLI's are there) is
// in no session of its own, so never a tool's.
func TestRealProcessInvisibleSession(t *testing.T) {
	env := envFacts{cli: true}
	if _, tool := realProcess(procStatus{sid: 0}, env, 77, map[int]bool{77: true}); tool {
		t.Error("a real CLI's process in a session read as 0 was judged a tool's")
	}
	if _, tool := realProcess(procStatus{sid: 4242}, env, 0, map[int]bool{0: true}); !tool {
		t.Error("a real CLI's process in a session of its own (runner's and CLI's read as 0) was not judged a tool's")
	}
}
