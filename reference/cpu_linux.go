//go:build linux

package reference

import (
	"bytes"
	"os"
	"strconv"
)

// cpuTicks is the CPU time pid has used (user and system), in clock ticks;
// ok is false when it cannot be read.
func cpuTicks(pid int) (ticks int64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, false
	}
	// After the command: state ppid pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime stime.
	f := bytes.Fields(b[i+2:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return u + s, true
}
