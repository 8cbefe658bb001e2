package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// Config configures a run.
type Config struct {
	// Adapter is the adapter under test.
	Adapter Adapter
	// FakeExe is the executable that acts as the fake CLIs when started as
	// claude, codex or gemini (the agentconform binary, or a test binary
	// whose TestMain calls fakecli.Main).
	FakeExe string
	// Cases are the cases to run; nil means Generate for the agents the
	// adapter's hello names.
	Cases []*Case
	// Match selects cases by ID glob ("codex/*", "claude/interrupt");
	// empty selects all.
	Match []string
	// Jobs is how many cases run at once; 0 means the number of cores.
	Jobs int
	// Pool, if set, bounds the cases that run at once across the runs that
	// share it (Jobs then says how many of them this run may fill);
	// without one a run has a pool of Jobs of its own.
	Pool *Pool
	// Shard runs only the cases whose index modulo ShardOf is Shard.
	Shard, ShardOf int
	// Seed is handed to the fakes for their random choices.
	Seed int64
	// Timeout bounds a case that sets none; 0 means 20 s.
	Timeout time.Duration
	// Strict makes NON-STRICT verdicts failures.
	Strict bool
	// WorkDir holds the case directories; "" means a new temp directory.
	WorkDir string
	// Keep keeps every case directory (wire logs, observation logs).
	Keep bool
	// Baseline lists expected failures.
	Baseline *Baseline
	// Progress, if set, is called as each case finishes (from one goroutine).
	Progress func(*CaseResult)
	// StallAfter is the watchdog time lifecycle/watchdog assumes of an
	// adapter whose hello declares none; 0 means DefaultStallAfter.
	StallAfter time.Duration
	// CLIVersions maps a CLI to the version whose fixtures its cases
	// replay ("claude": "2.1.329"; KnownCLIVersions lists them); CLIs not
	// in it replay the default fixtures (the newest release). A case whose
	// scenario was not captured at that version is SKIP, with the reason.
	CLIVersions map[string]string
	// Real, when set, plays the cases with the real CLIs instead of the
	// fakes (`--cli real`): those a real CLI can play, the others SKIP.
	Real *RealCLIs

	// fakes is the directory of the fake CLIs that prepare installed in
	// WorkDir for every case of the run.
	fakes string
}

// Results is everything a run found.
type Results struct {
	Meta  Meta          `json:"meta"`
	Cases []*CaseResult `json:"cases"`
	// Gate is the verdict of the run against its baseline.
	Gate Gate `json:"gate"`
}

// Meta describes a run.
type Meta struct {
	Tool     string    `json:"tool"`
	Version  string    `json:"version"`
	Adapter  string    `json:"adapter"`
	Hello    *Hello    `json:"hello,omitempty"`
	Seed     int64     `json:"seed"`
	Shard    string    `json:"shard,omitempty"`
	Strict   bool      `json:"strict"`
	Started  time.Time `json:"started"`
	Duration float64   `json:"duration_s"`
	// Incomplete is true when the run was interrupted: Cases holds the
	// cases that finished; the others did not run and are not listed.
	Incomplete bool `json:"incomplete,omitempty"`
	// CLIVersions maps each CLI to the versions of the fixtures used.
	CLIVersions map[string][]string `json:"cli_versions,omitempty"`
	// CLIVersionPins are the versions the run was asked to replay
	// (Config.CLIVersions, --cli-version), per CLI; a CLI not listed ran
	// the default fixtures.
	CLIVersionPins map[string]string `json:"cli_version_pins,omitempty"`
	// CLI says what played the CLIs: "real" for a run on the real CLIs
	// (Config.Real), else the fakes ("" in results written before runs on
	// the real CLIs existed).
	CLI string `json:"cli,omitempty"`
}

// CaseResult is the verdicts of every check on one case.
type CaseResult struct {
	ID string `json:"id"`
	// Adapter names the adapter the case ran against.
	Adapter     string        `json:"adapter"`
	Agent       string        `json:"agent"`
	Fixture     string        `json:"fixture,omitempty"`
	Faults      string        `json:"faults,omitempty"`
	Description string        `json:"description,omitempty"`
	Verdict     Verdict       `json:"verdict"`
	Duration    float64       `json:"duration_s"`
	Checks      []CheckResult `json:"checks"`
	Reproduce   string        `json:"reproduce"`
	// Wire is an excerpt of the exchange: commands sent, adapter records,
	// the CLI invocations and how they ended, the adapter's stderr tail.
	Wire string `json:"wire,omitempty"`
	// Dir is the kept case directory (with --keep).
	Dir string `json:"dir,omitempty"`
	// CLIVersion is the version of the CLI the fakes played: the version
	// the replayed fixture was recorded with, or the version asked for when
	// there was no fixture of the scenario at it (the case is SKIP).
	CLIVersion string `json:"cli_version,omitempty"`
	// Real is set when the case ran on the real CLI: what played, and
	// what the mock model API and the trap saw.
	Real *RealRun `json:"real,omitempty"`
}

