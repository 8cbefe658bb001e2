package fakecli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/transcript"
)

// flow tells the step loop what an event or a step did to the replay.
type flow int

const (
	// flowNone: carry on (the step advanced the program counter itself).
	flowNone flow = iota
	// flowJump: the program counter was moved (goto, a signal's goto, an
	// interrupt skipping the rest of a turn); restart at it.
	flowJump
	// flowEnd: the process ends with engine.code.
	flowEnd
)

// engine replays one process part of a transcript.
type engine struct {
	p      *proc
	steps  []transcript.Step
	labels map[string]int
	vars   transcript.Vars
	pc     int
	onSig  map[string]string

	in *lineSource
	// held are stdin lines kept for a later "in" step: user messages that
	// arrived while a turn ran (Claude), and lines that match the next
	// "in" step before the replay reached it.
	held []*stdinMsg

	// rewriteFrom is replaced by rewriteTo in every stdout line: the
	// recorded session id by the process's own (--session-id, a fork).
	rewriteFrom, rewriteTo string

	// c is Claude's state (control layer, turns, interrupts); nil for the
	// other CLIs.
	c *claudeState
	// rpc is the JSON-RPC layer of `codex app-server` and `gemini --acp`
	// (rpclayer.go); nil for the JSONL personalities.
	rpc rpcLayer
	// format turns stream lines into another output format (Claude text
	// and json, Gemini text and json, Codex without --json); nil writes
	// the lines as they are.
	format formatter
	// onStdoutGone is the status when stdout's reader went away.
	onStdoutGone int
	// defaultSignal is the CLI's own answer to a signal.
	defaultSignal func(e *engine, sig syscall.Signal) flow

	// anchor and anchorT re-time the replay at every line the client sent
	// (and at stdin EOF): a step recorded at t runs (t - anchorT), scaled,
	// after the moment anchor (since the process started) that input came,
	// so a turn takes as long as recorded however late its prompt arrives.
	anchor  time.Duration
	anchorT int64

	code int
	// signaled is set once a signal decided how the process ends; the
	// output format then writes no tail.
	signaled bool
	// busy counts steps run since the replay last waited or wrote, to stop
	// a transcript that loops without doing either.
	busy int
	// progress counts what moved the replay on: lines written, stdin lines
	// taken, waits that blocked, signals. eofPass holds its value when an
	// "in" step was passed at stdin EOF, so that coming back to the step
	// with nothing done in between (a loop whose only wait is that read)
	// is seen: no line can come any more, and the replay would spin.
	progress uint64
	eofPass  map[int]uint64
}

// formatter renders a non-stream output format from the stream lines, or
// watches them (passes).
type formatter interface {
	// passes reports whether the lines are written as they are too.
	passes() bool
	// line takes one stdout line of the transcript.
	line(e *engine, text string)
	// end writes what is left when the process ends with code.
	end(e *engine, code int)
}

func newEngine(p *proc, steps []transcript.Step, in *lineSource) *engine {
	if in == nil {
		in = staticLines(nil, 0)
	}
	return &engine{p: p, steps: steps, labels: transcript.Labels(steps), vars: transcript.Vars{}, onSig: map[string]string{},
		in: in, onStdoutGone: 1}
}

// maxBusy is how many steps may run without a wait or a write before the
// replay gives up on a transcript that loops.
const maxBusy = 10_000_000

