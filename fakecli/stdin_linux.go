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
	fd := int(f.Fd())
	if fd < 0 || fd >= 1024 {
		return false
	}
	var set syscall.FdSet
	set.Bits[fd/64] |= 1 << (uint(fd) % 64)
	tv := syscall.Timeval{}
	n, err := syscall.Select(fd+1, &set, nil, nil, &tv)
	return err == nil && n > 0
}
