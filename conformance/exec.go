package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/jsonl"
)

// Adapter says how to start the adapter under test.
type Adapter struct {
	// Name labels the adapter in results and reports.
	Name string
	// Command returns the adapter process for one case. The runner sets its
	// Dir, Env, standard streams and process group; it must not be started.
	Command func(ctx context.Context) *exec.Cmd
	// Reproduce is the shell command that starts the adapter, for the
	// one-line reproduce command of failures ("" when there is none).
	Reproduce string
	// SignalInterrupt interrupts with SIGINT to the adapter instead of the
	// interrupt command (for adapters that only know Ctrl-C).
	SignalInterrupt bool
	// Profile, when set, is the --profile of the reproduce command: "acp"
	// for an ACP agent that agentconform's editor drives (Reproduce is then
	// the agent's command).
	Profile string
}

// ShellAdapter is an Adapter started by /bin/sh -c CMD. The runner starts
// it in a fresh directory per case, so the words of CMD that name files
// relative to the caller's directory (`python3 my_adapter.py`,
// `./my-adapter`) are made absolute first (see ResolveCommand).
func ShellAdapter(cmd string) Adapter {
	abs := ResolveCommand(cmd, "")
	if execable(abs) {
		// One program: the shell becomes it, so that its pid is the
		// adapter's (signals, the CLI's parent), also when its words
		// hold variables (node "$DRV").
		abs = "exec " + abs
	}
	return Adapter{Name: cmd, Reproduce: cmd, Command: func(ctx context.Context) *exec.Cmd {
		return exec.CommandContext(ctx, "/bin/sh", "-c", abs)
	}}
}

// ResolveCommand rewrites the words of a shell command that name existing
// files relative to dir ("" means the working directory) into absolute
// paths: the program when it has a slash in it (./my-adapter, as the shell
// looks up a bare name in PATH), and any later word that is a relative
// path to an existing file or directory (my_adapter.py, drivers/x.mjs, the
// value of --flag=path). Quoted words keep their quotes; anything it
// cannot parse is left as it is.
func ResolveCommand(cmd, dir string) string {
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return cmd
		}
	}
	words, ok := shellWords(cmd)
	if !ok {
		return cmd
	}
	exists := func(p string) bool {
		if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "~") {
			return false
		}
		_, err := os.Stat(filepath.Join(dir, p))
		return err == nil
	}
	for i, w := range words {
		switch {
		case i == 0 && strings.Contains(w, "/") && exists(w):
			words[i] = shellQuote(filepath.Join(dir, w))
		case i == 0:
			words[i] = shellQuote(w)
		case strings.HasPrefix(w, "-"):
			if k, v, ok := strings.Cut(w, "="); ok && exists(v) {
				words[i] = shellQuote(k + "=" + filepath.Join(dir, v))
			} else {
				words[i] = shellQuote(w)
			}
		case exists(w):
			words[i] = shellQuote(filepath.Join(dir, w))
		default:
			words[i] = shellQuote(w)
		}
	}
	return strings.Join(words, " ")
}

// shellWords splits a simple shell command into words (single and double
// quotes, backslash escapes); ok is false for anything else a shell would
// interpret (variables, pipes, redirections, command substitution, ...),
// which is then left alone.
func shellWords(s string) (words []string, ok bool) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if strings.IndexByte("$`\\", s[j]) >= 0 {
					return nil, false
				}
			}
			if j >= len(s) {
				return nil, false
			}
			cur.WriteString(s[i+1 : j])
			i = j
			inWord = true
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			i++
			inWord = true
		case strings.IndexByte("$`|&;<>()*?[]{}#!\n", c) >= 0:
			return nil, false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, len(words) > 0
}

// Event is one line the adapter wrote that is not a harness record.
type Event struct {
	Line int
	At   time.Duration
	Raw  []byte
	Obj  map[string]any

	// decoded is set when Obj is jsonl.Parse's decoding of Raw and parsed
	// its findings (not located): the output checks then validate the
	// event with them rather than decode it once more.
	decoded bool
	parsed  []finding.Finding
}

// Record is a harness record the adapter wrote (hello, turn_end, end).
type Record struct {
	Kind      string
	OK        bool
	Error     string
	SessionID string
	Line      int
	At        time.Duration
	// Turn is the number of events written before this record.
	EventsBefore int
	// Reason is why a turn ended, as its turn_end says (completed,
	// cancelled, failed, max_turns; "" when the adapter sends none).
	Reason string
}

