//go:build !linux

package reference

// adviseHuge is a hint that only Linux takes (see hugepage_linux.go).
func adviseHuge([]byte) {}
