package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentconform/agentconform/capture"
)

const captureUsage = `Usage: agentconform capture [flags]

Runs the installed real CLIs (claude, codex, gemini) headless against a
built-in mock of their model API on 127.0.0.1 (Anthropic Messages API,
OpenAI Responses API, Gemini streamGenerateContent, all with SSE), through
scripted scenarios, and writes one redacted agentconform/v1 transcript per
CLI version and scenario:

  OUT/<cli>/<version>/<scenario>.jsonl

No model is paid for and nothing leaves the machine: every run gets a
throwaway HOME with telemetry, update checks and error reporting switched
off, and proxy variables pointing at a trap on loopback that records (and
refuses) any attempt to reach the internet. --strace additionally checks
every connect(2). The CLIs are driven as adapters drive them: one-shot,
multi-turn (Claude over stream-json stdin; Codex and Gemini by resume),
interrupts (Claude's control request, SIGINT, SIGTERM) and Claude's
can_use_tool permission prompts (allow, deny).

A CLI is taken from --CLI-path, else PATH; with --install a CLI that is not
on PATH is installed from npm into the cache directory (--install-all
installs even when one is on PATH). Every capture is validated under the
observed profile; --update-fixtures then copies the transcripts over the
embedded fixtures of the same names (review them first).

Scenarios (--scenario NAME, repeatable; "compliance" names the five the
shim contract requires, docs/protocols/shim.md#compliance):
%s
Exit status: 0 when every capture validated with no violation and no
leak, 1 when one did not (or a CLI hung and was killed), 2 for bad usage,
a CLI that cannot be found or installed, or an I/O error.

Flags:
`

// cliFlags are the flags that choose and locate CLIs, shared by capture
// and drift.
type cliFlags struct {
	clis       []string
	paths      map[string]*string
	install    bool
	installAll bool
	npmVersion string
	cacheDir   string
}

func addCLIFlags(fl *pflag.FlagSet) *cliFlags {
	c := &cliFlags{paths: map[string]*string{}}
	fl.StringSliceVar(&c.clis, "cli", nil, "the CLIs to run: claude, codex, gemini (default: those found, or all three with --install)")
	for _, cli := range capture.CLIs {
		c.paths[cli] = fl.String(cli+"-path", "", "the "+cli+" executable (default: "+cli+" on PATH)")
	}
	fl.BoolVar(&c.install, "install", false, "install a CLI that is not on PATH from npm into the cache directory")
	fl.BoolVar(&c.installAll, "install-all", false, "install from npm even when the CLI is on PATH (--npm-version picks the version)")
	fl.StringVar(&c.npmVersion, "npm-version", "latest", "the npm version or dist-tag to install")
	fl.StringVar(&c.cacheDir, "cache-dir", capture.DefaultCacheDir(), "where npm installs go")
	return c
}

