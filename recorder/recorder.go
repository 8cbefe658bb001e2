// Package recorder runs a real AI coding CLI (Claude Code, Codex, Gemini
// CLI) between a client and the terminal, passes every byte through
// untouched, and writes what went by as an agentconform/v1 transcript
// (package transcript) that the fake CLIs can replay.
//
// The child gets pipes for stdin, stdout and stderr. Each chunk the child
// writes is recorded and then copied to the client at once; each chunk the
// client writes is recorded and then copied to the child. Recording before
// copying keeps the transcript in causal order (a stdin line that answers a
// stdout line always comes after it), and costs only an append under a
// lock. Everything else (redaction, turning stdin lines into matches,
// writing the file) happens after the child has exited.
//
// The child runs in its own process group with a deadline; on the deadline
// (or a cancelled context, or a second terminating signal that it does not
// obey within a grace period) the whole group is killed and the child
// reaped. Signals the caller hands over are forwarded to the child.
//
// Two entry points: Record, which the "agentconform record" command uses,
// and ShimMain, which makes the agentconform binary a recording stand-in
// for a real CLI on PATH.
package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentconform/agentconform/redact"
	"github.com/agentconform/agentconform/transcript"
)

// Defaults for the zero values of Config's durations.
const (
	// DefaultTimeout is how long the child may run.
	DefaultTimeout = 10 * time.Minute
	// DefaultVersionTimeout bounds "<cli> --version".
	DefaultVersionTimeout = 5 * time.Second
	// DefaultKillGrace is how long the child may take to obey a second
	// terminating signal before its process group is killed.
	DefaultKillGrace = 2 * time.Second
	// DefaultDrainWait is how long stdout and stderr may stay open after
	// the child exited (held by a process it left behind) before the
	// recorder stops reading them.
	DefaultDrainWait = 2 * time.Second
)

// Config describes one recording.
type Config struct {
	// Argv is the invocation, argv[0] first, as the client gave it; the
	// child sees exactly this argv.
	Argv []string
	// Path is the executable to run; empty means exec.LookPath(Argv[0]).
	Path string
	// CLI is "claude", "codex" or "gemini"; empty means CLIName(Argv[0]).
	CLI string
	// CLIVersion is written to the header as it is; empty means running
	// "<Path> --version" (concurrently with the child) and taking the
	// version number it prints, or "unknown".
	CLIVersion string
	// Scenario and Description go into the header.
	Scenario, Description string
	// Env is the child's environment; nil means os.Environ().
	Env []string
	// Dir is the child's working directory; empty means the current one.
	Dir string
	// Stdin is what the client writes; nil gives the child an empty stdin
	// (the null device) and records no stdin steps. When writing to the
	// child fails because it closed its stdin while it runs, Stdin is
	// closed if it is an io.Closer, so that the client's writes fail as
	// they would have.
	Stdin io.Reader
	// Stdout and Stderr receive the child's output byte for byte; nil
	// discards it.
	Stdout, Stderr io.Writer
	// Timeout is the child's deadline; zero means DefaultTimeout.
	Timeout time.Duration
	// VersionTimeout bounds the version probe; zero means
	// DefaultVersionTimeout.
	VersionTimeout time.Duration
	// KillGrace is how long the child may take to obey a second
	// terminating signal (SIGINT, SIGTERM, SIGHUP) before its group is
	// killed; zero means DefaultKillGrace.
	KillGrace time.Duration
	// DrainWait is how long to keep reading stdout and stderr after the
	// child exited; zero means DefaultDrainWait.
	DrainWait time.Duration
	// Signals, when not nil, delivers the signals to forward to the child
	// (see NotifySignals).
	Signals <-chan os.Signal
	// Redactor cleans everything before it is written; nil means a new
	// one for the home directory (HOME in Env), the working directory and
	// the values of the credential variables in Env. Pass one Redactor to
	// several recordings to keep placeholders stable across them.
	Redactor *redact.Redactor
}

// Result is how a recording ended.
type Result struct {
	// Transcript is the redacted recording; write it with WriteFile or
	// transcript.Write.
	Transcript *transcript.Transcript
	// ExitCode is the child's exit status, or -1 when it died by a signal.
	ExitCode int
	// Signal names the signal that killed the child ("SIGTERM"), and
	// SignalNumber is its number; "" and 0 when it exited.
	Signal       string
	SignalNumber int
	// TimedOut says the deadline passed and the child's process group was
	// killed.
	TimedOut bool
	// Killed says the recorder killed the child's process group (deadline,
	// cancelled context, or a second signal the child did not obey).
	Killed bool
	// Redactions says what the Redactor replaced so far.
	Redactions redact.Report
}

