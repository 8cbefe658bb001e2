//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package fakecli

// isTerminalFD cannot tell here; a fake then treats stdio as pipes.
func isTerminalFD(fd uintptr) bool { return false }