// Sent is one command the runner sent (or SIGINT, in signal mode).
type Sent struct {
	Op   string
	At   time.Duration
	Line string
}

// Observation is everything one case produced: what the adapter wrote,
// what the runner sent, what the fakes saw and wrote, and how every process
// ended. Checks judge it.
type Observation struct {
	Case    *Case
	Hello   *Hello
	Events  []Event
	Records []Record
	Sent    []Sent
	// BadLines are adapter stdout lines that were neither JSON objects nor
	// records (reported by the output checks).
	BadLines []string
	// Stderr is the tail of the adapter's stderr.
	Stderr []byte
	// Exit is how the adapter process ended.
	ExitCode   int
	ExitSignal string
	Duration   time.Duration
	// TimedOut is true when the case hit its deadline and was killed.
	TimedOut bool
	// AliveAtDeadline lists the fake CLI processes still running when the
	// deadline passed (before the runner killed anything).
	AliveAtDeadline []int
	// AdapterPID is the adapter process's id.
	AdapterPID int
	// OutputCapped is true when the adapter wrote more than
	// maxAdapterOutput on stdout and the runner stopped it.
	OutputCapped bool
	// StartErr is set when the adapter could not be started at all.
	StartErr error
	// Fake is the fakes' observation log; Wire what each fake process wrote
	// to stdout, in start order.
	Fake []fakecli.Observation
	Wire []WireProcess
	// Leftover lists the processes of the case still running after the
	// adapter exited and its CLIs had exitGrace to follow (the runner
	// killed them afterwards).
	Leftover []Leftover
	// GaveUp is true when the adapter did not end an interrupted turn
	// within interruptDeadline and a second, or a watchdog case's stalled
	// turn within its watchdog time and watchdogGrace, so the runner sent
	// close (the caller gave up); FakeAtGiveUp is the fakes' log as it stood then:
	// what the adapter did about the interrupt itself, before the close
	// made it stop the CLI anyway.
	GaveUp       bool
	FakeAtGiveUp []fakecli.Observation
	// FakeAtTurnEnd is the fakes' log as it stood settleAfterTurnEnd after
	// the turn_end of the interrupted turn, before the runner sent its next
	// command: what the adapter did about the interrupt before it reported
	// the turn over.
	FakeAtTurnEnd []fakecli.Observation
	// FakeAtEnd is the fakes' log as it stood when the adapter wrote its
	// end record: what it could know of the CLIs' ends when it reported
	// the session's.
	FakeAtEnd []fakecli.Observation
	// StallAfter is the watchdog time the runner waited for in a watchdog
	// case (Case.Watchdog).
	StallAfter time.Duration
	// Real is set when the case ran on a real CLI (Config.Real).
	Real *RealRun
	// Dir is the case's directory (kept with --keep).
	Dir string

	memo *observationMemo // what several checks derive alike, made on first use
}

// WireProcess is what one fake CLI process wrote to its stdout.
type WireProcess struct {
	PID   int
	Argv  []string
	Bytes []byte
}

// EventsOfTurn returns the events written before the i-th turn_end (0-based)
// and after the previous one.
func (o *Observation) EventsOfTurn(i int) []Event {
	start, n := 0, 0
	for _, r := range o.Records {
		if r.Kind != "turn_end" {
			continue
		}
		if n == i {
			return o.Events[start:r.EventsBefore]
		}
		start = r.EventsBefore
		n++
	}
	if n == i {
		return o.Events[start:]
	}
	return nil
}

// TurnEnds returns the turn_end records.
func (o *Observation) TurnEnds() []Record {
	var out []Record
	for _, r := range o.Records {
		if r.Kind == "turn_end" {
			out = append(out, r)
		}
	}
	return out
}

// End returns the end record, if the adapter wrote one.
func (o *Observation) End() (Record, bool) {
	for _, r := range o.Records {
		if r.Kind == "end" {
			return r, true
		}
	}
	return Record{}, false
}

// Crashed reports whether the adapter died without being killed by the
// runner: by a signal, or by exiting without its end record.
func (o *Observation) Crashed() bool {
	if o.TimedOut || o.StartErr != nil {
		return false
	}
	if o.ExitSignal != "" {
		return true
	}
	_, ended := o.End()
	return !ended
}

// FakeStarts returns the start records of the fake CLI processes.
func (o *Observation) FakeStarts() []fakecli.Observation {
	var out []fakecli.Observation
	for _, r := range o.Fake {
		if r.Kind == "start" {
			out = append(out, r)
		}
	}
	return out
}

