package realcli

import (
	"os"
	"syscall"
	"unsafe"
)

// unreadBytes returns how many bytes wait in the pipe f is an end of
// (FIONREAD works on either end of a Linux pipe).
func unreadBytes(f *os.File) (int, bool) {
	var n int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
		return 0, false
	}
	return int(n), true
}