// run replays the steps and returns the exit status.
func (e *engine) run() int {
	banner := e.p.plan.startBanner() && len(e.steps) > 0 && e.steps[0].Op == transcript.OpOut
	for {
		if e.pc < 0 || e.pc >= len(e.steps) {
			e.finish(0)
			return e.code
		}
		if banner {
			// Written before the fake reads or answers anything: a real
			// CLI prints its start-up banner before its first answer, so
			// an SDK's initialize meets the banner first.
			banner = false
		} else if f := e.poll(); f == flowEnd {
			return e.code
		} else if f == flowJump {
			continue
		}
		st := &e.steps[e.pc]
		if st.T != nil {
			if at, ok := e.p.timing.at(*st.T - e.anchorT); ok {
				if d := e.anchor + at - e.p.elapsed(); d > 0 {
					if f := e.sleep(d); f == flowEnd {
						return e.code
					} else if f == flowJump {
						continue
					}
				}
			}
		}
		if e.busy++; e.busy > maxBusy {
			fmt.Fprintf(e.p.stderr, "agentconform fake %s: the transcript loops at line %d without writing or waiting\n", e.p.cli, st.Line)
			e.finish(exitHarness)
			return e.code
		}
		var f flow
		switch st.Op {
		case transcript.OpOut:
			f = e.out(st)
		case transcript.OpErr:
			f = e.errLine(st)
		case transcript.OpIn:
			f = e.inStep(st)
		case transcript.OpStdinEOF:
			f = e.stdinEOF()
		case transcript.OpDelay:
			f = e.delayStep(st)
		case transcript.OpLabel:
			e.pc++
		case transcript.OpGoto:
			e.pc = e.labels[st.Label]
		case transcript.OpOnSignal:
			for k, v := range st.OnSignal {
				e.onSig[k] = v
			}
			e.pc++
		case transcript.OpNextProcess:
			f = e.finish(0)
		case transcript.OpExit:
			code := st.Code
			if e.c != nil {
				// An exit right after the wait for stdin to close.
				atEOF := e.pc > 0 && e.steps[e.pc-1].Op == transcript.OpStdinEOF
				code = e.c.exitCode(code, atEOF)
			}
			f = e.finish(code)
		case transcript.OpExitSignal:
			f = e.die(st.Signal)
		default:
			e.pc++
		}
		if f == flowEnd {
			return e.code
		}
	}
}

// out writes one stdout line (templates filled).
func (e *engine) out(st *transcript.Step) flow {
	e.progressed()
	text := st.Text
	if len(e.vars) > 0 {
		text = e.vars.Fill(text)
	}
	if e.rewriteFrom != "" && strings.Contains(text, e.rewriteFrom) {
		text = strings.ReplaceAll(text, e.rewriteFrom, e.rewriteTo)
	}
	i := e.pc
	e.pc++
	if e.rpc != nil {
		text = e.rpc.out(e, i, text)
	}
	if e.c != nil {
		text = e.c.editPermLine(e, i, text)
		if e.c.skipOut(e, i, text) {
			return flowNone
		}
		if f := e.c.beforeOut(e, i, text); f != flowNone {
			return f
		}
	}
	if e.format == nil || e.format.passes() {
		if f := e.write(text, !st.NoNewline, st.Line); f != flowNone {
			return f
		}
	}
	if e.format != nil {
		e.format.line(e, text)
	}
	if e.c != nil {
		return e.c.afterOut(e, i, text)
	}
	return flowNone
}

// write writes a stdout line, logs it, and ends the process if stdout is
// gone. stepLine is the transcript line (0 for a synthesized line).
func (e *engine) write(text string, newline bool, stepLine int) flow {
	e.progressed()
	if len(text) >= teeChunk {
		// A line this long may block on a full pipe for good (an adapter
		// that stopped reading, then kills the CLI): what the log holds
		// so far must not die with the process.
		e.p.obs.flush()
	}
	n, err := e.p.out.line(text, newline)
	if e.p.obs != nil {
		e.p.obs.log("out", "bytes", n, "line", stepLine)
	}
	if err != nil {
		return e.stdoutGone()
	}
	if e.p.ended() {
		return e.finish(e.p.endCode)
	}
	return flowNone
}

// stdoutGone ends the process when stdout cannot be written.
func (e *engine) stdoutGone() flow {
	if e.p.ended() {
		return e.finish(e.p.endCode)
	}
	return e.finish(e.onStdoutGone)
}

