package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
)

// TempDir makes a new directory for case directories, named with prefix
// as os.MkdirTemp names it: under $TMPDIR when it is set, else on a memory
// file system when the machine has one with room (memoryTempRoot: Linux's
// /dev/shm), else in the system's temporary directory. Every case makes
// and removes a few directories and small files, and a ladder case's wire
// copy is as long as its line; on a disk file system that is a
// millisecond or more of kernel time a case (ext4 searches for an inode
// it did not free a moment ago), on a memory one a few microseconds.
//
// On the memory file system the name also says which process made it
// (ownerTag), and the first call of a process removes the directories
// there whose process is gone (sweepStale): a run killed with SIGKILL
// cannot remove its own, and on a memory file system they would hold
// their wire copies in memory until the machine restarts.
func TempDir(prefix string) (string, error) {
	if os.Getenv("TMPDIR") == "" {
		if root := memoryTempRoot(); root != "" {
			sweepOnce.Do(func() { sweepStale(root) })
			if dir, err := os.MkdirTemp(root, prefix+ownerTag()); err == nil {
				return dir, nil
			}
		}
	}
	return os.MkdirTemp("", prefix)
}

// sweepOnce makes sweepStale run once per process.
var sweepOnce sync.Once

// ownerTag is the part of a memory directory's name that says which
// process made it: "pid<ns>.<pid>.<start>-", with the pid namespace's
// inode (a container that shares the machine's /dev/shm numbers its
// processes apart) and the start time in clock ticks after boot (a pid
// handed out again has another).
func ownerTag() string {
	ns := pidNamespace()
	st, ok := procStat(os.Getpid())
	if !ok || ns == 0 {
		return "" // nothing to tell the owner by: never swept
	}
	return fmt.Sprintf("pid%d.%d.%d-", ns, os.Getpid(), st.start)
}

// ownedName matches what ownerTag puts into a name TempDir makes, and
// MkdirTemp's random digits after it.
var ownedName = regexp.MustCompile(`^agentconform-.*pid([0-9]+)\.([0-9]+)\.([0-9]+)-[0-9]+$`)

// sweepStale removes the directories under root that TempDir made for a
// process of this pid namespace that is no longer running (no such pid,
// another process under it, or a zombie): the leftovers of runs killed
// outright. Directories of running processes, of other pid namespaces
// (whose processes this one cannot see), and every name TempDir did not
// make are left alone.
func sweepStale(root string) {
	ns := pidNamespace()
	if ns == 0 {
		return
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		m := ownedName.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() || m[1] != strconv.FormatUint(ns, 10) {
			continue
		}
		pid, _ := strconv.Atoi(m[2])
		start, _ := strconv.ParseInt(m[3], 10, 64)
		if st, ok := procStat(pid); ok && st.start == start && st.state != 'Z' && st.state != 'X' {
			continue
		}
		os.RemoveAll(filepath.Join(root, e.Name()))
	}
}

// minMemoryTemp is the room a memory file system must have left for
// TempDir to use it: the cases running at once hold up to about 256 MiB of
// wire copies (caseWeight), and a container's small /dev/shm (Docker gives
// 64 MiB) must not fill up.
const minMemoryTemp = 1 << 30
