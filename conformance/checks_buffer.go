package conformance

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// The buffer family.
var (
	CheckLineIntact = register(&Check{Family: FamilyBuffer, Rule: rule("buffer/line-intact", "MUST",
		"A line of up to 1 MiB (1,048,576 bytes) reaches the caller intact; a longer line arrives intact, or the turn fails with a clear error that names the size or the limit: never silent loss. Judged where the adapter asked the CLI for a JSON stream.", srcLines),
		Applies: needs("", func(c *Case) bool { return c.Expect.LineSize > 0 }), Judge: judgeLineIntact})
	CheckGoesOn = register(&Check{Family: FamilyBuffer, Rule: rule("buffer/session-goes-on", "MUST",
		"After a long line the adapter neither hangs nor dies: it finishes the session with its end record.", srcLines),
		Applies: needs("", func(c *Case) bool { return c.Expect.LineSize > 0 }), Judge: judgeEnded})
)

func judgeLineIntact(o *Observation) Outcome {
	size := o.Case.Expect.LineSize
	if ts := o.cliTurns(); len(ts) > 0 && !o.streams() {
		return Outcome{Skip: true, Actual: fmt.Sprintf("the adapter asked the CLI for %s output, not a JSON stream: no %d-byte line to carry", ts[0].format, size)}
	}
	var long string
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if len(l.Raw) == size && l.Obj != nil {
				long = longestString(l.Obj)
			}
		}
	}
	if long == "" {
		if n, ok := cutLadderLine(o, size); ok {
			// The CLI began the line and could not finish it: the adapter
			// stopped reading (and closed the pipe, or killed the CLI).
			if size > IntactLineLimit && anySizeError(o, size) {
				return pass()
			}
			return failf(fmt.Sprintf("the %d-byte line read in full", size),
				"the CLI could write only %d bytes of its %d-byte line: the adapter stopped reading it (turn_end: %s)", n, size, turnEndSummary(o))
		}
		return Outcome{Info: true, Actual: fmt.Sprintf("the fake wrote no %d-byte line", size)}
	}
	if carries(o.Events, long) {
		return pass()
	}
	if o.Hello != nil && o.Hello.Profile == "native" && o.infoIndex().hasAtom(long) {
		// A native adapter may hand the text on in pieces of its own
		// shape (an ACP agent's message chunks): joined per JSON path.
		return pass()
	}
	if o.Hello != nil && o.Hello.Profile == "shim" && clippedWithNote(o.Events, long) {
		// The shim contract asks shims to keep lines under ~100 KB and to "chunk or
		// summarize" big payloads: a clip that keeps the start and says how
		// much was cut is what the contract wants.
		return pass()
	}
	if anySizeError(o, size) {
		return pass()
	}
	if size <= IntactLineLimit {
		return failf(fmt.Sprintf("the %d-byte line's %d-byte text intact in the events (lines up to %d bytes must arrive intact)", size, len(long), IntactLineLimit),
			"it is not: the content was lost (turn_end: %s)", turnEndSummary(o))
	}
	return failf(fmt.Sprintf("the %d-byte line's %d-byte text intact in the events, or an error naming the size", size, len(long)),
		"neither: the content was lost silently (turn_end: %s)", turnEndSummary(o))
}

// anySizeError reports whether a turn failed with a clear error about the
// size of a line over IntactLineLimit.
func anySizeError(o *Observation, size int) bool {
	for _, r := range o.TurnEnds() {
		if !r.OK && sizeError(size, r.Error) {
			return true
		}
	}
	return false
}

// ladderPadding marks the text the ladder fault grows a line with
// (fakecli/faults).
const ladderPadding = "agentconform ladder padding"

// cutLadderLine looks for the ladder line cut short in the wire: a line
// holding the ladder's padding, shorter than size. It returns how many
// bytes of it the CLI wrote.
func cutLadderLine(o *Observation, size int) (int, bool) {
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if len(l.Raw) < size && bytes.Contains(l.Raw, []byte(ladderPadding)) {
				return len(l.Raw), true
			}
		}
	}
	return 0, false
}

// clippedWithNote reports whether an event holds the start of s and a
// note naming how many bytes were left out.
func clippedWithNote(events []Event, s string) bool {
	head := s[:min(len(s), 1024)]
	for _, e := range events {
		v := longestString(e.Obj)
		if !strings.HasPrefix(v, head) || len(v) >= len(s) {
			continue
		}
		if cut := len(s) - (len(v) - len(noteOf(v))); cut > 0 && strings.Contains(v, strconv.Itoa(cut)) {
			return true
		}
		if strings.Contains(v, strconv.Itoa(len(s))) {
			return true
		}
	}
	return false
}

// noteOf returns the trailing "[...]" note of a clipped string, if any.
func noteOf(v string) string {
	if i := strings.LastIndex(v, "\n["); i >= 0 && strings.HasSuffix(v, "]") {
		return v[i:]
	}
	return ""
}

func mentionsSize(s string) bool {
	s = strings.ToLower(s)
	for _, w := range []string{"too long", "too large", "exceed", "buffer", "limit", "bytes", "mib", "kib"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func turnEndSummary(o *Observation) string {
	var parts []string
	for _, r := range o.TurnEnds() {
		parts = append(parts, fmt.Sprintf("ok=%v error=%q", r.OK, clip(r.Error, 120)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// longestString returns the longest string value in v.
func longestString(v any) string {
	best := ""
	eachString(v, func(s string) {
		if len(s) > len(best) {
			best = s
		}
	})
	return best
}

// eachString calls fn with every string value in the decoded JSON v.
func eachString(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case map[string]any:
		for _, c := range x {
			eachString(c, fn)
		}
	case []any:
		for _, c := range x {
			eachString(c, fn)
		}
	}
}

// carries reports whether the events hold s: as one string value, or as
// the concatenation of consecutive text chunks.
func carries(events []Event, s string) bool {
	var chunks []string
	for _, e := range events {
		if strings.Contains(longestString(e.Obj), s) {
			return true
		}
		if c, ok := e.Obj["content"].(string); ok {
			chunks = append(chunks, c)
		}
	}
	return containsJoined(chunks, s)
}

func judgeEnded(o *Observation) Outcome {
	if _, ok := o.End(); !ok {
		return failf("an end record", "none (records: %s)", recordKinds(o))
	}
	return pass()
}
