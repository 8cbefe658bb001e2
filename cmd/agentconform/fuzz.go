package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fuzz"
)

const fuzzUsage = `Usage: agentconform fuzz [flags]
       agentconform fuzz replay [--adapter CMD] [FILE...]
       agentconform fuzz seeds --out DIR

Fuzzes an adapter: a structure-aware mutator turns the fuzzer's bytes into
event-level and pipe-level mutations of a fixture (the fakes' faults, and
the caller's interrupt), and every execution is judged by the properties:
the adapter ends its stream properly, its output is valid for its profile,
every id it reports came from the CLI, it neither invents nor loses content
(the lossless checks), and it finishes within its deadline.

With --adapter, the adapter runs through the harness against the fake CLIs
(two processes per execution); without, the reference adapter of --target
runs in process. An adapter of codex app-server (its hello names the agent
codex-app-server) is fuzzed with --agents codex-app-server: the app-server
fixtures, with JSON-RPC aware mutations (a notification dropped, written
twice, moved or renamed, an answer written twice or never, unknown methods
and fields, lines cut, a server that dies or stalls), and judged besides
on one outcome per turn and every server request answered. An Agent Client
Protocol agent is fuzzed with --profile acp: agentconform plays the editor,
as run --profile acp does, and the acp checks judge the exchange.

In a checkout of agentconform with the Go toolchain on PATH, this wraps
go test -fuzz (coverage-guided; failing inputs land in
fuzz/targets/testdata/fuzz and replay in every later go test); anywhere
else, or with --engine random, a random mutator runs the same targets and
properties without coverage guidance.

A failure is shrunk to the smallest transcript that still fails, saved in
--crashers with the property it breaks, and printed with the command that
replays it. 'agentconform fuzz replay' re-runs saved crashers (default: all
of fuzz/testdata/crashers) and reports each as FIXED, FAILED or ERROR.
'agentconform fuzz seeds' writes the seed corpora as OSS-Fuzz wants them
(<fuzzer>_seed_corpus.zip).

Exit codes: 0 nothing found (replay: all FIXED), 1 a failure found (replay:
a crasher FAILED), 2 usage or runner error (replay: a crasher could not run).

Flags:
`

// fuzzTargets maps --target to the fuzz function of package fuzz/targets.
var fuzzTargets = map[string]string{
	"unified":     "FuzzReferenceUnified",
	"shim":        "FuzzReferenceShim",
	"validate":    "FuzzValidate",
	"transcript":  "FuzzTranscript",
	"fake-flags":  "FuzzFakeFlags",
	"rpc-message": "FuzzRPCMessage",
	"acp":         "FuzzACP",
	"app-server":  "FuzzAppServer",
	"external":    "FuzzExternalAdapter",
}

// fuzzTargetNames lists what --target takes, for messages.
const fuzzTargetNames = "unified, shim, validate, transcript, fake-flags, rpc-message, acp or app-server"