// CheckResult is one check's verdict on one case.
type CheckResult struct {
	Check       string  `json:"check"`
	Family      Family  `json:"family"`
	Level       string  `json:"level"`
	Requirement string  `json:"requirement"`
	Source      string  `json:"source"`
	Verdict     Verdict `json:"verdict"`
	Expected    string  `json:"expected,omitempty"`
	Actual      string  `json:"actual,omitempty"`
	Diff        string  `json:"diff,omitempty"`
	// Baselined marks a failure the baseline expects.
	Baselined bool `json:"baselined,omitempty"`
}

// Run runs the cases against the adapter and judges them. When ctx is
// cancelled it stops the running cases, and returns what finished, marked
// Incomplete, with ctx's error.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	cleanup, err := cfg.prepare("agentconform-run-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	res := &Results{Meta: Meta{Tool: "agentconform", Version: Version, Adapter: cfg.Adapter.Name, Seed: cfg.Seed, Strict: cfg.Strict, Started: time.Now()}}
	if cfg.ShardOf > 1 {
		res.Meta.Shard = fmt.Sprintf("%d/%d", cfg.Shard+1, cfg.ShardOf)
	}
	hello, err := probe(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	res.Meta.Hello = hello
	res.Meta.CLIVersionPins = cfg.pins()
	res.Meta.CLI = "fake"
	if cfg.Real != nil {
		res.Meta.CLI = "real"
	}
	selected, err := cfg.selectCases(hello)
	if err != nil {
		return nil, err
	}
	res.Meta.CLIVersions = cliVersions(selected)

	jobs := cfg.Jobs
	if jobs <= 0 {
		jobs = defaultJobs()
	}
	pool := cfg.Pool
	if pool == nil {
		pool = NewPool(jobs)
	}
	queue := newCaseQueue(selected)
	results := make([]*CaseResult, len(selected))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	// Enough workers for every slot of the pool, the waiting ones too.
	for w := 0; w < pool.slots; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, release, ok := pool.next(ctx, queue)
				if !ok {
					return
				}
				cr, err := runOne(ctx, &cfg, selected[i], hello)
				if selected[i].Expect.LineSize >= collectAfterLine {
					// Its lines are garbage now: collected before the
					// next long case may start (the slot is still held),
					// so that case reuses their memory instead of
					// piling its own on top of them.
					runtime.GC()
				}
				release()
				if ctx.Err() != nil {
					// Interrupted: what the case did when it was stopped
					// is not the adapter's doing. It did not run.
					continue
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				results[i] = cr
				if cr != nil && cfg.Progress != nil {
					cfg.Progress(cr)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	for _, cr := range results {
		if cr != nil {
			res.Cases = append(res.Cases, cr)
		}
	}
	res.ApplyBaseline(cfg.Baseline)
	res.Meta.Duration = time.Since(res.Meta.Started).Seconds()
	if err := ctx.Err(); err != nil {
		// The cases that finished stand; the run says it is incomplete.
		res.Meta.Incomplete = true
		return res, err
	}
	return res, nil
}

// selectCases returns the cases cfg runs, by ID: cfg.Cases, or the cases
// Generate makes for the agents hello names (all three without one),
// those Match and the shard select.
func (cfg *Config) selectCases(hello *Hello) ([]*Case, error) {
	cases := cfg.Cases
	if cases == nil {
		agents := []string{"claude", "codex", "gemini"}
		if hello != nil && len(hello.Agents) > 0 {
			agents = hello.Agents
		}
		var err error
		if cases, err = GenerateAt(agents, cfg.CLIVersions); err != nil {
			return nil, err
		}
	} else if len(cfg.CLIVersions) > 0 {
		var err error
		if cases, err = AtVersions(cases, cfg.CLIVersions); err != nil {
			return nil, err
		}
	}
	var selected []*Case
	for _, c := range cases {
		if matchCase(c.ID, cfg.Match) && inShard(c.ID, cfg.Shard, cfg.ShardOf) {
			selected = append(selected, c)
		}
	}
	sort.SliceStable(selected, func(i, j int) bool { return selected[i].ID < selected[j].ID })
	if cfg.Real != nil {
		selected = cfg.Real.forReal(selected)
	}
	return selected, nil
}

// prepare checks cfg and fills Run's defaults: the fake executable (this
// one), a 20 s case timeout, seed 1, a work directory (a new temporary
// one, TempDir's, removed by cleanup unless Keep), and the fakes
// installed there once for all the cases.
func (cfg *Config) prepare(tempPrefix string) (cleanup func(), err error) {
	removeDir, err := cfg.prepareDir(tempPrefix)
	if err != nil {
		return removeDir, err
	}
	fakes, err := os.MkdirTemp(cfg.WorkDir, "fakes-")
	if err == nil {
		err = fakecli.Install(fakes, cfg.FakeExe, false)
	}
	if err != nil {
		removeDir()
		return func() {}, fmt.Errorf("installing the fakes: %w", err)
	}
	cfg.fakes = fakes
	// The fakes go with the run, Keep or not: a kept case needs only its
	// own directory.
	return func() { os.RemoveAll(fakes); removeDir() }, nil
}

// prepareDir is prepare without the fakes.
func (cfg *Config) prepareDir(tempPrefix string) (cleanup func(), err error) {
	cleanup = func() {}
	if cfg.Adapter.Command == nil {
		return cleanup, fmt.Errorf("no adapter command")
	}
	if cfg.FakeExe == "" {
		exe, err := os.Executable()
		if err != nil {
			return cleanup, fmt.Errorf("finding the fake executable: %w", err)
		}
		cfg.FakeExe = exe
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Second
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.StallAfter <= 0 {
		cfg.StallAfter = DefaultStallAfter
	}
	if cfg.WorkDir != "" {
		if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
			return cleanup, fmt.Errorf("the work directory: %w", err)
		}
		return cleanup, nil
	}
	dir, err := TempDir(tempPrefix)
	if err != nil {
		return cleanup, fmt.Errorf("the work directory: %w", err)
	}
	cfg.WorkDir = dir
	if !cfg.Keep {
		cleanup = func() { os.RemoveAll(dir) }
	}
	return cleanup, nil
}

// collectAfterLine is the line size from which the runner collects its
// garbage once a case is judged, before its slot is free: two 64 MiB cases
// in a row otherwise peaked at 310 MB (the second's line on the first's
// garbage), against 256 MB with the collection (six collections a run).
const collectAfterLine = 16 << 20

// MemoryLimit is the soft memory limit `agentconform run` gives the Go
// runtime (runtime/debug.SetMemoryLimit) unless GOMEMLIMIT sets one. The
// runner holds what a case's processes wrote (a 64 MiB ladder case: the
// CLI's wire copy, 64 to 128 MiB, and the adapter's events, as much
// again) while it judges them, which makes garbage of the same size;
// without a limit the collector lets the heap grow to twice what it
// holds, and a run peaks past half a gigabyte for a few seconds.
const MemoryLimit = 240 << 20

// Version is the toolkit's version, written into results.
var Version = "0.1.0-dev"

func inShard(id string, shard, of int) bool {
	if of <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32()%uint32(of)) == shard
}

// probe starts the adapter once, reads its hello and closes it, so cases
// are generated for the agents it drives.
func probe(ctx context.Context, cfg *Config) (*Hello, error) {
	// 10 s for a hello, or the case deadline when that is longer (a
	// loaded machine can take seconds to start an interpreter).
	c := &Case{ID: "probe", Agent: "claude", Fixture: "claude/plain-text", Prompts: nil, Timeout: max(10*time.Second, cfg.Timeout)}
	pctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	o, err := execProbe(pctx, cfg, c)
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		os.RemoveAll(o.Dir)
	}
	if o.StartErr != nil {
		return nil, fmt.Errorf("starting the adapter: %w", o.StartErr)
	}
	if o.Hello == nil {
		// Every case would fail the same way: say it once.
		how := fmt.Sprintf("exit %d", o.ExitCode)
		switch {
		case o.TimedOut:
			how = "still running after " + c.Timeout.String()
		case o.ExitSignal != "":
			how = "killed by " + o.ExitSignal
		}
		msg := fmt.Sprintf("the adapter wrote no hello record when started (%s)", how)
		if len(o.BadLines) > 0 {
			msg += "; its stdout began: " + clip(o.BadLines[0], 300)
		}
		if tail := strings.TrimSpace(string(o.Stderr)); tail != "" {
			msg += "; its stderr:\n" + clip(lastLines(tail, 20), 3000)
		}
		return nil, errors.New(msg)
	}
	return o.Hello, nil
}

