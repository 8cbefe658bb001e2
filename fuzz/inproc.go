package fuzz

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fakecli/faults"
	"github.com/agentconform/agentconform/jsonl/linesplit"
	"github.com/agentconform/agentconform/reference"
	"github.com/agentconform/agentconform/transcript"
)

// Translator is an adapter under test in process: the reference
// translators, or a copy of one with a planted bug. It is driven like
// reference.Translator, but hands out its events as JSON lines, so that a
// copy can be written without the reference's event types.
type Translator interface {
	// BeginTurn starts a turn whose prompt is prompt.
	BeginTurn(prompt string) [][]byte
	// Line translates one stdout line; an error means the line was not an
	// event (it is skipped, or ends the turn when it was cut short).
	Line(line []byte) ([][]byte, error)
	// Terminal reports whether the turn's terminal event has been read.
	Terminal() bool
	// EndTurn ends the turn the way its driver saw it end.
	EndTurn(end reference.TurnEnd) ([][]byte, reference.TurnResult)
	// EndSession ends the session; err is a failure of the session.
	EndSession(err error) [][]byte
}

// NewTranslator makes an in-process adapter for one session with agent.
type NewTranslator func(agent reference.Agent) (Translator, error)

// translatorOptions make the reference translators deterministic.
func translatorOptions() reference.Options {
	return reference.Options{
		Clock:      reference.FixedClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		NewID:      reference.CounterIDs("ev-"),
		Cwd:        "/home/user/project",
		Permission: reference.PermissionAllow,
	}
}

// Reference returns the reference adapter of profile ("unified" or "shim")
// as an in-process Translator.
func Reference(profile string) (NewTranslator, error) {
	switch profile {
	case "unified":
		return func(a reference.Agent) (Translator, error) {
			tr, err := reference.NewUnified(a, translatorOptions())
			if err != nil {
				return nil, err
			}
			return &jsonTranslator[unifiedEvent]{tr: tr}, nil
		}, nil
	case "shim":
		return func(a reference.Agent) (Translator, error) {
			tr, err := reference.NewShim(a, translatorOptions())
			if err != nil {
				return nil, err
			}
			return &jsonTranslator[reference.ShimEvent]{tr: tr}, nil
		}, nil
	}
	return nil, fmt.Errorf("fuzz: no reference adapter for profile %q (want unified or shim)", profile)
}

// jsonTranslator marshals a reference translator's events.
type jsonTranslator[E interface{ MarshalJSON() ([]byte, error) }] struct {
	tr  reference.Translator[E]
	err error // the first marshalling error, reported by EndSession's caller
}

func (j *jsonTranslator[E]) lines(evs []E) [][]byte {
	if len(evs) == 0 {
		return nil
	}
	out := make([][]byte, 0, len(evs))
	for _, ev := range evs {
		b, err := ev.MarshalJSON()
		if err != nil {
			if j.err == nil {
				j.err = err
			}
			continue
		}
		out = append(out, b)
	}
	return out
}

func (j *jsonTranslator[E]) BeginTurn(p string) [][]byte { return j.lines(j.tr.BeginTurn(p)) }
func (j *jsonTranslator[E]) Line(l []byte) ([][]byte, error) {
	evs, err := j.tr.Line(l)
	return j.lines(evs), err
}
func (j *jsonTranslator[E]) Terminal() bool { return j.tr.Terminal() }
func (j *jsonTranslator[E]) EndTurn(end reference.TurnEnd) ([][]byte, reference.TurnResult) {
	evs, res := j.tr.EndTurn(end)
	return j.lines(evs), res
}
func (j *jsonTranslator[E]) EndSession(err error) [][]byte { return j.lines(j.tr.EndSession(err)) }

// marshalErr reports the first event that did not marshal, if the
// translator is one of the reference's.
func marshalErr(t Translator) error {
	switch j := t.(type) {
	case *jsonTranslator[unifiedEvent]:
		return j.err
	case *jsonTranslator[reference.ShimEvent]:
		return j.err
	}
	return nil
}

