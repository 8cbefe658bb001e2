package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/reports"
	"github.com/agentconform/agentconform/transcript"
)

const runUsage = `Usage: agentconform run [flags]

Runs an adapter against the fake CLIs, case by case, and judges it with
every applicable check (agentconform run --list prints them). With no
--adapter, runs the reference adapters: unified events for claude, codex
and gemini, and the shim stream for codex and gemini.

The adapter is started once per case, speaks the harness protocol of
conformance/HARNESS.md, and finds the fakes first on PATH.

Results go, if asked, to --out (JSON), --ndjson (streamed while the run
goes), --junit, --markdown and --html; agentconform report renders,
merges, diffs and gates them later. On a terminal a progress line shows
cases done, passed, failed and elapsed (NO_COLOR turns colors off); on a
pipe or in a file, one line per finished case; inside GitHub Actions new
failures and stale baseline entries become annotations. At the end it
prints the new failures grouped into problems, the one with the most cases
first: a problem is one check failing for the same reason in several
cases, shown once with one case's expected and actual, its cases and one
command that reproduces it, with the failures that follow from it (the
usage lost with a lost turn end) under it. Grouping is presentation: the
gate counts every failure.

Exit codes: 0 no new failure, 1 new failures (or any failure without a
baseline), 2 usage or runner error, 130 interrupted (the reports hold the
cases that finished).

Flags:
`

