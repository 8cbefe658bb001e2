package faults

import (
	"syscall"
	"time"
)

// preciseSleep sleeps for d. The Go runtime's timers wake a sleeper no
// sooner than the next millisecond (its poller waits in milliseconds), so
// time.Sleep(300*time.Microsecond) takes about 1.1 ms: a slicer meant to
// write every 0.3 ms wrote every 1.1, and a case of 3,600 pieces lasted 4 s
// instead of 1.3. Below preciseBelow the thread sleeps in nanosleep(2)
// itself (the runtime hands its other goroutines to another thread).
func preciseSleep(d time.Duration) {
	if d <= 0 || d >= preciseBelow {
		time.Sleep(d)
		return
	}
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for {
		var left syscall.Timespec
		err := syscall.Nanosleep(&ts, &left)
		if err != syscall.EINTR {
			return
		}
		ts = left // a signal (the fake handles several) woke it early
	}
}