// Status is the exit status a shell would report: ExitCode, or 128 plus
// the signal number when the child died by a signal.
func (r *Result) Status() int {
	if r.Signal != "" {
		return 128 + r.SignalNumber
	}
	return r.ExitCode
}

// CLIs are the CLIs a transcript can record.
var CLIs = []string{"claude", "codex", "gemini"}

// CLIName tells which CLI an executable path is: its base name without an
// extension such as .exe or .js, if that is or contains "claude", "codex"
// or "gemini"; "" otherwise.
func CLIName(path string) string {
	base := strings.ToLower(filepath.Base(path))
	if ext := filepath.Ext(base); ext != "" {
		base = strings.TrimSuffix(base, ext)
	}
	for _, c := range CLIs {
		if base == c {
			return c
		}
	}
	for _, c := range CLIs {
		if strings.Contains(base, c) {
			return c
		}
	}
	return ""
}

func knownCLI(cli string) bool {
	for _, c := range CLIs {
		if c == cli {
			return true
		}
	}
	return false
}

// Record runs the CLI, passes its stdio through, and returns the redacted
// transcript and how the child ended. It returns an error only when the
// child could not be started; whatever happens after that is in the
// Result. Cancelling ctx kills the child's process group.
func Record(ctx context.Context, cfg Config) (*Result, error) {
	if len(cfg.Argv) == 0 {
		return nil, errors.New("recorder: no command to run")
	}
	cli := cfg.CLI
	if cli == "" {
		cli = CLIName(cfg.Argv[0])
		if cli == "" {
			return nil, fmt.Errorf("recorder: cannot tell which CLI %q is (name it: claude, codex or gemini)", filepath.Base(cfg.Argv[0]))
		}
	}
	if !knownCLI(cli) {
		return nil, fmt.Errorf("recorder: CLI %q is not claude, codex or gemini", cli)
	}
	path := cfg.Path
	if path == "" {
		p, err := exec.LookPath(cfg.Argv[0])
		if err != nil {
			return nil, fmt.Errorf("recorder: finding %s: %w", cfg.Argv[0], err)
		}
		path = p
	}
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	red := cfg.Redactor
	if red == nil {
		cwd := cfg.Dir
		if cwd == "" {
			cwd, _ = os.Getwd()
		} else if abs, err := filepath.Abs(cwd); err == nil {
			cwd = abs
		}
		red = redact.New(redact.Options{Home: envValue(env, "HOME"), Cwd: cwd, Secrets: redact.EnvSecrets(env)})
	}

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	s := &session{cfg: cfg, log: newLog()}
	if err := s.start(path, env); err != nil {
		return nil, err
	}
	version := make(chan string, 1)
	if cfg.CLIVersion != "" {
		version <- cfg.CLIVersion
	} else {
		go func() {
			version <- probeVersion(path, cfg.Argv[0], env, cfg.Dir, orDefault(cfg.VersionTimeout, DefaultVersionTimeout))
		}()
	}
	res := s.run(ctx)

	tr := &transcript.Transcript{Header: transcript.Header{
		Format:      transcript.Format,
		CLI:         cli,
		CLIVersion:  <-version,
		Scenario:    cfg.Scenario,
		Description: cfg.Description,
		Argv:        redactArgv(red, cfg.Argv),
		Env:         RelevantEnv(env),
		Cwd:         redact.DefaultCwdAs,
		Source:      "recorded",
	}}
	evs, exitT := s.log.close()
	tr.Steps = buildSteps(evs, exitT, cli, red, res)
	tr.Header.SessionID = sessionID(tr.Steps)
	res.Transcript = tr
	res.Redactions = red.Report()
	return res, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// redactArgv redacts every argument and keeps only the base name of
// argv[0], so no local path is recorded.
func redactArgv(red *redact.Redactor, argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if i == 0 {
			a = filepath.Base(a)
		}
		out[i] = red.String(a)
	}
	return out
}

// session is one running child and the goroutines around it.
type session struct {
	cfg Config
	log *log
	cmd *exec.Cmd

	stdoutR, stderrR *os.File
	stdinW           *os.File
	outputDone       chan struct{} // closed when both output pumps ended
	finished         atomic.Bool   // the recording is over
}

