//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package fakecli

import (
	"syscall"
	"unsafe"
)

// isTerminalFD reports whether fd is a terminal.
func isTerminalFD(fd uintptr) bool {
	var t syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGETA, uintptr(unsafe.Pointer(&t)))
	return e == 0
}
