//go:build unix

package proctree

import (
	"syscall"
	"time"
)

// Reap kills the processes ps (SIGKILL, and the process group of each
// that leads one, unless it is the caller's), as long as they are the
// processes listed (same pid and start time), and waits up to grace for
// them to be gone. It returns the ones still running then.
func Reap(ps []Proc, grace time.Duration) []Proc {
	own := syscall.Getpgrp()
	for _, p := range ps {
		if !same(p) {
			continue
		}
		if p.PGID == p.PID && p.PGID != own && p.PGID > 1 {
			_ = syscall.Kill(-p.PGID, syscall.SIGKILL)
		}
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
	deadline := time.Now().Add(grace)
	for {
		var left []Proc
		for _, p := range ps {
			if same(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// same reports whether p still runs (not a zombie) as the same process.
func same(p Proc) bool {
	q, err := readStat(p.PID)
	return err == nil && q.Start == p.Start && q.State != 'Z' && q.State != 'X'
}