// envCase names the case the adapter runs in (for its logs).
const envCase = "AGENTCONFORM_CASE"

// runner-wide limits.
const (
	// maxAdapterLine is the longest adapter stdout line the runner reads
	// (the 64 MiB ladder line, carried in one event, fits with room for
	// JSON escapes); a longer one is reported, not held.
	maxAdapterLine = 128 << 20
	// maxAdapterOutput bounds everything one case's adapter may write on
	// stdout: past it the case fails with that reason and the adapter is
	// stopped, so that a flooding adapter cannot exhaust the runner.
	maxAdapterOutput = 256 << 20
	// maxAdapterLines bounds how many lines it may write (each is held,
	// parsed, for the checks): a real session writes a few thousand.
	maxAdapterLines = 100_000
	stderrTail      = 64 << 10
	killGrace       = 2 * time.Second
	defaultQuiet    = 150 * time.Millisecond
)

// execCase runs one case of a prepared cfg (its fakes installed) and
// returns what it produced. It never returns an error for anything the
// adapter does; only the runner's own failures (no temp dir) are errors.
func execCase(ctx context.Context, cfg *Config, c *Case) (*Observation, error) {
	dir, err := os.MkdirTemp(cfg.WorkDir, sanitize(c.ID)+"-")
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.ID, err)
	}
	if err := makeCaseDirs(dir); err != nil {
		return nil, fmt.Errorf("case %s: %w", c.ID, err)
	}
	return execIn(ctx, cfg, c, dir, cfg.fakes)
}

// caseSubdirs are what a case's directory holds besides the fakes and
// the observation log: the adapter's working directory, the fakes'
// sessions and their wire copies of stdout.
var caseSubdirs = []string{"work", "sessions", "wire"}

func makeCaseDirs(dir string) error {
	for _, d := range caseSubdirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// execIn runs a case in dir (made by makeCaseDirs) with the fakes
// installed in fakes.
func execIn(ctx context.Context, cfg *Config, c *Case, dir, fakes string) (*Observation, error) {
	o := &Observation{Case: c, Dir: dir}
	work, sessions, wire := filepath.Join(dir, "work"), filepath.Join(dir, "sessions"), filepath.Join(dir, "wire")
	observe := filepath.Join(dir, "observe.jsonl")

	timeout := c.Timeout
	if timeout <= 0 {
		timeout = cfg.Timeout
	}
	timeout = watchdogTimeout(cfg, c, timeout)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := cfg.Adapter.Command(cctx)
	if strings.ContainsRune(cmd.Path, filepath.Separator) && !filepath.IsAbs(cmd.Path) {
		// exec resolves a relative program against Dir, the case's
		// directory; the caller meant its own (exec.Command("./my-adapter")).
		if abs, err := filepath.Abs(cmd.Path); err == nil {
			cmd.Path = abs
		}
	}
	cmd.Dir = work
	if err := seedSessions(c, sessions, work); err != nil {
		return nil, fmt.Errorf("case %s: %w", c.ID, err)
	}
	mark := newRunMark()
	cmd.Env = append(caseEnv(cfg, c, fakes, sessions, observe, wire), envRunMark+"="+mark)
	var modelAsked func() int
	if c.real != nil {
		env, asked, done, err := stageReal(cfg, c, dir, work, time.Now().Add(timeout))
		if err != nil {
			return nil, err
		}
		modelAsked = asked
		defer done(o)
		cmd.Env = append(cmd.Env, env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	olog := newObserveLog(observe)
	cmd.Cancel = func() error {
		// The deadline passed: note which CLIs still ran, for the report.
		log, _ := olog.read()
		o.AliveAtDeadline = runningFakes(log)
		return killGroup(cmd.Process.Pid)
	}
	cmd.WaitDelay = killGrace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.ID, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.ID, err)
	}
	tail := &tailBuffer{max: stderrTail}
	cmd.Stderr = tail

	start := time.Now()
	if err := cmd.Start(); err != nil {
		o.StartErr = err
		return o, nil
	}
	o.AdapterPID = cmd.Process.Pid
	lines := make(chan adapterLine, 64)
	go readAdapter(stdout, lines)

	d := &driver{o: o, c: c, cfg: cfg, stdin: stdin, start: start, cmd: cmd, observe: olog, wire: wire, modelAsked: modelAsked}
	d.loop(cctx, lines)
	waitErr := cmd.Wait()
	o.Duration = time.Since(start)
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		o.TimedOut = true
	}
	o.ExitCode, o.ExitSignal = exitStatus(cmd.ProcessState, waitErr)
	for range lines {
		// drain whatever the reader still had (it ends at EOF)
	}
	o.Stderr = tail.Bytes()
	// Judge the world as the adapter left it: what still runs after its
	// exit (and a grace for its CLIs to follow) is recorded before the
	// runner kills anything, so that cleanup never masks a leak.
	o.Fake, o.Leftover = settle(olog, cmd.Process.Pid, mark, start, o.TimedOut, exitGraceOf(c.real != nil))
	o.Wire = readWire(wire, o.FakeStarts())
	return o, nil
}

