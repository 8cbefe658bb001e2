package conformance

import (
	"bytes"
	"unsafe"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/jsonl/linesplit"
)

// WireLine is one line a fake CLI wrote to its stdout, with the time the
// fake logged writing it (milliseconds since that process started).
type WireLine struct {
	PID int
	TMS int64
	Raw []byte
	Obj map[string]any
}

// wireLines splits what each fake process wrote into lines, timed by the
// process's "out" observation records (one per line, in order). Lines are
// cut as the reference adapters cut them (linesplit.Splitter): at a
// newline, and also where a JSON object closes, so that two events a CLI
// ran together on one line are two lines here too, and the lossless
// checks' model (conformance/oracle) reads what the adapters read (found by
// fuzzing: a Codex stream whose last event lost its newline before an
// unknown event). Blank lines are skipped; an unfinished last line is kept.
// The lines are cut once per observation and shared by every check that
// reads them, which must not change them.
func (o *Observation) wireLines() [][]WireLine {
	m := o.memoized()
	m.linesOnce.Do(func() { m.lines = o.cutWire() })
	return m.lines
}

func (o *Observation) cutWire() [][]WireLine {
	var out [][]WireLine
	known := longStrings(o.Events)
	for _, w := range o.Wire {
		var times []int64
		for _, r := range o.Fake {
			if r.PID == w.PID && r.Kind == "out" {
				times = append(times, r.TMS)
			}
		}
		var lines []WireLine
		add := func(line []byte) {
			// A line inside the wire copy is kept as a part of it (nothing
			// changes it), and its long strings share it: a 64 MiB line is
			// held once, not three times.
			if !within(w.Bytes, line) {
				line = bytes.Clone(line)
			}
			wl := WireLine{PID: w.PID, Raw: line[:len(line):len(line)]}
			if i := len(lines); i < len(times) {
				wl.TMS = times[i]
			}
			// A long text the adapter handed on is held once: the
			// wire's copy of it decodes to the adapter's string.
			wl.Obj, _ = jsonl.Parse(wl.Raw, jsonl.ParseOptions{ShareMin: 1, Known: known})
			lines = append(lines, wl)
		}
		var sp linesplit.Splitter
		sp.Feed(w.Bytes, add)
		sp.Flush(func(line []byte, _ bool) { add(line) })
		out = append(out, lines)
	}
	return out
}

// Bounds on the adapter's strings cutWire offers the wire's decoding.
const (
	knownMin = 64 << 10 // the shortest
	knownMax = 16       // how many
)

// longStrings returns the adapter's long string values (knownMin bytes or
// more, the first knownMax), which the wire's long strings may decode to.
func longStrings(events []Event) []string {
	var out []string
	for _, e := range events {
		if len(e.Raw) >= knownMin {
			eachString(e.Obj, func(s string) {
				if len(s) >= knownMin && len(out) < knownMax {
					out = append(out, s)
				}
			})
		}
	}
	return out
}

// within reports whether b lies inside outer's memory.
func within(outer, b []byte) bool {
	if len(outer) == 0 || len(b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(outer)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(outer))
}

// stdinLines returns the stdin records of the fake processes, decoded.
type stdinLine struct {
	rec fakecli.Observation
	obj map[string]any
}

func (o *Observation) stdinLines() []stdinLine { return stdinLinesOf(o.Fake) }

func stdinLinesOf(records []fakecli.Observation) []stdinLine {
	var out []stdinLine
	for _, r := range records {
		if r.Kind != "stdin" {
			continue
		}
		obj, _ := jsonl.Parse([]byte(r.Text), jsonl.ParseOptions{})
		out = append(out, stdinLine{rec: r, obj: obj})
	}
	return out
}

// str digs a string out of nested maps.
func str(m map[string]any, keys ...string) string {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[k]
	}
	s, _ := cur.(string)
	return s
}

// sessionID returns the session (or thread) id a CLI's stdout announced.
func sessionID(lines []WireLine) string {
	for _, l := range lines {
		if l.Obj == nil {
			continue
		}
		switch l.Obj["type"] {
		case "thread.started":
			return str(l.Obj, "thread_id")
		case "init":
			return str(l.Obj, "session_id")
		case "system":
			if l.Obj["subtype"] == "init" {
				return str(l.Obj, "session_id")
			}
		}
	}
	return ""
}

// interruptLog is the part of the fakes' log that shows what the adapter
// did about the runner's interrupt before it reported the turn over: the
// log as it stood a moment after the interrupted turn's turn_end (before
// the runner's next command), or when the runner gave up and closed (the
// close makes any adapter stop the CLI, which says nothing about its
// interrupt); failing both, the whole log, in which the runner's own
// kills are marked killed-by-runner.
func (o *Observation) interruptLog() []fakecli.Observation {
	switch {
	case o.GaveUp:
		return o.FakeAtGiveUp
	case o.FakeAtTurnEnd != nil:
		return o.FakeAtTurnEnd
	}
	return o.Fake
}
