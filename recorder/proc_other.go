//go:build !unix

package recorder

import (
	"os"
	"os/exec"
	"os/signal"
)

// setProcessGroup does nothing where there are no Unix process groups.
func setProcessGroup(*exec.Cmd) {}

// killGroup kills the child.
func killGroup(p *os.Process) {
	if p != nil {
		_ = p.Kill()
	}
}

// exitStatus reads how the child ended.
func exitStatus(ps *os.ProcessState) (code int, sig string, signo int) {
	if ps == nil {
		return -1, "", 0
	}
	return ps.ExitCode(), "", 0
}

func forwardable(sig os.Signal) bool { return sig == os.Interrupt }

func isTerminating(sig os.Signal) bool { return sig == os.Interrupt }

// NotifySignals starts catching os.Interrupt, for Config.Signals; stop
// undoes it.
func NotifySignals() (signals <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, os.Interrupt)
	return ch, func() { signal.Stop(ch) }
}

// dieBySignal cannot die by a signal here.
func dieBySignal(int) {}
