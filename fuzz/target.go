package fuzz

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/agentconform/agentconform/transcript"
)

// A Target runs one case against an adapter and judges the properties.
type Target interface {
	// Name labels the target in reports and crashers ("reference/unified").
	Name() string
	// Check runs the case and returns the first property it breaks, or nil.
	Check(c Case) *Failure
}

// neutralOps are the mutations that change no content the lossless
// property sees: how the bytes are framed and cut into writes, noise that
// is not an event (a banner, stderr), what a signal does, and events or
// fields no adapter knows. With only these, an adapter must hand over the
// same content as for the unmutated fixture.
var neutralOps = map[string]bool{
	"slicer": true, "crlf": true, "no_final_newline": true, "banner": true, "unknown_type": true,
	"unknown_field": true, "stderr_flood": true, "ignore_signal": true, "latency": true, "bandwidth": true,
}

// Neutral reports whether every mutation of in is content-neutral. A
// banner that may end up as an unterminated last line (with
// no_final_newline) is not: it reads as a line cut short, which fails the
// turn.
func (in Input) Neutral() bool {
	neutral := neutralOps
	if in.Agent() == AgentAppServer {
		neutral = appServerNeutral
	}
	banner, unterminated := false, false
	for _, m := range in.Mutations {
		if !neutral[m.Op] {
			return false
		}
		banner = banner || m.Op == "banner"
		unterminated = unterminated || m.Op == "no_final_newline"
	}
	return !(banner && unterminated)
}

// InProcess is a target that runs an adapter in process: no processes,
// the fixture's bytes fed straight into the translator through the
// reference drivers' line splitting and turn logic.
type InProcess struct {
	// Label names the target ("reference/unified").
	Label string
	// Profile is "unified" or "shim".
	Profile string
	// New makes the adapter under test for one session.
	New NewTranslator
	// Oracle, when set, is the reference adapter the one under test is
	// compared with (PropLossless); nil when New is the reference itself.
	Oracle NewTranslator
	// Deadline bounds one execution; 0 means DefaultDeadline.
	Deadline time.Duration
	// KnownAs names the target whose known issues (KNOWN) this one shares:
	// a copy of a reference adapter has the reference's. "" means Label.
	KnownAs string

	baseMu sync.Mutex
	base   map[baseKey]Summary
}

type baseKey struct {
	t    *transcript.Transcript
	perm string
}

// DefaultDeadline bounds one in-process execution. The slowest inputs
// (1 MiB lines, translated and validated) take tens of milliseconds.
const DefaultDeadline = 5 * time.Second

// NewReferenceTarget returns the in-process target of a reference adapter.
func NewReferenceTarget(profile string) (*InProcess, error) {
	tr, err := Reference(profile)
	if err != nil {
		return nil, err
	}
	return &InProcess{Label: "reference/" + profile, Profile: profile, New: tr}, nil
}

// Name implements Target.
func (t *InProcess) Name() string { return t.Label }

// knownAs is the name a target's known issues are filed under.
func knownAs(t Target) string {
	if ip, ok := t.(*InProcess); ok && ip.KnownAs != "" {
		return ip.KnownAs
	}
	return t.Name()
}

// Check implements Target: it runs the case, turns a panic into a
// failure of PropNoPanic, and one that takes longer than the deadline
// into a failure of PropDeadline. An execution that never ends cannot be
// judged in process: a watchdog panics with PropDeadline's name once it
// has run for twice the deadline, which ends the fuzzing worker and makes
// Go's engine save the input.
func (t *InProcess) Check(c Case) (f *Failure) {
	deadline := t.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	start := time.Now()
	stop := watch(start, 2*deadline, c)
	defer stop()
	defer func() {
		if r := recover(); r != nil {
			f = failf(PropNoPanic, "panic: %v\n%s", r, debug.Stack())
		}
		if took := time.Since(start); f == nil && took > deadline {
			f = failf(PropDeadline, "the execution took %s, more than the %s deadline", took.Round(time.Millisecond), deadline)
		}
	}()
	return t.check(c)
}

