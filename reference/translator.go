package reference

import (
	"fmt"
	"strconv"

	"github.com/agentconform/agentconform/reference/unified"
)

// Translator turns one CLI's stdout into the events of one profile (E is
// unified.Event or ShimEvent). It is driven turn by turn: BeginTurn, Line
// for every stdout line of the turn, EndTurn; and EndSession once at the
// end. It is deterministic given Options.Clock and Options.NewID, and not
// safe for concurrent use.
type Translator[E any] interface {
	// Agent is the CLI whose stream this translator reads.
	Agent() Agent
	// BeginTurn starts a turn whose prompt is prompt ("" if unknown).
	BeginTurn(prompt string) []E
	// Line translates one stdout line (without its newline). Lines that
	// are not JSON objects give an error and no events; lines of unknown
	// types give no events.
	Line(line []byte) ([]E, error)
	// Terminal reports whether the current turn's terminal event (Claude
	// result, Codex turn.completed or turn.failed, Gemini result) has been
	// read.
	Terminal() bool
	// EndTurn ends the current turn. end says how the driver saw it end;
	// the result combines that with the terminal event, if any. Tools the
	// turn left running are completed as failed, and when the turn ends the
	// session (a Codex or Gemini failure, a dead Claude process, a timeout)
	// the session's end is included.
	EndTurn(end TurnEnd) ([]E, TurnResult)
	// EndSession ends the session, if it has not ended: err is a failure
	// of the session as a whole (the CLI did not exit cleanly), nil if
	// none. Its reason is otherwise the outcome of the last turn.
	EndSession(err error) []E
	// SessionID is the CLI's session (or thread) id, "" until known.
	SessionID() string
}

// TurnEnd tells a Translator how its driver saw a turn end.
type TurnEnd struct {
	// Interrupted is set when the caller interrupted the turn.
	Interrupted bool
	// TimedOut is set when the turn's deadline passed and the CLI was stopped.
	TimedOut bool
	// Err is what went wrong with the CLI process: a non-zero exit, death
	// by a signal, output cut mid-line. nil if nothing did.
	Err error
}

// TurnResult is the outcome of a turn, as the harness's turn_end reports it.
type TurnResult struct {
	// OK is true when the turn completed successfully.
	OK bool
	// Error says why it did not, "" when OK.
	Error string
	// SessionID is the id to resume the session with.
	SessionID string
	// Interrupted is true when the turn was cancelled by an interrupt.
	Interrupted bool
	// TimedOut is true when the turn's deadline passed.
	TimedOut bool
	// SessionEnded is true when the turn ended the session: no further
	// turn can be sent.
	SessionEnded bool
	// Reason is why the turn ended, in the words of the harness's turn_end
	// (conformance/HARNESS.md): completed, cancelled, max_turns (the CLI
	// stopped at the caller's turn limit) or failed (anything else,
	// a timeout included).
	Reason string
}

// The reasons of TurnResult.Reason.
const (
	ReasonCompleted = "completed"
	ReasonCancelled = "cancelled"
	ReasonFailed    = "failed"
	ReasonMaxTurns  = "max_turns"
)

// turnReason names a turn's outcome in TurnResult.Reason's words.
func turnReason(oc outcome, term *terminal) string {
	switch oc {
	case outcomeCompleted:
		return ReasonCompleted
	case outcomeCancelled:
		return ReasonCancelled
	}
	if oc == outcomeFailed && term != nil && term.maxTurns {
		return ReasonMaxTurns
	}
	return ReasonFailed
}

// parser reads one CLI's stream into facts.
type parser interface {
	// beginTurn resets the per-turn state for turn n (1-based).
	beginTurn(n int, prompt string) []fact
	// line parses one stdout line; owned says that the line is the
	// parser's for good (nobody changes it), so that its facts may share
	// its memory.
	line(raw []byte, owned bool) ([]fact, error)
	// terminal is the current turn's terminal event, nil until read.
	terminal() *terminal
	// sessionID is the CLI's session id, "" until known.
	sessionID() string
}

// renderer turns facts into a profile's events.
type renderer[E any] interface {
	render(f fact) []E
}

// NewUnified returns a translator from agent's stream to unified events.
func NewUnified(agent Agent, opts Options) (Translator[unified.Event], error) {
	p, err := newParser(agent, opts)
	if err != nil {
		return nil, err
	}
	return newCore[unified.Event](agent, p, newUnifiedRenderer(agent, opts)), nil
}

// NewShim returns a translator from agent's stream to the shim
// stream.
func NewShim(agent Agent, opts Options) (Translator[ShimEvent], error) {
	p, err := newParser(agent, opts)
	if err != nil {
		return nil, err
	}
	return newCore[ShimEvent](agent, p, newShimRenderer(agent, opts)), nil
}

func newParser(agent Agent, opts Options) (parser, error) {
	switch agent {
	case Claude:
		return newClaudeParser(opts), nil
	case Codex:
		return newCodexParser(opts), nil
	case Gemini:
		return newGeminiParser(opts), nil
	}
	return nil, fmt.Errorf("reference: no translator for agent %q", agent)
}

