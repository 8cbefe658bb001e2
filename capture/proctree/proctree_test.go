//go:build linux

package proctree

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envHelper makes the test binary play a process of a tree: "root" (the
// CLI: it starts a loner and a holder, says so on stdout, and sleeps),
// "loner" (a session of its own, SIGHUP, SIGINT and SIGTERM ignored,
// stdio on /dev/null: the background process Claude Code's Bash tool
// leaves) and "holder" (the root's process group and stdout).
const envHelper = "PROCTREE_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(envHelper) {
	case "":
		os.Exit(m.Run())
	case "root":
		helperRoot()
	case "loner":
		signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
		os.NewFile(3, "ready").Close() // the root may say it started
		time.Sleep(2 * time.Minute)
	case "holder":
		time.Sleep(2 * time.Minute)
	}
	os.Exit(0)
}

func helperRoot() {
	exe, _ := os.Executable()
	null, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	loner := exec.Command(exe)
	loner.Env = append(os.Environ(), envHelper+"=loner")
	loner.Stdin, loner.Stdout, loner.Stderr = null, null, null
	loner.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	holder := exec.Command(exe)
	holder.Env = append(os.Environ(), envHelper+"=holder")
	holder.Stdout, holder.Stderr = os.Stdout, os.Stderr
	ready, readyW, err := os.Pipe()
	if err != nil {
		os.Exit(3)
	}
	loner.ExtraFiles = []*os.File{readyW}
	if loner.Start() != nil || holder.Start() != nil {
		os.Exit(3)
	}
	readyW.Close()
	io.Copy(io.Discard, ready) // until the loner ignores its signals
	os.Stdout.WriteString("started\n")
	time.Sleep(2 * time.Minute)
}

// startRoot starts the helper tree under a fresh HOME, in a process
// group of its own, and waits until it has started its children. It
// returns the root and what reads its stdout; the test's cleanup kills
// whatever is left.
func startRoot(t *testing.T) (*exec.Cmd, Match, *bufio.Reader) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := Match{Home: t.TempDir()}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envHelper+"=root", "HOME="+m.Home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A pipe of the test's own: cmd.Wait would close StdoutPipe's.
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ps, _ := Scan(m)
		Reap(ps, 10*time.Second)
		cmd.Process.Kill()
		cmd.Wait()
	})
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("the helper tree did not start: %q %v", line, err)
	}
	return cmd, m, r
}

func TestTreeDescribesTheRunRelativeToTheCLI(t *testing.T) {
	t.Parallel()
	cmd, m, out := startRoot(t)
	root, ok, err := FindChild(m, os.Getpid())
	if err != nil || !ok || root.PID != cmd.Process.Pid {
		t.Fatalf("FindChild = %+v %v %v, want the root pid %d", root, ok, err, cmd.Process.Pid)
	}
	tree := NewTree(m, root, func(s string) string { return strings.ReplaceAll(s, m.Home, "<home>") })
	snap, procs, err := tree.Snapshot("while the CLI runs")
	if err != nil {
		t.Fatal(err)
	}
	if !snap.CLIRunning || len(snap.Processes) != 2 || len(procs) != 2 {
		t.Fatalf("snapshot %+v, want the CLI running and two more processes", snap)
	}
	loner, holder := find(t, snap, "loner", procs), find(t, snap, "holder", procs)
	want := Entry{Label: loner.Label, Argv: loner.Argv, Parent: "cli", Group: "own", Session: "own",
		Stdin: "/dev/null", Stdout: "/dev/null", Stderr: "/dev/null", Ignores: []string{"SIGHUP", "SIGINT", "SIGTERM"}}
	if !equal(loner, want) {
		t.Errorf("the loner is %+v, want %+v", loner, want)
	}
	want = Entry{Label: holder.Label, Argv: holder.Argv, Parent: "cli", Group: "cli", Session: "cli",
		Stdin: "/dev/null", Stdout: "cli stdout", Stderr: "/dev/null", HoldsCLIStdout: true}
	if !equal(holder, want) {
		t.Errorf("the holder is %+v, want %+v", holder, want)
	}

	// The CLI dies: its processes are adopted outside the run, keep their
	// labels, and the holder keeps the CLI's stdout open.
	cmd.Process.Kill()
	cmd.Wait()
	after, procs, err := tree.Snapshot("after the CLI died")
	if err != nil {
		t.Fatal(err)
	}
	if after.CLIRunning || len(after.Processes) != 2 {
		t.Fatalf("snapshot after the CLI died: %+v", after)
	}
	for _, e := range after.Processes {
		if e.Parent != "outside" {
			t.Errorf("%s's parent is %q after the CLI died, want outside", e.Label, e.Parent)
		}
	}
	if h := find(t, after, "holder", procs); h.Label != holder.Label || !h.HoldsCLIStdout || h.Group != "cli" {
		t.Errorf("the holder after the CLI died: %+v (was %s)", h, holder.Label)
	}
	eof := make(chan error, 1)
	go func() { _, err := out.ReadString('\n'); eof <- err }()
	select {
	case err := <-eof:
		t.Fatalf("the CLI's stdout ended (%v) while the holder holds it", err)
	case <-time.After(100 * time.Millisecond):
	}

	// Reap kills both, the loner though it ignores SIGTERM, and the
	// stdout ends.
	if left := Reap(procs, 30*time.Second); len(left) > 0 {
		t.Fatalf("Reap left %+v running", left)
	}
	select {
	case <-eof:
	case <-time.After(30 * time.Second):
		t.Fatal("the CLI's stdout did not end once the holder was reaped")
	}
	if ps, err := Scan(m); err != nil || len(ps) != 0 {
		t.Errorf("Scan after Reap = %+v, %v; want nothing", ps, err)
	}
}

