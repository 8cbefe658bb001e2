package fuzz

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// The watchdog: one goroutine that looks at the running in-process
// executions every tick and ends the process when one has overrun its
// hard limit (a hang cannot be stopped from outside the goroutine that
// hangs).
var (
	watchMu   sync.Mutex
	watched   = map[*watchEntry]bool{}
	watchOnce sync.Once
)

type watchEntry struct {
	start time.Time
	limit time.Duration
	what  string
}

// watch registers an execution; the returned function unregisters it.
func watch(start time.Time, limit time.Duration, c Case) func() {
	return watchWhat(start, limit, describeCase(c))
}

// watchWhat registers an execution described by what.
func watchWhat(start time.Time, limit time.Duration, what string) func() {
	watchOnce.Do(func() { go watchLoop() })
	e := &watchEntry{start: start, limit: limit, what: what}
	watchMu.Lock()
	watched[e] = true
	watchMu.Unlock()
	return func() {
		watchMu.Lock()
		delete(watched, e)
		watchMu.Unlock()
	}
}

func watchLoop() {
	for range time.Tick(100 * time.Millisecond) {
		watchMu.Lock()
		for e := range watched {
			if time.Since(e.start) > e.limit {
				msg := fmt.Sprintf("fuzz: %s: an execution has run for more than %s and does not end: %s", PropDeadline, e.limit, e.what)
				fmt.Fprintln(os.Stderr, msg)
				panic(msg)
			}
		}
		watchMu.Unlock()
	}
}

// describeCase names a case for messages.
func describeCase(c Case) string {
	name := "?"
	if c.Transcript != nil {
		name = c.Transcript.Name
	}
	s := fmt.Sprintf("%s seed=%d faults=%q", name, c.Seed, c.Faults)
	if c.Interrupt {
		s += " (interrupted at the stall)"
	}
	return s
}
