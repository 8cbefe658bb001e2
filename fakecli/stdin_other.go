//go:build !linux

package fakecli

// stdinPending reports whether a read of stdin would not block now; off
// Linux the fake does not tell, and drains only what its reader already
// took.
func stdinPending(any) bool { return false }
