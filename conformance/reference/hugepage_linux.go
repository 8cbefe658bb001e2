//go:build linux

package reference

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on the platforms Go
// supports.
const hugePage = 2 << 20

// adviseHuge asks the kernel to back the huge-page-aligned inside of b,
// a fresh buffer not yet written, with transparent huge pages (in the
// usual "madvise" mode it does so only when asked): a 64 MiB line is
// then faulted in 32 times instead of 16,384, each fault costing micro-
// seconds. It is a hint: b's contents are not affected, and an error is
// ignored.
func adviseHuge(b []byte) {
	if cap(b) < 2*hugePage {
		return
	}
	b = b[:cap(b)]
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + uintptr(len(b))) &^ (hugePage - 1)
	if end <= start {
		return
	}
	_ = syscall.Madvise(b[start-p:end-p], syscall.MADV_HUGEPAGE)
}