// runOne runs and judges one case.
func runOne(ctx context.Context, cfg *Config, c *Case, hello *Hello) (*CaseResult, error) {
	c = lateAnswerCase(cfg, longTurnCase(cfg, c, hello), hello)
	cr := &CaseResult{ID: c.ID, Adapter: cfg.Adapter.Name, Agent: c.Agent, Fixture: c.Fixture, CLIVersion: c.CLIVersion, Faults: c.Faults, Description: c.Description,
		Reproduce: reproduce(cfg, c)}
	if hello != nil && !hello.drives(c.Agent) {
		for _, chk := range Catalog() {
			cr.Checks = append(cr.Checks, checkResult(chk, Skip, Outcome{Actual: "the adapter does not drive " + c.Agent}))
		}
		cr.Verdict = Skip
		return cr, nil
	}
	why := c.Unavailable
	if why != "" {
		cr.Fixture = "" // none was replayed
	} else {
		why = undeclared(c, hello, cfg)
	}
	if why != "" {
		for _, chk := range Catalog() {
			cr.Checks = append(cr.Checks, checkResult(chk, Skip, Outcome{Actual: why}))
		}
		cr.Verdict = Skip
		return cr, nil
	}
	o, err := execCase(ctx, watchdogConfig(cfg, c, hello), c)
	var setup *realSetupError
	if errors.As(err, &setup) {
		for _, chk := range Catalog() {
			cr.Checks = append(cr.Checks, checkResult(chk, Skip, Outcome{Actual: setup.Error()}))
		}
		cr.Verdict = Skip
		return cr, nil
	}
	if err != nil {
		return nil, err
	}
	if rc, note := realOutcome(c, o); note != "" {
		c, o.Case, o.Real.Outcome = rc, rc, note
	}
	cr.Duration = o.Duration.Seconds()
	h := o.Hello
	if h == nil {
		h = hello
	}
	// A case that broke as a whole (the adapter did not start, crashed,
	// timed out, flooded its stdout) is reported once, by the check it
	// breaks, with the reason; the others are not judged.
	var broke *CheckResult
	switch {
	case o.StartErr != nil:
		r := checkResult(CheckRecords, Crash, Outcome{Expected: "the adapter starts", Actual: o.StartErr.Error()})
		broke = &r
	case o.TimedOut:
		r := checkResult(CheckRecords, Timeout, Outcome{Expected: "the case finishes within its deadline", Actual: timeoutDetail(o)})
		broke = &r
	case o.OutputCapped:
		r := checkResult(CheckValid, Fail, Outcome{Expected: fmt.Sprintf("at most %d MiB and %d lines on the adapter's stdout in one case", maxAdapterOutput>>20, maxAdapterLines), Actual: errOutputCap.Error()})
		broke = &r
	case o.Crashed():
		r := checkResult(CheckRecords, Crash, Outcome{Expected: "the adapter ends with its end record", Actual: crashDetail(o)})
		broke = &r
	}
	for _, chk := range Catalog() {
		ok, why := chk.Applies(c, h)
		if skip := appServerSkip(chk, c); skip != "" {
			ok, why = false, skip
		}
		switch {
		case broke != nil && broke.Check == chk.ID:
			cr.Checks = append(cr.Checks, *broke)
		case !ok:
			cr.Checks = append(cr.Checks, checkResult(chk, Skip, Outcome{Actual: why}))
		case broke != nil:
			cr.Checks = append(cr.Checks, checkResult(chk, Skip, Outcome{Actual: fmt.Sprintf("not judged: the case ended in %s (%s)", broke.Verdict, broke.Check)}))
		default:
			out := chk.Judge(o)
			cr.Checks = append(cr.Checks, checkResult(chk, verdict(chk, out), out))
		}
	}
	cr.Verdict = worst(cr.Checks)
	cr.Wire = wireExcerpt(o)
	cr.Real = o.Real
	if cfg.Keep {
		cr.Dir = o.Dir
		writeObservation(o)
	} else {
		os.RemoveAll(o.Dir)
	}
	return cr, nil
}