// Run is one execution of an in-process adapter: what it was fed and
// what it handed out.
type Run struct {
	// Input is every byte the CLI wrote to stdout, all processes.
	Input []byte
	// Events are the adapter's events, one JSON object each.
	Events [][]byte
	// Results are the turns' results, in order.
	Results []reference.TurnResult
	// Interrupted is set when the caller interrupted a turn.
	Interrupted bool
	// Err is a failure of the adapter itself (an event it could not
	// marshal), not of the CLI.
	Err error
}

// Case is one execution's script: a transcript, the faults applied to
// each of its processes, and what the caller does.
type Case struct {
	// Transcript is what the CLI does (a fixture, or a saved crasher).
	Transcript *transcript.Transcript
	// Faults is the fault spec applied to every process part, with Seed.
	Faults string
	Seed   int64
	// Interrupt makes the caller interrupt the first turn when the CLI
	// stalls in it, instead of waiting for the turn's deadline.
	Interrupt bool
	// Permission is the caller's permission policy: "allow" or "deny".
	Permission string
	// Base, when set, is the transcript without the (content-neutral)
	// faults: the adapter must hand over the same content for both.
	Base *transcript.Transcript
	// Edits are the JSON-RPC aware edits made to the transcript (a spec
	// of the edit operations, for messages), "" when none: the session's
	// content is then not the fixture's.
	Edits string
}

// CaseOf turns a decoded input into its case.
func CaseOf(in Input) (Case, error) {
	t, ok := loadedFixtures()[in.Fixture]
	if !ok {
		return Case{}, fmt.Errorf("fuzz: no fixture %q", in.Fixture)
	}
	c := Case{Transcript: applyEdits(t, in.Mutations, in.Seed), Faults: in.spec(false), Seed: in.Seed, Interrupt: in.Interrupts(),
		Permission: permissionOf(in.Fixture), Edits: in.edits()}
	if len(in.Mutations) > 0 && in.Neutral() {
		c.Base = t
	}
	return c, nil
}

// permissionOf is the policy a fixture's case runs with, as in the
// conformance cases: deny for the deny fixtures (Claude's permission-deny,
// the app-server's approval-decline), allow elsewhere.
func permissionOf(name string) string {
	if strings.HasSuffix(name, "permission-deny") || strings.HasSuffix(name, "approval-decline") {
		return "deny"
	}
	return "allow"
}

// errCut is the turn error of a last line cut short.
var errCut = errors.New("output ended in the middle of a line")

// Execute runs an in-process adapter through a case: it plays each
// process of the transcript with the faults (emu), cuts the bytes into
// lines as the reference drivers do, and drives the translator turn by
// turn as the reference session does, including the interrupt, the
// deadline of a stalled turn and the end of the session.
func Execute(c Case, newTr NewTranslator) (*Run, error) {
	agent, err := reference.ParseAgent(c.Transcript.Header.CLI)
	if err != nil {
		return nil, err
	}
	plan, err := faults.Parse(c.Faults, c.Seed)
	if err != nil {
		return nil, err
	}
	tr, err := newTr(agent)
	if err != nil {
		return nil, err
	}
	perm := c.Permission
	if perm == "" {
		perm = "allow"
	}
	d := &driver{tr: tr, run: &Run{}, interrupt: c.Interrupt}
	ps := conformance.Prompts(c.Transcript)
	parts := c.Transcript.Processes()
	if agent == reference.Claude {
		d.claude(newEmu("claude", parts[0], plan, perm), ps)
	} else {
		for i, part := range parts {
			if !d.turnProc(newEmu(string(agent), part, plan, perm), ps[min(i, len(ps)-1)], i == 0) {
				break
			}
		}
		d.out(tr.EndSession(nil))
	}
	d.run.Input = d.input()
	d.run.Err = marshalErr(tr)
	return d.run, nil
}

// driver feeds one translator.
type driver struct {
	tr        Translator
	run       *Run
	interrupt bool
	sp        linesplit.Splitter
	cutErr    error
	procs     []*emu // the processes pumped, in order: their stdout is the input
}

// input is every byte the processes wrote to stdout, in order (the one
// process's own record when there is one).
func (d *driver) input() []byte {
	if len(d.procs) == 1 {
		return d.procs[0].rec.all
	}
	var in []byte
	for _, e := range d.procs {
		in = append(in, e.rec.all...)
	}
	return in
}

