// Package faults makes the fake CLIs misbehave on purpose, after a spec such
// as "slicer:max=1;stderr_flood:bytes=4194304" (AGENTCONFORM_FAULTS).
//
// A fault is either a step rewrite, applied by Plan.Steps to one process's
// part of a transcript before replay (event faults such as drop or
// break_pair, and line-level faults such as ladder, crlf or stall), or a
// writer, applied by Plan.Stdout to the bytes the fake writes to stdout
// (slicer, latency, bandwidth, limit_data). Faults apply in the order the
// spec lists them, each to the result of the one before.
//
// Everything a fault chooses at random comes from the seed given to Parse,
// so the same seed, spec and transcript give the same bytes and the same
// Applied list. Every step fault is recorded in Applied, with a detail
// naming the line it touched or saying why it touched nothing; a writer
// fault is recorded when it first acts (limit_data when it cuts, so not at
// all for a stream shorter than its limit).
//
// Modelled on testing/iotest (tiny composable injectors) and toxiproxy's
// toxics (latency, bandwidth, slicer, limit_data).
package faults

import (
	"math/rand"
	"sort"
	"sync"
	"time"

	"github.com/agentconform/agentconform/transcript"
)

// Plan is a parsed fault spec. The zero of *Plan (nil) injects nothing:
// Steps returns its input, Stdout its writer, Applied nil.
type Plan struct {
	seed   int64
	faults []*fault

	mu      sync.Mutex
	applied []Applied

	// sleep and now are preciseSleep and time.Now, replaced in tests.
	sleep func(time.Duration)
	now   func() time.Time
}

// Applied is one fault as it was applied, for the fake's observation log.
type Applied struct {
	// Fault is the fault's name ("slicer").
	Fault string `json:"fault"`
	// Params are the effective parameters: those the spec gave, and those
	// the fault chose itself (from the seed, or a default), as strings.
	Params map[string]string `json:"params"`
	// Detail says what the fault did, naming the transcript line (or the
	// stdout write) it touched, or why it did nothing.
	Detail string `json:"detail"`
}

// Applied returns every fault applied so far, in order. It is safe for
// concurrent use.
func (p *Plan) Applied() []Applied {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.applied) == 0 {
		return nil
	}
	out := make([]Applied, len(p.applied))
	copy(out, p.applied)
	return out
}

// record appends one Applied entry for f, with the given resolved params
// (key, value pairs) added to the spec's own.
func (p *Plan) record(f *fault, detail string, resolved ...string) {
	params := make(map[string]string, len(f.given)+len(resolved)/2)
	for k, v := range f.given {
		params[k] = v
	}
	for i := 0; i+1 < len(resolved); i += 2 {
		params[resolved[i]] = resolved[i+1]
	}
	p.mu.Lock()
	p.applied = append(p.applied, Applied{Fault: f.name, Params: params, Detail: detail})
	p.mu.Unlock()
}

// Steps rewrites one process's part of a transcript with the plan's step
// faults, in spec order. cli ("claude", "codex" or "gemini"; "" guesses
// from the events) selects the event shapes that schema-aware faults look
// for. The input slice is never modified; without step faults it is
// returned as is.
func (p *Plan) Steps(cli string, steps []transcript.Step) []transcript.Step {
	if p == nil {
		return steps
	}
	var out []transcript.Step
	copied := false
	for _, f := range p.faults {
		if f.def.steps == nil {
			continue
		}
		if !copied {
			out = append([]transcript.Step(nil), steps...)
			copied = true
			if cli == "" {
				cli = guessCLI(out)
			}
		}
		out = f.def.steps(&stepCtx{p: p, f: f, cli: cli}, out)
	}
	if !copied {
		return steps
	}
	return out
}

// Random streams: each fault draws from its own generator, derived from
// the seed, the fault's position in the spec and what it is drawing for,
// so one fault's choices never depend on another's or on call order.
const (
	streamSteps  = 1
	streamWriter = 2
)

// rng returns the generator of one fault for one stream.
func (f *fault) rng(seed int64, stream uint64) *rand.Rand {
	x := uint64(seed) ^ (uint64(f.index+1) * 0x9e3779b97f4a7c15) ^ (stream * 0xbf58476d1ce4e5b9)
	// splitmix64 finaliser, so nearby seeds give unrelated streams.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return rand.New(rand.NewSource(int64(x)))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// preciseBelow is the longest sleep preciseSleep takes in the kernel
// instead of the runtime's timers: sub-millisecond pauses (the slicer's
// delay_us) must last what they say.
const preciseBelow = 2 * time.Millisecond
