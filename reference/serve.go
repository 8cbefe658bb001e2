package reference

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentconform/agentconform/reference/unified"
)

// ServeOptions configure Serve.
type ServeOptions struct {
	// Profile is the event vocabulary: ProfileUnified (default) or ProfileShim.
	Profile Profile
	// Name and Version go into the hello record.
	Name, Version string
	// Interrupts delivers signal-mode interrupts (the adapter's SIGINT);
	// each acts as an interrupt command. nil means none.
	Interrupts <-chan struct{}
	// Env is the CLIs' environment; nil means this process's.
	Env []string
	// Stderr receives the CLIs' stderr and the adapter's diagnostics; nil
	// discards them.
	Stderr io.Writer
	// TurnTimeout, StallTimeout, InterruptGrace and StopGrace are passed
	// to each session's Config. The hello declares StallTimeout, when set,
	// as watchdog_ms (conformance/HARNESS.md).
	TurnTimeout, StallTimeout, InterruptGrace, StopGrace time.Duration
	// Clock stamps events (see Options); nil means time.Now.
	Clock func() time.Time
	// NewID makes event ids (see Options); nil means random ones.
	NewID func() string
}

// command is one line the runner writes (conformance/HARNESS.md).
type command struct {
	Op         string `json:"op"`
	Agent      string `json:"agent"`
	Prompt     string `json:"prompt"`
	Cwd        string `json:"cwd"`
	Model      string `json:"model"`
	Permission string `json:"permission"`
	Resume     string `json:"resume"`
	MaxTurns   int    `json:"max_turns"`
	// PermissionDelayMS is how long the caller takes to decide each
	// permission request (a person in the loop): the policy's answer goes
	// out that late.
	PermissionDelayMS int64          `json:"permission_delay_ms"`
	Options           commandOptions `json:"options"`
}

// commandOptions are the adapter-specific options of start.
type commandOptions struct {
	// Sandbox is Codex's --sandbox value.
	Sandbox string `json:"sandbox"`
	// Args are extra CLI arguments.
	Args []string `json:"args"`
}

