package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

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

	long    [][]byte // the current line so far, once it outgrew buf, in chunks
	size    int64    // bytes in long
	skip    bool     // the current line is over the limit: only counted
	skipped int64    // its length so far (while skip)
	bom     bool     // it is line 1 and starts with a BOM (while skip)
	last    byte     // its last byte so far (while skip)

	kept []byte // where short lines are copied to (keep)

	n   int   // physical lines consumed
	off int64 // input offset of the current line's first byte
	eof bool
	err error // sticky read error, wrapped
}

// lineReadSize is the read buffer's size; lineChunk is the size of the
// chunks a long line is read straight into (as much at a time as the
// pipe holds, up to what the chunk has left), joined into one buffer of
// the line's size at its end (a buffer that doubles holds a line in up
// to twice its size, and touches all of it).
const (
	lineReadSize = 64 << 10
	lineChunk    = 1 << 20
)

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
			if l.rd < l.wr || l.size > 0 || l.skip {
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
	if l.size > 0 {
		raw, owned = l.join(piece), true
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
		raw = l.keep(raw)
	}
	line.Bytes = raw
	return line, true
}

// join returns the long line, its chunks and then piece, in one buffer
// of its own (bytes.Join neither zeroes it first nor copies more than a
// chunk at a time: a goroutine in one long memmove cannot be preempted,
// and a collection that waits for it makes the runtime signal it every
// few microseconds).
func (l *lineReader) join(piece []byte) []byte {
	buf := bytes.Join(append(l.long, piece), nil)
	l.long, l.size = nil, 0
	if len(buf) >= collectAfter {
		// The chunks, as big as the line, are garbage now: collected at
		// once, before the runner decodes the line and reads the CLI's
		// copy of it, they do not stand on top of both (a single
		// allocation of the line's size outruns the collection the
		// memory limit starts).
		runtime.GC()
	}
	return buf
}

// collectAfter is the length of a joined line from which join collects
// its chunks at once.
const collectAfter = 16 << 20

// keepChunk is the size of the buffers short lines are copied into, one
// after the other: a line of its own allocation is rounded up to a size
// class (a 4.4 KiB line takes 4.75), and the runner keeps thousands.
const keepChunk = 256 << 10

// keep copies a short line out of the read buffer into the current keep
// buffer (its capacity ends at its length: nothing appends over the next).
func (l *lineReader) keep(b []byte) []byte {
	switch {
	case len(b) == 0:
		return []byte{}
	case len(b) > keepChunk/4:
		return bytes.Clone(b)
	}
	if cap(l.kept)-len(l.kept) < len(b) {
		l.kept = make([]byte, 0, keepChunk)
	}
	n := len(l.kept)
	l.kept = append(l.kept, b...)
	return l.kept[n:len(l.kept):len(l.kept)]
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
	switch {
	case l.skip:
		l.skipped += int64(len(pend))
		if len(pend) > 0 {
			l.last = pend[len(pend)-1]
		}
		l.rd, l.wr = 0, 0
	case l.size > 0 || len(pend) >= len(l.buf)/2:
		l.add(pend)
		l.rd, l.wr = 0, 0
		if l.overLimit() {
			return
		}
		l.readLong()
		return
	case l.rd > 0:
		// Once per line at most: the next line's start moves up.
		l.wr = copy(l.buf, pend)
		l.rd = 0
	}
	n, err := l.read(l.buf[l.wr:])
	l.wr += n
	l.readErr(err)
}

// chunk returns the long line's last chunk, a new one when it is full.
func (l *lineReader) chunk() *[]byte {
	if n := len(l.long); n == 0 || len(l.long[n-1]) == cap(l.long[n-1]) {
		l.long = append(l.long, make([]byte, 0, lineChunk))
	}
	return &l.long[len(l.long)-1]
}

// add appends b to the long line.
func (l *lineReader) add(b []byte) {
	for len(b) > 0 {
		c := l.chunk()
		k := min(len(b), cap(*c)-len(*c))
		*c = append(*c, b[:k]...)
		b = b[k:]
		l.size += int64(k)
	}
}

// overLimit switches to skipping once the long line is certainly too long.
func (l *lineReader) overLimit() bool {
	if l.size == 0 || l.size <= l.rawLimit(l.long[0]) {
		return false
	}
	last := l.long[len(l.long)-1]
	l.skip, l.skipped, l.last = true, l.size, last[len(last)-1]
	l.bom = l.n == 0 && bytes.HasPrefix(l.long[0], bom)
	l.long, l.size = nil, 0
	return true
}

// readLong reads once straight into the long line's last chunk; what
// follows a newline goes back to the read buffer.
func (l *lineReader) readLong() {
	c := l.chunk()
	from := len(*c)
	n, err := l.read((*c)[from:cap(*c)])
	got := (*c)[from : from+n]
	if i := bytes.IndexByte(got, '\n'); i >= 0 {
		if len(got)-i > len(l.buf) {
			l.buf = make([]byte, len(got)-i)
		}
		l.wr = copy(l.buf, got[i:])
		n = i
	}
	*c = (*c)[:from+n]
	l.size += int64(n)
	if l.wr == 0 {
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
		pending := int64(l.wr-l.rd) + l.size + l.skipped
		l.err = fmt.Errorf("jsonl: reading line %d at byte %d: %w", l.n+1, l.off+pending, err)
	}
}

// containsJoined reports whether the chunks joined hold s, as
// strings.Contains(strings.Join(chunks, ""), s) does, without joining
// them when s starts where a chunk does (a text the adapter handed on in
// chunks: a 64 MiB ladder text in 16,384 of them).
func containsJoined(chunks []string, s string) bool {
	total := 0
	for _, c := range chunks {
		total += len(c)
	}
	if total < len(s) {
		return false
	}
	for k, left := 0, total; k < len(chunks) && left >= len(s); k++ {
		if hasPrefixJoined(chunks[k:], s) {
			return true
		}
		left -= len(chunks[k])
	}
	return strings.Contains(strings.Join(chunks, ""), s)
}

// hasPrefixJoined reports whether the chunks joined start with s.
func hasPrefixJoined(chunks []string, s string) bool {
	for _, c := range chunks {
		if len(s) <= len(c) {
			return c[:len(s)] == s
		}
		if s[:len(c)] != c {
			return false
		}
		s = s[len(c):]
	}
	return s == ""
}
