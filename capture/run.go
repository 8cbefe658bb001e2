package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/capture/mock"
	"github.com/agentconform/agentconform/capture/proctree"
	"github.com/agentconform/agentconform/recorder"
	"github.com/agentconform/agentconform/redact"
	"github.com/agentconform/agentconform/transcript"
)

// Defaults of Options' zero values.
const (
	// DefaultTimeout bounds each CLI process.
	DefaultTimeout = 2 * time.Minute
	// DefaultInterruptDelay is how long after a tool starts the driver
	// interrupts it, so that the tool is running when the interrupt comes.
	DefaultInterruptDelay = time.Second
	// DefaultExitGrace is how long a CLI has to exit after an interrupting
	// signal (or after its stdin is closed) before its process group is
	// killed.
	DefaultExitGrace = 20 * time.Second
)

// ProjectPath is what the project directory is called in transcripts.
const ProjectPath = "/home/user/project"

// Options configure captures.
type Options struct {
	// WorkDir is where the throwaway sandboxes go; "" means
	// os.UserCacheDir()/agentconform/capture-work (not the system temp
	// directory, where Codex refuses to create its helper binaries).
	WorkDir string
	// KeepWork keeps each sandbox after the run, for debugging.
	KeepWork bool
	// Timeout bounds each CLI process; 0 means DefaultTimeout.
	Timeout time.Duration
	// InterruptDelay and ExitGrace: see the defaults.
	InterruptDelay, ExitGrace time.Duration
	// Strace, when set, is the strace executable: each process that the
	// driver does not signal runs under "strace -f -e trace=connect", and
	// every connect(2) to an address outside loopback is a leak in the
	// Result.
	Strace string
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
	// Redact are redaction rules (a rule file's, see redact.ParseRules)
	// applied besides the built-in ones.
	Redact []redact.Rule
}

// timeout, exitGrace and interruptDelay are the options' times, their
// defaults where unset.
func (o Options) timeout() time.Duration   { return orDefault(o.Timeout, DefaultTimeout) }
func (o Options) exitGrace() time.Duration { return orDefault(o.ExitGrace, DefaultExitGrace) }
func (o Options) interruptDelay() time.Duration {
	return orDefault(o.InterruptDelay, DefaultInterruptDelay)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

// DefaultWorkDir is the default Options.WorkDir.
func DefaultWorkDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "agentconform", "capture-work")
}

// Process is how one CLI process of a capture went.
type Process struct {
	// Argv is the invocation as recorded (redacted, argv[0] the CLI name).
	Argv []string `json:"argv"`
	// Exit is the exit status (128+N when signal N ended it).
	Exit int `json:"exit"`
	// Signal names the signal that ended it, if any.
	Signal string `json:"signal,omitempty"`
	// Interrupt is how the driver interrupted it ("control", "SIGINT",
	// "SIGTERM"), if it did.
	Interrupt string `json:"interrupt,omitempty"`
	// TimedOut and Killed say the capture killed its process group.
	TimedOut bool `json:"timed_out,omitempty"`
	Killed   bool `json:"killed,omitempty"`
	// SessionID is the session or thread id it reported.
	SessionID string `json:"session_id,omitempty"`
	// Duration is how long it ran.
	Duration time.Duration `json:"duration_ns"`
}

// Result is one capture of one scenario with one CLI.
type Result struct {
	// CLI, Version and Scenario name the capture; Description is the
	// scenario's sentence for this CLI.
	CLI         string `json:"cli"`
	Version     string `json:"cli_version"`
	Scenario    string `json:"scenario"`
	Description string `json:"description"`
	// Transcript is the redacted agentconform/v1 transcript (every process,
	// joined by next_process).
	Transcript *transcript.Transcript `json:"-"`
	// File is where the transcript was written, if it was.
	File string `json:"file,omitempty"`
	// Duration is the wall time of the whole capture.
	Duration  time.Duration `json:"duration_ns"`
	Processes []Process     `json:"processes"`
	// Requests is what the mock model API was asked.
	Requests []mock.Request `json:"requests"`
	// Leaks are attempts to reach anything outside loopback: connections
	// to the proxy trap and, under Options.Strace, connect(2) calls to
	// non-loopback addresses.
	Leaks []string `json:"leaks,omitempty"`
	// Straced says the leak check ran under strace.
	Straced bool `json:"straced,omitempty"`
	// Trees are the process trees of the scenarios that record them
	// (written beside the transcript by WriteTranscript).
	Trees []ProcessTree `json:"trees,omitempty"`
}

