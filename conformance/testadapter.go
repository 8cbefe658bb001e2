package conformance

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Option adjusts a TestAdapter run.
type Option func(*Config)

// Cases selects cases by ID glob ("codex/*", "claude/interrupt").
func Cases(globs ...string) Option { return func(c *Config) { c.Match = append(c.Match, globs...) } }

// Strict makes SHOULD failures (NON-STRICT) fail the test.
func Strict() Option { return func(c *Config) { c.Strict = true } }

// CaseTimeout bounds each case.
func CaseTimeout(d time.Duration) Option { return func(c *Config) { c.Timeout = d } }

// SignalInterrupt interrupts the adapter with SIGINT instead of the
// interrupt command.
func SignalInterrupt() Option { return func(c *Config) { c.Adapter.SignalInterrupt = true } }

// WithBaseline lets the listed failures pass (they are logged).
func WithBaseline(b *Baseline) Option { return func(c *Config) { c.Baseline = b } }

// Jobs sets how many cases run at once.
func Jobs(n int) Option { return func(c *Config) { c.Jobs = n } }

// TestAdapter runs the conformance battery against the adapter newAdapter
// starts (a command speaking the harness protocol, HARNESS.md) and reports
// every failed check of every case as a test error, in the manner of
// fstest.TestFS and nettest.TestConn. Each case is a subtest named by its
// ID; a failure prints the check's Requirement, Expected and Actual, and
// the command that reproduces it.
//
// The test binary itself acts as the fake CLIs: the package's TestMain
// must call fakecli.Main(m).
func TestAdapter(t *testing.T, newAdapter func(ctx context.Context) *exec.Cmd, opts ...Option) {
	t.Helper()
	cfg := Config{Adapter: Adapter{Name: t.Name(), Command: newAdapter}, WorkDir: t.TempDir()}
	for _, o := range opts {
		o(&cfg)
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("conformance: %v", err)
	}
	if len(res.Cases) == 0 {
		t.Fatalf("conformance: no case selected (agents %v, globs %v)", helloAgents(res.Meta.Hello), cfg.Match)
	}
	for _, cr := range res.Cases {
		cr := cr
		t.Run(cr.ID, func(t *testing.T) {
			if cr.Verdict == Skip {
				t.Skip("not applicable to this adapter")
			}
			for _, r := range cr.Checks {
				msg := FormatFailure(cr, r)
				switch {
				case r.Baselined:
					t.Logf("expected failure (baseline): %s", msg)
				case r.Verdict.Failed(cfg.Strict):
					t.Errorf("%s", msg)
				case r.Verdict == NonStrict:
					t.Logf("SHOULD: %s", msg)
				}
			}
		})
	}
}

func helloAgents(h *Hello) []string {
	if h == nil {
		return nil
	}
	return h.Agents
}

// FormatFailure renders one check result the way h2spec does: the verdict
// and check, then Requirement, Expected, Actual, the diff and the command
// that reproduces the case.
func FormatFailure(cr *CaseResult, r CheckResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s [%s]\n", r.Verdict, r.Check, cr.ID)
	fmt.Fprintf(&b, "  Requirement: %s (%s, %s)\n", r.Requirement, r.Level, r.Source)
	if r.Expected != "" {
		fmt.Fprintf(&b, "  Expected: %s\n", indent(r.Expected))
	}
	if r.Actual != "" {
		fmt.Fprintf(&b, "  Actual: %s\n", indent(r.Actual))
	}
	if r.Diff != "" {
		fmt.Fprintf(&b, "  Diff (-expected +actual):\n%s\n", indentAll(r.Diff, "    "))
	}
	fmt.Fprintf(&b, "  Reproduce: %s", cr.Reproduce)
	return b.String()
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

func indentAll(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