// locate finds (or installs) the CLIs asked for. With no --cli, it takes
// every CLI that can be found (all three when installing).
func (c *cliFlags) locate(ctx context.Context, stderr io.Writer, verbose bool) ([]*capture.Binary, error) {
	names := c.clis
	explicit := len(names) > 0
	if !explicit {
		names = capture.CLIs
	}
	var out []*capture.Binary
	var missing []string
	for _, cli := range names {
		if _, ok := capture.Packages[cli]; !ok {
			return nil, fmt.Errorf("unknown CLI %q (want claude, codex or gemini)", cli)
		}
		path := *c.paths[cli]
		if !explicit && path == "" && !c.install && !c.installAll {
			if _, err := exec.LookPath(cli); err != nil {
				missing = append(missing, cli)
				continue
			}
		}
		b, err := capture.Locate(ctx, cli, capture.LocateOptions{
			Path: path, Install: c.install, ForceInstall: c.installAll, Version: c.npmVersion, CacheDir: c.cacheDir,
			Log: func(format string, args ...any) {
				if verbose {
					fmt.Fprintf(stderr, format+"\n", args...)
				}
			},
		})
		if err != nil {
			return nil, err
		}
		if verbose {
			how := b.Source
			if b.Source == "npm" {
				how = fmt.Sprintf("npm, installed in %s", b.InstallTime.Round(100*time.Millisecond))
			}
			fmt.Fprintf(stderr, "%s %s (%s): %s\n", cli, b.Version, how, b.Path)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("none of %s is on PATH: pass --CLI-path or --install", strings.Join(missing, ", "))
	}
	return out, nil
}

func scenarioList() string {
	var b strings.Builder
	for _, s := range capture.Scenarios() {
		var clis []string
		for _, cli := range capture.CLIs {
			if s.Supports(cli) {
				clis = append(clis, cli)
			}
		}
		mark := " "
		if s.Compliance {
			mark = "*"
		}
		fmt.Fprintf(&b, " %s %-18s %s (%s)\n", mark, s.Name, s.Summary, strings.Join(clis, ", "))
	}
	return b.String()
}

// captureRun is one capture and its verdict, for reports.
type captureRun struct {
	*capture.Result
	Violations []string `json:"violations,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
	SchemaFile string   `json:"schema,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// failed reports whether the run counts against the exit status.
func (r *captureRun) failed() bool {
	if r.Error != "" || len(r.Violations) > 0 || len(r.Leaks) > 0 {
		return true
	}
	for _, p := range r.Processes {
		if p.TimedOut {
			return true
		}
	}
	return false
}

func runCapture(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := pflag.NewFlagSet("capture", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	clis := addCLIFlags(fl)
	var (
		scenarios = fl.StringSlice("scenario", nil, "the scenarios to capture (default: all; \"compliance\" for the five compliance scenarios of the shim profile)")
		out       = fl.StringP("out", "o", "captures", "write transcripts to OUT/<cli>/<version>/<scenario>.jsonl")
		workDir   = fl.String("work-dir", capture.DefaultWorkDir(), "where the throwaway homes go (not the system temp directory: Codex refuses to set up there)")
		keepWork  = fl.Bool("keep-work", false, "keep each throwaway home after its run")
		timeout   = fl.Duration("timeout", capture.DefaultTimeout, "kill a CLI process group running longer than this")
		straceBin = fl.String("strace", "", "run each process under this strace and report any connect(2) outside loopback (\"strace\" finds it on PATH)")
		update    = fl.Bool("update-fixtures", false, "copy each transcript over the fixture of the same name in --fixtures-dir")
		fixDir    = fl.String("fixtures-dir", "fixtures", "the fixtures directory of an agentconform checkout, for --update-fixtures")
		versioned = fl.Bool("versioned-fixtures", false, "with --update-fixtures, write each CLI version's captures as its versioned fixture set, FIXTURES-DIR/<cli>/<version>/<scenario>.jsonl (converted for replay: agentconform run --cli-version), instead of over the default fixtures")
		list      = fl.Bool("list", false, "list the scenarios and exit")
		asJSON    = fl.Bool("json", false, "print a JSON report instead of text")
		quiet     = fl.BoolP("quiet", "q", false, "print only the summary")
		ruleFiles = fl.StringArray("redact", nil, "also apply the redaction rules of this file to the transcripts (repeatable; format: agentconform record --help)")
	)
	fl.Usage = func() {
		fmt.Fprintf(stderr, captureUsage, scenarioList())
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *list {
		fmt.Fprint(stdout, scenarioList())
		return exitOK
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "agentconform capture: unexpected argument %q\n", fl.Arg(0))
		return exitUsage
	}
	if *versioned && !*update {
		fmt.Fprintln(stderr, "agentconform capture: --versioned-fixtures needs --update-fixtures")
		return exitUsage
	}
	scs, err := capture.Select(*scenarios)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform capture: %v\n", err)
		return exitUsage
	}
	rules, err := readRuleFiles(*ruleFiles)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform capture: --redact: %v\n", err)
		return exitUsage
	}
	if *straceBin != "" {
		p, err := exec.LookPath(*straceBin)
		if err != nil {
			fmt.Fprintf(stderr, "agentconform capture: --strace: %v\n", err)
			return exitUsage
		}
		*straceBin = p
	}
	progress := stderr
	if *quiet || *asJSON {
		progress = io.Discard
	}
	bins, err := clis.locate(ctx, progress, true)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform capture: %v\n", err)
		return exitUsage
	}
	opts := capture.Options{WorkDir: *workDir, KeepWork: *keepWork, Timeout: *timeout, Strace: *straceBin, Redact: rules,
		Log: func(format string, args ...any) { fmt.Fprintf(progress, format+"\n", args...) }}
	runs, err := captureAll(ctx, bins, scs, *out, opts, progress)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform capture: %v\n", err)
		return exitUsage
	}
	if *update {
		write := updateFixtures
		if *versioned {
			write = updateVersionedFixtures
		}
		if err := write(*fixDir, runs, progress); err != nil {
			fmt.Fprintf(stderr, "agentconform capture: %v\n", err)
			return exitUsage
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"binaries": bins, "captures": runs}); err != nil {
			return exitUsage
		}
	} else {
		printCaptureSummary(stdout, bins, runs)
	}
	for _, r := range runs {
		if r.failed() {
			return exitFindings
		}
	}
	if ctx.Err() != nil {
		return exitUsage
	}
	return exitOK
}

