package conformance

import (
	"os"
	"syscall"
	"unsafe"
)

// adapterPipeSize is the pipe buffer asked for the adapter's stdout: a
// 64 MiB line then crosses in 1 MiB reads, not 64 KiB ones (Linux lets
// any process grow a pipe up to /proc/sys/fs/pipe-max-size, 1 MiB by
// default).
const adapterPipeSize = 1 << 20

// growPipe asks the kernel for a bigger buffer on pipe f. It is a hint:
// a failure (not a pipe, over the system's limit) changes nothing.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, adapterPipeSize)
	})
}

// hugePage is the size of a transparent huge page on amd64 and arm64.
const hugePage = 2 << 20

// hintHugePages asks the kernel to back the whole 2 MiB pages inside b
// with huge pages when it first touches them (transparent huge pages in
// "madvise" mode): a fresh 64 MiB buffer then costs 32 page faults rather
// than 16,384. It is a hint: b's contents and length do not change, and
// a failure changes nothing.
func hintHugePages(b []byte) {
	if len(b) < 2*hugePage {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + uintptr(len(b))) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	syscall.Madvise(b[lo-p:hi-p], syscall.MADV_HUGEPAGE)
}
