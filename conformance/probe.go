package conformance

import (
	"context"
	"runtime"
)

// execProbe runs the adapter just long enough to read its hello.
func execProbe(ctx context.Context, cfg *Config, c *Case) (*Observation, error) {
	c.probe = true
	return execCase(ctx, cfg, c)
}

// defaultJobs is twice the cores: cases mostly wait on pipes and timers.
func defaultJobs() int { return 2 * runtime.GOMAXPROCS(0) }