func runFuzz(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "replay":
			return runFuzzReplay(ctx, args[1:], stdout, stderr)
		case "seeds":
			return runFuzzSeeds(args[1:], stdout, stderr)
		}
	}
	fl := pflag.NewFlagSet("fuzz", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		adapter   = fl.String("adapter", "", "shell command that starts the adapter under test (default: the reference adapter of --target, in process)")
		target    = fl.String("target", "", "what to fuzz without --adapter: "+fuzzTargetNames+" (default unified)")
		profile   = fl.String("profile", "", "acp: --adapter starts an Agent Client Protocol agent, which agentconform's editor drives (as run --profile acp)")
		duration  = fl.Duration("time", time.Minute, "how long to fuzz")
		jobs      = fl.Int("jobs", 0, "executions run at once (default: number of cores)")
		crashers  = fl.String("crashers", "", "directory shrunk crashers are saved in (default: fuzz/testdata/crashers of the checkout, else ./crashers)")
		deadline  = fl.Duration("deadline", 0, "deadline of one execution (default 10s for an adapter, 5s in process)")
		agents    = fl.StringSlice("agents", nil, "only fixtures of these agents (claude, codex, gemini; codex-app-server for an adapter of codex app-server; default: all CLIs, and for --profile acp the CLIs the agent's command names)")
		engine    = fl.String("engine", "auto", "go (go test -fuzz, needs a checkout and the Go toolchain), random (built in, no coverage guidance), or auto")
		signalInt = fl.Bool("interrupt-signal", false, "interrupt the adapter with SIGINT instead of the harness's interrupt command (the same as --interrupt signal)")
		interrupt = fl.String("interrupt", "command", "how to interrupt the adapter, as for run: command (the harness interrupt line) or signal (SIGINT)")
		seed      = fl.Int64("seed", 0, "seed of the random engine (default: from the clock)")
	)
	fl.Usage = func() {
		fmt.Fprint(stderr, fuzzUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return fuzzUsageError(stderr, err)
	}
	if fl.NArg() > 0 {
		return fuzzUsageError(stderr, fmt.Errorf("unexpected argument %q (the adapter command goes in --adapter)", fl.Arg(0)))
	}
	name := *target
	switch {
	case *adapter != "" && name != "" && name != "external":
		return fuzzUsageError(stderr, fmt.Errorf("--target %s fuzzes a reference adapter or a parser; --adapter fuzzes yours: give one", name))
	case *adapter != "":
		name = "external"
	case name == "":
		name = "unified"
	case name == "external":
		return fuzzUsageError(stderr, errors.New("--target external needs --adapter"))
	}
	fn, ok := fuzzTargets[name]
	if !ok {
		return fuzzUsageError(stderr, fmt.Errorf("--target %q: want %s", name, fuzzTargetNames))
	}
	for _, a := range *agents {
		if a != "claude" && a != "codex" && a != "gemini" && a != fuzz.AgentAppServer {
			return fuzzUsageError(stderr, fmt.Errorf("--agents: %q is not claude, codex, gemini or %s", a, fuzz.AgentAppServer))
		}
	}
	switch {
	case *profile != "" && *profile != fuzz.ProfileACP:
		return fuzzUsageError(stderr, fmt.Errorf("--profile %q: want %s (or none, for an adapter of the harness protocol)", *profile, fuzz.ProfileACP))
	case *profile != "" && *adapter == "":
		return fuzzUsageError(stderr, errors.New("--profile acp needs --adapter, the command that starts the ACP agent"))
	case *profile != "" && slices.Contains(*agents, fuzz.AgentAppServer):
		return fuzzUsageError(stderr, fmt.Errorf("--profile acp judges an ACP agent, which drives the CLIs, not %s", fuzz.AgentAppServer))
	}
	root, rootErr := fuzz.CheckoutRoot()
	goTool, goErr := exec.LookPath("go")
	useGo := false
	switch *engine {
	case "go":
		if rootErr != nil {
			return fuzzUsageError(stderr, fmt.Errorf("--engine go needs the agentconform source: run in a checkout or set AGENTCONFORM_SRC (%v)", rootErr))
		}
		if goErr != nil {
			return fuzzUsageError(stderr, fmt.Errorf("--engine go needs the Go toolchain on PATH: %v", goErr))
		}
		useGo = true
	case "random":
	case "auto":
		useGo = rootErr == nil && goErr == nil
	default:
		return fuzzUsageError(stderr, fmt.Errorf("--engine %q: want go, random or auto", *engine))
	}
	dir := *crashers
	if dir == "" {
		if rootErr == nil {
			dir = filepath.Join(root, "fuzz", fuzz.CrashersDir)
		} else {
			dir = "crashers"
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	self, err := os.Executable()
	if err != nil {
		return fuzzUsageError(stderr, err)
	}
	fakeExe := fakecli.Executable(self)
	env := map[string]string{}
	if fakeExe != self || !useGo {
		// Without the lean fake next to this binary, go test builds it
		// (static) rather than start this whole binary for every fake.
		env[fuzz.EnvFakeExe] = fakeExe
	}
	if *adapter != "" {
		// go test runs in the targets' package directory: the command's
		// relative paths are the caller's, made absolute here.
		*adapter = conformance.ResolveCommand(*adapter, "")
		env[fuzz.EnvAdapter] = *adapter
	}
	if *profile != "" {
		env[fuzz.EnvProfile] = *profile
		env[fuzz.EnvEditor] = self
	}
	if *deadline > 0 {
		env[fuzz.EnvDeadline] = deadline.String()
	}
	if len(*agents) > 0 {
		env[fuzz.EnvAgents] = strings.Join(*agents, ",")
	}
	switch *interrupt {
	case "command":
	case "signal":
		*signalInt = true
	default:
		return fuzzUsageError(stderr, fmt.Errorf("--interrupt %q: want command or signal", *interrupt))
	}
	if *signalInt {
		env[fuzz.EnvSignalInterrupt] = "1"
	}
	if useGo {
		return fuzzWithGo(ctx, goTool, root, fn, *duration, *jobs, dir, env, stdout, stderr)
	}
	opts := fuzz.ExternalOptions{FakeExe: fakeExe, Deadline: *deadline, Agents: *agents, SignalInterrupt: *signalInt,
		Profile: *profile, EditorExe: self}
	return fuzzRandom(ctx, name, *adapter, opts, *duration, *jobs, *seed, dir, stdout, stderr)
}

func fuzzUsageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "agentconform fuzz: %v\nRun 'agentconform fuzz --help' for usage.\n", err)
	return exitUsage
}

