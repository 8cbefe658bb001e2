//go:build linux

package editor

import (
	"os"
	"strconv"
	"strings"
)

// treeCPU is the CPU time (clock ticks, user and system) that the process
// root and every process below it have used so far; ok is false when it
// cannot be read.
func treeCPU(root int) (ticks uint64, ok bool) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	type stat struct {
		ppid  int
		ticks uint64
	}
	procs := map[int]stat{}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses and
		// may hold spaces: state ppid ... utime(14) stime(15).
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		ut, _ := strconv.ParseUint(f[11], 10, 64)
		st, _ := strconv.ParseUint(f[12], 10, 64)
		procs[pid] = stat{ppid, ut + st}
	}
	if _, found := procs[root]; !found {
		return 0, false
	}
	children := map[int][]int{}
	for pid, s := range procs {
		children[s.ppid] = append(children[s.ppid], pid)
	}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		ticks += procs[pid].ticks
		queue = append(queue, children[pid]...)
	}
	return ticks, true
}