func (e *engine) errLine(st *transcript.Step) flow {
	e.progressed()
	text := e.fillOut(st.Text)
	if !st.NoNewline {
		text += "\n"
	}
	n, _ := io.WriteString(e.p.stderr, text)
	e.p.obs.log("err", "bytes", n, "line", st.Line)
	e.pc++
	return flowNone
}

// poll handles, without waiting, a fault that ended the process, a signal,
// and (Claude) stdin lines that arrived meanwhile.
func (e *engine) poll() flow {
	var inCh chan inLine
	if (e.c != nil || e.rpc != nil && e.rpc.eager()) && !e.in.eof {
		inCh = e.in.ch
	}
	for {
		select {
		case <-e.p.endCh:
			return e.finish(e.p.endCode)
		case s := <-e.p.sigs:
			if f := e.signal(s); f != flowNone {
				return f
			}
		case l, ok := <-inCh:
			if !ok {
				e.sawEOF()
				inCh = nil
				continue
			}
			if e.rpc != nil {
				if f := e.rpc.dispatch(e, decodeLine(l), nil); f != flowNone {
					return f
				}
				continue
			}
			if f := e.c.dispatch(e, decodeLine(l), nil); f != flowNone {
				return f
			}
		default:
			return flowNone
		}
	}
}

// waitKind is what ends a wait.
type waitKind int

const (
	waitTime waitKind = iota // the deadline only
	waitLine                 // the next stdin line (returned) or EOF
	waitEOF                  // stdin EOF
)

// progressed notes that the replay did something: it wrote, took a line,
// or waited.
func (e *engine) progressed() {
	e.busy = 0
	e.progress++
}

// wait blocks until the deadline (none when d < 0), or the next stdin line
// (waitLine; nil at EOF), or stdin EOF (waitEOF), handling signals and
// (Claude) stdin lines as they come. Stdout is flushed first. Only a wait
// that blocked counts as progress: one that returns at once (a zero
// delay, a read at stdin EOF) does not.
func (e *engine) wait(d time.Duration, kind waitKind) (fl flow, msg *stdinMsg) {
	blocked := false
	defer func() {
		if blocked {
			e.progressed()
		}
	}()
	err := e.p.out.flush()
	e.p.obs.flush()
	if err != nil {
		return e.stdoutGone(), nil
	}
	if kind == waitTime && e.heldForNext() {
		return flowNone, nil
	}
	if e.rpc != nil && e.in.eof && kind != waitEOF {
		// The server's stdin is closed: what it does instead of waiting
		// is its layer's (the app-server exits).
		if f, ok := e.rpc.eof(e, kind); ok {
			return f, nil
		}
	}
	var timer <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	for {
		var inCh chan inLine
		if !e.in.eof && (kind != waitTime || e.c != nil || e.delayCases()) {
			inCh = e.in.ch
		}
		if kind != waitTime && e.in.eof {
			return flowNone, nil // stdin is at EOF: no line will come
		}

		if e.rpc != nil && !e.in.eof {
			inCh = e.in.ch // the app-server reads stdin while it sleeps too
		}
		select {
		case <-e.p.endCh:
			return e.finish(e.p.endCode), nil
		case s := <-e.p.sigs:
			blocked = true
			if f := e.signal(s); f != flowNone {
				return f, nil
			}
		case <-timer:
			blocked = blocked || d > 0
			return flowNone, nil
		case l, ok := <-inCh:
			if !ok {
				e.sawEOF()
				if kind != waitTime {
					return flowNone, nil
				}
				if e.rpc != nil {
					if f, ok := e.rpc.eof(e, kind); ok {
						return f, nil // the server waits no more
					}
				}
				continue
			}
			blocked = true
			m := decodeLine(l)
			if kind == waitLine {
				return flowNone, m
			}
			if e.rpc != nil {
				if kind == waitTime && e.delayCases() && e.matches(&e.steps[e.pc], m) {
					e.held = append(e.held, m) // the delay's case takes it
					return flowNone, nil
				}
				if f := e.rpc.dispatch(e, m, nil); f != flowNone {
					return f, nil
				}
				// What the answer wrote goes out now, not when this wait
				// ends (a wait for stdin's end may never).
				if err := e.p.out.flush(); err != nil {
					return e.stdoutGone(), nil
				}
				if e.heldForNext() {
					return flowNone, nil
				}
				continue
			}
			if e.c == nil {
				if kind == waitTime && e.delayCases() && e.matches(&e.steps[e.pc], m) {
					e.held = append(e.held, m)
					return flowNone, nil
				}
				e.logStdin(m, "ignored")
				continue
			}
			if f := e.c.dispatch(e, m, nil); f != flowNone {
				return f, nil
			}
			if kind == waitTime && e.heldForNext() {
				return flowNone, nil
			}
		}
	}
}