// record is a harness record the adapter writes.
type record struct {
	Kind      string   `json:"agentconform"`
	Profile   string   `json:"profile,omitempty"`
	Agents    []string `json:"agents,omitempty"`
	Supports  []string `json:"supports,omitempty"`
	Name      string   `json:"name,omitempty"`
	Version   string   `json:"version,omitempty"`
	OK        *bool    `json:"ok,omitempty"`
	Error     string   `json:"error,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	// WatchdogMS is the hello's watchdog time, in milliseconds.
	WatchdogMS int64 `json:"watchdog_ms,omitempty"`
}

// session is what Serve needs of a Session, whatever its event type.
type session interface {
	Send(ctx context.Context, prompt string) (*Turn, error)
	Interrupt() bool
	Close(ctx context.Context) error
	SessionID() string
}

// lineWriter writes whole lines to the runner, one at a time.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
	buf []byte // a long text's pieces, encoded (streamed)
}

func (w *lineWriter) line(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	var err error
	if cap(b) > len(b) || len(b) < 64<<10 {
		_, err = w.w.Write(append(b, '\n'))
	} else if _, err = w.w.Write(b); err == nil {
		// A long line without room for its newline: not copied for it.
		_, err = w.w.Write(newline)
	}
	if err != nil {
		w.err = fmt.Errorf("writing to the runner: %w", err)
	}
}

var newline = []byte{'\n'}

func (w *lineWriter) event(ev json.Marshaler) {
	w.mu.Lock()
	if w.err == nil {
		if ok, err := w.streamed(ev); ok {
			if err != nil {
				w.err = fmt.Errorf("writing to the runner: %w", err)
			}
			w.mu.Unlock()
			return
		}
	}
	w.mu.Unlock()
	b, err := ev.MarshalJSON()
	if err != nil {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
		return
	}
	w.line(b)
}

func (w *lineWriter) record(r record) {
	b, err := marshalNoEscape(r)
	if err == nil {
		w.line(b)
	}
}

func (w *lineWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Serve speaks the adapter harness protocol (conformance/HARNESS.md): it
// writes hello, then reads commands from in (start, send, interrupt,
// close), runs the session they describe, and writes its events,
// turn_end after every turn and end last. It returns when the session is
// closed (a close command, or in at EOF) or ctx ends (the CLI is stopped
// first); the error is an I/O error writing to out. A close (or EOF) while
// a turn runs means the caller is gone: the turn is interrupted, with the
// driver's escalation to SIGTERM and SIGKILL, and reported as failed.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts ServeOptions) error {
	if opts.Profile == "" {
		opts.Profile = ProfileUnified
	}
	if opts.Name == "" {
		opts.Name = "agentconform-reference"
	}
	s := &server{ctx: ctx, opts: opts, w: &lineWriter{w: out}}
	s.w.record(record{
		Kind: "hello", Profile: string(opts.Profile), Name: opts.Name, Version: opts.Version,
		Agents:     []string{string(Claude), string(Codex), string(Gemini)},
		Supports:   []string{"multi_turn", "resume", "interrupt", "permission", "max_turns", "permission_delay"},
		WatchdogMS: opts.StallTimeout.Milliseconds(),
	})
	return s.loop(in)
}

// server is one Serve call's state; loop owns it.
type server struct {
	ctx      context.Context
	opts     ServeOptions
	w        *lineWriter
	sess     session
	startErr error
	turn     *Turn
	queue    []string // sends that came while a turn ran
	// failure is the error of the last turn that failed the session (not
	// one the caller interrupted), for the end record.
	failure string
}

func (s *server) logf(format string, args ...any) {
	if s.opts.Stderr != nil {
		fmt.Fprintf(s.opts.Stderr, "agentconform adapter: "+format+"\n", args...)
	}
}

func (s *server) loop(in io.Reader) error {
	cmds := make(chan command)
	go s.read(in, cmds)
	closing, aborted := false, false
	done := s.ctx.Done()
	var giveUp <-chan time.Time // a closing turn that outlives its escalation
	for !(closing && s.turn == nil) {
		var turnDone <-chan struct{}
		if s.turn != nil {
			turnDone = s.turn.Done()
		}
		select {
		case c, ok := <-cmds:
			if !ok {
				cmds = nil
			}
			if (!ok || s.handle(c)) && !closing {
				// close (or stdin at EOF): with a turn still running, the
				// caller is gone. Stop the CLI as an interrupt does
				// (interrupt, SIGTERM, SIGKILL) and report the turn.
				closing, s.queue = true, nil
				if s.turn != nil {
					s.sess.Interrupt()
					giveUp = time.After(s.escalation())
				}
			}
		case <-giveUp:
			if s.turn != nil {
				s.turn.cancel()
			}
		case <-turnDone:
			res := s.turn.Wait()
			s.turn = nil
			s.turnEnd(res.OK, res.Reason, res.Error, res.SessionID)
			if !res.OK && !res.Interrupted && res.SessionEnded {
				s.failure = res.Error
			}
			if len(s.queue) > 0 {
				next := s.queue[0]
				s.queue = s.queue[1:]
				s.send(next)
			}
		case <-s.opts.Interrupts:
			if s.sess != nil {
				s.sess.Interrupt()
			}
		case <-done:
			done, closing, aborted = nil, true, true
			s.queue = nil // the running turn stops with ctx
		}
		if err := s.w.failed(); err != nil {
			s.shutdown()
			return err
		}
	}
	err := s.shutdown()
	switch {
	case aborted && err == nil:
		err = errors.New("stopped")
	case err == nil && s.startErr != nil:
		err = s.startErr
	case err == nil && s.failure != "":
		err = errors.New(s.failure)
	}
	ok := err == nil
	end := record{Kind: "end", OK: &ok}
	if err != nil {
		end.Error = err.Error()
	}
	s.w.record(end)
	return s.w.failed()
}

// escalation bounds how long an interrupted turn may take to end: the
// interrupt grace, then a stop grace each for SIGTERM and SIGKILL, and a
// second to spare. The drivers escalate on their own; this is the backstop.
func (s *server) escalation() time.Duration {
	ig, sg := s.opts.InterruptGrace, s.opts.StopGrace
	if ig <= 0 {
		ig = defaultGrace
	}
	if sg <= 0 {
		sg = defaultGrace
	}
	return ig + 2*sg + time.Second
}

// shutdown closes the session, bounded by the stop grace periods.
func (s *server) shutdown() error {
	if s.sess == nil {
		return nil
	}
	grace := s.opts.StopGrace
	if grace <= 0 {
		grace = defaultGrace
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 3*grace)
	defer cancel()
	return s.sess.Close(ctx)
}

// read decodes commands until in ends.
func (s *server) read(in io.Reader, cmds chan<- command) {
	defer close(cmds)
	br := bufio.NewReader(in)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var c command
			if jerr := json.Unmarshal(line, &c); jerr != nil {
				s.logf("ignoring a command line that is not JSON: %v", jerr)
			} else {
				select {
				case cmds <- c:
				case <-s.ctx.Done():
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// handle runs one command; it reports whether the command was close.
func (s *server) handle(c command) bool {
	switch c.Op {
	case "start":
		s.start(c)
	case "send":
		switch {
		case s.sess == nil:
			s.turnEnd(false, ReasonFailed, "send before a session was started", "")
		case s.turn != nil:
			s.queue = append(s.queue, c.Prompt)
		default:
			s.send(c.Prompt)
		}
	case "interrupt":
		if s.sess != nil {
			s.sess.Interrupt()
		}
	case "close":
		return true
	default:
		s.logf("ignoring unknown op %q", c.Op)
	}
	return false
}

func (s *server) start(c command) {
	if s.sess != nil {
		s.turnEnd(false, ReasonFailed, "start: a session is already running", s.sess.SessionID())
		return
	}
	cfg, err := s.config(c)
	if err == nil {
		s.sess, err = s.startSession(cfg)
	}
	if err != nil {
		s.startErr = err
		s.turnEnd(false, ReasonFailed, err.Error(), c.Resume)
		return
	}
	s.send(c.Prompt)
}

func (s *server) config(c command) (Config, error) {
	agent, err := ParseAgent(c.Agent)
	if err != nil {
		return Config{}, err
	}
	perm, err := ParsePermission(c.Permission)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{
		Agent: agent, Cwd: c.Cwd, Model: c.Model, Permission: perm, Resume: c.Resume, MaxTurns: c.MaxTurns, PartialMessages: true,
		Sandbox: c.Options.Sandbox, ExtraArgs: c.Options.Args,
		Env: s.opts.Env, Stderr: s.opts.Stderr, Logf: s.logf,
		TurnTimeout: s.opts.TurnTimeout, StallTimeout: s.opts.StallTimeout, InterruptGrace: s.opts.InterruptGrace, StopGrace: s.opts.StopGrace,
		Clock: s.opts.Clock, NewID: s.opts.NewID,
	}
	if c.PermissionDelayMS > 0 {
		delay := time.Duration(c.PermissionDelayMS) * time.Millisecond
		cfg.CanUseTool = func(ctx context.Context, _ PermissionRequest) PermissionDecision {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			return perm.decide()
		}
	}
	return cfg, nil
}

func (s *server) startSession(cfg Config) (session, error) {
	switch s.opts.Profile {
	case ProfileUnified:
		return StartUnified(s.ctx, cfg, func(ev unified.Event) { s.w.event(ev) })
	case ProfileShim:
		return StartShim(s.ctx, cfg, func(ev ShimEvent) { s.w.event(ev) })
	}
	return nil, fmt.Errorf("unknown profile %q", s.opts.Profile)
}

func (s *server) send(prompt string) {
	t, err := s.sess.Send(s.ctx, prompt)
	if err != nil {
		s.turnEnd(false, ReasonFailed, err.Error(), s.sess.SessionID())
		return
	}
	s.turn = t
}

// turnEnd writes a turn_end record; reason is TurnResult.Reason's word.
func (s *server) turnEnd(ok bool, reason, msg, sid string) {
	s.w.record(record{Kind: "turn_end", OK: &ok, Reason: reason, Error: msg, SessionID: sid})
}
