//go:build linux

package reference

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the command in a new process group, so that
// signals reach the CLI and everything it started, and nothing else. As
// the CLI is then out of reach of whoever kills this process's group, the
// kernel kills it if this process dies first (Pdeathsig).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
