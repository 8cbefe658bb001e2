package conformance

import (
	"os"
	"syscall"
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
