package conformance

import (
	"os"
)

// TempDir makes a new directory for case directories, named with prefix
// as os.MkdirTemp names it: under $TMPDIR when it is set, else on a memory
// file system when the machine has one with room (memoryTempRoot: Linux's
// /dev/shm), else in the system's temporary directory. Every case makes
// and removes a few directories and small files, and a ladder case's wire
// copy is as long as its line; on a disk file system that is a
// millisecond or more of kernel time a case (ext4 searches for an inode
// it did not free a moment ago), on a memory one a few microseconds.
func TempDir(prefix string) (string, error) {
	if os.Getenv("TMPDIR") == "" {
		if root := memoryTempRoot(); root != "" {
			if dir, err := os.MkdirTemp(root, prefix); err == nil {
				return dir, nil
			}
		}
	}
	return os.MkdirTemp("", prefix)
}

// minMemoryTemp is the room a memory file system must have left for
// TempDir to use it: the cases running at once hold up to about 256 MiB of
// wire copies (caseWeight), and a container's small /dev/shm (Docker gives
// 64 MiB) must not fill up.
const minMemoryTemp = 1 << 30
