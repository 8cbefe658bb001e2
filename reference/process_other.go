//go:build !unix

package reference

import (
	"os/exec"
	"syscall"
)

// setProcessGroup does nothing where process groups do not exist.
func setProcessGroup(*exec.Cmd) {}

// killGroup signals the process itself where there are no process groups:
// SIGKILL kills it, other signals are delivered if the platform can.
func killGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if sig == syscall.SIGKILL {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(sig)
}