// failingInputRE finds what go test -fuzz reports as failing: an input it
// wrote (testdata/fuzz/<Func>/<file>), or a seed of the corpus.
var failingInputRE = regexp.MustCompile(`Failing input written to testdata/fuzz/(\S+)/(\S+)|failure while testing seed corpus entry: (\S+)/(\S+)`)

// fuzzWithGo runs go test -fuzz on one target of fuzz/targets, then
// re-runs the failing input it found with shrinking on, which saves the
// crasher and prints how to replay it.
func fuzzWithGo(ctx context.Context, goTool, root, fn string, d time.Duration, jobs int, crashers string, env map[string]string, stdout, stderr io.Writer) int {
	// go test -fuzz minimizes every new interesting input besides the
	// time it searches, and --time bounds only the search: keep each
	// minimization to a tenth of it, and say so.
	minimize := min(10*time.Second, max(time.Second, d/10))
	args := []string{"test", "-run=^$", "-fuzz=^" + fn + "$", "-fuzztime=" + d.String(), "-fuzzminimizetime=" + minimize.String()}
	if jobs > 0 {
		args = append(args, fmt.Sprintf("-parallel=%d", jobs))
	}
	args = append(args, "./fuzz/targets")
	fmt.Fprintf(stdout, "agentconform fuzz: go %s (in %s)\n", strings.Join(args, " "), root)
	fmt.Fprintf(stdout, "agentconform fuzz: %s of search; go test also minimizes each new input for up to %s (its \"execs\" line stands still meanwhile), and a failure is shrunk after the search\n", d, minimize)
	var log strings.Builder
	code, err := runGo(ctx, goTool, root, args, env, io.MultiWriter(stdout, &log), d+5*time.Minute)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform fuzz: %v\n", err)
		return exitUsage
	}
	m := failingInputRE.FindStringSubmatch(log.String())
	if m == nil {
		if code != 0 {
			fmt.Fprintf(stderr, "agentconform fuzz: go test failed without a failing input (exit %d)\n", code)
			return exitUsage
		}
		fmt.Fprintf(stdout, "agentconform fuzz: nothing found in %s\n", d)
		return exitOK
	}
	fn, input := m[1]+m[3], m[2]+m[4]
	fmt.Fprintf(stdout, "\nagentconform fuzz: %s failed on %s; shrinking it\n", fn, input)
	env[fuzz.EnvCrashers] = crashers
	rerun := []string{"test", "-count=1", "-run=^" + fn + "$/^" + regexp.QuoteMeta(input) + "$", "./fuzz/targets"}
	var out strings.Builder
	if _, err := runGo(ctx, goTool, root, rerun, env, &out, 10*time.Minute); err != nil {
		fmt.Fprintf(stderr, "agentconform fuzz: %v\n", err)
		return exitUsage
	}
	paths := fuzz.CrasherPaths(out.String())
	if len(paths) == 0 {
		fmt.Fprintf(stderr, "agentconform fuzz: the failing input did not fail again (flaky?):\n%s\n", out.String())
		return exitFindings
	}
	for _, p := range paths {
		printCrasher(stdout, p)
	}
	return exitFindings
}

// runGo runs the go command in dir with extra environment, killing its
// process group at the deadline or when ctx ends (an interrupt first, so
// that go test reports what it has).
func runGo(ctx context.Context, goTool, dir string, args []string, env map[string]string, out io.Writer, limit time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 30 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return -1, fmt.Errorf("go %s: %w", args[0], err)
	}
	return 0, nil
}

// printCrasher prints a saved crasher and the commands that replay it.
func printCrasher(w io.Writer, p string) {
	c, err := fuzz.LoadCrasher(p)
	if err != nil {
		fmt.Fprintf(w, "crasher %s: %v\n", p, err)
		return
	}
	first, _, _ := strings.Cut(c.Meta.Message, "\n")
	fmt.Fprintf(w, "\nFAIL %s breaks %s: %s\n  Input:   %s\n  Crasher: %s (%d steps)\n  Replay:  %s\n",
		c.Meta.Target, c.Meta.Property, first, c.Meta.Input, p, len(c.Transcript.Steps), fuzz.ReplayCommand(c))
}

