package fuzz

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

// A Seed is one deterministic seed input, named for its corpus file.
type Seed struct {
	Name  string
	Input Input
}

// SeedSet says which seeds a target starts from.
type SeedSet int

const (
	// InProcessSeeds: every fixture, the interrupt-position sweep over
	// every fixture, and the line-size ladder on each CLI's single-tool
	// fixture.
	InProcessSeeds SeedSet = iota
	// ExternalSeeds: every fixture, and the sweep and the ladder on each
	// CLI's single-tool fixture only (every execution starts processes).
	ExternalSeeds
	// AppServerSeeds: every app-server fixture, and the interrupt sweep
	// on its single-tool fixture; no other mutation, which is the
	// mutator's to find.
	AppServerSeeds
)

// maxSeedAfter is the largest "after" an encoded input holds (pAfter).
const maxSeedAfter = 31

// Seeds returns the seed inputs of a set, in a stable order.
func Seeds(set SeedSet) []Seed {
	if set == AppServerSeeds {
		return appServerSeeds()
	}
	var out []Seed
	for _, fx := range fixtureList() {
		out = append(out, Seed{Name: "fixture-" + slug(fx), Input: Input{Fixture: fx}})
	}
	for _, fx := range fixtureList() {
		if set == ExternalSeeds && !strings.HasSuffix(fx, "/single-tool") {
			continue
		}
		// Interrupt after every stdout line of the first process but the
		// last (after the last, the turn is over), as far as an input can
		// say (after is 0..31: a long answer's 40 chunks go beyond).
		n := firstProcessOuts(loadedFixtures()[fx])
		for k := 1; k < n && k <= maxSeedAfter; k++ {
			out = append(out, Seed{Name: fmt.Sprintf("interrupt-%s-%02d", slug(fx), k),
				Input: Input{Fixture: fx, Mutations: []Mutation{{Op: OpInterrupt, Params: []Param{{"after", strconv.Itoa(k)}}}}}})
		}
	}
	for _, fx := range fixtureList() {
		if !strings.HasSuffix(fx, "/single-tool") {
			continue
		}
		for _, size := range ladderSizes {
			out = append(out, Seed{Name: fmt.Sprintf("ladder-%s-%07d", slug(fx), size),
				Input: Input{Fixture: fx, Mutations: []Mutation{{Op: "ladder", Params: []Param{{"size", strconv.Itoa(size)}}}}}})
		}
	}
	return out
}

// firstProcessOuts counts the stdout lines of a transcript's first
// process.
func firstProcessOuts(t *transcript.Transcript) int {
	n := 0
	for _, s := range t.Processes()[0] {
		if s.Op == transcript.OpOut {
			n++
		}
		if s.Op == transcript.OpExit {
			break
		}
	}
	return n
}

func slug(s string) string { return strings.ReplaceAll(s, "/", "-") }

// SeedBytes returns the encoded seeds of a set (what F.Add gets).
func SeedBytes(set SeedSet) ([][]byte, error) {
	var out [][]byte
	for _, s := range Seeds(set) {
		b, err := Encode(s.Input)
		if err != nil {
			return nil, fmt.Errorf("seed %s: %w", s.Name, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// appServerSeeds are the seeds of app-server clients.
func appServerSeeds() []Seed {
	var out []Seed
	for _, fx := range appServerFixtureList() {
		out = append(out, Seed{Name: "fixture-" + slug(fx), Input: Input{Fixture: fx}})
	}
	for _, fx := range appServerFixtureList() {
		if !strings.HasSuffix(fx, "-single-tool") {
			continue
		}
		n := firstProcessOuts(loadedFixtures()[fx])
		for k := 1; k < n && k <= maxSeedAfter; k++ {
			out = append(out, Seed{Name: fmt.Sprintf("interrupt-%s-%02d", slug(fx), k),
				Input: Input{Fixture: fx, Mutations: []Mutation{{Op: OpInterrupt, Params: []Param{{"after", strconv.Itoa(k)}}}}}})
		}
	}
	return out
}

// SeedsFor returns the seeds of an external adapter that drives agents,
// encoded for Decode(data, agents): ExternalSeeds of the CLIs among them,
// and AppServerSeeds when AgentAppServer is one. nil agents is
// SeedBytes(ExternalSeeds).
func SeedsFor(agents []string) ([][]byte, error) {
	if len(agents) == 0 {
		return SeedBytes(ExternalSeeds)
	}
	in := map[string]bool{}
	for _, n := range fixtureTable(agents) {
		in[n] = true
	}
	var seeds []Seed
	for _, s := range Seeds(ExternalSeeds) {
		if in[s.Input.Fixture] {
			seeds = append(seeds, s)
		}
	}
	for _, a := range agents {
		if a == AgentAppServer {
			seeds = append(seeds, Seeds(AppServerSeeds)...)
		}
	}
	var out [][]byte
	for _, s := range seeds {
		b, err := EncodeFor(s.Input, agents)
		if err != nil {
			return nil, fmt.Errorf("seed %s: %w", s.Name, err)
		}
		out = append(out, b)
	}
	return out, nil
}