// Path is where a capture of cli version's scenario goes under dir:
// dir/<cli>/<version>/<scenario>.jsonl.
func Path(dir, cli, version, scenario string) string {
	return filepath.Join(dir, cli, version, scenario+".jsonl")
}

// Capture runs one scenario with one CLI: it starts the mock model API and
// the proxy trap, builds a sandbox, drives every process of the scenario
// through the recorder, and returns the joined, redacted transcript. The
// error is for what prevented a capture; how the CLI behaved is in the
// Result.
//
// A scenario that interrupts a tool with a signal is captured twice, so
// that its transcript replays like the fixtures do: the main path is a run
// left alone (the tool completes), and an on_signal step at the tool's
// start jumps to a branch holding what the CLI wrote and how it exited
// after the signal in a second, interrupted run.
func Capture(ctx context.Context, bin *Binary, sc Scenario, o Options) (*Result, error) {
	p := sc.plan(bin.CLI)
	if p == nil {
		return nil, fmt.Errorf("capture: scenario %s does not apply to %s", sc.Name, bin.CLI)
	}
	if p.appServer != nil {
		return captureAppServer(ctx, bin, sc, p, o)
	}
	start := time.Now()
	once := func(procs ...proc) func() (*oneRun, error) {
		return func() (*oneRun, error) { return captureOnce(ctx, bin, sc.Name, p, procs, o) }
	}
	var run *oneRun
	var err error
	both := true
	plain := p.procs[0]
	switch sig := plain.interrupt; {
	case len(p.procs) == 1 && (sig == interruptSIGINT || sig == interruptSIGTERM):
		plain.interrupt = interruptNone
		run, both, err = twice(ctx, once(plain), once(p.procs...), func(main, cut *oneRun) *oneRun { return mergeInterrupted(bin.CLI, string(sig), main, cut) })
	case isACPCancel(p):
		session := *plain.acp
		session.cancel = false
		plain.acp = &session
		run, both, err = twice(ctx, once(plain), once(p.procs...), func(main, cut *oneRun) *oneRun { return mergeCancelled(main, cut, o.interruptDelay()) })
	default:
		run, err = once(p.procs...)()
	}
	if err != nil {
		return nil, err
	}
	if !both {
		return nil, ctx.Err() // done before the interrupted run: no transcript of it
	}
	return newResult(bin, sc, p, run, run.steps, start), ctx.Err()
}

// newResult is the Result of a capture of sc from bin: run's processes,
// requests and leaks, and steps as a transcript whose header says what
// was captured, from which CLI and how (the first process's argv and
// session, unless its recording named one).
func newResult(bin *Binary, sc Scenario, p *plan, run *oneRun, steps []transcript.Step, start time.Time) *Result {
	h := run.header
	h.Format = transcript.Format
	h.CLI = bin.CLI
	h.CLIVersion = bin.Version
	h.Scenario = sc.Name
	h.Description = p.description
	h.Cwd = ProjectPath
	h.Source = "captured"
	if len(run.procs) > 0 {
		h.Argv = run.procs[0].Argv
		if h.SessionID == "" {
			h.SessionID = run.procs[0].SessionID
		}
	}
	return &Result{CLI: bin.CLI, Version: bin.Version, Scenario: sc.Name, Description: p.description,
		Transcript: &transcript.Transcript{Header: h, Steps: steps, Name: bin.CLI + "/" + sc.Name},
		Processes:  run.procs, Requests: run.requests, Leaks: run.leaks, Straced: run.straced, Trees: run.trees, Duration: time.Since(start)}
}

// twice captures a plan whose driver interrupts (a signal, an ACP cancel,
// a turn/interrupt) two times, as the transcript needs both: left alone
// (plain), then as the plan says (cut), unless the context is done by
// then (both is false: the plain run alone); merge joins them into one
// transcript with a branch.
func twice[R any](ctx context.Context, plain, cut func() (R, error), merge func(main, cut R) R) (run R, both bool, err error) {
	main, err := plain()
	if err != nil || ctx.Err() != nil {
		return main, false, err
	}
	c, err := cut()
	if err != nil {
		return c, false, err
	}
	return merge(main, c), true, nil
}

// oneRun is one capture of a plan's processes.
type oneRun struct {
	header   transcript.Header
	steps    []transcript.Step
	procs    []Process
	requests []mock.Request
	leaks    []string
	straced  bool
	trees    []ProcessTree
}