// fuzzRandom is the engine without the Go toolchain: it mutates the seed
// inputs at random (byte flips, insertions, appended mutation records) and
// runs them on jobs workers until the time is up or one fails, then
// shrinks and saves the failure. No coverage guides it.
func fuzzRandom(ctx context.Context, name, adapter string, opts fuzz.ExternalOptions, d time.Duration, jobs int, seed int64, crashers string, stdout, stderr io.Writer) int {
	check, seeds, cleanup, err := randomTarget(name, adapter, opts)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform fuzz: %v\n", err)
		return exitUsage
	}
	defer cleanup()
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	fmt.Fprintf(stdout, "agentconform fuzz: random engine (no coverage guidance), target %s, %d workers, seed %d, for %s\n", name, jobs, seed, d)
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		execs   atomic.Int64
		once    sync.Once
		found   string
		wg      sync.WaitGroup
		started = time.Now()
	)
	run := func(data []byte) bool {
		execs.Add(1)
		if report := check(data, crashers); report != "" {
			once.Do(func() { found = report; cancel() })
			return false
		}
		return true
	}
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func(w int, rng *rand.Rand) {
			defer wg.Done()
			for i := w; i < len(seeds) && ctx.Err() == nil; i += jobs {
				if !run(seeds[i]) {
					return
				}
			}
			for ctx.Err() == nil {
				if !run(fuzz.Mutate(rng, seeds[rng.Intn(len(seeds))])) {
					return
				}
			}
		}(w, rand.New(rand.NewSource(seed+int64(w))))
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case <-tick.C:
			el := time.Since(started)
			fmt.Fprintf(stdout, "agentconform fuzz: elapsed %s, execs %d (%.0f/sec)\n", el.Round(time.Second), execs.Load(), float64(execs.Load())/el.Seconds())
		case <-done:
			break wait
		}
	}
	el := time.Since(started)
	fmt.Fprintf(stdout, "agentconform fuzz: %d executions in %s (%.0f/sec)\n", execs.Load(), el.Round(time.Millisecond), float64(execs.Load())/el.Seconds())
	if found == "" {
		fmt.Fprintf(stdout, "agentconform fuzz: nothing found\n")
		return exitOK
	}
	fmt.Fprintln(stdout, found)
	for _, p := range fuzz.CrasherPaths(found) {
		printCrasher(stdout, p)
	}
	return exitFindings
}

// randomTarget returns the check the random engine runs for a target,
// and its seeds.
func randomTarget(name, adapter string, opts fuzz.ExternalOptions) (func(data []byte, crashers string) string, [][]byte, func(), error) {
	nothing := func() {}
	seeds := fuzz.TargetSeeds()[fuzzTargets[name]]
	if len(seeds) == 0 {
		return nil, nil, nothing, fmt.Errorf("no seeds for target %s", name)
	}
	raw := func(f func([]byte) *fuzz.Failure) func([]byte, string) string {
		return func(data []byte, _ string) string {
			if fail := f(data); fail != nil {
				return fmt.Sprintf("%s: %s\ninput: %q", name, fail, data)
			}
			return ""
		}
	}
	switch name {
	case "validate":
		return raw(fuzz.CheckValidate), seeds, nothing, nil
	case "transcript":
		return raw(fuzz.CheckTranscript), seeds, nothing, nil
	case "rpc-message":
		return raw(fuzz.CheckRPCMessage), seeds, nothing, nil
	case "acp":
		return raw(fuzz.CheckACP), seeds, nothing, nil
	case "app-server":
		return raw(fuzz.CheckAppServer), seeds, nothing, nil
	case "fake-flags":
		dir, err := os.MkdirTemp("", "agentconform-fuzz-sessions-")
		if err != nil {
			return nil, nil, nothing, err
		}
		return raw(func(b []byte) *fuzz.Failure { return fuzz.CheckFakeFlags(b, dir) }), seeds, func() { os.RemoveAll(dir) }, nil
	}
	var t fuzz.Target
	cleanup := nothing
	agents := opts.Agents
	if name == "external" {
		e, err := fuzz.NewExternal(adapter, opts)
		if err != nil {
			return nil, nil, nothing, err
		}
		t, cleanup = e, func() { e.Close() }
		// The seeds of the agents the adapter drives, encoded for them.
		agents = e.Agents()
		if seeds, err = fuzz.SeedsFor(agents); err != nil {
			e.Close()
			return nil, nil, nothing, err
		}
	} else {
		r, err := fuzz.NewReferenceTarget(name)
		if err != nil {
			return nil, nil, nothing, err
		}
		if opts.Deadline > 0 {
			r.Deadline = opts.Deadline
		}
		t = r
	}
	var known []fuzz.KnownIssue
	if root, err := fuzz.CheckoutRoot(); err == nil {
		known, _ = fuzz.LoadKnown(filepath.Join(root, "fuzz", fuzz.CrashersDir))
	}
	return func(data []byte, crashers string) string {
		in := fuzz.Decode(data, agents)
		_, fail := fuzz.CheckInput(t, in)
		if fail == nil || fuzz.MatchKnown(known, t.Name(), fail) != "" {
			return ""
		}
		return fuzz.Report(t, in, fail, crashers)
	}, seeds, cleanup, nil
}

