package conformance

import (
	"context"
	"os"
)

// Exec runs one case against cfg.Adapter and returns what it produced,
// unjudged: no probe of the adapter first, no verdicts (judge the
// observation with the checks' Judge functions). It is what
// `agentconform fuzz` runs for every execution against an external
// adapter. The defaults are Run's; the case's directory is removed unless
// cfg.Keep.
func Exec(ctx context.Context, cfg Config, c *Case) (*Observation, error) {
	cleanup, err := cfg.prepare("agentconform-exec-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	o, err := execCase(ctx, &cfg, c)
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		os.RemoveAll(o.Dir)
	}
	return o, nil
}