// captureOnce runs procs against a fresh mock, trap and sandbox.
func captureOnce(ctx context.Context, bin *Binary, scenario string, p *plan, procs []proc, o Options) (*oneRun, error) {
	env, err := openRun(bin, scenario, p, o, mockAnthropicKey, mockOpenAIKey, mockGeminiKey)
	if err != nil {
		return nil, err
	}
	defer env.close()
	sb, red := env.sb, env.red
	// Whatever the run started and left running goes before the sandbox.
	defer reapRun(proctree.Match{Home: sb.Home}, o)
	run := &oneRun{}
	session := ""
	for i, pr := range procs {
		if i > 0 && pr.acp != nil && pr.acp.load && pr.acp.loadID == "" && bin.CLI == "gemini" && session != "" {
			// The session the load asks for is of an earlier run, not of
			// this minute (ageGeminiSession): loaded in the minute it was
			// made, Gemini CLI 0.61.0 resets it and the load fails.
			if err := ageGeminiSession(sb.Home, session); err != nil {
				return nil, err
			}
		}
		d := &driver{cli: bin.CLI, p: pr}
		if p.trees {
			d.tree = watchTree(proctree.Match{Home: sb.Home}, red.String)
		}
		rec, proc, err := d.run(ctx, bin, sb, red, session, o)
		if d.tree != nil {
			tree := d.tree.finish(proc)
			tree.Process = i + 1
			run.trees = append(run.trees, tree)
		}
		if err != nil {
			return nil, fmt.Errorf("capture: %s/%s process %d: %w", bin.CLI, scenario, i+1, err)
		}
		proc.SessionID = red.String(proc.SessionID)
		run.procs = append(run.procs, proc)
		if i == 0 {
			run.header = rec.Transcript.Header
		} else {
			run.steps = append(run.steps, transcript.Step{Op: transcript.OpNextProcess})
		}
		run.steps = append(run.steps, rec.Transcript.Steps...)
		if proc.SessionID != "" {
			session = d.rawSession
		}
		if d.straced {
			run.leaks = append(run.leaks, d.leaks...)
			run.straced = true
		}
		if ctx.Err() != nil {
			break
		}
	}
	run.requests = env.requests()
	run.leaks = append(run.leaks, env.tr.hits()...)
	return run, nil
}

// runEnv is what one capture run happens in: the mock model API, the trap
// that records any attempt to reach the internet, a sandbox holding the
// plan's files, and the redactor for its paths and secrets.
type runEnv struct {
	srv   *mock.Server
	tr    *trap
	sb    *Sandbox
	red   *redact.Redactor
	close func()
}

// openRun sets up one run of bin for the plan (name names its sandbox);
// secrets are the mock keys to redact besides those of the environment.
// close undoes it all.
func openRun(bin *Binary, name string, p *plan, o Options, secrets ...string) (*runEnv, error) {
	api, err := mock.ForCLI(bin.CLI)
	if err != nil {
		return nil, err
	}
	srv, err := mock.Start(api, p.script)
	if err != nil {
		return nil, err
	}
	undo := []func(){func() { srv.Close() }}
	closeAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	fail := func(err error) (*runEnv, error) {
		closeAll()
		return nil, err
	}
	tr, err := startTrap()
	if err != nil {
		return fail(err)
	}
	undo = append(undo, tr.close)

	work := o.WorkDir
	if work == "" {
		work = DefaultWorkDir()
	}
	// Absolute, so that the redactor knows the paths the CLI reports.
	if work, err = filepath.Abs(work); err != nil {
		return fail(fmt.Errorf("capture: the work directory %s: %w", o.WorkDir, err))
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return fail(fmt.Errorf("capture: %w", err))
	}
	root, err := os.MkdirTemp(work, bin.CLI+"-"+name+"-")
	if err != nil {
		return fail(fmt.Errorf("capture: %w", err))
	}
	sb, err := newSandbox(root, sandboxOptions{cli: bin.CLI, mockURL: srv.URL, trapURL: tr.url, path: os.Getenv("PATH"), settings: p.settings})
	if err != nil {
		os.RemoveAll(root)
		return fail(err)
	}
	undo = append(undo, func() { sb.Remove(o.KeepWork) })
	if o.KeepWork {
		o.logf("%s/%s: sandbox kept in %s", bin.CLI, name, root)
	}
	if bin.CLI == "claude" {
		undo = append(undo, removeFallbackSocketDir(FallbackSocketDir(), o))
	}
	for rel, content := range p.files {
		f := filepath.Join(sb.Project, rel)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return fail(fmt.Errorf("capture: %w", err))
		}
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			return fail(fmt.Errorf("capture: %w", err))
		}
	}
	red := redact.New(redact.Options{
		Home: sb.Home, Cwd: sb.Project, CwdAs: ProjectPath,
		Secrets:  append(redact.EnvSecrets(sb.Env), secrets...),
		Literals: redactLiterals(bin.Path),
		Rules:    o.Redact,
		Dirs:     machineDirs(sb),
	})
	return &runEnv{srv: srv, tr: tr, sb: sb, red: red, close: closeAll}, nil
}