// find returns the entry whose process plays helper role.
func find(t *testing.T, snap Snapshot, role string, procs []Proc) Entry {
	t.Helper()
	for i, p := range procs {
		env, _ := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/environ")
		if slices.Contains(strings.Split(string(env), "\x00"), envHelper+"="+role) {
			return snap.Processes[i]
		}
	}
	t.Fatalf("no %s in %+v", role, snap)
	return Entry{}
}

func equal(a, b Entry) bool {
	return a.Label == b.Label && slices.Equal(a.Argv, b.Argv) && a.Parent == b.Parent && a.Group == b.Group &&
		a.Session == b.Session && a.Stdin == b.Stdin && a.Stdout == b.Stdout && a.Stderr == b.Stderr &&
		a.HoldsCLIStdout == b.HoldsCLIStdout && slices.Equal(a.Ignores, b.Ignores)
}

func TestScanNeedsAMatch(t *testing.T) {
	if _, err := Scan(Match{}); err == nil {
		t.Error("Scan of an empty match: no error")
	}
}

func TestParseStat(t *testing.T) {
	p, err := parseStat(42, []byte("42 (a) b (c)) S 7 42 40 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 1 2 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != 42 || p.State != 'S' || p.PPID != 7 || p.PGID != 42 || p.SID != 40 || p.Start != 12345 {
		t.Errorf("parseStat = %+v", p)
	}
	for _, bad := range []string{"", "42 (cut", "42 (x) S 7", "42 (x) S x 42 40 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345"} {
		if _, err := parseStat(42, []byte(bad)); err == nil || !strings.Contains(err.Error(), "/proc/42/stat") {
			t.Errorf("parseStat(%q): %v, want an error naming the file", bad, err)
		}
	}
}

// TestForkSeenBeforeItsExec: a process first seen between its fork and its
// exec (its parent's command line and descriptors) is recorded as first
// seen after the exec; one seen running its own program keeps its first
// sight.
func TestForkSeenBeforeItsExec(t *testing.T) {
	root := Proc{PID: 100, Start: 1, PGID: 100, SID: 50, Argv: []string{"claude", "-p"}, Stdio: [3]string{"/dev/null", "pipe:[1]", "pipe:[2]"}}
	tree := NewTree(Match{Home: "/h"}, root, nil)
	fork := Proc{PID: 101, Start: 2, PPID: 100, PGID: 100, SID: 50, Argv: root.Argv, Stdio: root.Stdio, FDs: map[int]string{1: "pipe:[1]"}}
	tree.label(fork)
	shell := Proc{PID: 101, Start: 2, PPID: 100, PGID: 101, SID: 101, Argv: []string{"/bin/bash", "-c", "sleep 1"},
		Stdio: [3]string{"/dev/null", "/h/out", "/h/out"}, FDs: map[int]string{1: "/h/out"}}
	tree.label(shell)
	sleep := Proc{PID: 102, Start: 3, PPID: 101, PGID: 101, SID: 101, Argv: []string{"sleep", "1"}, Stdio: shell.Stdio}
	tree.label(sleep)
	tree.label(Proc{PID: 102, Start: 3, PPID: 1, PGID: 101, SID: 101, Argv: []string{"sleep", "1"}})
	seen := tree.Seen()
	if len(seen) != 2 {
		t.Fatalf("seen %+v, want two processes", seen)
	}
	want := Entry{Label: "p1", Argv: shell.Argv, Parent: "cli", Group: "own", Session: "own", Stdin: "/dev/null", Stdout: "/h/out", Stderr: "/h/out"}
	if !equal(seen[0], want) {
		t.Errorf("the fork is seen as %+v, want its first sight after the exec %+v", seen[0], want)
	}
	want = Entry{Label: "p2", Argv: sleep.Argv, Parent: "p1", Group: "p1", Session: "p1", Stdin: "/dev/null", Stdout: "/h/out", Stderr: "/h/out"}
	if !equal(seen[1], want) {
		t.Errorf("the sleep is seen as %+v, want its first sight %+v", seen[1], want)
	}
}

// TestStableRead: a read that differs from the next is not taken for
// stable; two that agree are.
func TestStableRead(t *testing.T) {
	reads := func(rs ...string) func() ([]byte, error) {
		i := 0
		return func() ([]byte, error) {
			r := rs[min(i, len(rs)-1)]
			i++
			if r == "ERR" {
				return nil, errors.New("gone")
			}
			return []byte(r), nil
		}
	}
	for _, c := range []struct {
		reads  []string
		want   string
		stable bool
		err    bool
	}{
		{[]string{"A=1\x00B=2\x00", "A=1\x00B=2\x00"}, "A=1\x00B=2\x00", true, false},
		{[]string{"A=1\x00", "A=1\x00B=2\x00", "A=1\x00B=2\x00"}, "A=1\x00B=2\x00", true, false}, // the first read cut short
		{[]string{"A", "B", "C"}, "C", false, false},
		{[]string{"A=1\x00", "ERR"}, "A=1\x00", false, false}, // gone after one read: used, not trusted
		{[]string{"ERR"}, "", false, true},
	} {
		b, stable, err := StableRead(reads(c.reads...))
		if string(b) != c.want || stable != c.stable || (err != nil) != c.err {
			t.Errorf("reads %q: got %q, stable %v, err %v; want %q, stable %v, error %v", c.reads, b, stable, err, c.want, c.stable, c.err)
		}
	}
}