const fuzzReplayUsage = `Usage: agentconform fuzz replay [--adapter CMD] [FILE...]

Re-runs saved crashers (default: every *.jsonl in fuzz/testdata/crashers of
the checkout) against the target each was found on, and reports each as
FIXED (its property holds now), FAILED (it still breaks it) or ERROR (it
could not run). --adapter overrides the command of external crashers.

Flags:
`

func runFuzzReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := pflag.NewFlagSet("fuzz replay", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	adapter := fl.String("adapter", "", "shell command that starts the adapter (default: the one each external crasher names)")
	deadline := fl.Duration("deadline", 0, "deadline of one execution (default 10s for an adapter)")
	fl.Usage = func() {
		fmt.Fprint(stderr, fuzzReplayUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return fuzzUsageError(stderr, err)
	}
	files := fl.Args()
	if len(files) == 0 {
		root, err := fuzz.CheckoutRoot()
		if err != nil {
			return fuzzUsageError(stderr, fmt.Errorf("no crashers given, and no checkout to find fuzz/testdata/crashers in: %v", err))
		}
		files, err = fuzz.Crashers(filepath.Join(root, "fuzz", fuzz.CrashersDir))
		if err != nil {
			return fuzzUsageError(stderr, err)
		}
		if len(files) == 0 {
			fmt.Fprintln(stdout, "agentconform fuzz replay: no saved crashers")
			return exitOK
		}
	}
	self, err := os.Executable()
	if err != nil {
		return fuzzUsageError(stderr, err)
	}
	opts := fuzz.ExternalOptions{FakeExe: fakecli.Executable(self), Deadline: *deadline}
	counts := map[fuzz.Verdict]int{}
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		r := fuzz.Replay(f, *adapter, opts)
		counts[r.Verdict]++
		first, _, _ := strings.Cut(r.Detail, "\n")
		prop := r.Property
		if prop == "" {
			prop = "?"
		}
		fmt.Fprintf(stdout, "%-6s %s (%s): %s\n", r.Verdict, f, prop, first)
	}
	var parts []string
	for _, v := range []fuzz.Verdict{fuzz.Fixed, fuzz.Failed, fuzz.Error} {
		parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
	}
	fmt.Fprintf(stdout, "%d crashers: %s\n", len(files), strings.Join(parts, ", "))
	switch {
	case counts[fuzz.Failed] > 0:
		return exitFindings
	case counts[fuzz.Error] > 0:
		return exitUsage
	}
	return exitOK
}

func runFuzzSeeds(args []string, stdout, stderr io.Writer) int {
	fl := pflag.NewFlagSet("fuzz seeds", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	out := fl.String("out", "", "directory to write <fuzzer>_seed_corpus.zip into")
	fl.Usage = func() {
		fmt.Fprint(stderr, "Usage: agentconform fuzz seeds --out DIR\n\nWrites the seed corpus of every fuzz target of the checkout as OSS-Fuzz wants it:\n<fuzzer>_seed_corpus.zip, the committed corpus and the F.Add seeds (which\nOSS-Fuzz ignores), encoded as a libFuzzer build decodes them.\n\nFlags:\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return fuzzUsageError(stderr, err)
	}
	if *out == "" || fl.NArg() > 0 {
		fl.Usage()
		return exitUsage
	}
	root, err := fuzz.CheckoutRoot()
	if err != nil {
		return fuzzUsageError(stderr, err)
	}
	counts, err := fuzz.ExportSeedCorpora(root, *out)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform fuzz seeds: %v\n", err)
		return exitUsage
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	w := bufio.NewWriter(stdout)
	for _, n := range names {
		fmt.Fprintf(w, "%s_seed_corpus.zip: %d inputs\n", filepath.Join(*out, n), counts[n])
	}
	w.Flush()
	return exitOK
}