// core is the Translator: a parser, a renderer, and the state between them.
type core[E any] struct {
	agent Agent
	p     parser
	r     renderer[E]

	started, ended bool
	turn           int

	// Tool ids: every raw id the CLI used maps to the unique id handed out
	// (the raw id itself unless it was already used); open lists the tools
	// started and not ended, in start order.
	used  map[string]bool
	alias map[string]string
	open  []string
	names map[string]string // unique id → raw id, for open tools

	last    outcome
	lastErr string
	total   *usage
}

func newCore[E any](agent Agent, p parser, r renderer[E]) *core[E] {
	return &core[E]{agent: agent, p: p, r: r, used: map[string]bool{}, alias: map[string]string{}, names: map[string]string{}}
}

// Agent implements Translator.
func (c *core[E]) Agent() Agent { return c.agent }

// SessionID implements Translator.
func (c *core[E]) SessionID() string { return c.p.sessionID() }

// Terminal implements Translator.
func (c *core[E]) Terminal() bool { return c.p.terminal() != nil }

// BeginTurn implements Translator.
func (c *core[E]) BeginTurn(prompt string) []E {
	c.turn++
	out := c.r.render(factTurnBegin{turn: c.turn, prompt: prompt})
	for _, f := range c.p.beginTurn(c.turn, prompt) {
		out = append(out, c.emit(f)...)
	}
	return out
}

// Line implements Translator.
func (c *core[E]) Line(line []byte) ([]E, error) { return c.line(line, false) }

// ownedLine implements ownedLiner.
func (c *core[E]) ownedLine(line []byte) ([]E, error) { return c.line(line, true) }

// ownedLiner is a Translator that can be handed a line for good: one that
// nobody changes once it is translated (the Session's stdout lines, which
// the linesplit.Splitter hands over). Its events and state may then share the
// line's memory: a 64 MiB string in it is not copied out.
type ownedLiner[E any] interface {
	ownedLine(line []byte) ([]E, error)
}

func (c *core[E]) line(line []byte, owned bool) ([]E, error) {
	facts, err := c.p.line(line, owned)
	var out []E
	for _, f := range facts {
		out = append(out, c.emit(f)...)
	}
	return out, err
}

// emit passes one parser fact to the renderer, after the session and tool
// bookkeeping: the session starts once, nothing follows its end, tool ids
// are unique, and tool events name tools that are open.
func (c *core[E]) emit(f fact) []E {
	if c.ended {
		return nil
	}
	var out []E
	if s, ok := f.(factSession); ok {
		if c.started {
			return nil
		}
		c.started = true
		return c.r.render(s)
	}
	if !c.started {
		// Content before the CLI announced its session: start it with
		// what is known.
		c.started = true
		out = c.r.render(factSession{id: c.p.sessionID()})
	}
	switch t := f.(type) {
	case factToolStart:
		t.id = c.startTool(t.id)
		f = t
	case factToolProgress:
		id, ok := c.openID(t.id)
		if !ok {
			return out
		}
		t.id = id
		f = t
	case factToolEnd:
		id, ok := c.openID(t.id)
		if !ok {
			return out
		}
		c.closeTool(id)
		t.id = id
		f = t
	}
	return append(out, c.r.render(f)...)
}

// startTool hands out a unique id for raw: raw itself, or raw#<turn>
// (then raw#<turn>.<n>) when raw was already used in this session.
func (c *core[E]) startTool(raw string) string {
	id := raw
	if c.used[id] {
		id = raw + "#" + strconv.Itoa(c.turn)
		for n := 2; c.used[id]; n++ {
			id = raw + "#" + strconv.Itoa(c.turn) + "." + strconv.Itoa(n)
		}
	}
	c.used[id] = true
	c.alias[raw] = id
	c.names[id] = raw
	c.open = append(c.open, id)
	return id
}

// openID is the unique id of the open tool the CLI calls raw.
func (c *core[E]) openID(raw string) (string, bool) {
	id, ok := c.alias[raw]
	if !ok {
		return "", false
	}
	if _, open := c.names[id]; !open {
		return "", false
	}
	return id, true
}

func (c *core[E]) closeTool(id string) {
	delete(c.names, id)
	for i, o := range c.open {
		if o == id {
			c.open = append(c.open[:i], c.open[i+1:]...)
			return
		}
	}
}

