package reference

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agentconform/agentconform/reference/unified"
)

// Errors of Session's methods.
var (
	// ErrTurnRunning: a turn is running; wait for it (or interrupt it) first.
	ErrTurnRunning = errors.New("reference: a turn is running")
	// ErrSessionEnded: a turn ended the session; no further turn can run.
	ErrSessionEnded = errors.New("reference: the session has ended")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("reference: the session is closed")
)

// Session runs one CLI session, turn by turn, handing every event to its
// out function. out is called from one goroutine at a time, in order, and
// a turn's events are all out before its Turn is done. A Session's methods
// are safe for concurrent use (Interrupt is meant to be called while
// another goroutine waits for a turn).
type Session[E any] struct {
	cfg Config
	tr  Translator[E]
	out func(E)
	drv driver
	ctx context.Context

	mu     sync.Mutex
	active *Turn
	ended  bool
	closed bool
	lastOK bool
}

// Turn is a running turn.
type Turn struct {
	done      chan struct{}
	interrupt chan struct{}
	cancel    context.CancelFunc
	res       TurnResult
}

// Done is closed when the turn is over and all its events are out.
func (t *Turn) Done() <-chan struct{} { return t.done }

// Wait waits for the turn and returns its result.
func (t *Turn) Wait() TurnResult {
	<-t.done
	return t.res
}

// driver runs the CLI for a Session: one long-lived process (Claude) or
// one process per turn (Codex, Gemini).
type driver interface {
	// turn runs one turn: it delivers the prompt, passes every stdout line
	// to feed until the turn is over, reacts to interrupts, and reports how
	// the turn ended.
	turn(ctx context.Context, prompt string, interrupts <-chan struct{}, feed feedFunc) TurnEnd
	// close releases the CLI. lastOK says whether the last turn succeeded
	// (a CLI may exit non-zero after a failed one). It returns how the CLI
	// ended: nil when it ended cleanly.
	close(ctx context.Context, lastOK bool) error
}

// feedFunc hands one stdout line to the translator. It reports whether the
// turn's terminal event has been read, and an error when the line is a
// last line cut mid-way.
type feedFunc func(l outLine) (terminal bool, err error)

