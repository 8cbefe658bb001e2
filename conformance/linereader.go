package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/agentconform/agentconform/jsonl"
)

// lineReader cuts the adapter's stdout into lines exactly as jsonl.Reader
// does (numbers count empty lines; a leading BOM on line 1 and a trailing
// "\r" are dropped; empty lines are skipped; a line over max is counted
// and skipped, its length reported), but hands every line over in memory
// of its own: a short line is copied out of the read buffer, and a long
// one is read straight into a buffer that then becomes the line. The
// runner keeps every line, so a 64 MiB line costs one copy of it, and no
// read buffer grown to the limit stays behind.
type lineReader struct {
	r   io.Reader
	max int64

	buf    []byte // read buffer
	rd, wr int    // unconsumed input: buf[rd:wr]

	long    []byte // the current line so far, once it outgrew buf
	skip    bool   // the current line is over the limit: only counted
	skipped int64  // its length so far (while skip)
	bom     bool   // it is line 1 and starts with a BOM (while skip)
	last    byte   // its last byte so far (while skip)

	n   int   // physical lines consumed
	off int64 // input offset of the current line's first byte
	eof bool
	err error // sticky read error, wrapped
}

// lineReadSize is the read buffer's size, and the most read at a time
// into a long line's buffer.
const lineReadSize = 64 << 10

// maxEmptyReads is how many (0, nil) reads in a row count as a broken
// reader, as in jsonl and bufio.
const maxEmptyReads = 100

func newLineReader(r io.Reader, max int64) *lineReader {
	return &lineReader{r: r, max: max, buf: make([]byte, lineReadSize)}
}

// Next returns the next non-empty line, whose Bytes the caller owns, or
// io.EOF, or the read error (wrapped as jsonl.Reader wraps it, and
// returned again by every later call).
func (l *lineReader) Next() (jsonl.Line, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.rd:l.wr], '\n'); i >= 0 {
			piece := l.buf[l.rd : l.rd+i]
			l.rd += i + 1
			if line, ok := l.finish(piece, true); ok {
				return line, nil
			}
			continue
		}
		if l.err != nil {
			return jsonl.Line{}, l.err
		}
		if l.eof {
			if l.rd < l.wr || len(l.long) > 0 || l.skip {
				piece := l.buf[l.rd:l.wr]
				l.rd = l.wr
				if line, ok := l.finish(piece, false); ok {
					return line, nil
				}
			}
			return jsonl.Line{}, io.EOF
		}
		l.fill()
	}
}

// finish turns the line made of what long holds and piece into a Line;
// false for an empty line (counted and skipped).
func (l *lineReader) finish(piece []byte, newline bool) (jsonl.Line, bool) {
	line := jsonl.Line{Number: l.n + 1, Offset: l.off, Limit: l.max, NoNewline: !newline}
	nl := int64(0)
	if newline {
		nl = 1
	}
	l.n++
	if l.skip {
		total := l.skipped + int64(len(piece))
		if len(piece) > 0 {
			l.last = piece[len(piece)-1]
		}
		line.TooLong, line.BOM, line.CR = true, l.bom, l.last == '\r'
		line.Len = total
		if l.bom {
			line.Len -= int64(len(bom))
		}
		if line.CR {
			line.Len--
		}
		l.off += total + nl
		l.skip, l.skipped, l.bom, l.last = false, 0, false, 0
		return line, true
	}
	raw, owned := piece, false
	if len(l.long) > 0 {
		raw, owned = l.grow(len(piece)), true
		raw = append(raw, piece...)
		l.long = nil
	}
	l.off += int64(len(raw)) + nl
	if line.Number == 1 && bytes.HasPrefix(raw, bom) {
		raw = raw[len(bom):]
		line.BOM = true
	}
	if len(raw) > 0 && raw[len(raw)-1] == '\r' {
		raw = raw[:len(raw)-1]
		line.CR = true
	}
	line.Len = int64(len(raw))
	if len(raw) == 0 && !line.BOM {
		return line, false
	}
	if line.Len > l.max {
		line.TooLong = true
		return line, true
	}
	if !owned {
		raw = bytes.Clone(raw)
		if raw == nil {
			raw = []byte{}
		}
	}
	line.Bytes = raw
	return line, true
}

