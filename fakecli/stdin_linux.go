//go:build linux

package fakecli

import (
	"os"
	"syscall"
)

// stdinPending reports whether a read of stdin would not block now: a line
// is waiting, or the writer has closed it (a read returns EOF). The fake's
// reader goroutine takes both soon; a fake about to end waits for them, so
// that an EOF the adapter caused before its signal is in the log.
func stdinPending(r any) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	// Through SyscallConn, not Fd: Fd would put the pipe in blocking mode
	// under the reader goroutine's feet.
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	pending := false
	rc.Control(func(u uintptr) {
		fd := int(u)
		if fd < 0 || fd >= 1024 {
			return
		}
		var set syscall.FdSet
		set.Bits[fd/64] |= 1 << (uint(fd) % 64)
		tv := syscall.Timeval{}
		n, err := syscall.Select(fd+1, &set, nil, nil, &tv)
		pending = err == nil && n > 0
	})
	return pending
}