// requests are the model requests the run made, without their bodies.
func (e *runEnv) requests() []mock.Request {
	r := e.srv.Requests()
	for i := range r {
		r[i].Body = nil
	}
	return r
}

// mergeInterrupted joins a run left alone (main) and a run interrupted by
// sig (cut) into one transcript: main's steps with an on_signal step after
// the line that started the tool, then a label and cut's steps after that
// line (what the CLI did once signalled, and its exit). cut's session id
// becomes main's, so the branch continues main's session.
func mergeInterrupted(cli, sig string, main, cut *oneRun) *oneRun {
	k := toolStartStep(cli, main.steps)
	kc := toolStartStep(cli, cut.steps)
	out := &oneRun{header: main.header, requests: append(main.requests, cut.requests...),
		leaks: append(main.leaks, cut.leaks...), straced: main.straced || cut.straced}
	mainProc, cutProc := main.procs[0], cut.procs[0]
	mainProc.Interrupt = ""
	out.procs = []Process{mainProc, cutProc}
	for _, t := range main.trees {
		t.Run, t.Interrupt = "main", ""
		out.trees = append(out.trees, t)
	}
	for _, t := range cut.trees {
		t.Run = "interrupted"
		out.trees = append(out.trees, t)
	}
	if k < 0 || kc < 0 {
		// Nothing to branch at: keep the interrupted run as it was.
		out.steps = cut.steps
		out.procs = []Process{cutProc}
		out.trees = cut.trees
		return out
	}
	const label = "interrupted"
	steps := append([]transcript.Step(nil), main.steps[:k+1]...)
	steps = append(steps, transcript.Step{Op: transcript.OpOnSignal, OnSignal: map[string]string{sig: "goto:" + label}})
	steps = append(steps, main.steps[k+1:]...)
	steps = append(steps, transcript.Step{Op: transcript.OpLabel, Label: label})
	// The branch continues main's tool call: Gemini's tool ids carry the
	// time of the call, so the second run's differs.
	mainTool, cutTool := geminiToolID(main.steps[k]), geminiToolID(cut.steps[kc])
	for _, s := range cut.steps[kc+1:] {
		if (s.Op == transcript.OpOut || s.Op == transcript.OpErr) && cutProc.SessionID != "" && mainProc.SessionID != "" {
			s.Text = strings.ReplaceAll(s.Text, cutProc.SessionID, mainProc.SessionID)
		}
		if s.Op == transcript.OpOut && mainTool != "" && cutTool != "" {
			s.Text = strings.ReplaceAll(s.Text, cutTool, mainTool)
		}
		steps = append(steps, s)
	}
	out.steps = steps
	return out
}

// geminiToolID is the tool_id of a Gemini tool_use line, "" for any
// other line.
func geminiToolID(s transcript.Step) string {
	ev := decodeEvent(s.Text)
	if ev == nil || ev["type"] != "tool_use" {
		return ""
	}
	id, _ := ev["tool_id"].(string)
	return id
}

// toolStartStep is the index of the first stdout step that starts a tool,
// or -1.
func toolStartStep(cli string, steps []transcript.Step) int {
	for i, s := range steps {
		if s.Op != transcript.OpOut {
			continue
		}
		if ev := decodeEvent(s.Text); ev != nil && toolStarted(cli, ev) {
			return i
		}
	}
	return -1
}

// genericTop are first-level directories that name no machine: a path of
// one component is redacted only when it is not one of them.
var genericTop = map[string]bool{"tmp": true, "home": true, "Users": true, "var": true, "private": true, "usr": true,
	"opt": true, "mnt": true, "media": true, "srv": true, "run": true, "Volumes": true, "root": true, "data": true, "dev": true,
	"proc": true, "sys": true, "etc": true, "bin": true, "lib": true, "nix": true}

