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
	CheckLongLine = register(&Check{Family: FamilyBuffer, Rule: rule("buffer/long-line-intact", "SHOULD",
		"A line over 1 MiB, up to the ladder's 64 MiB, reaches the caller intact and the turn succeeds: the real CLIs write such lines (a screenshot Claude reads is a line of 1.1 to 1.3 MB, an MCP tool's result can be 10 MiB), so a clean error that names the size, better than silent loss, still loses the user's turn. Silent loss and a hang fail buffer/line-intact. Judged where the adapter asked the CLI for a JSON stream.", srcLines+"; "+srcLongLines),
		Applies: needs("", func(c *Case) bool { return c.Expect.LineSize > IntactLineLimit }), Judge: judgeLongLine})
)

// srcLongLines is where the lines over 1 MiB the real CLIs write are
// documented.
const srcLongLines = "docs/protocols/jsonl.md#long-lines"

// ladderLine is what became of a case's ladder line: found, the text the
// line carried (long) and whether the adapter's events carry it
// (carried); else cut, how many bytes of it the CLI could write before the
// adapter stopped reading.
type ladderLine struct {
	long    string
	carried bool
	cut     int
	wasCut  bool
}

// ladderOutcome finds the case's ladder line in the wire and looks for its
// text in the adapter's events.
func ladderOutcome(o *Observation, size int) ladderLine {
	var ll ladderLine
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if len(l.Raw) == size && l.Obj != nil {
				ll.long = longestString(l.Obj)
			}
		}
	}
	if ll.long == "" {
		ll.cut, ll.wasCut = cutLadderLine(o, size)
		return ll
	}
	switch {
	case carries(o.Events, ll.long):
		ll.carried = true
	case o.Hello != nil && o.Hello.Profile == "native" && o.infoIndex().hasAtom(ll.long):
		// A native adapter may hand the text on in pieces of its own
		// shape (an ACP agent's message chunks): joined per JSON path.
		ll.carried = true
	case o.Hello != nil && o.Hello.Profile == "shim" && clippedWithNote(o.Events, ll.long):
		// The shim contract asks shims to keep lines under ~100 KB and to "chunk or
		// summarize" big payloads: a clip that keeps the start and says how
		// much was cut is what the contract wants.
		ll.carried = true
	}
	return ll
}

func judgeLineIntact(o *Observation) Outcome {
	size := o.Case.Expect.LineSize
	if ts := o.cliTurns(); len(ts) > 0 && !o.streams() {
		return Outcome{Skip: true, Actual: fmt.Sprintf("the adapter asked the CLI for %s output, not a JSON stream: no %d-byte line to carry", ts[0].format, size)}
	}
	ll := ladderOutcome(o, size)
	long := ll.long
	if long == "" {
		if ll.wasCut {
			// The CLI began the line and could not finish it: the adapter
			// stopped reading (and closed the pipe, or killed the CLI).
			if size > IntactLineLimit && anySizeError(o, size) {
				return pass()
			}
			return failf(fmt.Sprintf("the %d-byte line read in full", size),
				"the CLI could write only %d bytes of its %d-byte line: the adapter stopped reading it (turn_end: %s)", ll.cut, size, turnEndSummary(o))
		}
		return Outcome{Info: true, Actual: fmt.Sprintf("the fake wrote no %d-byte line", size)}
	}
	if ll.carried || anySizeError(o, size) {
		return pass()
	}
	if size <= IntactLineLimit {
		return failf(fmt.Sprintf("the %d-byte line's %d-byte text intact in the events (lines up to %d bytes must arrive intact)", size, len(long), IntactLineLimit),
			"it is not: the content was lost (turn_end: %s)", turnEndSummary(o))
	}
	return failf(fmt.Sprintf("the %d-byte line's %d-byte text intact in the events, or an error naming the size", size, len(long)),
		"neither: the content was lost silently (turn_end: %s)", turnEndSummary(o))
}

// judgeLongLine grades a line over IntactLineLimit: intact and the turn
// successful passes; a clean error that names the size (which
// buffer/line-intact accepts) is a SHOULD failure, and so is silent loss
// (which buffer/line-intact fails).
func judgeLongLine(o *Observation) Outcome {
	size := o.Case.Expect.LineSize
	if ts := o.cliTurns(); len(ts) > 0 && !o.streams() {
		return Outcome{Skip: true, Actual: fmt.Sprintf("the adapter asked the CLI for %s output, not a JSON stream: no %d-byte line to carry", ts[0].format, size)}
	}
	want := fmt.Sprintf("the %d-byte line's text intact in the events and the turn successful", size)
	ll := ladderOutcome(o, size)
	switch {
	case ll.long == "" && ll.wasCut:
		if anySizeError(o, size) {
			return failf(want, "the adapter stopped reading the line after %d bytes and failed the turn with an error that names the size (turn_end: %s): clean, but the turn is lost", ll.cut, turnEndSummary(o))
		}
		return failf(want, "the adapter stopped reading the line after %d bytes (turn_end: %s)", ll.cut, turnEndSummary(o))
	case ll.long == "":
		return Outcome{Info: true, Actual: fmt.Sprintf("the fake wrote no %d-byte line", size)}
	case !ll.carried && anySizeError(o, size):
		return failf(want, "the text was not handed on, and the turn failed with an error that names the size (turn_end: %s): clean, but the turn is lost", turnEndSummary(o))
	case !ll.carried:
		return failf(want, "the text was not handed on (turn_end: %s)", turnEndSummary(o))
	}
	for i, r := range o.TurnEnds() {
		if !r.OK {
			return failf(want, "the text arrived, but turn %d failed: %q", i+1, clip(r.Error, 200))
		}
	}
	return pass()
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
