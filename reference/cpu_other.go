//go:build !linux

package reference

// cpuTicks cannot read another process's CPU time here: the watchdog goes
// by the CLI's output alone.
func cpuTicks(pid int) (ticks int64, ok bool) { return 0, false }
