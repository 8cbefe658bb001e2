//go:build !linux

package conformance

// memoryTempRoot is "" outside Linux: TempDir uses the system's
// temporary directory.
func memoryTempRoot() string { return "" }