// Start starts a session that hands tr's events to out. For Claude the CLI
// starts now; Codex and Gemini start with each turn. ctx bounds the whole
// session: when it ends, the CLI is stopped.
func Start[E any](ctx context.Context, cfg Config, tr Translator[E], out func(E)) (*Session[E], error) {
	if tr.Agent() != cfg.Agent {
		return nil, fmt.Errorf("reference: translator for %s, config for %s", tr.Agent(), cfg.Agent)
	}
	if out == nil {
		out = func(E) {}
	}
	s := &Session[E]{cfg: cfg, tr: tr, out: out, ctx: ctx, lastOK: true}
	var err error
	switch cfg.Agent {
	case Claude:
		s.drv, err = startClaude(ctx, cfg, tr.SessionID)
	case Codex, Gemini:
		s.drv, err = newTurnProcDriver(cfg, tr.SessionID)
	default:
		err = fmt.Errorf("reference: unknown agent %q", cfg.Agent)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// StartUnified starts a session whose events are unified events.
func StartUnified(ctx context.Context, cfg Config, out func(unified.Event)) (*Session[unified.Event], error) {
	tr, err := NewUnified(cfg.Agent, cfg.TranslatorOptions())
	if err != nil {
		return nil, err
	}
	return Start(ctx, cfg, tr, out)
}

// StartShim starts a session whose events are shim lines (docs/protocols/shim.md).
func StartShim(ctx context.Context, cfg Config, out func(ShimEvent)) (*Session[ShimEvent], error) {
	tr, err := NewShim(cfg.Agent, cfg.TranslatorOptions())
	if err != nil {
		return nil, err
	}
	return Start(ctx, cfg, tr, out)
}

// Run runs prompt as a one-turn session and hands its unified events to
// out. The error is about the session (the CLI could not start, or did not
// exit cleanly); the turn's own failure is in the result.
func Run(ctx context.Context, cfg Config, prompt string, out func(unified.Event)) (TurnResult, error) {
	s, err := StartUnified(ctx, cfg, out)
	if err != nil {
		return TurnResult{Error: err.Error(), Reason: ReasonFailed}, err
	}
	res, err := s.Prompt(ctx, prompt)
	if cerr := s.Close(ctx); err == nil {
		err = cerr
	}
	return res, err
}

// Send starts a turn with prompt and returns at once.
func (s *Session[E]) Send(ctx context.Context, prompt string) (*Turn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, ErrClosed
	case s.ended:
		return nil, ErrSessionEnded
	case s.active != nil:
		return nil, ErrTurnRunning
	}
	var tctx context.Context
	var cancel context.CancelFunc
	if s.cfg.TurnTimeout > 0 {
		tctx, cancel = context.WithTimeout(ctx, s.cfg.TurnTimeout)
	} else {
		tctx, cancel = context.WithCancel(ctx)
	}
	t := &Turn{done: make(chan struct{}), interrupt: make(chan struct{}, 1), cancel: cancel}
	s.active = t
	go s.run(tctx, t, prompt)
	return t, nil
}

// Prompt runs a turn with prompt and waits for it.
func (s *Session[E]) Prompt(ctx context.Context, prompt string) (TurnResult, error) {
	t, err := s.Send(ctx, prompt)
	if err != nil {
		return TurnResult{SessionID: s.tr.SessionID(), Error: err.Error(), Reason: ReasonFailed}, err
	}
	return t.Wait(), nil
}

// run is a turn's goroutine.
func (s *Session[E]) run(ctx context.Context, t *Turn, prompt string) {
	defer t.cancel()
	stop := context.AfterFunc(s.ctx, t.cancel)
	defer stop()
	s.emit(s.tr.BeginTurn(prompt))
	end := s.drv.turn(ctx, prompt, t.interrupt, s.feed)
	evs, res := s.tr.EndTurn(end)
	s.emit(evs)
	s.mu.Lock()
	s.active = nil
	s.lastOK = res.OK
	if res.SessionEnded {
		s.ended = true
	}
	s.mu.Unlock()
	t.res = res
	close(t.done)
}

// feed translates one stdout line and hands out its events. Lines that do
// not decode are skipped (and logged); a last line cut mid-way is an error
// of the turn.
func (s *Session[E]) feed(l outLine) (bool, error) {
	var evs []E
	var err error
	if o, ok := s.tr.(ownedLiner[E]); ok {
		evs, err = o.ownedLine(l.data) // the reader hands its lines over (linesplit.Splitter.Keep)
	} else {
		evs, err = s.tr.Line(l.data)
	}
	s.emit(evs)
	if err != nil {
		if l.partial {
			return s.tr.Terminal(), fmt.Errorf("%s: output ended in the middle of a line: %w", s.cfg.Agent, err)
		}
		s.cfg.logf("%s: skipping a stdout line: %v", s.cfg.Agent, err)
	}
	return s.tr.Terminal(), nil
}

func (s *Session[E]) emit(evs []E) {
	for _, ev := range evs {
		s.out(ev)
	}
}

// Interrupt interrupts the running turn the way the CLI needs (Claude: a
// control_request interrupt; Codex and Gemini: SIGINT, then SIGTERM, then
// SIGKILL). It reports whether a turn was running.
func (s *Session[E]) Interrupt() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil {
		return false
	}
	select {
	case s.active.interrupt <- struct{}{}:
	default:
	}
	return true
}

// SessionID is the CLI's session id, "" until known.
func (s *Session[E]) SessionID() string { return s.tr.SessionID() }

// Close ends the session: it waits for a running turn (stopping it if ctx
// ends first), releases the CLI (Claude: closes stdin, waits, then SIGTERM
// and SIGKILL), and hands out the session's end. It returns nil when the
// CLI ended cleanly.
func (s *Session[E]) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	t := s.active
	s.mu.Unlock()
	if t != nil {
		select {
		case <-t.done:
		case <-ctx.Done():
			t.cancel()
			<-t.done
		}
	}
	s.mu.Lock()
	lastOK := s.lastOK
	s.mu.Unlock()
	err := s.drv.close(ctx, lastOK)
	s.emit(s.tr.EndSession(err))
	return err
}