// collectStdin reads stdin lines until EOF, handling signals meanwhile;
// with first >= 0 it gives up when no line arrived within first (Gemini's
// wait for piped input). eof reports whether stdin reached EOF.
func (e *engine) collectStdin(first time.Duration) (f flow, lines []*stdinMsg, eof bool) {
	d := first
	for {
		f, m := e.wait(d, waitLine)
		if f != flowNone {
			return f, lines, false
		}
		if m == nil {
			return flowNone, lines, e.in.eof
		}
		lines = append(lines, m)
		d = -1
	}
}

// sleep waits d, handling everything that happens meanwhile.
func (e *engine) sleep(d time.Duration) flow {
	f, _ := e.wait(d, waitTime)
	return f
}

// sawEOF records that stdin reached EOF.
func (e *engine) sawEOF() {
	if e.in.eof {
		return
	}
	e.in.eof = true
	if !e.in.silent {
		e.p.obs.logAt(e.in.closedAt, "stdin_closed")
	}
}

// inStep waits for the stdin line an "in" step expects.
func (e *engine) inStep(st *transcript.Step) flow {
	if m := e.takeHeld(st); m != nil {
		return e.consume(st, m)
	}
	if e.c != nil {
		if f, done := e.c.beforeIn(e, st); done {
			return f
		}
	}
	for {
		f, m := e.wait(-1, waitLine)
		if f != flowNone {
			return f
		}
		if m == nil {
			if e.rpc != nil {
				if f, ok := e.rpc.eof(e, waitLine); ok {
					return f
				}
			}
			if e.eofAgain() {
				return e.eofLoop()
			}
			return e.inEOF(st)
		}
		if e.matches(st, m) {
			return e.consume(st, m)
		}
		if e.rpc != nil {
			if f := e.rpc.dispatch(e, m, st); f != flowNone {
				return f
			}
			if m := e.takeHeld(st); m != nil {
				return e.consume(st, m)
			}
			continue
		}
		if e.c != nil {
			if f := e.c.dispatch(e, m, st); f != flowNone {
				return f
			}
			if m := e.takeHeld(st); m != nil {
				return e.consume(st, m)
			}
			continue
		}
		// Codex and Gemini read stdin as text; a line the transcript did
		// not expect is reported, and the replay goes on.
		e.protocolError(m, fmt.Sprintf("stdin line does not match the transcript's line %d: %s", st.Line, e.why(st, m)))
		e.pc++
		return flowNone
	}
}

// eofAgain reports whether the replay reached the current "in" step at
// stdin EOF before and has done nothing since: it loops, and its only
// wait, this read, can no longer block.
func (e *engine) eofAgain() bool {
	if e.eofPass == nil {
		e.eofPass = map[int]uint64{}
	}
	if p, ok := e.eofPass[e.pc]; ok && p == e.progress {
		return true
	}
	e.eofPass[e.pc] = e.progress
	return false
}

// eofLoop ends a replay that came back to a read at stdin EOF with nothing
// done in between: stdin's end ends the wait for good, and the process
// exits as the CLI does when its stdin closes.
func (e *engine) eofLoop() flow {
	code := 0
	if e.c != nil {
		code = e.c.exitCode(0, true)
	}
	return e.finish(code)
}

