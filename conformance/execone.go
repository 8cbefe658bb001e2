package conformance

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Exec runs one case against cfg.Adapter and returns what it produced,
// unjudged: no probe of the adapter first, no verdicts (judge the
// observation with the checks' Judge functions). It is what
// `agentconform fuzz` runs for every execution against an external
// adapter. The defaults are Run's; the case's directory is removed unless
// cfg.Keep.
func Exec(ctx context.Context, cfg Config, c *Case) (*Observation, error) {
	if cfg.Adapter.Command == nil {
		return nil, fmt.Errorf("conformance: no adapter command")
	}
	if cfg.FakeExe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("conformance: finding the fake executable: %w", err)
		}
		cfg.FakeExe = exe
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Second
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "agentconform-exec-")
		if err != nil {
			return nil, fmt.Errorf("conformance: %w", err)
		}
		cfg.WorkDir = dir
		if !cfg.Keep {
			defer os.RemoveAll(dir)
		}
	}
	o, err := execCase(ctx, &cfg, c)
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		os.RemoveAll(o.Dir)
	}
	return o, nil
}
