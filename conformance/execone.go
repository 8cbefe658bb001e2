package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
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

// An Executor runs cases like Exec, one after another or concurrently,
// each in a case directory it keeps for a later case: the fakes are
// installed once, and a directory is emptied after its case instead of
// being made and removed. Making and removing them (a dozen directories,
// links and files per case) was two thirds of the runner's own time on
// the short cases the fuzzer runs thousands of. Observations it returns
// have no Dir: the directory is reused.
type Executor struct {
	cfg     Config
	fakes   string
	cleanup func()

	mu   sync.Mutex
	free []string
	made int
}

// NewExecutor prepares cfg (Exec's defaults) and installs the fakes;
// Close removes what it made.
func NewExecutor(cfg Config) (*Executor, error) {
	cleanup, err := cfg.prepare("agentconform-exec-")
	if err != nil {
		return nil, err
	}
	return &Executor{cfg: cfg, fakes: cfg.fakes, cleanup: cleanup}, nil
}

// Exec runs one case (its Seed, Timeout and the rest as Config gives
// them) and returns what it produced, unjudged.
func (x *Executor) Exec(ctx context.Context, c *Case) (*Observation, error) {
	dir, err := x.take()
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.ID, err)
	}
	cfg := x.cfg
	o, err := execIn(ctx, &cfg, c, dir, x.fakes)
	x.give(dir)
	if o != nil {
		o.Dir = ""
	}
	return o, err
}

// take returns an empty case directory: a free one, or a new one.
func (x *Executor) take() (string, error) {
	x.mu.Lock()
	if n := len(x.free); n > 0 {
		dir := x.free[n-1]
		x.free = x.free[:n-1]
		x.mu.Unlock()
		return dir, nil
	}
	x.made++
	dir := filepath.Join(x.cfg.WorkDir, "case-"+strconv.Itoa(x.made))
	x.mu.Unlock()
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	return dir, makeCaseDirs(dir)
}

// give empties a case directory for the next case; one that cannot be
// emptied is removed instead.
func (x *Executor) give(dir string) {
	if err := emptyCaseDir(dir); err != nil {
		os.RemoveAll(dir)
		return
	}
	x.mu.Lock()
	x.free = append(x.free, dir)
	x.mu.Unlock()
}

// emptyCaseDir removes the observation log and whatever the case left in
// its subdirectories, keeping the subdirectories themselves.
func emptyCaseDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			if err := os.Remove(p); err != nil {
				return err
			}
			continue
		}
		inner, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		for _, f := range inner {
			if err := os.RemoveAll(filepath.Join(p, f.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close removes the fakes, the case directories and the work directory
// when NewExecutor made it.
func (x *Executor) Close() error {
	x.mu.Lock()
	free := x.free
	x.free = nil
	x.mu.Unlock()
	for _, d := range free {
		os.RemoveAll(d)
	}
	x.cleanup()
	return nil
}
