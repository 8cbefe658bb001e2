package fuzz

import (
	"context"
	"math/rand"
)

// Mutate returns a random variant of an encoded input: byte flips,
// insertions, deletions and appended mutation records. It is the random
// engine's mutator (no coverage guides it), for `agentconform fuzz
// --engine random` and for Search.
func Mutate(rng *rand.Rand, seed []byte) []byte {
	b := append([]byte(nil), seed...)
	for n := 1 + rng.Intn(4); n > 0; n-- {
		switch op := rng.Intn(5); {
		case op == 0 && len(b) > 0:
			b[rng.Intn(len(b))] ^= byte(1 << rng.Intn(8))
		case op == 1 && len(b) > 0:
			b[rng.Intn(len(b))] = byte(rng.Intn(256))
		case op == 2:
			i := rng.Intn(len(b) + 1)
			b = append(b[:i], append([]byte{byte(rng.Intn(256))}, b[i:]...)...)
		case op == 3 && len(b) > 9:
			i := 9 + rng.Intn(len(b)-9)
			b = append(b[:i], b[i+1:]...)
		default:
			for k := 1 + rng.Intn(4); k > 0; k-- {
				b = append(b, byte(rng.Intn(256)))
			}
		}
	}
	return b
}

// SearchOptions bound a Search.
type SearchOptions struct {
	// Agents restricts the inputs' fixtures (as Decode's agents).
	Agents []string
	// MaxExecs is how many executions Search runs at most (seeds
	// included).
	MaxExecs int
	// Seed drives the mutator: the same seed, the same inputs.
	Seed int64
	// Known are the open issues Search does not stop at.
	Known []KnownIssue
	// Ignore, when set, says which other failures Search goes on past
	// (an adapter's open issue that no crasher stands for yet).
	Ignore func(Input, *Failure) bool
}

// A Found is a failing input Search found.
type Found struct {
	Input   Input
	Failure *Failure
	// Execs is the number of executions it took, this one included.
	Execs int
}

// Search runs the seeds (encoded inputs), then random variants of them
// (Mutate), one after another, until an input breaks a property that is
// no known issue, MaxExecs executions have run or ctx ends. It returns
// what failed (nil when nothing did) and how many executions ran. It is
// deterministic for a deterministic target, which is what makes it a
// test: a planted bug found within so many executions.
func Search(ctx context.Context, t Target, seeds [][]byte, o SearchOptions) (*Found, int) {
	rng := rand.New(rand.NewSource(o.Seed))
	execs := 0
	try := func(data []byte) *Found {
		execs++
		in := Decode(data, o.Agents)
		_, f := CheckInput(t, in)
		if f == nil || MatchKnown(o.Known, knownAs(t), f) != "" || (o.Ignore != nil && o.Ignore(in, f)) {
			return nil
		}
		return &Found{Input: in, Failure: f, Execs: execs}
	}
	for _, s := range seeds {
		if execs >= o.MaxExecs || ctx.Err() != nil {
			return nil, execs
		}
		if found := try(s); found != nil {
			return found, execs
		}
	}
	for len(seeds) > 0 && execs < o.MaxExecs && ctx.Err() == nil {
		if found := try(Mutate(rng, seeds[rng.Intn(len(seeds))])); found != nil {
			return found, execs
		}
	}
	return nil, execs
}