// machineDirs are the directories of this machine a CLI may name besides
// the sandbox's home and project (which the redactor knows): the sandbox
// root and every directory above it (a CLI that looks for a git
// repository reports the one holding the work directory: Claude Code
// names its memory directory after it), the real home, the temporary and
// runtime directories, and where Claude binds its socket when the one
// under TMPDIR would be too long (shown as that one).
func machineDirs(sb *Sandbox) []redact.Dir {
	var dirs []redact.Dir
	addDir := func(p, as string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		parts := strings.Split(strings.Trim(p, string(filepath.Separator)), string(filepath.Separator))
		if p == string(filepath.Separator) || len(parts) == 1 && genericTop[parts[0]] && as != "home" {
			return
		}
		if as == "home" {
			as = ""
		}
		dirs = append(dirs, redact.Dir{Path: p, As: as})
	}
	for d := sb.Root; ; {
		addDir(d, "")
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	if home, err := os.UserHomeDir(); err == nil {
		addDir(home, "home") // even /root
	}
	addDir(os.TempDir(), "")
	addDir(os.Getenv("XDG_RUNTIME_DIR"), "")
	tmpAs := redact.DefaultHomeAs + "/tmp"
	if sb.RunDir != "" {
		addDir(sb.RunDir, tmpAs)
	}
	if runtime.GOOS != "windows" {
		addDir(FallbackSocketDir(), tmpAs+"/cc-socks")
	}
	return dirs
}

// removeFallbackSocketDir notes whether Claude's fallback socket
// directory exists before a run; the function it returns, called after the
// run, removes it when the run created it and left it empty.
func removeFallbackSocketDir(dir string, o Options) func() {
	if runtime.GOOS == "windows" {
		return func() {}
	}
	if _, err := os.Lstat(dir); err == nil {
		return func() {}
	}
	return func() {
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
			return
		}
		if os.Remove(dir) == nil { // only an empty directory
			o.logf("removed %s, which Claude created outside the sandbox", dir)
		}
	}
}

// redactLiterals are local paths that must not reach a transcript: the
// CLI's install directory (its stack traces name it). The sandbox itself
// is covered by the home and working directory rules; a literal that is a
// prefix of those paths would win over them, so none is added.
func redactLiterals(binPath string) []string {
	if real, err := filepath.EvalSymlinks(binPath); err == nil {
		binPath = real
	}
	dir := filepath.Dir(binPath)
	if i := strings.Index(dir, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i > 0 {
		dir = dir[:i]
	}
	if len(dir) > 1 {
		return []string{dir}
	}
	return nil
}

// WriteTranscript writes a Result's transcript to Path(dir, ...) and sets
// Result.File.
func WriteTranscript(dir string, res *Result) error {
	p := Path(dir, res.CLI, res.Version, res.Scenario)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+res.Scenario+"-*.jsonl")
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	if err := transcript.Write(f, res.Transcript); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("capture: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("capture: %w", err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("capture: %w", err)
	}
	res.File = p
	if len(res.Trees) > 0 {
		return writeTrees(dir, res)
	}
	return nil
}

// driver runs one process of a plan and talks to it the way adapters do.
type driver struct {
	cli string
	p   proc

	in      *stdinLines
	signals chan os.Signal
	reqN    int
	leaks   []string
	straced bool
	// rawSession is the session id as the CLI printed it (unredacted),
	// for the next process's resume.
	rawSession string
	// tree, when set, follows the process's tree (trees.go).
	tree *treeWatch
}

