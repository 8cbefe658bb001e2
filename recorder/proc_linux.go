package recorder

import "syscall"

// setParentDeathSignal makes the kernel kill the child should the recorder
// itself be killed (by SIGKILL, which it cannot forward), so no real CLI
// is left running without anyone reading its output.
func setParentDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