func caseEnv(cfg *Config, c *Case, fakes, sessions, observe, wire string) []string {
	var env []string
	path := fakes
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "AGENTCONFORM_"), k == "CLAUDE_CODE_EXECUTABLE", k == "CODEX_EXECUTABLE", k == "GEMINI_EXECUTABLE":
			continue
		case k == envRunMark:
			continue
		case k == "PATH":
			if v != "" {
				path += string(os.PathListSeparator) + v
			}
			continue
		}
		env = append(env, kv)
	}
	if os.Getuid() == 0 && os.Getenv("IS_SANDBOX") == "" {
		// Every case runs in a throwaway directory: a sandbox, as a CI
		// container that runs as root says with IS_SANDBOX=1 (without it,
		// Claude refuses --dangerously-skip-permissions as root, and so
		// does the fake). A value the caller set is kept.
		env = append(env, "IS_SANDBOX=1")
	}
	env = append(env, "PATH="+path,
		"CLAUDE_CODE_EXECUTABLE="+filepath.Join(fakes, "claude"),
		"CODEX_EXECUTABLE="+filepath.Join(fakes, "codex"),
		"GEMINI_EXECUTABLE="+filepath.Join(fakes, "gemini"),
		"AGENTCONFORM_CLAUDE="+filepath.Join(fakes, "claude"),
		"AGENTCONFORM_CODEX="+filepath.Join(fakes, "codex"),
		"AGENTCONFORM_GEMINI="+filepath.Join(fakes, "gemini"),
		envCase+"="+c.ID,
		fakecli.EnvSessions+"="+sessions,
		fakecli.EnvObserve+"="+observe,
		fakecli.EnvWire+"="+wire,
		fakecli.EnvSeed+"="+strconv.FormatInt(caseSeed(cfg, c), 10),
	)
	if c.Transcript != "" {
		env = append(env, fakecli.EnvTranscript+"="+c.Transcript)
	} else {
		env = append(env, fakecli.EnvFixture+"="+c.Fixture)
	}
	if c.Faults != "" {
		env = append(env, fakecli.EnvFaults+"="+c.Faults)
		switch {
		case c.FaultsFirstOnly:
			env = append(env, fakecli.EnvFaultsScope+"=first")
		case c.FaultsLaterOnly:
			env = append(env, fakecli.EnvFaultsScope+"=later")
		}
	}
	return env
}

// caseSeed is the seed the fakes get in c.
func caseSeed(cfg *Config, c *Case) int64 {
	if c.Seed != 0 {
		return c.Seed
	}
	return cfg.Seed
}

// adapterLine is one line of adapter stdout, or the end of it.
type adapterLine struct {
	line jsonl.Line
	at   time.Time
	err  error
}

// errOutputCap is what readAdapter reports when the adapter writes more
// than maxAdapterOutput on stdout.
var errOutputCap = fmt.Errorf("the adapter wrote more than %d MiB or %d lines on stdout: the runner stopped reading and stopped the adapter", maxAdapterOutput>>20, maxAdapterLines)

func readAdapter(r io.Reader, out chan<- adapterLine) {
	defer close(out)
	if f, ok := r.(*os.File); ok {
		growPipe(f)
	}
	capped := &capReader{r: r, left: maxAdapterOutput}
	rd := newLineReader(capped, maxAdapterLine)
	for n := 1; ; n++ {
		l, err := rd.Next()
		if err == io.EOF {
			return
		}
		if err == nil && n > maxAdapterLines {
			capped.left, err = -1, errOutputCap
		}
		if err != nil {
			if capped.left < 0 {
				err = errOutputCap
			}
			out <- adapterLine{err: err, at: time.Now()}
			// Keep the pipe drained (and the adapter unblocked) until it
			// is stopped, without holding what it writes.
			io.Copy(io.Discard, r)
			return
		}
		out <- adapterLine{line: l, at: time.Now()}
	}
}