// EndTurn implements Translator.
func (c *core[E]) EndTurn(end TurnEnd) ([]E, TurnResult) {
	term := c.p.terminal()
	oc, errText := judge(c.agent, term, end)
	// No turn ends the session, whatever became of it (a failure, the
	// watchdog's timeout, an interrupt): the next turn resumes the
	// session the CLI announced (Codex and Gemini in a new process,
	// Claude in a new one when its process is gone), or, when the CLI
	// announced none, starts the one asked for or a new one. A caller's
	// next turn works after any turn (docs/protocols/unified.md#session-resume).
	over := false
	res := TurnResult{
		OK:          oc == outcomeCompleted,
		Error:       errText,
		Interrupted: oc == outcomeCancelled,
		TimedOut:    oc == outcomeTimeout,
		Reason:      turnReason(oc, term),
	}
	if c.ended {
		res.SessionID, res.SessionEnded = c.SessionID(), true
		if res.OK {
			res.OK, res.Error, res.Reason = false, "the session has ended", ReasonFailed
		}
		return nil, res
	}
	var out []E
	if len(c.open) > 0 {
		why := ErrToolLeftOpen
		switch oc {
		case outcomeCancelled:
			why = "interrupted"
		case outcomeTimeout:
			why = "timed out"
		}
		out = append(out, c.closeOpen(why)...)
	}
	if term != nil && term.usage != nil {
		if c.total == nil {
			c.total = &usage{}
		}
		c.total.add(term.usage)
	}
	c.last, c.lastErr = oc, errText
	if !c.started {
		// The CLI wrote nothing that starts the session (it failed before
		// its first line, or wrote only its terminal event): start it with
		// what is known, so the caller sees the turn end (a shim's error
		// and result: the shim contract says "emit result even after errors").
		c.started = true
		out = append(out, c.r.render(factSession{id: c.p.sessionID()})...)
	}
	if c.started {
		out = append(out, c.r.render(factTurnEnd{outcome: oc, term: term, errText: errText, sessionOver: over})...)
	}
	if over {
		out = append(out, c.endSession(reasonOf(oc), errText)...)
	}
	res.SessionID, res.SessionEnded = c.SessionID(), over
	return out, res
}

// judge combines the terminal event and the driver's view into the turn's
// outcome and error text.
func judge(agent Agent, term *terminal, end TurnEnd) (outcome, string) {
	switch {
	case end.TimedOut:
		msg := string(agent) + " timed out"
		if end.Err != nil {
			msg = end.Err.Error()
		}
		return outcomeTimeout, msg
	case term != nil && !term.failed:
		if end.Err != nil {
			return outcomeFailed, end.Err.Error()
		}
		return outcomeCompleted, ""
	case term != nil && (term.aborted || end.Interrupted):
		return outcomeCancelled, "interrupted"
	case term != nil:
		msg := term.errText
		if msg == "" {
			msg = string(agent) + " reported a failed turn"
		}
		return outcomeFailed, msg
	case end.Interrupted:
		return outcomeCancelled, "interrupted"
	case end.Err != nil:
		return outcomeFailed, end.Err.Error()
	}
	return outcomeFailed, string(agent) + " ended the turn without its terminal event"
}

func reasonOf(oc outcome) unified.Reason {
	switch oc {
	case outcomeFailed:
		return unified.ReasonFailed
	case outcomeCancelled:
		return unified.ReasonCancelled
	case outcomeTimeout:
		return unified.ReasonTimeout
	}
	return unified.ReasonCompleted
}

// EndSession implements Translator.
func (c *core[E]) EndSession(err error) []E {
	if c.ended {
		return nil
	}
	reason, msg := reasonOf(c.last), c.lastErr
	if err != nil {
		reason, msg = unified.ReasonFailed, err.Error()
	}
	if reason == unified.ReasonCompleted {
		msg = ""
	}
	return c.endSession(reason, msg)
}

func (c *core[E]) endSession(reason unified.Reason, msg string) []E {
	var out []E
	if !c.started {
		if c.turn == 0 {
			// No turn was ever begun (the caller closed at once): there
			// is no session to report.
			c.ended = true
			return nil
		}
		// The CLI failed before it wrote a line (it died, or never ran):
		// start the session with what is known, so the caller sees it end
		// instead of waiting for a stream that never comes.
		c.started = true
		out = c.r.render(factSession{id: c.p.sessionID()})
	}
	out = append(out, c.closeOpen(ErrToolLeftOpenAtSessionEnd)...)
	c.ended = true
	return append(out, c.r.render(factSessionEnd{reason: reason, errText: msg, total: c.total})...)
}

// ErrToolLeftOpen and ErrToolLeftOpenAtSessionEnd are the errors of the
// toolCompleted the translation synthesizes for a tool the CLI started and
// never completed, in a turn (or session) that ended without being
// interrupted or timing out. The CLI itself reported no failure: Codex
// leaves a command it runs in the background open when its turn completes.
// The lossless checks tell such a synthesized failure apart from one the
// CLI reported.
const (
	ErrToolLeftOpen             = "the turn ended before the tool completed"
	ErrToolLeftOpenAtSessionEnd = "the session ended before the tool completed"
)

// closeOpen completes every open tool as failed, with why as the error.
func (c *core[E]) closeOpen(why string) []E {
	var out []E
	for _, id := range append([]string(nil), c.open...) {
		c.closeTool(id)
		out = append(out, c.r.render(factToolEnd{id: id, ok: false, errText: why})...)
	}
	return out
}
