package conformance

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
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

// CLIVersion replays cli's fixtures of version (KnownCLIVersions): its
// cases whose scenario was not captured at that version are skipped with
// the reason. An unknown version fails the test.
func CLIVersion(cli, version string) Option {
	return func(c *Config) {
		if c.CLIVersions == nil {
			c.CLIVersions = map[string]string{}
		}
		c.CLIVersions[cli] = version
	}
}

// OnRealCLIs plays the cases with the real CLIs r names instead of the
// fakes (Config.Real): those a real CLI can play; the others are skipped
// with the reason. The package's TestMain must then call realcli.Main(m),
// so that the test binary also acts as the wrapper around the real CLIs.
func OnRealCLIs(r *RealCLIs) Option { return func(c *Config) { c.Real = r } }

// Jobs sets how many cases run at once.
func Jobs(n int) Option { return func(c *Config) { c.Jobs = n } }

// TestAdapter runs the conformance battery against the adapter newAdapter
// starts (a command speaking the harness protocol, HARNESS.md), in the
// manner of fstest.TestFS and nettest.TestConn. It starts the adapter once
// for its hello, then makes every case a subtest named by its ID
// (TestMyAdapter/codex/multi-turn) that runs when go test selects it, in
// parallel with the others (-parallel bounds them), and reports as it
// finishes: every failed check is a test error with its Requirement,
// Expected and Actual, and the go test command that runs that case again.
// -run, -v, -failfast and -count behave as for any Go test.
//
// The test binary itself acts as the fake CLIs: the package's TestMain
// must call fakecli.Main(m).
func TestAdapter(t *testing.T, newAdapter func(ctx context.Context) *exec.Cmd, opts ...Option) {
	t.Helper()
	cfg := Config{Adapter: Adapter{Name: t.Name(), Command: newAdapter}, WorkDir: t.TempDir()}
	for _, o := range opts {
		o(&cfg)
	}
	cleanup, err := cfg.prepare("agentconform-test-")
	if err != nil {
		t.Fatalf("conformance.TestAdapter: %v", err)
	}
	t.Cleanup(cleanup)
	ctx := t.Context()
	hello, err := probe(ctx, &cfg)
	if err != nil {
		t.Fatalf("conformance.TestAdapter: %v", err)
	}
	cases, err := cfg.selectCases(hello)
	if err != nil {
		t.Fatalf("conformance.TestAdapter: %v", err)
	}
	// Cases mostly wait on pipes and timers: a selected case starts at
	// once, cfg.Jobs at a time, whatever -parallel says; its subtest then
	// waits for it and reports.
	jobs := cfg.Jobs
	if jobs <= 0 {
		jobs = defaultJobs()
	}
	pool := cfg.Pool
	if pool == nil {
		pool = NewPool(jobs)
	}
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			type result struct {
				cr  *CaseResult
				err error
			}
			done := make(chan result, 1)
			go func() {
				_, release, ok := pool.next(ctx, newCaseQueue([]*Case{c}))
				if !ok {
					done <- result{nil, ctx.Err()}
					return
				}
				defer release()
				cr, err := runOne(ctx, &cfg, c, hello)
				done <- result{cr, err}
			}()
			t.Parallel()
			res := <-done
			cr, err := res.cr, res.err
			if err != nil {
				t.Fatalf("conformance: %v", err)
			}
			cr.Reproduce = goTestCommand(t.Name())
			if cr.Verdict == Skip {
				t.Skip(skipReason(cr))
			}
			for _, r := range cr.Checks {
				_, expected := cfg.Baseline.expects(cr.ID, r.Check)
				msg := FormatFailure(cr, r)
				switch {
				case expected && r.Verdict.Failed(cfg.Strict):
					t.Logf("expected failure (baseline): %s", msg)
				case r.Verdict.Failed(cfg.Strict):
					t.Errorf("%s", msg)
				case r.Verdict == NonStrict:
					t.Logf("SHOULD: %s", msg)
				}
			}
		})
	}
	if len(cases) == 0 {
		t.Fatalf("conformance.TestAdapter: no case selected (agents %v, globs %v)", helloAgents(hello), cfg.Match)
	}
}

// goTestCommand is the command that runs one subtest again (from its
// package's directory).
func goTestCommand(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return "go test -run '" + strings.Join(parts, "/") + "' -v -count=1 ."
}

// skipReason is why a whole case was skipped.
func skipReason(cr *CaseResult) string {
	for _, r := range cr.Checks {
		if r.Actual != "" {
			return r.Actual
		}
	}
	return "not applicable to this adapter"
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
