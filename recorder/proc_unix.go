//go:build unix

package recorder

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// setProcessGroup starts the child in a process group of its own, so the
// recorder can kill it with everything it started, and a terminal's
// Ctrl-C reaches the child only through the recorder (once).
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setParentDeathSignal(cmd.SysProcAttr)
}

// killGroup kills the child's process group (and the child, should it
// have left the group).
func killGroup(p *os.Process) {
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL) // ESRCH: nothing left
	_ = p.Kill()
}

// exitStatus reads how the child ended.
func exitStatus(ps *os.ProcessState) (code int, sig string, signo int) {
	if ps == nil {
		return -1, "", 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		s := ws.Signal()
		return -1, signalName(s), int(s)
	}
	return ps.ExitCode(), "", 0
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return "SIG" + s.String()
}

// forwardedSignals are the signals a client may send to a CLI that the
// recorder passes on.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

func forwardable(sig os.Signal) bool {
	for _, s := range forwardedSignals {
		if s == sig {
			return true
		}
	}
	return false
}

// isTerminating reports whether a second one of sig makes the recorder
// kill the child's group if the child does not end within the grace.
func isTerminating(sig os.Signal) bool {
	return sig == syscall.SIGINT || sig == syscall.SIGTERM || sig == syscall.SIGHUP
}

// NotifySignals starts catching the signals to forward (SIGINT, SIGTERM,
// SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH), for Config.Signals,
// leaving alone those the process was started with ignored (so the child
// inherits them ignored, as it would have). It also catches SIGPIPE, so a
// client that stops reading makes writes fail instead of killing the
// recorder before it has saved anything. stop undoes it all.
func NotifySignals() (signals <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 16)
	var sigs []os.Signal
	for _, s := range forwardedSignals {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	signal.Notify(ch, sigs...)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	return ch, func() {
		signal.Stop(ch)
		signal.Stop(pipe)
	}
}

// dieBySignal ends the process by the signal that ended the child, where
// the Go runtime allows that (SIGINT, SIGTERM, SIGHUP, SIGKILL); it
// returns when it could not.
func dieBySignal(signo int) {
	s := syscall.Signal(signo)
	switch s {
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP:
		if signal.Ignored(s) {
			return
		}
		signal.Reset(s)
	case syscall.SIGKILL:
	default:
		return
	}
	_ = syscall.Kill(os.Getpid(), s)
	time.Sleep(time.Second) // delivery is asynchronous
}
