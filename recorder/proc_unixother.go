//go:build unix && !linux

package recorder

import "syscall"

// setParentDeathSignal does nothing where the kernel has no parent-death
// signal.
func setParentDeathSignal(*syscall.SysProcAttr) {}
