package fuzz

import (
	"math/rand"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// randomInputs returns n inputs decoded from random bytes, the same on
// every run.
func randomInputs(n int) []Input {
	rng := rand.New(rand.NewSource(7))
	out := make([]Input, n)
	for i := range out {
		data := make([]byte, 9+rng.Intn(16))
		rng.Read(data)
		out[i] = Decode(data, nil)
	}
	return out
}

// TestValidatorAgrees holds the in-process validator to validate.Stream:
// on the reference adapters' output for every seed and for random
// mutations, and on outputs a broken adapter would write, both find
// violations or neither does.
func TestValidatorAgrees(t *testing.T) {
	var inputs []Input
	for _, s := range Seeds(InProcessSeeds) {
		if len(s.Input.Mutations) == 0 {
			inputs = append(inputs, s.Input)
		}
	}
	inputs = append(inputs, randomInputs(150)...)
	for _, profile := range []string{"unified", "shim"} {
		tr, _ := Reference(profile)
		sv, err := validatorFor(profile)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range inputs {
			c, _ := CaseOf(in)
			run, err := Execute(c, tr)
			if err != nil {
				t.Fatal(err)
			}
			variants := [][][]byte{run.Events}
			if n := len(run.Events); n > 2 {
				variants = append(variants,
					run.Events[1:],   // no session start
					run.Events[:n-1], // no end
					append(append([][]byte{}, run.Events...), run.Events[n/2]), // a repeated event last
					append([][]byte{[]byte(`{"type":"nonsense"}`)}, run.Events...),
				)
			}
			for i, evs := range variants {
				dec, f := decodeEvents(evs)
				if f != nil {
					t.Fatal(f)
				}
				mine := sv.violations(dec, 10)
				official, err := officialViolations(profile, evs)
				if err != nil {
					t.Fatal(err)
				}
				if (len(mine) == 0) != (len(official) == 0) {
					t.Errorf("%s %s variant %d: in-process validator says %q, validate.Stream says %q", profile, in, i, mine, official)
				}
			}
		}
	}
}

// TestSeedsHold runs every seed against both reference adapters: a seed
// that breaks a property is a bug (or a known issue, listed in KNOWN).
func TestSeedsHold(t *testing.T) {
	known, err := LoadKnown(CrashersDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{"unified", "shim"} {
		target, _ := NewReferenceTarget(profile)
		for _, s := range Seeds(InProcessSeeds) {
			if _, f := CheckInput(target, s.Input); f != nil {
				if k := MatchKnown(known, target.Name(), f); k != "" {
					t.Logf("%s %s: known issue %s", profile, s.Name, k)
					continue
				}
				t.Errorf("%s %s (%s): %v", profile, s.Name, s.Input, f)
			}
		}
	}
}

// TestShrink checks that a failure shrinks to a crasher that saves, loads
// back the same, still fails the same property, and replays.
func TestShrink(t *testing.T) {
	target, err := plantedTarget("after-unknown", "unified")
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Fixture: "codex/multi-tool", Seed: 3, Mutations: []Mutation{
		{Op: "crlf"}, {Op: "unknown_type", Params: []Param{{"after", "3"}}}, {Op: "slicer", Params: []Param{{"max", "7"}}},
		{Op: "unknown_field"},
	}}
	_, f := CheckInput(target, in)
	if f == nil {
		t.Fatal("the planted bug does not show on this input")
	}
	c := Shrink(target, in, f)
	if c == nil {
		t.Fatal("no crasher")
	}
	if len(c.Transcript.Steps) >= len(loadedFixtures()[in.Fixture].Steps) {
		t.Errorf("not shrunk: %d steps", len(c.Transcript.Steps))
	}
	if strings.Contains(c.Meta.Input, "crlf") || strings.Contains(c.Meta.Input, "slicer") {
		t.Errorf("mutations not needed for the failure were kept: %s", c.Meta.Input)
	}
	dir := t.TempDir()
	p, err := c.Save(dir)
	if err != nil {
		t.Fatal(err)
	}
	back, err := LoadCrasher(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Meta, c.Meta) {
		t.Errorf("metadata changed on the way through the file:\n%+v\n%+v", c.Meta, back.Meta)
	}
	if f := target.Check(back.Case()); f == nil || f.Property != c.Meta.Property {
		t.Errorf("the saved crasher does not break %s: %v", c.Meta.Property, f)
	}
	if r := Replay(p, "", ExternalOptions{}); r.Verdict != Error {
		t.Errorf("a planted target's crasher replays as %s, want ERROR (no such target outside the test)", r.Verdict)
	}
	// The same case against the reference: every property holds.
	c.Meta.Target = "reference/unified"
	if _, err := c.Save(dir); err != nil {
		t.Fatal(err)
	}
	if r := Replay(c.Path, "", ExternalOptions{}); r.Verdict != Fixed {
		t.Errorf("replay against the reference: %s %s", r.Verdict, r.Detail)
	}
	t.Logf("shrunk to %d steps: %s\n%s", len(c.Transcript.Steps), c.Meta.Input, ReplayCommand(c))
}

// TestCrashers replays every saved crasher of the reference adapters:
// each is FIXED, or FAILED and listed in KNOWN as an open issue.
func TestCrashers(t *testing.T) {
	paths, err := Crashers(CrashersDir)
	if err != nil {
		t.Fatal(err)
	}
	known, err := LoadKnown(CrashersDir)
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]bool{}
	for _, k := range known {
		open[k.Name] = true
	}
	for _, p := range paths {
		c, err := LoadCrasher(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !strings.HasPrefix(c.Meta.Target, "reference/") {
			continue // external crashers need their adapter: agentconform fuzz replay
		}
		r := Replay(p, "", ExternalOptions{})
		switch {
		case r.Verdict == Fixed && open[filepath.Base(p)]:
			t.Errorf("%s is fixed: take it off %s", p, KnownFile)
		case r.Verdict == Failed && open[filepath.Base(p)]:
			t.Logf("%s: open issue: %s", filepath.Base(p), firstLine(r.Detail))
		case r.Verdict != Fixed:
			t.Errorf("%s: %s: %s", p, r.Verdict, r.Detail)
		}
	}
}

// TestIDsFromInput checks the id property's derivation rules.
func TestIDsFromInput(t *testing.T) {
	input := []byte(`{"id":"toolu_1","x":"caf\u00e9 \"q\"","bad":"a` + "\xff\xfe" + `b"}`)
	for id, want := range map[string]bool{
		"toolu_1": true, "toolu_1#2": true, "toolu_1#2.3": true, "toolu_1.2": true, "toolu_2": false,
		"toolu_1#x": false, `café "q"`: false, "a\uFFFD\uFFFDb": true, "": true,
	} {
		if id == "" {
			continue
		}
		if got := idFromInput(id, input); got != want {
			t.Errorf("idFromInput(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestExecuteDrivesTurns checks the in-process driver on a two-turn
// Codex session: one process per turn, the session id carried over.
func TestExecuteDrivesTurns(t *testing.T) {
	tr, _ := Reference("unified")
	c, _ := CaseOf(Input{Fixture: "codex/multi-turn"})
	run, err := Execute(c, tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 2 || !run.Results[0].OK || !run.Results[1].OK {
		t.Errorf("turn results %+v, want two successes", run.Results)
	}
	// Interrupted at the stall after line 2: one cancelled turn, no second.
	c.Faults, c.Interrupt = "stall:after=2", true
	run, err = Execute(c, tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 1 || !run.Results[0].Interrupted || !run.Interrupted {
		t.Errorf("turn results %+v, want one interrupted turn", run.Results)
	}
}

// TestDecodeEventsRejectsInvalidUTF8 checks that an in-process adapter's
// event that is not UTF-8 fails PropValid, as the validator fails it for
// an external adapter.
func TestDecodeEventsRejectsInvalidUTF8(t *testing.T) {
	_, f := decodeEvents([][]byte{[]byte(`{"type":"toolStarted","arguments":{"q":"` + "\xff\xfe" + `"}}`)})
	if f == nil || f.Property != PropValid || !strings.Contains(f.Message, "jsonl/invalid-utf8") {
		t.Fatalf("got %v, want a %s failure naming jsonl/invalid-utf8", f, PropValid)
	}
	if _, f := decodeEvents([][]byte{[]byte(`{"type":"toolStarted","arguments":{"q":"\ufffd"}}`)}); f != nil {
		t.Fatalf("the escaped replacement character: %v", f)
	}
}
