//go:build unix

package reference

import (
	"os/exec"
	"syscall"
)

// killGroup sends sig to the command's process group (ESRCH, a group with
// no process left, is not an error worth reporting).
func killGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