// rawLimit is the longest the pending raw line may get before it is
// certainly too long: the limit, a "\r" and, on line 1, a BOM.
func (l *lineReader) rawLimit(start []byte) int64 {
	lim := l.max + 1
	if l.n == 0 && bytes.HasPrefix(start, bom) {
		lim += int64(len(bom))
	}
	return lim
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// fill reads more input. Pending bytes of a line with no newline yet move
// to the front of the read buffer or, once they fill half of it, into the
// line's own buffer, which later reads fill directly.
func (l *lineReader) fill() {
	pend := l.buf[l.rd:l.wr]
	l.rd, l.wr = 0, 0
	switch {
	case l.skip:
		l.skipped += int64(len(pend))
		if len(pend) > 0 {
			l.last = pend[len(pend)-1]
		}
	case len(l.long) > 0 || len(pend) >= len(l.buf)/2:
		l.long = append(l.grow(len(pend)), pend...)
		if l.overLimit() {
			return
		}
		l.readLong()
		return
	default:
		l.wr = copy(l.buf, pend)
	}
	n, err := l.read(l.buf[l.wr:])
	l.wr += n
	l.readErr(err)
}

// grow makes room for n more bytes in the long line's buffer, doubling it.
func (l *lineReader) grow(n int) []byte {
	if cap(l.long)-len(l.long) >= n {
		return l.long
	}
	c := max(2*cap(l.long), len(l.long)+n, lineReadSize)
	nb := make([]byte, len(l.long), c)
	copy(nb, l.long)
	return nb
}

// overLimit switches to skipping once the long line is certainly too long.
func (l *lineReader) overLimit() bool {
	if int64(len(l.long)) <= l.rawLimit(l.long) {
		return false
	}
	l.skip, l.skipped, l.last = true, int64(len(l.long)), l.long[len(l.long)-1]
	l.bom = l.n == 0 && bytes.HasPrefix(l.long, bom)
	l.long = nil
	return true
}

// readLong reads once straight into the long line's buffer; what follows
// a newline in it goes back to the read buffer.
func (l *lineReader) readLong() {
	l.long = l.grow(lineReadSize)
	from := len(l.long)
	n, err := l.read(l.long[from : from+lineReadSize])
	l.long = l.long[:from+n]
	if i := bytes.IndexByte(l.long[from:], '\n'); i >= 0 {
		l.wr = copy(l.buf, l.long[from+i:])
		l.long = l.long[:from+i]
	} else {
		l.overLimit()
	}
	l.readErr(err)
}

// read reads into p, retrying reads that return nothing.
func (l *lineReader) read(p []byte) (int, error) {
	for range maxEmptyReads {
		n, err := l.r.Read(p)
		if n < 0 || n > len(p) {
			return 0, fmt.Errorf("io.Reader returned invalid count %d", n)
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

// readErr records the end of the input or a read error, wrapped with the
// position reading stopped at, as jsonl.Reader wraps it.
func (l *lineReader) readErr(err error) {
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		l.eof = true
	default:
		pending := int64(l.wr-l.rd) + int64(len(l.long)) + l.skipped
		l.err = fmt.Errorf("jsonl: reading line %d at byte %d: %w", l.n+1, l.off+pending, err)
	}
}

// joinedLines reads lines, each followed by "\n", without joining them
// in a copy of their own (the adapter's output may hold a 64 MiB line).
type joinedLines struct {
	lines [][]byte
	off   int // bytes of lines[0] read; len(lines[0]) means its "\n" is next
}

func (j *joinedLines) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(j.lines) > 0 {
		l := j.lines[0]
		if j.off < len(l) {
			c := copy(p[n:], l[j.off:])
			n += c
			j.off += c
			continue
		}
		p[n] = '\n'
		n++
		j.lines, j.off = j.lines[1:], 0
	}
	if n == 0 && len(j.lines) == 0 {
		return 0, io.EOF
	}
	return n, nil
}
