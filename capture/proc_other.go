//go:build !unix

package capture

import (
	"errors"
	"os/exec"
	"syscall"

	"github.com/agentconform/agentconform/capture/proctree"
)

func setGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func killPG(int, syscall.Signal) error { return errors.New("no process groups") }

func killAlone(proctree.Proc) error { return errors.New("no SIGKILL here") }
