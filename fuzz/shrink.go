package fuzz

import (
	"regexp"
	"strings"

	"github.com/agentconform/agentconform/fakecli/faults"
	"github.com/agentconform/agentconform/transcript"
)

// Shrink reduces a failing input to the smallest case that still breaks
// the same property: first the list of mutations, then the fixture's
// stdout and stderr lines (the mutations re-applied to what is left),
// then, when the step faults can be written into the transcript without
// losing the failure, the lines of that transcript. It returns the
// crasher to save; its failure is the one the smallest case shows.
func Shrink(t Target, in Input, first *Failure) *Crasher {
	prop, sig := first.Property, signature(first)
	last := first
	fails := func(c Case) bool {
		f := t.Check(c)
		if f != nil && signature(f) == sig {
			last = f
			return true
		}
		return false
	}
	// with is the case of a transcript (the fixture, or what is left of
	// it) with mutations: the JSON-RPC edits among them made to it, the
	// faults applied by the fakes.
	with := func(tr *transcript.Transcript, muts []Mutation) Case {
		c, _ := caseFor(t, Input{Fixture: in.Fixture, Seed: in.Seed, Mutations: muts})
		c.Transcript = applyEdits(tr, muts, in.Seed)
		if c.Base != nil {
			c.Base = tr
		}
		return c
	}
	if _, err := caseFor(t, in); err != nil {
		return nil
	}
	orig := loadedFixtures()[in.Fixture]

	// 1. The mutations.
	keep := ddmin(len(in.Mutations), func(keep []bool) bool {
		return fails(with(orig, pick(in.Mutations, keep)))
	})
	muts := pick(in.Mutations, keep)

	// 2. The fixture's own lines.
	tr := orig
	if idx := removable(tr.Steps); len(idx) > 0 {
		keep := ddmin(len(idx), func(keep []bool) bool {
			return fails(with(withoutSteps(tr, idx, keep), muts))
		})
		tr = withoutSteps(tr, idx, keep)
	}
	c := with(tr, muts)
	fails(c) // the failure of the case as it now stands

	cr := &Crasher{Transcript: c.Transcript, Meta: CrasherMeta{
		Target: t.Name(), Property: prop, Message: last.Message, Faults: c.Faults, Seed: c.Seed,
		Interrupt: c.Interrupt, Permission: c.Permission, Base: c.Base != nil, Edits: c.Edits,
		Input: Input{Fixture: in.Fixture, Seed: in.Seed, Mutations: muts}.String(),
	}}
	if e, ok := t.(*External); ok {
		cr.Meta.Adapter, cr.Meta.Profile = e.Command, e.opts.Profile
	}

	// 3. The step faults written into the transcript, when the failure
	// does not need the unmutated transcript to show and survives it.
	if c.Base == nil {
		if m, writers, ok := materialize(c); ok {
			mc := c
			mc.Transcript, mc.Faults = m, writers
			if fails(mc) {
				if idx := removable(m.Steps); len(idx) > 0 {
					keep := ddmin(len(idx), func(keep []bool) bool {
						mc2 := mc
						mc2.Transcript = withoutSteps(m, idx, keep)
						return fails(mc2)
					})
					mc.Transcript = withoutSteps(m, idx, keep)
					fails(mc)
				}
				cr.Transcript = mc.Transcript
				cr.Meta.Faults = writers
				cr.Meta.Materialized = true
				cr.Meta.Message = last.Message
			}
		}
	}
	return cr
}

// signature is what makes two failures the same while shrinking: the
// property and the first line of the message with its quoted strings and
// numbers blanked out (ids and counts change as the case shrinks; what
// broke must not, or shrinking slides into another failure).
func signature(f *Failure) string {
	return f.Property + ": " + sigStrip.ReplaceAllString(firstLine(f.Message), "_")
}

var sigStrip = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|[0-9]+`)

// ddmin finds a small subset of n items that still fails (the items kept
// are true): it removes chunks of halving size while the failure stays,
// then single items.
func ddmin(n int, fails func(keep []bool) bool) []bool {
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = true
	}
	if n == 0 {
		return keep
	}
	for size := (n + 1) / 2; ; size /= 2 {
		for start := 0; start < n; start += size {
			trial := append([]bool(nil), keep...)
			changed := false
			for i := start; i < start+size && i < n; i++ {
				if trial[i] {
					trial[i] = false
					changed = true
				}
			}
			if changed && fails(trial) {
				keep = trial
			}
		}
		if size <= 1 {
			return keep
		}
	}
}

func pick[T any](items []T, keep []bool) []T {
	var out []T
	for i, it := range items {
		if keep[i] {
			out = append(out, it)
		}
	}
	return out
}

// removable lists the steps shrinking may remove: what the CLI writes.
func removable(steps []transcript.Step) []int {
	var idx []int
	for i, s := range steps {
		if s.Op == transcript.OpOut || s.Op == transcript.OpErr {
			idx = append(idx, i)
		}
	}
	return idx
}

// withoutSteps returns a copy of t without the removable steps idx[i]
// whose keep[i] is false.
func withoutSteps(t *transcript.Transcript, idx []int, keep []bool) *transcript.Transcript {
	drop := map[int]bool{}
	for i, j := range idx {
		if !keep[i] {
			drop[j] = true
		}
	}
	out := &transcript.Transcript{Header: t.Header, Name: t.Name}
	for i, s := range t.Steps {
		if !drop[i] {
			out.Steps = append(out.Steps, s)
		}
	}
	return out
}

// writerFaults are the faults that act on the bytes written rather than
// on the transcript's steps.
var writerFaults = map[string]bool{"slicer": true, "latency": true, "bandwidth": true, "limit_data": true, "pipe_cut": true}

// materialize writes a case's step faults into its transcript, process
// by process, as the fakes apply them, and returns the transcript and
// the faults left to apply to the bytes (the writer faults).
func materialize(c Case) (*transcript.Transcript, string, bool) {
	plan, err := faults.Parse(c.Faults, c.Seed)
	if err != nil {
		return nil, "", false
	}
	out := &transcript.Transcript{Header: c.Transcript.Header, Name: c.Transcript.Name}
	for i, part := range c.Transcript.Processes() {
		if i > 0 {
			out.Steps = append(out.Steps, transcript.Step{Op: transcript.OpNextProcess})
		}
		out.Steps = append(out.Steps, plan.Steps(c.Transcript.Header.CLI, part)...)
	}
	var writers []string
	for _, item := range splitSpec(c.Faults) {
		name, _, _ := strings.Cut(item, ":")
		if writerFaults[strings.TrimSpace(name)] {
			writers = append(writers, item)
		}
	}
	return out, strings.Join(writers, ";"), true
}

// splitSpec splits a fault spec into its items (at ";" not escaped).
func splitSpec(spec string) []string {
	var items []string
	start := 0
	for i := 0; i < len(spec); i++ {
		switch spec[i] {
		case '\\':
			i++
		case ';':
			items = append(items, spec[start:i])
			start = i + 1
		}
	}
	if start < len(spec) {
		items = append(items, spec[start:])
	}
	return items
}
