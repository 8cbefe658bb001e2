package conformance

import "syscall"

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
