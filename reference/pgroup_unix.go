//go:build unix && !linux

package reference

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the command in a new process group, so that
// signals reach the CLI and everything it started, and nothing else.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