// run starts the process through the recorder and drives it to the end.
func (d *driver) run(ctx context.Context, bin *Binary, sb *Sandbox, red *redact.Redactor, session string, o Options) (*recorder.Result, Process, error) {
	if d.p.acp != nil {
		return d.runACP(ctx, bin, sb, red, session, o)
	}
	args := make([]string, len(d.p.args))
	for i, a := range d.p.args {
		args[i] = strings.ReplaceAll(a, "{{session}}", session)
	}
	d.signals = make(chan os.Signal, 4)
	lc := liveConfig{argv: append([]string{bin.CLI}, args...), signals: d.signals, interrupt: string(d.p.interrupt),
		strace: d.p.interrupt == interruptNone}
	// Gemini's launcher ignores SIGINT and SIGTERM and relaunches the CLI
	// as its child (docs/protocols/gemini.md#signals), so its interrupts go to the whole
	// process group, as the reference adapters send them; a shell that
	// writes its pid (the group's id) and execs the CLI tells the driver
	// which group that is.
	var pidFile string
	if d.cli == "gemini" && d.p.interrupt != interruptNone && !d.p.signalAlone && runtime.GOOS != "windows" {
		pidFile = filepath.Join(sb.Root, fmt.Sprintf("pid-%d", time.Now().UnixNano()))
		lc.path = "/bin/sh"
		lc.execArgv = append([]string{"sh", "-c", `echo $$ > "$1"; shift; exec "$@"`, "sh", pidFile, bin.Path}, args...)
	}
	if d.p.wrapper {
		node, wrapper, err := claudeWrapper(bin.Path, sb.Env)
		if err != nil {
			return nil, Process{Argv: lc.argv}, err
		}
		lc.path = node
		lc.execArgv = append([]string{"node", wrapper}, args...)
	}
	lc.drainWait = d.p.drainWait
	switch d.p.stdin {
	case stdinClosed:
		lc.stdin = strings.NewReader("")
	case stdinNull:
		lc.noStdin = true
	}
	l := startLive(ctx, bin, sb, red, o, lc)
	d.in = &l.in
	if d.p.stdin == stdinJSON {
		if d.p.initialize {
			d.send(map[string]any{"type": "control_request", "request_id": d.requestID(), "request": map[string]any{"subtype": "initialize", "hooks": nil}})
		}
		for _, line := range d.p.preamble {
			d.send(line)
		}
		d.sendUser(d.p.turns[0])
	}
	var (
		interrupted bool
		turn        int
		sawResult   bool
	)
	delay := o.interruptDelay()
	if d.p.interruptDelay > 0 {
		delay = d.p.interruptDelay
	}
	if d.p.interrupt != interruptNone && d.p.interruptFrom == "start" {
		l.interruptAt = time.After(delay)
	}
	onLine := func(line string) {
		ev := decodeEvent(line)
		if ev == nil {
			return
		}
		if id := sessionOf(ev); id != "" && l.proc.SessionID == "" {
			l.proc.SessionID = id
			d.rawSession = id
		}
		if d.tree != nil {
			if toolResulted(d.cli, ev) && !sawResult {
				sawResult = true
				d.tree.snapshot(whenToolResult)
			}
			if turnEnded(d.cli, ev) {
				d.tree.snapshot(whenTurnEnd)
			}
		}
		if d.p.interrupt != interruptNone && !interrupted && l.interruptAt == nil && d.p.interruptFrom == "" && toolStarted(d.cli, ev) {
			l.interruptAt = time.After(delay)
		}
		if d.p.interrupt != interruptNone && !interrupted && l.interruptAt == nil && d.p.interruptFrom == "init" && ev["type"] == "system" && ev["subtype"] == "init" {
			l.interruptAt = time.After(delay)
		}
		if d.p.stdin != stdinJSON {
			return
		}
		switch ev["type"] {
		case "control_request":
			d.answer(ev)
		case "result":
			turn++
			if turn < len(d.p.turns) && !interrupted {
				d.sendUser(d.p.turns[turn])
			} else {
				l.finish()
			}
		}
	}
	onInterrupt := func() {
		interrupted = true
		if d.tree != nil {
			d.tree.snapshot(whenInterrupt)
			l.afterAt = time.After(afterInterrupt)
		}
		switch d.p.interrupt {
		case interruptControl:
			d.send(map[string]any{"type": "control_request", "request_id": d.requestID(), "request": map[string]any{"subtype": "interrupt"}})
		case interruptSIGINT, interruptSIGTERM:
			sig := syscall.SIGINT
			if d.p.interrupt == interruptSIGTERM {
				sig = syscall.SIGTERM
			}
			if pidFile == "" || signalGroup(pidFile, sig) != nil {
				d.signals <- sig
			}
			l.killAt = time.After(l.grace)
		case interruptSIGKILL:
			err := errors.New("capture: SIGKILL needs the process tree recorded")
			if d.tree != nil {
				err = d.tree.kill()
			}
			if err != nil {
				o.logf("%s: %v", bin.CLI, err)
			}
			l.killAt = time.After(l.grace)
		}
	}
	// A look at the tree a while after the interrupt.
	onAfter := func() { d.tree.snapshot(whenAfterInterrupt) }
	res, proc, leaks, err := l.drive(o, liveHandlers{line: onLine, interrupt: onInterrupt, after: onAfter})
	if err == nil && l.strace != "" {
		d.leaks, d.straced = leaks, true
	}
	return res, proc, err
}