// undeclared says why a case is not run against an adapter whose hello
// does not claim what the case needs ("" when it does): more than one turn
// needs multi_turn, an interrupt needs interrupt (unless the runner
// interrupts with SIGINT), a start that resumes needs resume. The runner never sends a command the adapter
// did not claim; its checks are SKIP.
func undeclared(c *Case, h *Hello, cfg *Config) string {
	if h == nil {
		return ""
	}
	if (len(c.Prompts) > 1 || c.Interrupt != nil && c.Interrupt.ThenTurn) && !h.supports("multi_turn") {
		return "the case runs more than one turn and the adapter does not declare multi_turn"
	}
	if c.Interrupt != nil && !cfg.Adapter.SignalInterrupt && !h.supports("interrupt") {
		return "the case interrupts a turn and the adapter does not declare interrupt"
	}
	if c.Resume != "" && !h.supports("resume") {
		return "the case starts by resuming a session and the adapter does not declare resume"
	}
	if c.MaxTurns > 0 && !h.supports("max_turns") {
		return "the case sets a turn limit (the CLI stops a turn at one only when asked for it) and the adapter does not declare max_turns"
	}
	if c.PermissionDelay > 0 && !h.supports("permission_delay") {
		return "the case's caller takes its time to answer a permission request (permission_delay_ms) and the adapter does not declare permission_delay"
	}
	return ""
}