func (s *session) start(path string, env []string) (err error) {
	var opened []*os.File
	defer func() {
		if err != nil {
			for _, f := range opened {
				f.Close()
			}
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("recorder: creating a pipe: %w", err)
		}
		opened = append(opened, r, w)
		return r, w, nil
	}
	outR, outW, err := pipe()
	if err != nil {
		return err
	}
	errR, errW, err := pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(path)
	cmd.Args = s.cfg.Argv
	cmd.Env = env
	cmd.Dir = s.cfg.Dir
	cmd.Stdout, cmd.Stderr = outW, errW
	var inR, inW *os.File
	if s.cfg.Stdin != nil {
		if inR, inW, err = pipe(); err != nil {
			return err
		}
		cmd.Stdin = inR
	}
	setProcessGroup(cmd)
	s.log.t0 = time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("recorder: starting %s: %w", path, err)
	}
	// The child has its ends now.
	outW.Close()
	errW.Close()
	if inR != nil {
		inR.Close()
	}
	s.cmd, s.stdoutR, s.stderrR, s.stdinW = cmd, outR, errR, inW
	return nil
}

// run pumps the child's stdio, forwards signals, enforces the deadline and
// waits for the end.
func (s *session) run(ctx context.Context) *Result {
	cfg := s.cfg
	var pumps sync.WaitGroup
	pumps.Add(2)
	go func() { defer pumps.Done(); s.pumpOut(s.stdoutR, cfg.Stdout, transcript.OpOut) }()
	go func() { defer pumps.Done(); s.pumpOut(s.stderrR, cfg.Stderr, transcript.OpErr) }()
	s.outputDone = make(chan struct{})
	go func() { pumps.Wait(); close(s.outputDone) }()
	if s.stdinW != nil {
		go s.pumpIn(cfg.Stdin, s.stdinW)
	}

	waited := make(chan struct{})
	go func() {
		_ = s.cmd.Wait() // the status is in ProcessState
		close(waited)
	}()

	res := &Result{}
	timeout := orDefault(cfg.Timeout, DefaultTimeout)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var killAfter <-chan time.Time
	signals := cfg.Signals
	terminating := 0
	kill := func() {
		res.Killed = true
		killGroup(s.cmd.Process)
	}
	done := ctx.Done()
wait:
	for {
		select {
		case <-waited:
			break wait
		case sig, ok := <-signals:
			if !ok {
				signals = nil
				continue
			}
			if !forwardable(sig) {
				continue
			}
			_ = s.cmd.Process.Signal(sig) // fails only when the child is gone
			if isTerminating(sig) {
				terminating++
				if terminating == 2 {
					killAfter = time.After(orDefault(cfg.KillGrace, DefaultKillGrace))
				}
			}
		case <-killAfter:
			killAfter = nil
			kill()
		case <-deadline.C:
			res.TimedOut = true
			kill()
		case <-done:
			done = nil
			kill()
		}
	}
	exitT := s.log.now()

	// Output written before the exit may still be in the pipes; a process
	// the child left behind may hold them open for longer.
	drain := time.NewTimer(orDefault(cfg.DrainWait, DefaultDrainWait))
	defer drain.Stop()
	select {
	case <-s.outputDone:
	case <-drain.C:
		s.stdoutR.Close()
		s.stderrR.Close()
		select {
		case <-s.outputDone:
		case <-time.After(time.Second):
			// A pump is stuck writing to a client that does not read;
			// the recording ends here all the same.
		}
	}
	if res.Killed {
		// Whatever of the group is still there goes too.
		killGroup(s.cmd.Process)
	}
	res.ExitCode, res.Signal, res.SignalNumber = exitStatus(s.cmd.ProcessState)
	s.log.exit(exitT)
	s.finished.Store(true)
	if s.stdinW != nil {
		// A client still writing has nobody to write to.
		s.stdinW.Close()
	}
	return res
}

// pumpOut records what the child writes to one stream, then copies it to
// the client. When the client's side breaks, the recorder stops reading,
// so the child meets a broken pipe as it would have without the recorder.
func (s *session) pumpOut(r *os.File, w io.Writer, op transcript.Op) {
	defer r.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.log.add(op, buf[:n])
			if w != nil {
				if _, werr := w.Write(buf[:n]); werr != nil {
					break
				}
			}
		}
		if err != nil {
			break
		}
	}
	s.log.flush(op)
}