// recorded is how a recorded process ended.
type recorded struct {
	res *recorder.Result
	err error
}

// record runs cfg in the background (recorder.Record) and closes feed, the
// driver's copy of stdout, when it ends; cancel stops it (its process
// group is killed).
func record(ctx context.Context, cfg recorder.Config, feed io.Closer) (done <-chan recorded, cancel func()) {
	rctx, cancel := context.WithCancel(ctx)
	ch := make(chan recorded, 1)
	go func() {
		res, err := recorder.Record(rctx, cfg)
		feed.Close()
		ch <- recorded{res, err}
	}()
	return ch, cancel
}

// ended records how a process ended: its duration since start, exit
// status, signal, and whether it timed out or was killed.
func (p *Process) ended(res *recorder.Result, start time.Time) {
	p.Duration = time.Since(start)
	p.Exit = res.Status()
	p.Signal = res.Signal
	p.TimedOut = res.TimedOut
	p.Killed = res.Killed
}

// requestID makes the next client request id, as the Python SDK does
// (req_N_<hex>).
func (d *driver) requestID() string {
	d.reqN++
	return fmt.Sprintf("req_%d_%08x", d.reqN, 0xac0000+d.reqN)
}

// send writes one JSON line to the process's stdin.
func (d *driver) send(v any) { d.in.send(v) }

func (d *driver) sendUser(text string) {
	d.send(map[string]any{"type": "user", "session_id": "", "message": map[string]any{"role": "user", "content": text}, "parent_tool_use_id": nil})
}

// answer answers a control request from Claude with controlAnswer.
func (d *driver) answer(ev map[string]any) {
	id, _ := ev["request_id"].(string)
	req, _ := ev["request"].(map[string]any)
	if d.p.reply != nil && req["subtype"] == "can_use_tool" {
		for _, line := range d.p.reply(id, req) {
			d.send(line)
		}
		return
	}
	resp := controlAnswer(d.p.permission, req)
	resp["request_id"] = id
	if d.p.replyDelay > 0 && req["subtype"] == "can_use_tool" {
		// A person deciding: the answer comes later, while the driver
		// goes on reading what the CLI writes meanwhile.
		time.AfterFunc(d.p.replyDelay, func() { d.send(map[string]any{"type": "control_response", "response": resp}) })
		return
	}
	d.send(map[string]any{"type": "control_response", "response": resp})
}

// controlAnswer is the "response" member of the control_response the
// driver sends for Claude's control request req: can_use_tool answered
// with the plan's permission (deny when it has none), anything else with
// an error as the Python SDK does. Drift reads the same answer back into
// a capture, whose transcript keeps only the response's request id.
func controlAnswer(permission string, req map[string]any) map[string]any {
	sub, _ := req["subtype"].(string)
	if sub != "can_use_tool" {
		return map[string]any{"subtype": "error", "error": "Unsupported control request subtype: " + sub}
	}
	var decision map[string]any
	if permission == "allow" {
		input := req["input"]
		if input == nil {
			input = map[string]any{}
		}
		decision = map[string]any{"behavior": "allow", "updatedInput": input}
	} else {
		decision = map[string]any{"behavior": "deny", "message": "denied by agentconform capture"}
	}
	return map[string]any{"subtype": "success", "response": decision}
}

// decodeEvent decodes a stdout line; nil when it is not a JSON object.
func decodeEvent(line string) map[string]any {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") {
		return nil
	}
	var ev map[string]any
	if json.Unmarshal([]byte(line), &ev) != nil {
		return nil
	}
	return ev
}

// sessionOf is the session id an event announces: Claude's system/init,
// Gemini's init, Codex's thread.started.
func sessionOf(ev map[string]any) string {
	var id any
	switch ev["type"] {
	case "system":
		if ev["subtype"] == "init" {
			id = ev["session_id"]
		}
	case "init":
		id = ev["session_id"]
	case "thread.started":
		id = ev["thread_id"]
	}
	s, _ := id.(string)
	return s
}

