package realcli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// The canary tells a signal sent to the wrapper's process group from one
// sent to the wrapper alone. It is a process of the group (the wrapper's
// child) that blocks every signal the wrapper passes on, so a signal sent
// to the group stays pending in it, where /proc shows it; a signal sent to
// the wrapper alone never reaches it. The kernel queues a group's signal
// to every member within the one kill(2), before the wrapper's handler can
// look, so the answer does not depend on who is scheduled first.
//
// Go keeps SIGINT, SIGTERM, SIGHUP and SIGQUIT unblocked in every thread
// it starts, so the canary cannot be a Go program: a Go process (the arm)
// blocks them in its one locked thread and executes cat, which inherits
// that mask, never changes it, and ends when the wrapper closes its
// stdin (or dies: its parent-death signal is SIGKILL).
type canary struct {
	cmd   *exec.Cmd
	stdin io.Closer
}

// canaryReady bounds how long starting a canary may take.
const canaryReady = 3 * time.Second

// startCanary starts a canary and waits until it runs cat with the
// signals blocked.
func startCanary() (*canary, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("canary: %w", err)
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		return nil, fmt.Errorf("canary: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Env = []string{envRole + "=" + roleCanaryArm, "AGENTCONFORM_REAL_CAT=" + cat}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("canary: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("canary: %w", err)
	}
	c := &canary{cmd: cmd, stdin: in}
	want := mask(passedOn...)
	for deadline := time.Now().Add(canaryReady); ; {
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
		blocked, ok := statusMask(st, "SigBlk")
		if ok && blocked&want == want && bytes.HasPrefix(st, []byte("Name:\tcat\n")) {
			return c, nil
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("canary: not running cat with the signals blocked after %v", canaryReady)
		}
		time.Sleep(500 * time.Microsecond)
	}
}

// caught reports whether sig is pending in the canary: the signal the
// wrapper just got was sent to its whole group.
func (c *canary) caught(sig syscall.Signal) bool {
	bit := mask(sig)
	path := "/proc/" + strconv.Itoa(c.cmd.Process.Pid) + "/status"
	for i := 0; i < 10; i++ {
		st, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		shared, _ := statusMask(st, "ShdPnd")
		own, _ := statusMask(st, "SigPnd")
		if (shared|own)&bit != 0 {
			return true
		}
		time.Sleep(300 * time.Microsecond)
	}
	return false
}

// stop ends the canary and reaps it.
func (c *canary) stop() {
	if c == nil {
		return
	}
	c.stdin.Close()
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

// armCanary is the arm's whole life: block the signals in this thread,
// then become cat.
func armCanary() int {
	runtime.LockOSThread()
	m := mask(passedOn...)
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 0 /* SIG_BLOCK */, uintptr(unsafe.Pointer(&m)), 0, 8, 0, 0); e != 0 {
		fmt.Fprintln(os.Stderr, "canary: sigprocmask:", e)
		return 1
	}
	cat := os.Getenv("AGENTCONFORM_REAL_CAT")
	err := syscall.Exec(cat, []string{"cat"}, []string{"LC_ALL=C", EnvCanary + "=1"})
	fmt.Fprintln(os.Stderr, "canary:", err)
	return 1
}

// mask is the kernel's signal set of sigs.
func mask(sigs ...syscall.Signal) uint64 {
	var m uint64
	for _, s := range sigs {
		m |= 1 << (uint(s) - 1)
	}
	return m
}

// statusMask reads one hexadecimal signal set ("SigBlk", "ShdPnd") of a
// /proc/PID/status file.
func statusMask(status []byte, key string) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n, err == nil
		}
	}
	return 0, false
}
