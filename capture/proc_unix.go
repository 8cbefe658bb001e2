//go:build unix

package capture

import (
	"fmt"
	"os/exec"
	"syscall"

	"github.com/agentconform/agentconform/capture/proctree"
)

// setGroup starts cmd in a process group of its own, so that it can be
// killed together with everything it started.
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup kills cmd's process group; it does nothing before the start.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH: nothing left
}

// killPG sends sig to the process group of pid.
func killPG(pid int, sig syscall.Signal) error {
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		return err
	}
	return syscall.Kill(-pgid, sig)
}

// killAlone kills p alone with SIGKILL, if it is still the process the
// tree saw (same pid and start time).
func killAlone(p proctree.Proc) error {
	q, err := proctree.Read(p.PID)
	if err != nil || q.Start != p.Start {
		return fmt.Errorf("capture: SIGKILL: process %d is gone", p.PID)
	}
	return syscall.Kill(p.PID, syscall.SIGKILL)
}