// toolStarted reports whether an event shows a tool starting.
func toolStarted(cli string, ev map[string]any) bool {
	switch cli {
	case "claude":
		if ev["type"] != "assistant" {
			return false
		}
		msg, _ := ev["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if b, ok := c.(map[string]any); ok && b["type"] == "tool_use" {
				return true
			}
		}
	case "codex":
		if ev["type"] == "item.started" {
			item, _ := ev["item"].(map[string]any)
			return item["type"] == "command_execution"
		}
	case "gemini":
		return ev["type"] == "tool_use"
	}
	return false
}

// lineFeed is the CLI's stdout as the recorder passes it on, cut into
// lines for the driver. It never blocks the recorder.
type lineFeed struct {
	mu      sync.Mutex
	partial []byte
	queue   []string
	closed  bool
	notify  chan struct{}
	out     chan string
}

func newLineFeed() *lineFeed {
	f := &lineFeed{notify: make(chan struct{}, 1), out: make(chan string)}
	go f.pump()
	return f
}

// Write queues the complete lines of p.
func (f *lineFeed) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.partial = append(f.partial, p...)
	for {
		i := strings.IndexByte(string(f.partial), '\n')
		if i < 0 {
			break
		}
		f.queue = append(f.queue, string(f.partial[:i]))
		f.partial = f.partial[i+1:]
	}
	f.mu.Unlock()
	f.poke()
	return len(p), nil
}

// Close flushes a last line without a newline and ends the feed.
func (f *lineFeed) Close() error {
	f.mu.Lock()
	if len(f.partial) > 0 {
		f.queue = append(f.queue, string(f.partial))
		f.partial = nil
	}
	f.closed = true
	f.mu.Unlock()
	f.poke()
	return nil
}

func (f *lineFeed) poke() {
	select {
	case f.notify <- struct{}{}:
	default:
	}
}

// C delivers the lines in order and is closed after the last.
func (f *lineFeed) C() <-chan string { return f.out }

func (f *lineFeed) pump() {
	for {
		f.mu.Lock()
		q := f.queue
		f.queue = nil
		closed := f.closed
		f.mu.Unlock()
		for _, l := range q {
			f.out <- l
		}
		if closed && len(q) == 0 {
			close(f.out)
			return
		}
		if len(q) == 0 {
			<-f.notify
		}
	}
}

// straceConnect matches a connect(2) line of strace and its address.
var straceConnect = regexp.MustCompile(`connect\(\d+, \{sa_family=(AF_[A-Z0-9]+)(.*?)\}`)

var (
	inetAddr  = regexp.MustCompile(`inet_addr\("([^"]+)"\)`)
	inet6Addr = regexp.MustCompile(`inet_pton\(AF_INET6, "([^"]+)"`)
	portRE    = regexp.MustCompile(`htons\((\d+)\)`)
)

// straceLeaks reads an "strace -f -e trace=connect" log and returns every
// connect(2) to an address outside loopback.
func straceLeaks(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the strace log: %w", err)
	}
	var leaks []string
	for _, line := range strings.Split(string(b), "\n") {
		m := straceConnect.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		family, rest := m[1], m[2]
		var addr string
		switch family {
		case "AF_INET":
			if a := inetAddr.FindStringSubmatch(rest); a != nil {
				addr = a[1]
				if strings.HasPrefix(addr, "127.") {
					continue
				}
			}
		case "AF_INET6":
			if a := inet6Addr.FindStringSubmatch(rest); a != nil {
				addr = a[1]
				if addr == "::1" || strings.HasPrefix(addr, "::ffff:127.") {
					continue
				}
			}
		default:
			continue // AF_UNIX, AF_NETLINK, AF_UNSPEC: not the network
		}
		port := ""
		if p := portRE.FindStringSubmatch(rest); p != nil {
			port = ":" + p[1]
		}
		leaks = append(leaks, fmt.Sprintf("connect(2) to %s%s (%s)", addr, port, family))
	}
	return leaks, nil
}

// signalGroup sends sig to the process group whose leader wrote its pid
// to pidFile.
func signalGroup(pidFile string, sig syscall.Signal) error {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return fmt.Errorf("capture: bad pid in %s", pidFile)
	}
	return killPG(pid, sig)
}

// MainRequestCount counts the requests of the scripted conversation the
// mock model answered.
func (r *Result) MainRequestCount() int {
	n := 0
	for _, q := range r.Requests {
		if q.Kind == "main" {
			n++
		}
	}
	return n
}
