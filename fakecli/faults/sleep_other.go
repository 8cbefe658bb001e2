//go:build !linux

package faults

import "time"

// preciseSleep sleeps for d (time.Sleep elsewhere than Linux).
func preciseSleep(d time.Duration) { time.Sleep(d) }