// captureAll captures every scenario with every binary, validates each
// transcript and writes it under out ("" writes nothing).
func captureAll(ctx context.Context, bins []*capture.Binary, scs []capture.Scenario, out string, opts capture.Options, progress io.Writer) ([]*captureRun, error) {
	var runs []*captureRun
	for _, b := range bins {
		for _, sc := range scs {
			if !sc.Supports(b.CLI) {
				continue
			}
			if ctx.Err() != nil {
				return runs, nil
			}
			res, err := capture.Capture(ctx, b, sc, opts)
			run := &captureRun{Result: res}
			if err != nil {
				if res == nil {
					run.Result = &capture.Result{CLI: b.CLI, Version: b.Version, Scenario: sc.Name}
				}
				run.Error = err.Error()
				runs = append(runs, run)
				fmt.Fprintf(progress, "%s %s %-18s error: %v\n", b.CLI, b.Version, sc.Name, err)
				continue
			}
			if out != "" {
				if err := capture.WriteTranscript(out, res); err != nil {
					return runs, err
				}
			}
			verdict, err := capture.Validate(ctx, res.Transcript, nil)
			if err != nil {
				run.Error = err.Error()
			} else {
				run.SchemaFile = verdict.Result.SchemaFile
				for _, f := range verdict.Violations {
					run.Violations = append(run.Violations, f.String())
				}
				for _, f := range verdict.Warnings {
					run.Warnings = append(run.Warnings, f.String())
				}
			}
			runs = append(runs, run)
			fmt.Fprintln(progress, runLine(run))
			for _, v := range run.Violations {
				fmt.Fprintf(progress, "    violation: %s\n", v)
			}
			for _, l := range run.Leaks {
				fmt.Fprintf(progress, "    LEAK: %s\n", l)
			}
		}
	}
	return runs, nil
}

func runLine(r *captureRun) string {
	var exits []string
	for _, p := range r.Processes {
		e := fmt.Sprintf("exit %d", p.Exit)
		if p.Interrupt != "" {
			e += " after " + p.Interrupt
		}
		if p.TimedOut {
			e += " (timed out, killed)"
		} else if p.Killed {
			e += " (killed)"
		}
		exits = append(exits, e)
	}
	main := 0
	for _, q := range r.Requests {
		if q.Kind == "main" {
			main++
		}
	}
	lines := 0
	if r.Transcript != nil {
		for _, s := range r.Transcript.Steps {
			if s.Op == "out" {
				lines++
			}
		}
	}
	verdict := fmt.Sprintf("%d violations, %d warnings", len(r.Violations), len(r.Warnings))
	return fmt.Sprintf("%s %s %-18s %s; %d stdout lines; %d model requests; %s; %s",
		r.CLI, r.Version, r.Scenario, strings.Join(exits, ", "), lines, main, r.Duration.Round(10*time.Millisecond), verdict)
}

func printCaptureSummary(w io.Writer, bins []*capture.Binary, runs []*captureRun) {
	fmt.Fprintln(w, "CLI     version    scenarios  failed  time      transcripts")
	for _, b := range bins {
		var n, failed int
		var total time.Duration
		dir := ""
		for _, r := range runs {
			if r.CLI != b.CLI {
				continue
			}
			n++
			total += r.Duration
			if r.failed() {
				failed++
			}
			if r.File != "" {
				dir = filepath.Dir(r.File)
			}
		}
		fmt.Fprintf(w, "%-7s %-10s %9d  %6d  %-8s  %s\n", b.CLI, b.Version, n, failed, total.Round(100*time.Millisecond), dir)
	}
	for _, r := range runs {
		if r.failed() {
			why := r.Error
			switch {
			case why != "":
			case len(r.Leaks) > 0:
				why = fmt.Sprintf("%d leaks: %s", len(r.Leaks), r.Leaks[0])
			case len(r.Violations) > 0:
				why = fmt.Sprintf("%d violations, first: %s", len(r.Violations), r.Violations[0])
			default:
				why = "a process timed out"
			}
			fmt.Fprintf(w, "FAILED %s/%s: %s\n", r.CLI, r.Scenario, why)
		}
	}
}

// updateFixtures copies each transcript over the fixture of the same
// name; scenarios without a fixture are listed, not added.
func updateFixtures(dir string, runs []*captureRun, progress io.Writer) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("--update-fixtures: %s is not a fixtures directory (run from an agentconform checkout or pass --fixtures-dir)", dir)
	}
	var skipped []string
	for _, r := range runs {
		if r.File == "" || r.Error != "" {
			continue
		}
		dst := filepath.Join(dir, r.CLI, r.Scenario+".jsonl")
		if _, err := os.Stat(dst); err != nil {
			skipped = append(skipped, r.CLI+"/"+r.Scenario)
			continue
		}
		b, err := os.ReadFile(r.File)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(progress, "updated fixture %s from %s %s\n", dst, r.CLI, r.Version)
	}
	if len(skipped) > 0 {
		sort.Strings(skipped)
		fmt.Fprintf(progress, "no fixture of that name (copy by hand to add one): %s\n", strings.Join(skipped, ", "))
	}
	return nil
}