// capReader reads from r until left bytes have been read, then fails
// with errOutputCap (left goes negative): a line that never ends is cut
// off there too.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.left = -1
		return 0, errOutputCap
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// driver runs the harness script of one case.
type driver struct {
	o     *Observation
	c     *Case
	cfg   *Config
	stdin io.WriteCloser
	start time.Time
	cmd   *exec.Cmd

	observe *observeLog // the fakes' observation log
	wire    string      // the fakes' wire directory

	prompt      int // prompts sent
	turnEnds    int
	interrupted bool
	interruptAt time.Time
	inTurn      bool       // the CLI has been seen in its first turn
	inTurnAt    time.Time  // when it was
	cliUp       time.Time  // when the first CLI process was seen running
	runningAt   time.Time  // when a real CLI asked for text first showed it runs (see cliRunning)
	modelAsked  func() int // a real CLI's requests to the mock model API so far; nil for the fakes
	thenSent    bool
	closed      bool
	events      int
	lastOutput  time.Time

	cli wireWatch // what the CLIs have written so far

	// deferred is the command the runner sends after the interrupted
	// turn's turn_end, once settleAfterTurnEnd has passed (deferAt).
	deferred func()
	deferAt  time.Time
	snapped  bool
}

// evidenceWait is how long past settleAfterTurnEnd the runner looks again
// for evidence of the interrupt before it judges that none came.
const evidenceWait = time.Second

// probeGrace is how long the probe lets an adapter that has said hello
// take to end after close before it stops it.
const probeGrace = time.Second

// settleAfterTurnEnd is how long after the interrupted turn's turn_end the
// runner waits before its next command, so that a signal the adapter sent
// just before reporting the turn is in the fakes' log when it is read.
const settleAfterTurnEnd = 150 * time.Millisecond

func (d *driver) send(op string, fields map[string]any) {
	if d.closed {
		return
	}
	m := map[string]any{"op": op}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	d.o.Sent = append(d.o.Sent, Sent{Op: op, At: time.Since(d.start), Line: string(b)})
	if _, err := d.stdin.Write(append(b, '\n')); err != nil {
		d.closed = true
	}
	if op == "close" {
		d.stdin.Close()
		d.closed = true
	}
}

func (d *driver) sendNextPrompt() {
	if d.prompt < len(d.c.Prompts) {
		d.send("send", map[string]any{"prompt": d.c.Prompts[d.prompt]})
		d.prompt++
	}
}

func (d *driver) interrupt() {
	d.interrupted = true
	d.interruptAt = time.Now()
	if d.cfg.Adapter.SignalInterrupt {
		d.o.Sent = append(d.o.Sent, Sent{Op: "SIGINT", At: time.Since(d.start)})
		syscall.Kill(d.cmd.Process.Pid, syscall.SIGINT)
		return
	}
	d.send("interrupt", nil)
}

// loop reads the adapter's output and sends commands until stdout ends or
// the case's context is done.
func (d *driver) loop(ctx context.Context, lines <-chan adapterLine) {
	c := d.c
	prompt := ""
	if len(c.Prompts) > 0 {
		prompt = c.Prompts[0]
	}
	if c.probe {
		// The probe only wants the hello, which an adapter writes first
		// whatever it is told: close at once, so that one that writes
		// none ends now rather than at the probe's deadline.
		d.send("close", nil)
	} else {
		start := map[string]any{"agent": c.Agent, "prompt": prompt, "cwd": d.cmd.Dir, "permission": c.Permission}
		if c.Resume != "" {
			start["resume"] = c.Resume
		}
		if c.MaxTurns > 0 {
			start["max_turns"] = c.MaxTurns
		}
		if c.PermissionDelay > 0 {
			start["permission_delay_ms"] = c.PermissionDelay.Milliseconds()
		}
		d.send("start", start)
		d.prompt = 1
	}
	d.lastOutput = time.Now()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case al, ok := <-lines:
			if !ok {
				return
			}
			if al.err != nil {
				d.o.BadLines = append(d.o.BadLines, "reading adapter stdout: "+al.err.Error())
				if errors.Is(al.err, errOutputCap) {
					d.o.OutputCapped = true
					killGroup(d.cmd.Process.Pid)
				}
				return
			}
			d.lastOutput = al.at
			d.handle(al)
		case <-tick.C:
			if d.c.probe && d.o.Hello != nil && time.Since(d.lastOutput) > probeGrace {
				// The probe has its hello: an adapter slow to end on
				// close is no reason to wait out the probe's deadline.
				killGroup(d.cmd.Process.Pid)
				return
			}
			d.timers()
		}
	}
}