// check judges one execution.
func (t *InProcess) check(c Case) *Failure {
	run, err := Execute(c, t.New)
	if err != nil {
		return failf(PropNoPanic, "the case could not run: %v", err)
	}
	evs, f := t.judge(run)
	if f != nil {
		return f
	}
	if t.Oracle != nil {
		want, err := Execute(c, t.Oracle)
		if err != nil {
			return failf(PropNoPanic, "the reference could not run: %v", err)
		}
		wevs, _ := decodeEvents(want.Events)
		if d := diffSummaries(summarize(t.Profile, wevs), summarize(t.Profile, evs)); d != "" {
			return failf(PropLossless, "what the adapter handed over differs from the reference translation of the same bytes (-reference +adapter):\n%s", clip(d, 4000))
		}
	}
	if c.Base != nil {
		want, err := t.baseline(c)
		if err != nil {
			return failf(PropNoPanic, "the unmutated case could not run: %v", err)
		}
		if d := diffSummaries(want, summarize(t.Profile, evs)); d != "" {
			return failf(PropLossless, "only content-neutral mutations (%s), yet what the adapter handed over differs from the unmutated run (-unmutated +mutated):\n%s", c.Faults, clip(d, 4000))
		}
	}
	return nil
}

// judge checks the properties one run shows by itself.
func (t *InProcess) judge(run *Run) ([]decoded, *Failure) {
	if run.Err != nil {
		return nil, failf(PropValid, "an event could not be marshalled: %v", run.Err)
	}
	evs, f := decodeEvents(run.Events)
	if f != nil {
		return nil, f
	}
	if f := checkEnds(t.Profile, evs); f != nil {
		return nil, f
	}
	sv, err := validatorFor(t.Profile)
	if err != nil {
		return nil, failf(PropValid, "%v", err)
	}
	if vs := sv.violations(evs, 5); len(vs) > 0 {
		return nil, failf(PropValid, "%s", strings.Join(vs, "\n"))
	}
	if f := checkIDs(t.Profile, evs, run.Input); f != nil {
		return nil, f
	}
	return evs, nil
}

// baseline is the summary of the case's unmutated transcript (cached).
func (t *InProcess) baseline(c Case) (Summary, error) {
	key := baseKey{c.Base, c.Permission}
	t.baseMu.Lock()
	s, ok := t.base[key]
	t.baseMu.Unlock()
	if ok {
		return s, nil
	}
	run, err := Execute(Case{Transcript: c.Base, Permission: c.Permission}, t.New)
	if err != nil {
		return Summary{}, err
	}
	evs, f := decodeEvents(run.Events)
	if f != nil {
		return Summary{}, fmt.Errorf("the unmutated run: %v", f)
	}
	s = summarize(t.Profile, evs)
	// Only fixtures are cached: crashers' bases are one-offs.
	if _, isFixture := loadedFixtures()[c.Base.Name]; isFixture && loadedFixtures()[c.Base.Name] == c.Base {
		t.baseMu.Lock()
		if t.base == nil {
			t.base = map[baseKey]Summary{}
		}
		t.base[key] = s
		t.baseMu.Unlock()
	}
	return s, nil
}

// CheckInput runs a decoded input against a target.
func CheckInput(t Target, in Input) (Case, *Failure) {
	c, err := caseFor(t, in)
	if err != nil {
		return c, failf(PropNoPanic, "%v", err)
	}
	return c, t.Check(c)
}

// caseFor is the case of an input for a target: an external adapter also
// gets the faults that only sleep, which change nothing in process.
func caseFor(t Target, in Input) (Case, error) {
	c, err := CaseOf(in)
	if _, ext := t.(*External); ext && err == nil {
		c.Faults = in.Spec()
	}
	return c, err
}
