package reference

import (
	"fmt"
	"time"
)

// stallWatch is a turn's watchdog (Config.StallTimeout): C ticks while the
// turn runs, and stalled says whether the CLI has been silent for the
// timeout by then. Without a timeout, C is nil and never ticks.
type stallWatch struct {
	timeout time.Duration
	ticker  *time.Ticker
	C       <-chan time.Time
}

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

// stalled reports whether p has written nothing for the timeout.
func (w *stallWatch) stalled(p *proc) bool {
	return w.timeout > 0 && p.silentFor() >= w.timeout
}

// err is the turn's error once the watchdog stopped the CLI.
func (w *stallWatch) err(agent Agent) error {
	return fmt.Errorf("%s wrote nothing for %s; stopped it (the adapter's watchdog)", agent, w.timeout)
}