func runRun(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(conformance.MemoryLimit)
	}
	fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		adapter        = fl.String("adapter", "", "shell command that starts the adapter under test (default: the reference adapters)")
		profile        = fl.String("profile", "", "the profile the adapter's output must be judged by (unified, shim or native); must match its hello. acp: --adapter starts an Agent Client Protocol agent, which agentconform drives as an editor (no driver needed)")
		cases          = fl.StringArray("case", nil, "run only these cases (repeatable): a case ID selects that case; a glob ('codex/*', 'codex/single-tool*') the cases it matches and their variants; 'codex/single-tool/' every case under it")
		list           = fl.Bool("list", false, "print the check catalogue and the cases, then exit")
		strict         = fl.Bool("strict", false, "make NON-STRICT (SHOULD) failures fail the run")
		jobs           = fl.Int("jobs", 0, "busy cases run at once (default: twice the cores); the cases that wait on purpose (stalls, slow starts, interrupt graces) run beside them, four per job (eight for the reference adapters)")
		shard          = fl.String("shard", "", "run shard i of n (i/n, 1-based), to split a run across machines")
		seed           = fl.Int64("seed", 1, "seed for the fakes' random choices")
		timeout        = fl.Duration("timeout", 20*time.Second, "deadline for each case")
		stallAfter     = fl.Duration("stall-after", conformance.DefaultStallAfter, "the watchdog time lifecycle/watchdog expects of an adapter whose hello declares none (watchdog_ms): it must report a CLI silent this long as a failed turn and stop it; the reference adapters run with this watchdog")
		baseline       = fl.String("baseline", "", "file of expected failures: they pass the gate; listed cases that now pass are reported stale")
		writeBase      = fl.String("write-baseline", "", "write this run's failures as a baseline file")
		keep           = fl.Bool("keep", false, "keep each case's directory (wire log, observation log, adapter output) and print where")
		out            = fl.StringP("out", "o", "", "write the results (JSON) to this file (none by default)")
		ndjsonOut      = fl.String("ndjson", "", "stream the results as NDJSON to this file while the run goes (start, one record per case, end)")
		junitOut       = fl.String("junit", "", "write JUnit XML (one testsuite per check family) to this file")
		markdownOut    = fl.String("markdown", "", "write the Markdown summary (pull-request comment, $GITHUB_STEP_SUMMARY) to this file")
		htmlOut        = fl.String("html", "", "write the self-contained HTML report to this file")
		sourceBase     = fl.String("source-base", "", "where the Markdown and HTML reports link each check's source: the repository root as a URL, or as a path relative to the report (default: the reference as published on GitHub for this version)")
		interrupt      = fl.String("interrupt", "command", "how the runner interrupts: command (the harness interrupt line) or signal (SIGINT to the adapter)")
		transcriptFile = fl.String("transcript", "", "run one case that replays this transcript file instead of the fixtures")
		cliVersions    = fl.StringArray("cli-version", nil, "replay an older CLI release: CLI=VERSION (repeatable, or comma-separated), e.g. claude=2.1.329; that CLI's cases replay the fixtures captured at that version, and those whose scenario was not captured then are SKIP (--list shows the versions)")
		quiet          = fl.BoolP("quiet", "q", false, "print only the summary")
	)
	realFl := addRealFlags(fl)
	fl.Usage = func() {
		fmt.Fprint(stderr, runUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return runUsageError(stderr, err)
	}
	if fl.NArg() > 0 {
		return runUsageError(stderr, fmt.Errorf("unexpected argument %q (the adapter command goes in --adapter)", fl.Arg(0)))
	}
	if *list {
		printCatalog(stdout)
		return exitOK
	}
	pins, err := conformance.ParseCLIVersions(*cliVersions)
	if err != nil {
		return runUsageError(stderr, err)
	}
	if len(pins) > 0 && *transcriptFile != "" {
		return runUsageError(stderr, fmt.Errorf("--cli-version and --transcript: a transcript file is the version it recorded"))
	}
	modes, err := realFl.modes()
	if err != nil {
		return runUsageError(stderr, err)
	}
	self, err := os.Executable()
	if err != nil {
		return runUsageError(stderr, err)
	}
	var adapters []conformance.Adapter
	switch {
	case *profile == "acp" && *adapter == "":
		return runUsageError(stderr, fmt.Errorf("--profile acp needs --adapter, the command that starts the ACP agent"))
	case *profile == "acp":
		if cli := fakeCLIOf(*adapter); cli != "" {
			return runUsageError(stderr, fmt.Errorf("--profile acp --adapter %q: with the fakes first on PATH, %s is agentconform's fake %s, not an agent under test (the fake answers --acp for ACP clients; judge an agent that wraps the CLI)", *adapter, cli, cli))
		}
		adapters = append(adapters, acpAdapter(self, *adapter))
	case *adapter != "":
		adapters = append(adapters, conformance.ShellAdapter(*adapter))
	default:
		// The reference adapters: below, once leanBinaries found their
		// binary.
	}
	var real *conformance.RealCLIs
	if slices.Contains(modes, "real") {
		real = realFl.locate(ctx, stderr)
	}
	adapters = perMode(adapters, modes, nil)
	switch *interrupt {
	case "command":
	case "signal":
		for i := range adapters {
			adapters[i].SignalInterrupt = true
		}
	default:
		return runUsageError(stderr, fmt.Errorf("--interrupt %q: want command or signal", *interrupt))
	}
	if *stallAfter < conformance.MinStallAfter {
		return runUsageError(stderr, fmt.Errorf("--stall-after %s: want at least %s (a watchdog must outwait a CLI that is slow to start)", *stallAfter, conformance.MinStallAfter))
	}
	cfg := conformance.Config{Match: *cases, Jobs: *jobs, Seed: *seed, Timeout: *timeout, Strict: *strict, Keep: *keep,
		CLIVersions: pins, StallAfter: *stallAfter}
	if *shard != "" {
		i, n, ok := parseShard(*shard)
		if !ok {
			return runUsageError(stderr, fmt.Errorf("--shard %q: want i/n with 1 <= i <= n", *shard))
		}
		cfg.Shard, cfg.ShardOf = i-1, n
	}
	var baseLines *reports.Baseline
	if *baseline != "" {
		b, err := conformance.ReadBaseline(*baseline)
		if err != nil {
			return runUsageError(stderr, err)
		}
		cfg.Baseline, baseLines = b, b
	}
	var stream *reports.ResultsStream
	if *ndjsonOut != "" {
		if err := os.MkdirAll(filepath.Dir(*ndjsonOut), 0o755); err != nil {
			return runUsageError(stderr, err)
		}
		f, err := os.Create(*ndjsonOut)
		if err != nil {
			return runUsageError(stderr, err)
		}
		defer f.Close()
		stream = reports.NewResultsStream(f)
	}
	progress := reports.NewProgress(stdout, *strict)
	progress.Lines = !*quiet
	if *transcriptFile != "" {
		c, err := transcriptCase(*transcriptFile)
		if err != nil {
			return runUsageError(stderr, err)
		}
		cfg.Cases = []*conformance.Case{c}
	}
	if *keep {
		dir, err := os.MkdirTemp("", "agentconform-cases-")
		if err != nil {
			return runUsageError(stderr, err)
		}
		cfg.WorkDir = dir
		fmt.Fprintf(stderr, "agentconform run: keeping every case's directory in %s\n", dir)
	}

	bins := leanBinaries(ctx, self, stderr)
	cfg.FakeExe = bins.Fake
	if *adapter == "" {
		watchdog, realWatchdog := conformance.ReferenceStallAfter, conformance.RealStallAfter
		if fl.Changed("stall-after") {
			watchdog, realWatchdog = *stallAfter, *stallAfter
		}
		// On the real CLIs the reference adapters wait as long for a stall
		// as a real CLI may take to start.
		adapters = perMode(referenceAdaptersOf(bins.Adapter, self, watchdog), modes, referenceAdaptersOf(bins.Adapter, self, realWatchdog))
		for i := range adapters {
			adapters[i].SignalInterrupt = *interrupt == "signal"
		}
	}

	// The adapters run at once, their cases through one pool, so that the
	// cases that wait on purpose wait side by side; what each run reports
	// is shown and streamed in adapter order (a later adapter's cases once
	// the earlier ones are done), as when they ran one after the other.
	runs := make([]*adapterRun, len(adapters))
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	pool := conformance.NewPool(*jobs)
	if *adapter == "" {
		// The reference adapters start in milliseconds: every waiting
		// case may wait at once.
		pool = conformance.NewPoolWaiting(*jobs, conformance.LeanWaitSlots)
	}
	// The real CLIs take a core each to start (Gemini CLI seconds of it):
	// their runs share a pool of their own, a case per core, and one more
	// per core waiting on its tool or interrupt.
	realPool := conformance.NewPoolWaiting(*jobs, 1)
	if *jobs <= 0 {
		realPool = conformance.NewPoolWaiting(runtime.NumCPU(), 1)
	}
	for k, a := range adapters {
		c := cfg
		c.Adapter = a
		c.Pool = pool
		if isRealRun(a) {
			c.Real = real
			c.Pool = realPool
			if !fl.Changed("timeout") {
				c.Timeout = conformance.RealTimeout
			}
		}
		r := &adapterRun{done: make(chan struct{}), meta: conformance.Meta{Tool: "agentconform", Version: conformance.Version, Adapter: a.Name, Seed: c.Seed, Strict: c.Strict, Started: time.Now(), CLIVersionPins: pins}}
		if c.ShardOf > 1 {
			r.meta.Shard = fmt.Sprintf("%d/%d", c.Shard+1, c.ShardOf)
		}
		c.Progress = r.progress
		runs[k] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(r.done)
			r.res, r.err = conformance.Run(runCtx, c)
		}()
	}
	var all []*conformance.Results
	interrupted := false
	for k, a := range adapters {
		r := runs[k]
		progress.Start(a.Name)
		if stream != nil {
			stream.Start(r.meta)
		}
		r.show(func(cr *conformance.CaseResult) {
			progress.Case(cr)
			if stream != nil {
				stream.Case(cr)
			}
		})
		<-r.done
		res, err := r.res, r.err
		progress.Clear()
		if err != nil && (res == nil || ctx.Err() == nil) {
			fmt.Fprintf(stderr, "agentconform run: %s: %v\n", a.Name, err)
			return exitUsage
		}
		if stream != nil {
			stream.End(res)
		}
		if res.Meta.Incomplete {
			// Interrupted: write every report with what finished, marked
			// incomplete, and report no further adapter.
			all = append(all, res)
			interrupted = true
			break
		}
		if *profile != "" && *profile != "acp" && res.Meta.Hello != nil && res.Meta.Hello.Profile != *profile {
			fmt.Fprintf(stderr, "agentconform run: the adapter declares profile %q, not %q\n", res.Meta.Hello.Profile, *profile)
			return exitUsage
		}
		all = append(all, res)
	}
	doc := reports.NewDocument(all...)
	if *out != "" {
		if err := reports.WriteResultsFile(*out, doc); err != nil {
			fmt.Fprintf(stderr, "agentconform run: writing results: %v\n", err)
			return exitUsage
		}
	}
	if stream != nil && stream.Err() != nil {
		fmt.Fprintf(stderr, "agentconform run: writing %s: %v\n", *ndjsonOut, stream.Err())
		return exitUsage
	}
	outs := &outputs{junit: junitOut, markdown: markdownOut, html: htmlOut, title: new(string), reportURL: new(string), sourceBase: sourceBase, maxBytes: new(int)}
	if err := outs.write(doc, stdout, reports.SummaryOptions{}); err != nil {
		fmt.Fprintf(stderr, "agentconform run: writing reports: %v\n", err)
		return exitUsage
	}
	if *writeBase != "" {
		err := writeReportFile(*writeBase, func(w io.Writer) error {
			for _, r := range all {
				if err := conformance.WriteBaseline(w, r, *strict); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintf(stderr, "agentconform run: writing baseline: %v\n", err)
			return exitUsage
		}
	}
	reports.WriteSummary(stdout, doc, reports.SummaryOptions{Quiet: *quiet, Color: reports.ColorEnabled(stdout), Out: *out, Baseline: baseLines})
	if len(modes) > 1 {
		fmt.Fprintln(stdout)
		reports.WriteFidelityText(stdout, reports.CompareFidelity(doc))
	}
	if inGitHubActions() {
		reports.WriteAnnotations(stdout, doc, baseLines, "")
	}
	if interrupted {
		n := 0
		for _, r := range all {
			n += len(r.Cases)
		}
		fmt.Fprintf(stderr, "agentconform run: interrupted (%s): the reports hold the %d cases that finished and say the run is incomplete\n", interruption(ctx), n)
		return interruptedStatus(ctx)
	}
	if !reports.Passed(doc) {
		return exitFindings
	}
	return exitOK
}

// adapterRun is one adapter's run going on at once with the others': the
// cases it finished before it is shown are held back, then shown as the
// rest finish.
type adapterRun struct {
	meta conformance.Meta
	done chan struct{}
	res  *conformance.Results
	err  error

	mu   sync.Mutex
	held []*conformance.CaseResult
	out  func(*conformance.CaseResult) // nil while held back
}

// progress is the run's Config.Progress.
func (r *adapterRun) progress(cr *conformance.CaseResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.out == nil {
		r.held = append(r.held, cr)
		return
	}
	r.out(cr)
}

// show shows the cases held back, and from now on each as it finishes.
func (r *adapterRun) show(f func(*conformance.CaseResult)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cr := range r.held {
		f(cr)
	}
	r.held, r.out = nil, f
}

// referenceAdapters are the adapters agentconform run judges without
// --adapter: the reference adapter, unified and shim; the lean
// agentconform-adapter when it sits next to this executable (it starts in
// a tenth of the time, on every case), else this executable's (see
// referenceAdaptersOf).
func referenceAdapters(self string, stallAfter time.Duration) []conformance.Adapter {
	prog := self
	if lean := filepath.Join(filepath.Dir(self), leanAdapterName); isExecutable(lean) {
		prog = lean
	}
	return referenceAdaptersOf(prog, self, stallAfter)
}

// referenceAdaptersOf are the reference adapters run by prog: a lean
// agentconform-adapter, or self (as `agentconform adapter`). They are
// started directly, not through a shell (one process fewer per case), with
// a watchdog of stallAfter (conformance.ReferenceStallAfter, or run
// --stall-after) and conformance.ReferenceArgs.
func referenceAdaptersOf(prog, self string, stallAfter time.Duration) []conformance.Adapter {
	var args []string
	if prog == self {
		args = []string{"adapter"}
	}
	var adapters []conformance.Adapter
	for _, p := range []string{"unified", "shim"} {
		argv := append(append([]string(nil), args...), conformance.ReferenceArgs(p, stallAfter)...)
		adapters = append(adapters, conformance.Adapter{Name: "reference/" + p, Command: func(ctx context.Context) *exec.Cmd {
			return exec.CommandContext(ctx, prog, argv...)
		}})
	}
	return adapters
}

func runUsageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "agentconform run: %v\nRun 'agentconform run --help' for usage.\n", err)
	return exitUsage
}

