package conformance

import (
	"os"
	"syscall"
)

// memoryTempRoot is /dev/shm when it is a tmpfs with at least
// minMemoryTemp bytes free, else "".
func memoryTempRoot() string {
	const root, tmpfsMagic = "/dev/shm", 0x01021994
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil || st.Type != tmpfsMagic {
		return ""
	}
	if uint64(st.Bavail)*uint64(st.Bsize) < minMemoryTemp {
		return ""
	}
	return root
}

// pidNamespace is the inode of this process's pid namespace (0 when it
// cannot be read): the pids of two namespaces are not comparable.
func pidNamespace() uint64 {
	fi, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	return st.Ino
}