func (d *driver) handle(al adapterLine) {
	o := d.o
	at := al.at.Sub(d.start)
	if al.line.TooLong {
		o.BadLines = append(o.BadLines, fmt.Sprintf("line %d: %d bytes, over the runner's %d-byte limit", al.line.Number, al.line.Len, maxAdapterLine))
		return
	}
	// The line is kept (Event.Raw): its long strings need no copy of their own.
	obj, found := jsonl.Parse(al.line.Bytes, jsonl.ParseOptions{ShareMin: 1})
	if obj == nil {
		o.BadLines = append(o.BadLines, fmt.Sprintf("line %d: %s", al.line.Number, clip(string(al.line.Bytes), 200)))
		return
	}
	kind, isRecord := obj["agentconform"].(string)
	if !isRecord {
		o.Events = append(o.Events, Event{Line: al.line.Number, At: at, Raw: al.line.Bytes, Obj: obj, decoded: true, parsed: found})
		d.events++
		return
	}
	rec := Record{Kind: kind, Line: al.line.Number, At: at, EventsBefore: len(o.Events)}
	rec.OK, _ = obj["ok"].(bool)
	rec.Error, _ = obj["error"].(string)
	rec.SessionID, _ = obj["session_id"].(string)
	rec.Reason, _ = obj["reason"].(string)
	o.Records = append(o.Records, rec)
	switch kind {
	case "hello":
		if o.Hello == nil {
			h := &Hello{}
			b, _ := json.Marshal(obj)
			json.Unmarshal(b, h)
			o.Hello = h
		}
	case "turn_end":
		d.turnEnds++
		var next func()
		switch {
		case d.interrupted && d.c.Interrupt != nil && d.c.Interrupt.ThenTurn && !d.thenSent:
			d.thenSent = true
			next = func() { d.send("send", map[string]any{"prompt": "and now a short answer, please"}) }
		case d.prompt < len(d.c.Prompts) && !d.interrupted:
			next = d.sendNextPrompt
		default:
			next = func() { d.send("close", nil) }
		}
		if (d.interrupted || d.c.Watchdog) && !d.snapped {
			// The interrupted turn (or the one a watchdog gave up on) is
			// over as far as the adapter is concerned: what it did about
			// the interrupt is judged on the log as it stands now, before
			// the next command.
			d.snapped = true
			d.deferred, d.deferAt = next, time.Now().Add(settleAfterTurnEnd)
			return
		}
		next()
	case "end":
		d.runDeferred()
		if d.o.FakeAtEnd == nil {
			d.o.FakeAtEnd = snapshotLog(d.observe)
		}
		d.send("close", nil)
	}
}

// timers sends the interrupt and early close that wait for the adapter to
// be quiet, and gives up on an interrupted turn the adapter does not end.
func (d *driver) timers() {
	c := d.c
	if d.deferred != nil && !time.Now().Before(d.deferAt) {
		// The interrupt's evidence is in the log, or the CLI got nothing:
		// a loaded machine may take a moment to log a signal the adapter
		// sent just before it reported the turn, so an empty window is
		// looked at again, for at most evidenceWait.
		snap := snapshotLog(d.observe)
		if interruptEvidence(d.o, snap) != "" || time.Since(d.deferAt) >= evidenceWait {
			d.o.FakeAtTurnEnd = snap
			d.runDeferred()
		}
	}
	quietFor := time.Since(d.lastOutput)
	if c.Interrupt != nil || c.CloseWhenQuiet > 0 || c.Watchdog {
		d.cli.poll(d.wire, c.Agent == "claude")
		if d.cli.files > 0 && d.cliUp.IsZero() {
			d.cliUp = time.Now()
		}
	}
	// The interrupt is timed by what the CLI wrote, never by what the
	// adapter wrote: an adapter that hands nothing on before the turn ends
	// is interrupted all the same.
	// A CLI asked for text writes nothing on stdout until its turn is over:
	// one second after it started counts as its lines written. A real CLI
	// takes seconds to start, so for it the second counts from when it
	// showed it runs (see cliRunning), and notInTurn after its start only
	// when it never showed that.
	linesOK := func(n int) bool {
		switch {
		case d.cli.lines >= n:
			return true
		case d.cliUp.IsZero():
			return false
		case time.Since(d.cliUp) >= d.notInTurn():
			return true
		case d.c.real == nil || d.cli.lines > 0:
			return false
		}
		if d.runningAt.IsZero() {
			if !d.cliRunning() {
				return false
			}
			d.runningAt = time.Now()
		}
		return time.Since(d.runningAt) >= notInTurnQuiet
	}
	if ip := c.Interrupt; ip != nil && ip.Early && !d.interrupted && d.turnEnds == 0 && d.cli.files > 0 {
		d.interrupt() // the CLI is up, still loading
	}
	if ip := c.Interrupt; ip != nil && !d.interrupted && d.turnEnds == 0 && linesOK(ip.AfterEvents) {
		q := ip.Quiet
		if q <= 0 {
			q = defaultQuiet
		}
		if quietFor >= q && time.Since(d.cli.grew) >= q && d.cliInTurn() {
			d.interrupt()
		}
	}
	if d.interrupted && d.turnEnds == 0 && !d.closed && time.Since(d.interruptAt) > interruptDeadline+giveUpAfter {
		// The caller gives up, as a real one would: it closes. A correct
		// adapter then stops the CLI and reports the turn; what it did
		// about the interrupt itself is in the log as it stands now.
		d.o.GaveUp = true
		d.o.FakeAtGiveUp = snapshotLog(d.observe)
		d.send("close", nil)
	}
	d.watchdog()
	// The early close is for a CLI that went quiet in its turn, not for an
	// adapter still starting up.
	if c.CloseWhenQuiet > 0 && !d.closed && quietFor >= c.CloseWhenQuiet && d.cliInTurn() && time.Since(d.inTurnAt) >= c.CloseWhenQuiet {
		d.send("close", nil)
	}
}

