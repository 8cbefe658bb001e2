// Package linesplit cuts a CLI's stdout into JSON lines the way an adapter
// must read them (docs/protocols/jsonl.md#framing): at a newline, or where a
// JSON object closes, with no length limit. The reference adapter reads its
// CLIs with it, and the conformance judge cuts the fakes' wire copies with it,
// so that both see the same lines.
package linesplit

import "bytes"

// Splitter cuts a CLI's stdout into lines, whatever sizes the reads
// come in. A line ends at a newline, or, for a JSON object, as soon as its
// top-level brace closes: a CLI that writes its last event without a
// newline and then waits (for stdin to close, say) is not left waiting
// for ever, and two objects run together on one line come out as two.
// The scan is incremental (each byte is looked at once), so a 64 MiB line
// costs one pass, and there is no length limit. A trailing "\r" is dropped
// and blank lines are skipped. The zero value is ready to use.
type Splitter struct {
	// Keep hands the lines over to emit for good: a line that lies whole
	// in the chunk is copied out of it, and one gathered across chunks is
	// emitted in the splitter's own buffer, which it then gives up, so
	// that a 64 MiB line is not copied once more to be kept.
	Keep bool

	buf []byte // the current line so far

	// Scan state of buf, for a line that starts with '{'.
	json     bool // the line's first non-space byte is '{'
	decided  bool // json is known
	depth    int
	inString bool
	escaped  bool
}

// Feed takes the next chunk of stdout and emits every line it completes.
// A line is valid only during its emit call (unless Keep).
func (s *Splitter) Feed(chunk []byte, emit func(line []byte)) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		part := chunk
		if i >= 0 {
			part = chunk[:i]
		}
		// Scan part for the close of a JSON object before the newline. A
		// line that lies whole in chunk is emitted from it, uncopied.
		if end, ok := s.scan(part); ok {
			s.emitLine(part[:end], emit)
			chunk = chunk[end:]
			continue
		}
		if i < 0 {
			s.gather(part)
			return
		}
		s.emitLine(part, emit)
		chunk = chunk[i+1:]
	}
}

// Flush emits what is left at EOF; partial reports that it is a line the
// CLI never finished.
func (s *Splitter) Flush(emit func(line []byte, partial bool)) {
	line := s.gathered(nil)
	if len(bytes.TrimSpace(line)) > 0 {
		emit(bytes.TrimRight(line, "\r"), true)
		s.handOver(line)
	}
	s.reset()
}

// emitLine emits the line that ends with rest (buf holds its start).
func (s *Splitter) emitLine(rest []byte, emit func(line []byte)) {
	line := rest
	gathered := len(s.buf) > 0
	if gathered {
		line = s.gathered(rest)
	}
	line = bytes.TrimRight(line, "\r")
	if len(bytes.TrimSpace(line)) > 0 {
		if s.Keep && !gathered {
			line = bytes.Clone(line)
		}
		emit(line)
		if gathered {
			s.handOver(line)
		}
	}
	s.reset()
}

// gatherMax is how long buf grows as append grows it; past it, a longer
// line's buffer grows fourfold (twofold past growFast), copied a MiB at a
// time (a long copy cannot be preempted, and the collector waits). A
// 64 MiB line is then gathered in buffers of 1, 4, 16 and 64 MiB: 85 MiB
// written, where gathering it in chunks and joining them at its end wrote
// 128 (and every MiB of fresh memory costs 256 page faults).
const (
	gatherMax = 1 << 20
	growFast  = 64 << 20
)

// gather appends part to the current line.
func (s *Splitter) gather(part []byte) {
	if need := len(s.buf) + len(part); need > cap(s.buf) && need > gatherMax {
		c := max(cap(s.buf), gatherMax)
		for c < need {
			if c < growFast {
				c *= 4
			} else {
				c *= 2
			}
		}
		b := make([]byte, 0, c)
		for i := 0; i < len(s.buf); i += 1 << 20 {
			b = append(b, s.buf[i:min(i+1<<20, len(s.buf))]...)
		}
		s.buf = b
	}
	s.buf = append(s.buf, part...)
}

// gathered returns the current line with rest appended, in buf.
func (s *Splitter) gathered(rest []byte) []byte {
	s.gather(rest)
	return s.buf
}

// handOver gives up what holds an emitted line under Keep.
func (s *Splitter) handOver(line []byte) {
	if s.Keep && len(line) > 0 && len(s.buf) > 0 && &line[0] == &s.buf[0] {
		s.buf = nil // the line is emit's now
	}
}

func (s *Splitter) reset() {
	s.buf = s.buf[:0]
	if cap(s.buf) > gatherMax {
		s.buf = nil // a long line's buffer is not kept for short ones
	}
	s.json, s.decided, s.depth, s.inString, s.escaped = false, false, 0, false, false
}

// scan looks at part (which holds no newline and follows buf) and reports
// where a JSON line's top-level object closes in it, if it does. Inside a
// string it jumps from one quote or backslash to the next (string bodies
// are most of a long line), remembering where the next of each is so that
// every byte is still looked at a bounded number of times.
func (s *Splitter) scan(part []byte) (int, bool) {
	nextQ, nextBS := -1, -1 // absolute positions in part; -1: not searched yet
	for j := 0; j < len(part); j++ {
		c := part[j]
		if !s.decided {
			switch c {
			case ' ', '\t', '\r':
				continue
			case '{':
				s.json, s.decided = true, true
			default:
				s.decided = true // a text line: only a newline ends it
				return 0, false
			}
		}
		if !s.json {
			return 0, false
		}
		switch {
		case s.escaped:
			s.escaped = false
		case s.inString:
			if nextQ < j {
				nextQ = indexFrom(part, j, '"')
			}
			if nextBS < j {
				nextBS = indexFrom(part, j, '\\')
			}
			switch {
			case nextBS < nextQ:
				j = nextBS
				s.escaped = true
			case nextQ < len(part):
				j = nextQ
				s.inString = false
			default:
				return 0, false // the string goes on past this part
			}
		case c == '"':
			s.inString = true
		case c == '{' || c == '[':
			s.depth++
		case c == '}' || c == ']':
			s.depth--
			if s.depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// indexFrom is the position of the first c in b at or after from, or
// len(b) when there is none (so that it is not searched for again).
func indexFrom(b []byte, from int, c byte) int {
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return len(b)
}
