// Package conformance runs adapters (programs that drive AI coding CLIs)
// against the fake CLIs and judges what they do: every case starts the
// adapter once, drives it with the harness protocol (HARNESS.md), lets the
// fakes replay a fixture (with faults, if the case asks), collects what the
// adapter wrote, what the fakes saw and how every process ended, and runs
// the checks that apply. The Go entry point is TestAdapter, in the style of
// fstest.TestFS; the command is `agentconform run`.
package conformance

import (
	"fmt"
	"strings"

	"github.com/agentconform/agentconform/finding"
)

// Verdict is the outcome of one check on one case.
type Verdict string

// The verdicts, from best to worst.
const (
	// Pass: the requirement holds.
	Pass Verdict = "PASS"
	// Skip: the check does not apply to what the adapter declares it supports.
	Skip Verdict = "SKIP"
	// Informational: recorded, never a failure.
	Informational Verdict = "INFORMATIONAL"
	// NonStrict: a SHOULD requirement failed (a failure only under --strict).
	NonStrict Verdict = "NON-STRICT"
	// Fail: a MUST requirement failed.
	Fail Verdict = "FAIL"
	// Crash: the adapter died (signal, or exit without its end record)
	// where the case did not make it.
	Crash Verdict = "CRASH"
	// Timeout: the case did not finish within its deadline.
	Timeout Verdict = "TIMEOUT"
)

// Failed reports whether v fails the run: FAIL, CRASH and TIMEOUT always,
// NON-STRICT under strict.
func (v Verdict) Failed(strict bool) bool {
	switch v {
	case Fail, Crash, Timeout:
		return true
	case NonStrict:
		return strict
	}
	return false
}

// Family groups checks (and names the JUnit test suites of reports).
type Family string

// The check families of the catalogue.
const (
	FamilyOutput     Family = "output"
	FamilyLossless   Family = "lossless"
	FamilyInvocation Family = "invocation"
	FamilyControl    Family = "control"
	FamilyInterrupt  Family = "interrupt"
	FamilyBuffer     Family = "buffer"
	FamilyLifecycle  Family = "lifecycle"
	FamilyForward    Family = "forward"
)

// Families lists the families in catalogue order.
var Families = []Family{FamilyOutput, FamilyLossless, FamilyInvocation, FamilyControl, FamilyInterrupt, FamilyBuffer, FamilyLifecycle, FamilyForward}

// Check is one requirement an adapter must meet, with a stable
// hierarchical ID ("interrupt/reaps-cli"), the sentence it enforces and
// where that comes from, as h2spec does.
type Check struct {
	finding.Rule
	Family Family
	// Applies says whether the check judges case c given what the adapter
	// declared; when it does not, the reason becomes the SKIP message.
	Applies func(c *Case, h *Hello) (bool, string)
	// Judge evaluates the check on a finished case.
	Judge func(o *Observation) Outcome
}

// Outcome is what a check found.
type Outcome struct {
	// OK is true when the requirement holds.
	OK bool
	// Info marks an outcome that is recorded but never judged (the
	// verdict is INFORMATIONAL).
	Info bool
	// Expected and Actual say what should have happened and what did.
	Expected, Actual string
	// Diff is a readable diff of expected versus actual events, if any.
	Diff string
	// Skip says the check turned out not to apply to what the adapter did
	// (Actual says why): it asked the CLI for text, not a JSON stream.
	Skip bool
}

func pass() Outcome { return Outcome{OK: true} }

func failf(expected, format string, args ...any) Outcome {
	return Outcome{Expected: expected, Actual: fmt.Sprintf(format, args...)}
}

// verdict turns a check's outcome into a verdict.
func verdict(c *Check, out Outcome) Verdict {
	switch {
	case out.Skip:
		return Skip
	case out.Info:
		return Informational
	case out.OK:
		return Pass
	case c.Level == finding.Should:
		return NonStrict
	case c.Level == finding.Info:
		return Informational
	}
	return Fail
}

// Catalog returns every check, ordered by family then ID.
func Catalog() []*Check {
	var out []*Check
	for _, f := range Families {
		for _, c := range catalog {
			if c.Family == f {
				out = append(out, c)
			}
		}
	}
	return out
}

// catalog is filled by the check files' init functions.
var catalog []*Check

func register(c *Check) *Check {
	for _, old := range catalog {
		if old.ID == c.ID {
			panic("conformance: check " + c.ID + " registered twice")
		}
	}
	if !strings.HasPrefix(c.ID, string(c.Family)+"/") {
		panic("conformance: check " + c.ID + " must start with its family " + string(c.Family))
	}
	catalog = append(catalog, c)
	return c
}