// inEOF handles stdin EOF where an "in" step waits.
func (e *engine) inEOF(st *transcript.Step) flow {
	if st.Optional {
		e.pc++
		if e.c != nil {
			e.c.skipAnswers(e, st)
		}
		return flowNone
	}
	if e.c != nil {
		return e.c.inEOF(e, st)
	}
	e.p.obs.log("protocol_error", "message", fmt.Sprintf("stdin closed where the transcript's line %d expects a line", st.Line))
	e.pc++
	return flowNone
}

// delayStep sleeps a delay_ms step. With cases, a stdin line matching one
// of them (held from before the delay, or arriving during it) ends the
// sleep and the replay jumps to that case's label.
func (e *engine) delayStep(st *transcript.Step) flow {
	if f, ok := e.takeDelayCase(st); ok {
		return f
	}
	if f := e.sleep(e.p.timing.delay(st.DelayMS)); f != flowNone {
		return f
	}
	if f, ok := e.takeDelayCase(st); ok {
		return f
	}
	e.pc++
	return flowNone
}

// delayCases reports whether the replay stands at a delay with cases.
func (e *engine) delayCases() bool {
	return e.pc >= 0 && e.pc < len(e.steps) && e.steps[e.pc].Op == transcript.OpDelay && len(e.steps[e.pc].Cases) > 0
}

// delayCase returns the first case of a delay step that a stdin line
// matches.
func (e *engine) delayCase(st *transcript.Step, m *stdinMsg) (transcript.Case, bool) {
	return matchCase(st, m, e.vars)
}

// matchCase returns the first of a step's cases that a stdin line
// matches (a line that is no JSON object matches none).
func matchCase(st *transcript.Step, m *stdinMsg, vars transcript.Vars) (transcript.Case, bool) {
	if m.obj == nil {
		return transcript.Case{}, false
	}
	for _, c := range st.Cases {
		if ok, _ := transcript.Match(c.Match, m.obj, vars); ok {
			return c, true
		}
	}
	return transcript.Case{}, false
}

// takeDelayCase takes a held line that one of a delay step's cases
// matches: its captures are stored and the replay jumps to the case.
func (e *engine) takeDelayCase(st *transcript.Step) (flow, bool) {
	for i, m := range e.held {
		c, ok := e.delayCase(st, m)
		if !ok {
			continue
		}
		e.held = append(e.held[:i], e.held[i+1:]...)
		e.logStdin(m, st.Line)
		e.reanchor(st)
		for name, ptr := range st.Capture {
			if v, ok := transcript.Lookup(m.obj, ptr); ok {
				e.vars[name] = v
			}
		}
		if e.c != nil {
			if f := e.c.consumed(e, st, m); f == flowEnd {
				return f, true
			}
		}
		if e.rpc != nil {
			if f := e.rpc.consumed(e, st, m); f == flowEnd {
				return f, true
			}
		}
		e.pc = e.labels[c.Goto]
		return flowJump, true
	}
	return flowNone, false
}

// stdinEOF waits for stdin to close.
func (e *engine) stdinEOF() flow {
	st := &e.steps[e.pc]
	if !e.in.eof {
		if f, _ := e.wait(-1, waitEOF); f != flowNone {
			return f
		}
	}
	e.reanchor(st)
	e.pc++
	return flowNone
}

// reanchor re-times the replay at an input step that just completed.
func (e *engine) reanchor(st *transcript.Step) {
	if st.T != nil {
		e.anchor, e.anchorT = e.p.elapsed(), *st.T
	}
}

// matches reports whether a stdin line is what an "in" step expects.
func (e *engine) matches(st *transcript.Step, m *stdinMsg) bool {
	if st.Op == transcript.OpDelay {
		_, ok := e.delayCase(st, m)
		return ok
	}
	if st.Match != nil {
		if m.obj == nil {
			return false
		}
		ok, _ := transcript.Match(st.Match, m.obj, e.vars)
		return ok && (e.rpc == nil || e.rpc.accepts(m))
	}
	return string(m.raw) == e.vars.Fill(st.Text) || strings.TrimSuffix(string(m.raw), "\r") == e.vars.Fill(st.Text)
}