func (d *driver) out(evs [][]byte) { d.run.Events = append(d.run.Events, evs...) }

// pump hands the emulated process's new writes to line, as lines, and
// at its end the unterminated rest as a partial line.
func (d *driver) pump(e *emu, line func(l []byte, partial bool)) {
	if len(d.procs) == 0 || d.procs[len(d.procs)-1] != e {
		d.procs = append(d.procs, e)
	}
	e.rec.take(func(chunk []byte) {
		d.sp.Feed(chunk, func(l []byte) { line(l, false) })
	})
	if e.done {
		d.sp.Flush(line)
	}
}

// feed translates one line, remembering a cut last line.
func (d *driver) feed(l []byte, partial bool) {
	evs, err := d.tr.Line(bytes.Clone(l))
	d.out(evs)
	if err != nil && partial {
		d.cutErr = errCut
	}
}

// turnProc runs one Codex or Gemini turn (one process). It reports
// whether the session goes on.
func (d *driver) turnProc(e *emu, prompt string, first bool) bool {
	d.out(d.tr.BeginTurn(prompt))
	d.cutErr = nil
	e.run()
	d.pump(e, d.feed)
	end := reference.TurnEnd{}
	if e.stalled {
		if first && d.interrupt {
			end.Interrupted = true
			d.run.Interrupted = true
			e.interrupt()
			d.pump(e, d.feed)
		}
		if e.stalled {
			e.stop()
			if !end.Interrupted {
				end.TimedOut = true
			}
			d.pump(e, d.feed)
		}
	}
	if end.Err = e.exitErr(); end.Err == nil && !end.TimedOut {
		end.Err = d.cutErr
	}
	if end.TimedOut {
		end.Err = errors.New(e.cli + ": turn stopped: deadline exceeded")
	}
	evs, res := d.tr.EndTurn(end)
	d.out(evs)
	d.run.Results = append(d.run.Results, res)
	return !res.SessionEnded && !end.Interrupted
}

// claude runs the one Claude process through its turns: a turn ends at
// its terminal event (result), the next starts with the next prompt, and
// lines after the last turn are still fed, as the reference driver does.
func (d *driver) claude(e *emu, ps []string) {
	turn, inTurn, ended := 0, false, false
	begin := func() {
		d.out(d.tr.BeginTurn(ps[turn]))
		turn++
		inTurn = true
	}
	endTurn := func(end reference.TurnEnd) {
		evs, res := d.tr.EndTurn(end)
		d.out(evs)
		d.run.Results = append(d.run.Results, res)
		inTurn = false
		if res.SessionEnded || end.Interrupted {
			ended = true
		}
	}
	line := func(l []byte, partial bool) {
		if ended {
			return
		}
		d.feed(l, partial)
		if inTurn && d.tr.Terminal() {
			endTurn(reference.TurnEnd{})
			if !ended && turn < len(ps) {
				begin()
			}
		}
	}
	begin()
	e.run()
	d.pump(e, line)
	if e.stalled && inTurn && !ended {
		if turn == 1 && d.interrupt {
			d.run.Interrupted = true
			e.interrupt()
			d.pump(e, func(l []byte, partial bool) {
				d.feed(l, partial)
			})
			if e.stalled {
				e.stop()
			}
			d.pump(e, d.feed)
			endTurn(reference.TurnEnd{Interrupted: true, Err: e.exitErr()})
		} else {
			e.stop()
			d.pump(e, line)
			if inTurn {
				endTurn(reference.TurnEnd{TimedOut: true, Err: errors.New("claude: turn stopped: deadline exceeded")})
			}
		}
	}
	if e.stalled { // stalled between turns: the caller closes, the CLI is stopped
		e.stop()
		d.pump(e, line)
	}
	var xerr error
	if e.done {
		xerr = e.exitErr()
	}
	if inTurn && !ended {
		err := xerr
		if err == nil {
			err = d.cutErr
		}
		endTurn(reference.TurnEnd{Err: err})
	}
	d.out(d.tr.EndSession(xerr))
}
