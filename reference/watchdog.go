package reference

import (
	"fmt"
	"time"
)

// stallWatch is a turn's watchdog (Config.StallTimeout): C ticks while the
// turn runs, and stalled says whether the CLI has been silent for the
// timeout by then. Without a timeout, C is nil and never ticks.
//
// Silent means that the CLI wrote nothing (stdout or stderr) and did no
// work: a CLI whose CPU time grows between two ticks is busy, not hung
// (building a long line, or starved of CPU on a loaded machine), while a
// hung one waits on a connection or a tool and uses none.
type stallWatch struct {
	timeout time.Duration
	ticker  *time.Ticker
	C       <-chan time.Time
	cpu     int64 // the CLI's CPU ticks at the last look
}

// busyTicks is how many clock ticks of CPU (10 ms each) the CLI must use
// between two looks to count as working.
const busyTicks = 2

// newStallWatch starts the watchdog of a turn of p, counting from now.
func newStallWatch(timeout time.Duration, p *proc) *stallWatch {
	if timeout <= 0 {
		return &stallWatch{}
	}
	p.touch()
	tick := min(max(timeout/8, 10*time.Millisecond), 250*time.Millisecond)
	t := time.NewTicker(tick)
	return &stallWatch{timeout: timeout, ticker: t, C: t.C}
}

// stop releases the ticker.
func (w *stallWatch) stop() {
	if w.ticker != nil {
		w.ticker.Stop()
	}
}

// stalled reports whether p has written nothing and done no work for the
// timeout.
func (w *stallWatch) stalled(p *proc) bool {
	if w.timeout <= 0 {
		return false
	}
	if p.cmd.Process != nil {
		if t, ok := cpuTicks(p.cmd.Process.Pid); ok {
			if t-w.cpu >= busyTicks {
				p.touch()
			}
			w.cpu = t
		}
	}
	return p.silentFor() >= w.timeout
}

// err is the turn's error once the watchdog stopped the CLI.
func (w *stallWatch) err(agent Agent) error {
	return fmt.Errorf("%s wrote nothing for %s; stopped it (the adapter's watchdog)", agent, w.timeout)
}