// why explains a mismatch, for the observation log.
func (e *engine) why(st *transcript.Step, m *stdinMsg) string {
	if st.Match == nil {
		return fmt.Sprintf("expected %q", e.vars.Fill(st.Text))
	}
	if m.obj == nil {
		return "expected a JSON object"
	}
	_, why := transcript.Match(st.Match, m.obj, e.vars)
	return why
}

// consume takes a stdin line for an "in" step: captures, then the first
// matching case (or the next step).
func (e *engine) consume(st *transcript.Step, m *stdinMsg) flow {
	e.logStdin(m, st.Line)
	e.reanchor(st)
	if m.obj != nil {
		for name, ptr := range st.Capture {
			if v, ok := transcript.Lookup(m.obj, ptr); ok {
				e.vars[name] = v
			}
		}
	}
	if e.rpc != nil {
		if f := e.rpc.consumed(e, st, m); f != flowNone {
			return f
		}
	}
	if e.c != nil {
		// flowJump: the control layer chose the path (a permission
		// answer, or an interrupt that was waiting for the turn), not
		// the step's cases.
		if f := e.c.consumed(e, st, m); f == flowEnd || f == flowJump {
			return f
		}
	}
	if c, ok := matchCase(st, m, e.vars); ok {
		e.pc = e.labels[c.Goto]
		return flowJump
	}
	e.pc++
	return flowNone
}

// takeHeld removes and returns the first held line the step matches.
func (e *engine) takeHeld(st *transcript.Step) *stdinMsg {
	for i, m := range e.held {
		if e.matches(st, m) {
			e.held = append(e.held[:i], e.held[i+1:]...)
			return m
		}
	}
	return nil
}

// heldForNext reports whether a line the client already sent (other than a
// user message, which waits for its turn) is held for the "in" step after
// the current delay: then the delay is cut short, as the client has moved
// on. Asking at each delay, rather than remembering that some line once
// arrived early, keeps a line held for a later step (an initialize sent
// before its time) from cutting short an unrelated delay.
func (e *engine) heldForNext() bool {
	nx := e.nextIn()
	if nx == nil {
		return false
	}
	for _, m := range e.held {
		if m.typ != "user" && e.matches(nx, m) {
			return true
		}
	}
	return false
}

// nextIn returns the step that reads stdin next without the replay
// waiting for anything else (past out, err, label and on_signal steps and
// delays): an "in" step, or a delay with cases; nil when there is none.
func (e *engine) nextIn() *transcript.Step {
	for i := e.pc; i >= 0 && i < len(e.steps); i++ {
		switch e.steps[i].Op {
		case transcript.OpIn:
			return &e.steps[i]
		case transcript.OpDelay:
			if len(e.steps[i].Cases) > 0 {
				return &e.steps[i]
			}
		case transcript.OpOut, transcript.OpErr, transcript.OpLabel, transcript.OpOnSignal:
		default:
			return nil
		}
	}
	return nil
}

// expectsLater reports whether a step from here on that reads stdin (an
// "in" step, or a delay with cases, on any path) takes m.
func (e *engine) expectsLater(m *stdinMsg) bool {
	for i := e.pc; i >= 0 && i < len(e.steps); i++ {
		st := &e.steps[i]
		if (st.Op == transcript.OpIn || st.Op == transcript.OpDelay && len(st.Cases) > 0) && e.matches(st, m) {
			return true
		}
	}
	return false
}

// logStdin records a stdin line and what took it: a step's line number or
// a word (control, ignored, malformed, unmatched, unread, prompt).
func (e *engine) logStdin(m *stdinMsg, matched any) {
	if e.p.obs == nil || m.synthetic {
		return
	}
	e.p.obs.logAt(m.at, "stdin", "line", string(m.raw), "matched", matched)
	e.p.obs.flush()
}