// snapshotLog reads the fakes' log while they may still run. A process
// with no exit record that is gone was killed outright (SIGKILL leaves no
// record): it gets a SIGKILL exit record, so that the log tells it apart
// from a process still running.
func snapshotLog(olog *observeLog) []fakecli.Observation {
	log, _ := olog.read()
	for _, pid := range unrecordedExits(log) {
		if !alive(pid) {
			// The runner kills nothing before the adapter exits.
			log = append(log, fakecli.Observation{Kind: "exit", PID: pid, Signal: "SIGKILL", Action: killedOutright})
		}
	}
	return log
}

// giveUpAfter is how long past interruptDeadline the runner waits for an
// interrupted turn to end before it closes.
const giveUpAfter = time.Second

// notInTurnQuiet is how long after a CLI process is seen running the
// runner interrupts it even if it has not seen it in its turn (see
// cliInTurn); realNotInTurnQuiet is the same for a real CLI, which is
// seen in its turn when it asks the mock model API (cliRunning) and takes
// seconds to get there on a loaded machine (Gemini CLI 2 to 3 s on a
// quiet one, more than 8 s at a load of 16): interrupted before it has
// read its prompt, it says nothing of the turn the case is about.
const (
	notInTurnQuiet     = time.Second
	realNotInTurnQuiet = RealStallAfter
)

// notInTurn is notInTurnQuiet for the CLI the case runs.
func (d *driver) notInTurn() time.Duration {
	if d.c.real != nil {
		return realNotInTurnQuiet
	}
	return notInTurnQuiet
}

// cliInTurn reports whether the CLI has started the case's first turn, so
// that an interrupt can reach it there. Claude answers an interrupt that
// comes before the turn (before it has taken the user message) with a
// receipt only and then runs the turn uninterrupted, a race no adapter can
// win; its system/init line says the turn has begun. Codex and Gemini are
// interrupted by a signal, which must not come before the CLI has even
// started (a process still loading dies of SIGINT before it can say
// anything): their first stdout line says they run. A CLI not seen in its
// turn is interrupted all the same notInTurnQuiet after its process was
// first seen (its wire copy exists from its start); one not seen at all is
// not interrupted.
func (d *driver) cliInTurn() bool {
	if d.inTurn {
		return true
	}
	if d.cli.files > 0 && d.cliUp.IsZero() {
		d.cliUp = time.Now()
	}
	if !d.cliUp.IsZero() && time.Since(d.cliUp) >= d.notInTurn() {
		d.inTurn, d.inTurnAt = true, time.Now()
		return true
	}
	switch {
	case d.c.Agent == "claude":
		// A real Claude asked for text writes no system/init: it is in
		// its turn once it asked the model.
		d.inTurn = d.cli.initSeen || d.modelAsked != nil && d.modelAsked() > 0
	case d.modelAsked != nil && (d.c.Agent == AgentGeminiACP || d.c.Agent == AgentAppServer):
		// A JSON-RPC agent's first lines answer the client's set-up
		// (initialize, session/new), not its prompt: a real one is in its
		// turn once it asked the model. Taken at its first line, a real
		// Gemini that took 8 s to start on a loaded machine was closed as
		// quiet before the client's prompt had reached it.
		d.inTurn = d.modelAsked() > 0
	default:
		d.inTurn = d.cli.lines > 0 || d.cliRunning()
	}
	if d.inTurn {
		d.inTurnAt = time.Now()
	}
	return d.inTurn
}