// timeoutDetail says what the runner was waiting for when the case's
// deadline passed, and what the CLIs were doing then.
func timeoutDetail(o *Observation) string {
	s := fmt.Sprintf("still running after %s; killed", o.Duration.Round(time.Millisecond))
	if n := len(o.Sent); n > 0 {
		last := o.Sent[n-1]
		s += fmt.Sprintf("; the runner's last command: %s at %.3fs", last.Op, last.At.Seconds())
		switch last.Op {
		case "close":
			s += ", and no end record came"
		case "start", "send":
			s += ", and no turn_end came"
		case "interrupt", "SIGINT":
			s += ", and no turn_end came for the interrupted turn"
		}
	}
	s += " (records: " + recordKinds(o) + ")"
	for _, pid := range o.AliveAtDeadline {
		sigs := []string{}
		for _, r := range o.Fake {
			if r.PID == pid && r.Kind == "signal" {
				sigs = append(sigs, r.Signal+" ("+r.Action+")")
			}
		}
		got := "no signal"
		if len(sigs) > 0 {
			got = "signals " + strings.Join(sigs, ", ")
		}
		s += fmt.Sprintf("; CLI pid %d was still running at the deadline (it got %s): %s", pid, got, clip(strings.Join(argvOf(o, pid), " "), 200))
	}
	return s
}

func crashDetail(o *Observation) string {
	s := "exit " + strconv.Itoa(o.ExitCode)
	if o.ExitSignal != "" {
		s = "killed by " + o.ExitSignal
	}
	s += " without an end record"
	if len(o.Stderr) > 0 {
		s += "; stderr: " + clip(lastLines(string(o.Stderr), 5), 600)
	}
	return s
}

func checkResult(c *Check, v Verdict, out Outcome) CheckResult {
	return CheckResult{Check: c.ID, Family: c.Family, Level: c.Level.String(), Requirement: c.Requirement, Source: c.Source,
		Verdict: v, Expected: out.Expected, Actual: out.Actual, Diff: out.Diff}
}

var rank = map[Verdict]int{Skip: 0, Pass: 1, Informational: 2, NonStrict: 3, Fail: 4, Crash: 5, Timeout: 6}

func worst(rs []CheckResult) Verdict {
	v := Skip
	for _, r := range rs {
		if rank[r.Verdict] > rank[v] {
			v = r.Verdict
		}
	}
	return v
}

