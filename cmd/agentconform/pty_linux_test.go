//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/agentconform/agentconform/reports"
)

// openPTY opens a pseudo-terminal pair, or skips when the system has none.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("opening the pty: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// TestProgressOnTerminal runs agentconform run with stdout on a
// pseudo-terminal: the progress line (rewritten in place) and colors
// appear; with NO_COLOR the colors go and the progress stays.
// TestRunReportsEndToEnd is the other half: on a pipe, neither appears.
func TestProgressOnTerminal(t *testing.T) {
	_, slave := openPTY(t)
	if !reports.IsTerminal(slave) {
		t.Fatal("a pty is not taken for a terminal")
	}
	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "")
	if !reports.ColorEnabled(slave) {
		t.Error("no color on a terminal")
	}
	t.Setenv("NO_COLOR", "1")
	if reports.ColorEnabled(slave) {
		t.Error("color despite NO_COLOR")
	}
	exe := agentconformBinary(t)
	for _, noColor := range []string{"", "1"} {
		master, slave := openPTY(t)
		cmd := exec.Command(exe, "run", "--case", "codex/plain-text", "-q", "-o", filepath.Join(t.TempDir(), "r.json"))
		cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=", "TERM=xterm", "NO_COLOR="+noColor)
		cmd.Stdout, cmd.Stderr = slave, slave
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		slave.Close()
		var out bytes.Buffer
		done := make(chan struct{})
		go func() { io.Copy(&out, master); close(done) }()
		err := cmd.Wait()
		// The child has exited and every slave descriptor is closed: the
		// copy ends (EIO) once it has read everything. Closing the master
		// first cut the output short under load.
		<-done
		master.Close()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, out.String())
		}
		s := out.String()
		plain := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(s, "")
		if !strings.Contains(plain, "\r\x1b[Kreference/unified: 1 cases, 1 passed, 0 failed, 0 skipped, 0:0") {
			t.Errorf("NO_COLOR=%q: no progress line on a terminal:\n%q", noColor, s)
		}
		if colored := strings.Contains(s, "\x1b[1;32mPASS\x1b[0m"); colored != (noColor == "") {
			t.Errorf("NO_COLOR=%q: colored summary %v:\n%q", noColor, colored, s)
		}
	}
}