func parseShard(s string) (int, int, bool) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, false
	}
	return i, n, true
}

// transcriptCase is the one case of --transcript: the file replayed as
// recorded.
func transcriptCase(path string) (*conformance.Case, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	t, err := transcript.ReadFile(abs, transcript.Options{})
	if err != nil {
		return nil, err
	}
	return conformance.TranscriptCase(t, abs), nil
}

func printCatalog(w io.Writer) {
	fmt.Fprintln(w, "Checks:")
	for _, c := range conformance.Catalog() {
		fmt.Fprintf(w, "  %-6s %s\n         %s\n         Source: %s\n", c.Level, c.ID, c.Requirement, c.Source)
	}
	cases, err := conformance.Generate(append(append([]string(nil), conformance.CLIs...), conformance.AgentAppServer, conformance.AgentGeminiACP))
	if err != nil {
		fmt.Fprintf(w, "cases: %v\n", err)
		return
	}
	fmt.Fprintln(w, "\nCLI versions (--cli-version CLI=VERSION; without it, each CLI's default fixtures):")
	for _, cli := range conformance.CLIs {
		known, err := conformance.KnownCLIVersions(cli)
		if err != nil {
			fmt.Fprintf(w, "  %s: %v\n", cli, err)
			continue
		}
		fmt.Fprintf(w, "  %-7s %s\n", cli, strings.Join(known, ", "))
	}
	fmt.Fprintf(w, "\nCases (%d):\n", len(cases))
	for _, c := range cases {
		extra := ""
		if c.Faults != "" {
			extra = "  [faults: " + c.Faults + "]"
		}
		fmt.Fprintf(w, "  %-44s %s%s\n", c.ID, c.Description, extra)
	}
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " '\"\\$`!*?[](){};&|<>~#\t\n") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
