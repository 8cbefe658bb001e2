package faults

import (
	"fmt"
	"math/rand"
	"strconv"

	"github.com/agentconform/agentconform/transcript"
)

// stepCtx is what a step rewrite gets: its fault, the CLI and its random
// stream.
type stepCtx struct {
	p   *Plan
	f   *fault
	cli string
	r   *rand.Rand
}

// rng is the fault's random stream for steps, seeded on first use: most
// rewrites draw nothing, and seeding costs more than a small rewrite.
func (c *stepCtx) rng() *rand.Rand {
	if c.r == nil {
		c.r = c.f.rng(c.p.seed, streamSteps)
	}
	return c.r
}

func (c *stepCtx) record(detail string, resolved ...string) {
	c.p.record(c.f, detail, resolved...)
}

// choose picks one of n eligible things: the one the parameter names
// (1-based) when the spec gave it, else one chosen by the seed. It records
// why when there is nothing to choose.
func (c *stepCtx) choose(param string, n int, what string) (int, bool) {
	if n == 0 {
		c.record("no eligible event: no " + what + " in this process's stdout; nothing changed")
		return 0, false
	}
	if c.f.has(param) {
		k := c.f.ints[param]
		if k > int64(n) {
			c.record(fmt.Sprintf("%s=%d but there are only %d %s; nothing changed", param, k, n, what))
			return 0, false
		}
		return int(k - 1), true
	}
	return c.rng().Intn(n), true
}

// chooseAfter is the number of stdout lines a stall, death or insertion
// comes after: the parameter when given (at most n), else chosen by the
// seed so that at least one line comes before and one after when there
// are two or more.
func (c *stepCtx) chooseAfter(param string, n int) (after int, note string) {
	if c.f.has(param) {
		k := c.f.ints[param]
		if k > int64(n) {
			return n, fmt.Sprintf(" (%s=%d, but there are only %d stdout lines)", param, k, n)
		}
		return int(k), ""
	}
	if n < 2 {
		return n, ""
	}
	return 1 + c.rng().Intn(n-1), ""
}

// outs returns the indexes of the out steps.
func outs(steps []transcript.Step) []int {
	var idx []int
	for i, s := range steps {
		if s.Op == transcript.OpOut {
			idx = append(idx, i)
		}
	}
	return idx
}

// afterOut is the step index just after the kth out step (k from 1), or
// the index of the first out step for k = 0 (0 when there is none).
func afterOut(o []int, k int) int {
	switch {
	case k <= 0 && len(o) > 0:
		return o[0]
	case k <= 0:
		return 0
	case k > len(o):
		return o[len(o)-1] + 1
	}
	return o[k-1] + 1
}

// insert returns steps with more inserted at i.
func insert(steps []transcript.Step, i int, more ...transcript.Step) []transcript.Step {
	if i < 0 {
		i = 0
	}
	if i > len(steps) {
		i = len(steps)
	}
	out := make([]transcript.Step, 0, len(steps)+len(more))
	out = append(out, steps[:i]...)
	out = append(out, more...)
	return append(out, steps[i:]...)
}

// where names an out step for details: "stdout line 3 (transcript line 3)".
func where(steps []transcript.Step, i int) string {
	n := 0
	for j := 0; j <= i && j < len(steps); j++ {
		if steps[j].Op == transcript.OpOut {
			n++
		}
	}
	return "stdout line " + strconv.Itoa(n) + " (" + lineOf(steps[i]) + ")"
}

// lineOf names a step's place in its transcript file.
func lineOf(s transcript.Step) string {
	if s.Line > 0 {
		return "transcript line " + strconv.Itoa(s.Line)
	}
	return "a step added by a fault"
}

// afterWhat describes the point after k stdout lines.
func afterWhat(steps []transcript.Step, o []int, k int) string {
	if k <= 0 || len(o) == 0 {
		return "before the first stdout line"
	}
	if k > len(o) {
		k = len(o)
	}
	return "after " + where(steps, o[k-1])
}

// eligibleDocs returns the out steps that are JSON objects (of type typ,
// when the fault has a type parameter) and their parsed lines.
func eligibleDocs(c *stepCtx, steps []transcript.Step) ([]int, []*doc) {
	typ, filter := c.f.given["type"]
	var idx []int
	var docs []*doc
	for i, s := range steps {
		if s.Op != transcript.OpOut {
			continue
		}
		d := parseDoc(s.Text)
		if d == nil || (filter && d.typ() != typ) {
			continue
		}
		idx = append(idx, i)
		docs = append(docs, d)
	}
	return idx, docs
}

// eventsWhat names the eligible events for details.
func eventsWhat(c *stepCtx) string {
	if c.f.has("type") {
		return fmt.Sprintf("JSON event of type %q", c.f.strs["type"])
	}
	return "JSON event"
}