// cliRunning reports whether a Codex or Gemini process has shown it runs
// without a stdout line. A real CLI has when it asked the mock model API
// (it read its prompt and is in its turn); a fake has when it wrote to
// stderr (Codex's header without --json) or read its stdin to the end
// (it has its prompt; both read it to EOF before they start). A real CLI
// asked for text writes its answer only at the end, and takes seconds to
// start on a loaded machine: an interrupt that waited for a stdout line,
// or came at a fixed time, would land after its turn or before it read
// its prompt (its stderr header and the end of its stdin come before).
func (d *driver) cliRunning() bool {
	if d.modelAsked != nil {
		return d.modelAsked() > 0
	}
	log, _ := d.observe.read()
	for _, r := range log {
		switch r.Kind {
		case "err", "stdin_closed":
			return true
		}
	}
	return false
}

// runDeferred takes the snapshot of the fakes' log that judges the
// interrupt and sends the command that waited for it.
func (d *driver) runDeferred() {
	if d.deferred == nil {
		return
	}
	if d.o.FakeAtTurnEnd == nil {
		d.o.FakeAtTurnEnd = snapshotLog(d.observe)
	}
	next := d.deferred
	d.deferred = nil
	next()
}

// wireWatch follows the fakes' wire copies of stdout (one file per
// process) as they grow: how many lines the CLIs have written, when they
// last wrote, and whether Claude's system/init has gone out. It reads
// only what is new at each poll.
type wireWatch struct {
	files    int
	lines    int
	grew     time.Time
	initSeen bool
	offsets  map[string]int64
	carry    map[string][]byte // an unfinished line (while it may be init)
}

// maxInitLine bounds the unfinished line kept to look for system/init.
const maxInitLine = 1 << 20

func (w *wireWatch) poll(dir string, claude bool) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.out"))
	if w.offsets == nil {
		w.offsets, w.carry = map[string]int64{}, map[string][]byte{}
	}
	w.files = len(files)
	for _, name := range files {
		st, err := os.Stat(name)
		if err != nil || st.Size() <= w.offsets[name] {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		buf := make([]byte, st.Size()-w.offsets[name])
		n, _ := f.ReadAt(buf, w.offsets[name])
		f.Close()
		buf = buf[:n]
		if n == 0 {
			continue
		}
		w.offsets[name] += int64(n)
		w.grew = time.Now()
		w.lines += bytes.Count(buf, []byte("\n"))
		if !claude || w.initSeen {
			continue
		}
		data := append(w.carry[name], buf...)
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			if isClaudeInit(data[:i]) {
				w.initSeen = true
			}
			data = data[i+1:]
		}
		if len(data) > maxInitLine {
			data = nil
		}
		w.carry[name] = append([]byte(nil), data...)
	}
}

func isClaudeInit(line []byte) bool {
	if !bytes.Contains(line, []byte(`"init"`)) {
		return false
	}
	obj, _ := jsonl.Parse(line, jsonl.ParseOptions{})
	return obj != nil && obj["type"] == "system" && obj["subtype"] == "init"
}

func exitStatus(ps *os.ProcessState, err error) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, signalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return "signal " + strconv.Itoa(int(s))
}

// killGroup kills the process group led by pid (ignoring "no such process").
func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// alive reports whether pid runs (and is not a zombie waiting to be reaped).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z' && stat[i+2] != 'X'
	}
	return true
}

// readWire reads what each fake process wrote to stdout (one file per pid).
func readWire(dir string, starts []fakecli.Observation) []WireProcess {
	var out []WireProcess
	seen := map[int]bool{}
	for _, s := range starts {
		if seen[s.PID] {
			continue
		}
		seen[s.PID] = true
		b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(s.PID)+".out"))
		if err != nil {
			b = nil
		}
		out = append(out, WireProcess{PID: s.PID, Argv: s.Argv, Bytes: b})
	}
	return out
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// Bytes returns the kept tail.
func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > t.max {
		return append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return append([]byte(nil), t.buf...)
}

func sanitize(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