// protocolError records a stdin line that nothing accepted.
func (e *engine) protocolError(m *stdinMsg, msg string) {
	e.logStdin(m, "unmatched")
	e.p.obs.log("protocol_error", "message", msg)
}

// signal applies the transcript's on_signal action for sig, or the CLI's
// own behaviour.
func (e *engine) signal(s os.Signal) flow {
	sig, _ := s.(syscall.Signal)
	name := signalName(s)
	action := e.onSig[name]
	if action == "" {
		action = "default"
	}
	e.p.obs.log("signal", "signal", name, "action", action)
	// A signal is evidence of what the adapter did (interrupt/passed-on):
	// it is in the log at once, not at the next flush of stdout.
	e.p.obs.flush()
	if action != "ignore" && !strings.HasPrefix(action, "goto:") {
		e.signaled = true
	}
	switch {
	case action == "ignore":
		return flowNone
	case action == "die":
		return e.dieBy(sig)
	case strings.HasPrefix(action, "exit:"):
		var n int
		fmt.Sscanf(action, "exit:%d", &n)
		return e.finish(n)
	case strings.HasPrefix(action, "goto:"):
		if i, ok := e.labels[strings.TrimPrefix(action, "goto:")]; ok {
			e.pc = i
			return flowJump
		}
		return flowNone
	}
	return e.defaultSignal(e, sig)
}

// finish ends the process with code: the output format's tail, then the
// unread stdin lines into the log.
func (e *engine) finish(code int) flow {
	if e.format != nil && !e.p.ended() && !e.signaled {
		e.format.end(e, code)
	}
	e.drainStdin()
	e.in.close()
	e.code = code
	return flowEnd
}

// die ends the process by the signal a transcript names.
func (e *engine) die(name string) flow {
	sig, ok := signalByName(name)
	if !ok {
		return e.finish(exitHarness)
	}
	return e.dieBy(sig)
}

// dieBy ends the process by sig: after the output is flushed, the process
// kills itself (proc.finish).
func (e *engine) dieBy(sig syscall.Signal) flow {
	e.drainStdin()
	e.in.close()
	e.p.dieSig = sig
	e.code = 128 + int(sig)
	return flowEnd
}

// drainStdin logs the stdin lines nobody took.
func (e *engine) drainStdin() {
	if e.p.obs == nil {
		return
	}
	for _, m := range e.held {
		e.logStdin(m, "unread")
	}
	e.held = nil
	take := func(l inLine, ok bool) bool {
		if !ok {
			e.sawEOF()
			return false
		}
		e.logStdin(&stdinMsg{inLine: l}, "unread")
		return true
	}
	var wait <-chan time.Time
	for !e.in.eof {
		select {
		case l, ok := <-e.in.ch:
			if !take(l, ok) {
				return
			}
			continue
		default:
		}
		// Nothing taken yet: what is already in the pipe (a line, or the
		// EOF of an adapter that closed stdin just before it signalled)
		// is waited for, briefly, so that the log says it came.
		if !stdinPending(e.p.stdin) {
			return
		}
		if wait == nil {
			wait = time.After(stdinDrainWait)
		}
		select {
		case l, ok := <-e.in.ch:
			if !take(l, ok) {
				return
			}
		case <-wait:
			return
		}
	}
}

// stdinDrainWait bounds how long an ending fake waits for what is already
// in its stdin pipe to reach its log.
const stdinDrainWait = 200 * time.Millisecond

// fillOut fills a line's templates and puts the process's session id for
// the recorded one, as out does.
func (e *engine) fillOut(text string) string {
	if len(e.vars) > 0 {
		text = e.vars.Fill(text)
	}
	if e.rewriteFrom != "" {
		text = strings.ReplaceAll(text, e.rewriteFrom, e.rewriteTo)
	}
	return text
}
