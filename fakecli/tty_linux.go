//go:build linux

package fakecli

import (
	"syscall"
	"unsafe"
)

// isTerminalFD reports whether fd is a terminal.
func isTerminalFD(fd uintptr) bool {
	var t syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return e == 0
}