// pumpIn records what the client writes, then copies it to the child; at
// the client's EOF it records stdin_eof and closes the child's stdin.
func (s *session) pumpIn(r io.Reader, w *os.File) {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.log.add(transcript.OpIn, buf[:n])
			if _, werr := w.Write(buf[:n]); werr != nil {
				// The child closed its stdin: make the client's next
				// write fail too, as it would have.
				w.Close()
				if c, ok := r.(io.Closer); ok && !s.finished.Load() {
					c.Close()
				}
				return
			}
		}
		if err != nil {
			s.log.flush(transcript.OpIn)
			s.log.mark(transcript.OpStdinEOF)
			w.Close()
			return
		}
	}
}

// event is one recorded line or happening, before redaction.
type event struct {
	op        transcript.Op
	t         int64
	text      string
	noNewline bool
}

// log collects events in the order they happened. Every append takes the
// lock and the time together, so the order is the time order.
type log struct {
	mu      sync.Mutex
	t0      time.Time
	events  []event
	partial map[transcript.Op][]byte
	closed  bool
	exitT   int64
}

func newLog() *log {
	return &log{partial: map[transcript.Op][]byte{}}
}

func (l *log) now() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nowLocked()
}

func (l *log) nowLocked() int64 {
	return time.Since(l.t0).Milliseconds()
}

// add records the complete lines of p (with what was left over from
// earlier chunks) and keeps the rest for later.
func (l *log) add(op transcript.Op, p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	t := l.nowLocked()
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.partial[op] = append(l.partial[op], p...)
			return
		}
		line := string(append(l.partial[op], p[:i]...))
		l.partial[op] = l.partial[op][:0]
		l.events = append(l.events, event{op: op, t: t, text: line})
		p = p[i+1:]
	}
}

// flush records a last line that has no newline.
func (l *log) flush(op transcript.Op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || len(l.partial[op]) == 0 {
		return
	}
	l.events = append(l.events, event{op: op, t: l.nowLocked(), text: string(l.partial[op]), noNewline: true})
	l.partial[op] = nil
}

// mark records a happening without text (stdin_eof).
func (l *log) mark(op transcript.Op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.events = append(l.events, event{op: op, t: l.nowLocked()})
	}
}

func (l *log) exit(t int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.exitT = t
}

// close ends the recording and returns the events and the time of the
// exit; later appends (from a pump still blocked on a client) are dropped.
func (l *log) close() ([]event, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	evs := l.events
	l.events = nil
	return evs, l.exitT
}

// buildSteps redacts the events and turns them into transcript steps,
// ending with how the child ended.
func buildSteps(evs []event, exitT int64, cli string, red *redact.Redactor, res *Result) []transcript.Step {
	conv := newConverter(cli)
	steps := make([]transcript.Step, 0, len(evs)+1)
	// Stdout and stderr are redacted as one stream each, so that a secret
	// split across streamed text deltas is found too.
	var outs, errs []string
	for _, e := range evs {
		switch e.op {
		case transcript.OpOut:
			outs = append(outs, e.text)
		case transcript.OpErr:
			errs = append(errs, e.text)
		}
	}
	outs, errs = red.Lines(outs), red.Lines(errs)
	var last int64
	for _, e := range evs {
		t := e.t
		if t < last {
			t = last
		}
		last = t
		st := transcript.Step{T: &t, Op: e.op}
		switch e.op {
		case transcript.OpOut:
			st.Text = conv.templateIDs(outs[0])
			outs = outs[1:]
			st.NoNewline = e.noNewline
		case transcript.OpErr:
			st.Text = errs[0]
			errs = errs[1:]
			st.NoNewline = e.noNewline
		case transcript.OpIn:
			conv.expect(&st, red.String(e.text))
		}
		steps = append(steps, st)
	}
	// The exit comes last even when output drained after it.
	return append(steps, exitStep(res, max(exitT, last)))
}

func exitStep(res *Result, t int64) transcript.Step {
	st := transcript.Step{T: &t, Op: transcript.OpExit, Code: res.ExitCode}
	if res.Signal != "" {
		if transcriptSignals[res.Signal] {
			st.Op, st.Signal = transcript.OpExitSignal, res.Signal
		} else {
			// A transcript names only the signals a fake can die by.
			st.Code = 128 + res.SignalNumber
		}
	}
	return st
}

// transcriptSignals are the signal names transcript.Load accepts in
// exit_signal.
var transcriptSignals = map[string]bool{"SIGINT": true, "SIGTERM": true, "SIGHUP": true, "SIGKILL": true, "SIGQUIT": true, "SIGPIPE": true, "SIGUSR1": true, "SIGUSR2": true}
