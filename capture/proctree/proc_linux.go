package proctree

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Scan lists the live processes of the run m (zombies left out), the
// caller excepted. A process that ends while it is read is left out.
func Scan(m Match) ([]Proc, error) {
	want := m.entries()
	if len(want) == 0 {
		return nil, fmt.Errorf("proctree: a match needs a home or an environment entry")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("proctree: %w", err)
	}
	self := os.Getpid()
	newer := newerPids(m.From)
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || !newer(pid) {
			continue
		}
		env, _, err := StableRead(func() ([]byte, error) { return os.ReadFile("/proc/" + e.Name() + "/environ") })
		if err != nil || !marked(env, want) {
			continue // gone, not ours to read, or not the run's
		}
		p, err := Read(pid)
		if err != nil || p.State == 'Z' || p.State == 'X' {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// Read reads one process from /proc.
func Read(pid int) (Proc, error) {
	p, err := readStat(pid)
	if err != nil {
		return Proc{}, err
	}
	dir := "/proc/" + strconv.Itoa(pid)
	if b, err := os.ReadFile(dir + "/cmdline"); err == nil {
		p.Argv = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
	p.FDs = map[int]string{}
	if fds, err := os.ReadDir(dir + "/fd"); err == nil {
		for _, f := range fds {
			n, err := strconv.Atoi(f.Name())
			if err != nil {
				continue
			}
			if target, err := os.Readlink(dir + "/fd/" + f.Name()); err == nil {
				p.FDs[n] = target
			}
		}
	}
	for i := range p.Stdio {
		p.Stdio[i] = p.FDs[i]
	}
	if b, err := os.ReadFile(dir + "/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
				p.SigIgn, _ = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			}
		}
	}
	return p, nil
}

// readStat reads the ids, state and start time of pid from
// /proc/PID/stat.
func readStat(pid int) (Proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, fmt.Errorf("proctree: %w", err)
	}
	return parseStat(pid, b)
}

// parseStat reads /proc/PID/stat: "pid (comm) state ppid pgrp session
// tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime
// cstime priority nice num_threads itrealvalue starttime ...". The
// command name may hold spaces and parentheses, so the fields are read
// after its last ')'.
func parseStat(pid int, b []byte) (Proc, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Proc{}, fmt.Errorf("proctree: /proc/%d/stat: no ')' closing the command name", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return Proc{}, fmt.Errorf("proctree: /proc/%d/stat: %d fields after the command name, want at least 20", pid, len(f))
	}
	p := Proc{PID: pid, State: f[0][0]}
	var errs [4]error
	p.PPID, errs[0] = strconv.Atoi(f[1])
	p.PGID, errs[1] = strconv.Atoi(f[2])
	p.SID, errs[2] = strconv.Atoi(f[3])
	p.Start, errs[3] = strconv.ParseInt(f[19], 10, 64)
	for _, err := range errs {
		if err != nil {
			return Proc{}, fmt.Errorf("proctree: /proc/%d/stat: %w", pid, err)
		}
	}
	return p, nil
}

// newerPids returns a quick test for the pids that may have been handed
// out since from was: while the last one handed out (ns_last_pid) is not
// below from, only those from from to it. After a wrap, without
// ns_last_pid, or with no from, every pid may be.
func newerPids(from int) func(pid int) bool {
	b, err := os.ReadFile("/proc/sys/kernel/ns_last_pid")
	last, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if from <= 0 || err != nil || perr != nil || last < from {
		return func(int) bool { return true }
	}
	return func(pid int) bool { return pid >= from && pid <= last }
}
