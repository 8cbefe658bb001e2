//go:build !linux

package conformance

// memoryTempRoot is "" outside Linux: TempDir uses the system's
// temporary directory.
func memoryTempRoot() string { return "" }

// pidNamespace is 0 outside Linux: no memory directory is ever swept.
func pidNamespace() uint64 { return 0 }