func reproduce(cfg *Config, c *Case) string {
	adapter := cfg.Adapter.Reproduce
	cmd := "agentconform run"
	if adapter != "" {
		cmd += " --adapter " + shellQuote(adapter)
	}
	if c.Transcript != "" {
		cmd += " --transcript " + shellQuote(c.Transcript)
	}
	if v := cfg.CLIVersions[c.Agent]; v != "" {
		cmd += " --cli-version " + shellQuote(c.Agent+"="+v)
	}
	cmd += " --case " + shellQuote(c.ID) + " --seed " + strconv.FormatInt(cfg.Seed, 10) + " --keep"
	if (c.Watchdog || c.LongTurn) && cfg.StallAfter > 0 && cfg.StallAfter != DefaultStallAfter {
		cmd += " --stall-after " + cfg.StallAfter.String()
	}
	if cfg.Adapter.SignalInterrupt {
		cmd += " --interrupt signal"
	}
	if cfg.Adapter.Profile != "" {
		cmd += " --profile " + cfg.Adapter.Profile
	}
	return cmd
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// wireExcerpt renders the exchange of a case for the report: commands,
// records, CLI invocations, the fakes' notable records and the stderr tail.
func wireExcerpt(o *Observation) string {
	var b strings.Builder
	type ev struct {
		at   time.Duration
		text string
	}
	var evs []ev
	for _, s := range o.Sent {
		evs = append(evs, ev{s.At, "runner → adapter: " + clip(firstNonEmpty(s.Line, s.Op), 300)})
	}
	for _, r := range o.Records {
		t := "adapter: " + r.Kind
		if r.Kind != "hello" {
			t += fmt.Sprintf(" ok=%v", r.OK)
			if r.Reason != "" {
				t += " reason=" + r.Reason
			}
			if r.Error != "" {
				t += " error=" + strconv.Quote(clip(r.Error, 200))
			}
		}
		evs = append(evs, ev{r.At, t + fmt.Sprintf(" (after %d events)", r.EventsBefore)})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	for _, e := range evs {
		fmt.Fprintf(&b, "%8.3fs %s\n", e.at.Seconds(), e.text)
	}
	for _, r := range o.Fake {
		switch r.Kind {
		case "start":
			fmt.Fprintf(&b, "cli pid %d: %s\n", r.PID, clip(strings.Join(r.Argv, " "), 400))
		case "flags_error", "protocol_error", "session_error":
			fmt.Fprintf(&b, "cli pid %d at %d ms: %s: %s\n", r.PID, r.TMS, r.Kind, r.Message)
		case "session":
			how := "new session"
			if r.Resumed {
				how = "resumed session"
			}
			fmt.Fprintf(&b, "cli pid %d: %s %s\n", r.PID, how, r.Session)
		case "signal":
			fmt.Fprintf(&b, "cli pid %d at %d ms: %s → %s\n", r.PID, r.TMS, r.Signal, r.Action)
		case "stdin":
			fmt.Fprintf(&b, "cli pid %d at %d ms: stdin %s\n", r.PID, r.TMS, clip(r.Text, 200))
		case "stdin_closed":
			fmt.Fprintf(&b, "cli pid %d at %d ms: stdin closed\n", r.PID, r.TMS)
		case "fault":
			fmt.Fprintf(&b, "cli pid %d: fault %s: %s\n", r.PID, r.Fault, clip(r.Detail, 200))
		case "exit":
			how := "exit"
			if r.Code != nil {
				how += " " + strconv.Itoa(*r.Code)
			}
			if r.Signal != "" {
				how = "killed by " + r.Signal
			}
			fmt.Fprintf(&b, "cli pid %d at %d ms: %s\n", r.PID, r.TMS, how)
		}
	}
	for _, l := range o.Leftover {
		what := "left running after the adapter exited"
		if l.Tool {
			what = "left running by a tool of the real CLI, in a session of its own (not the adapter's)"
		}
		fmt.Fprintf(&b, "%s: pid %d: %s\n", what, l.PID, clip(strings.Join(l.Argv, " "), 300))
	}
	fmt.Fprintf(&b, "adapter: %d events, exit %d%s after %.3fs\n", len(o.Events), o.ExitCode, map[bool]string{true: " (" + o.ExitSignal + ")", false: ""}[o.ExitSignal != ""], o.Duration.Seconds())
	if len(o.Stderr) > 0 {
		fmt.Fprintf(&b, "adapter stderr (tail):\n%s\n", clip(lastLines(string(o.Stderr), 10), 2000))
	}
	return b.String()
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// writeObservation saves the adapter's side of a kept case next to the
// fakes' logs.
func writeObservation(o *Observation) {
	f, err := os.Create(o.Dir + "/adapter.jsonl")
	if err != nil {
		return
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, s := range o.Sent {
		enc.Encode(map[string]any{"dir": "in", "t_ms": s.At.Milliseconds(), "line": s.Line, "op": s.Op})
	}
	for _, e := range o.Events {
		enc.Encode(map[string]any{"dir": "out", "t_ms": e.At.Milliseconds(), "line": string(e.Raw)})
	}
	os.WriteFile(o.Dir+"/adapter.stderr", o.Stderr, 0o644)
}
