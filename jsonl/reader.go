package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineBytes is the line-length limit used when Options.MaxLineBytes
// is zero or negative: 64 MiB, well above the 1 to 50 MiB buffers real
// clients configure, yet bounded so that a runaway line cannot exhaust memory.
const DefaultMaxLineBytes = 64 << 20

const (
	// initialBufSize is the reader's starting buffer; it only grows for
	// lines longer than this.
	initialBufSize = 64 << 10
	// maxLimit caps MaxLineBytes so that buffer arithmetic cannot overflow.
	maxLimit = int64(^uint(0)>>1) / 4
	// maxEmptyReads is how many (0, nil) reads in a row count as a broken
	// io.Reader, as in bufio.
	maxEmptyReads = 100
)

// bom is the UTF-8 encoding of U+FEFF.
var bom = []byte{0xEF, 0xBB, 0xBF}

// Options configures a Reader.
type Options struct {
	// MaxLineBytes is the longest line content (without "\n", a trailing
	// "\r" and a leading BOM) that Next returns; longer lines come back
	// with TooLong set and no Bytes. Zero or negative means
	// DefaultMaxLineBytes.
	MaxLineBytes int64
	// Context, when not nil, stops the Reader once it is done: Next then
	// returns its error (wrapped, and again on every later call) instead
	// of reading on. It is checked before every read, also while a line
	// that is too long is skipped, so input that never ends (/dev/zero)
	// cannot keep the Reader going. A read that blocks (a silent pipe) is
	// not interrupted by it: the caller must unblock the io.Reader (close
	// it, or set a read deadline) or stop waiting for Next.
	Context context.Context
}

// Line is one non-empty physical line of the input, with the framing facts
// the Reader observed while cutting it out.
type Line struct {
	// Number is the 1-based physical line number; empty lines count too.
	Number int
	// Offset is the byte offset of the line's first byte (the BOM, on
	// line 1) in the input.
	Offset int64
	// Bytes is the content without "\n", without a trailing "\r" and
	// without a leading BOM; nil when TooLong. It aliases the Reader's
	// buffer and is valid only until the next call to Next.
	Bytes []byte
	// Len is the content length in bytes, counted as for Bytes, even when
	// TooLong.
	Len int64
	// Limit is the MaxLineBytes in force when the line was read, so that
	// a TooLong finding can name it.
	Limit int64
	// CR reports that the content ended with "\r" (normally "\r\n").
	CR bool
	// BOM reports that the input began with a UTF-8 BOM (only ever on
	// line 1).
	BOM bool
	// TooLong reports that the content exceeded the limit; it was
	// discarded without being buffered whole.
	TooLong bool
	// NoNewline reports that this last line of the input had no
	// terminating "\n".
	NoNewline bool
}

// Stats counts what a Reader has seen so far.
type Stats struct {
	// Lines is the number of non-empty lines returned by Next, TooLong
	// ones included.
	Lines int
	// Empty is the number of empty lines skipped.
	Empty int
	// TooLong is the number of lines returned with TooLong set.
	TooLong int
	// Bytes is the number of bytes read from the underlying io.Reader.
	Bytes int64
}

// Reader cuts a stream into lines in constant memory: its buffer grows to
// at most MaxLineBytes plus a few bytes, and longer lines are counted and
// discarded as they stream past. It is not safe for concurrent use.
type Reader struct {
	rd      io.Reader
	max     int64
	buf     []byte
	r, w    int   // unconsumed data is buf[r:w]
	scanned int   // buf[r:scanned] is known to hold no '\n'
	off     int64 // input offset of buf[r]
	n       int   // physical lines consumed so far
	eof     bool
	err     error // sticky read error other than io.EOF, already wrapped
	stats   Stats
	ctx     context.Context // nil: never cancelled
}

// NewReader returns a Reader that reads lines from rd.
func NewReader(rd io.Reader, opts Options) *Reader {
	max := opts.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	if max > maxLimit {
		max = maxLimit
	}
	return &Reader{rd: rd, max: max, buf: make([]byte, initialBufSize), ctx: opts.Context}
}

// Stats returns the counts accumulated so far.
func (r *Reader) Stats() Stats { return r.stats }

// Next returns the next non-empty line. Empty lines (nothing, or only "\r",
// before the "\n") are skipped and counted. At the end of the input Next
// returns io.EOF; any other error is a read error wrapped with the line
// number and offset it happened at, and it is returned again by every later
// call.
func (r *Reader) Next() (Line, error) {
	for {
		if i := bytes.IndexByte(r.buf[r.scanned:r.w], '\n'); i >= 0 {
			end := r.scanned + i
			l, ok := r.take(r.buf[r.r:end], true)
			r.consume(end + 1 - r.r)
			if ok {
				return l, nil
			}
			continue
		}
		r.scanned = r.w
		if r.err != nil {
			return Line{}, r.err
		}
		if r.eof {
			if r.r < r.w {
				l, ok := r.take(r.buf[r.r:r.w], false)
				r.consume(r.w - r.r)
				if ok {
					return l, nil
				}
			}
			return Line{}, io.EOF
		}
		if int64(r.w-r.r) > r.rawLimit() {
			return r.discard()
		}
		r.fill()
	}
}

// take turns the raw bytes of one line (without "\n") into a Line. It
// reports false for an empty line, which it counts.
func (r *Reader) take(raw []byte, newline bool) (Line, bool) {
	l := Line{Number: r.n + 1, Offset: r.off, Limit: r.max, NoNewline: !newline}
	if r.n == 0 && bytes.HasPrefix(raw, bom) {
		raw = raw[len(bom):]
		l.BOM = true
	}
	if len(raw) > 0 && raw[len(raw)-1] == '\r' {
		raw = raw[:len(raw)-1]
		l.CR = true
	}
	l.Len = int64(len(raw))
	if len(raw) == 0 && !l.BOM {
		r.stats.Empty++
		return l, false
	}
	r.stats.Lines++
	if l.Len > r.max {
		l.TooLong = true
		r.stats.TooLong++
	} else {
		l.Bytes = raw
	}
	return l, true
}

// consume drops n bytes (one line and its "\n") from the front of the buffer.
func (r *Reader) consume(n int) {
	r.r += n
	r.off += int64(n)
	r.n++
	if r.scanned < r.r {
		r.scanned = r.r
	}
}

// rawLimit is the longest the pending raw line (without "\n") may get
// before it is certainly too long: the limit plus a possible "\r" and, on
// line 1, a BOM.
func (r *Reader) rawLimit() int64 {
	lim := r.max + 1
	if r.n == 0 && bytes.HasPrefix(r.buf[r.r:r.w], bom) {
		lim += int64(len(bom))
	}
	return lim
}

// fill moves the pending partial line to the front of the buffer, grows the
// buffer if it is full, and reads once more.
func (r *Reader) fill() {
	if r.r > 0 {
		copy(r.buf, r.buf[r.r:r.w])
		r.w -= r.r
		r.scanned -= r.r
		r.r = 0
	}
	if r.w == len(r.buf) {
		r.grow()
	}
	for range maxEmptyReads {
		if r.ctx != nil {
			if err := r.ctx.Err(); err != nil {
				r.err = r.wrap(err)
				return
			}
		}
		n, err := r.rd.Read(r.buf[r.w:])
		if n < 0 || n > len(r.buf)-r.w {
			r.err = r.wrap(fmt.Errorf("io.Reader returned invalid count %d", n))
			return
		}
		r.w += n
		r.stats.Bytes += int64(n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				r.eof = true
			} else {
				r.err = r.wrap(err)
			}
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = r.wrap(io.ErrNoProgress)
}

// wrap adds the position reading stopped at to a read error.
func (r *Reader) wrap(err error) error {
	return fmt.Errorf("jsonl: reading line %d at byte %d: %w", r.n+1, r.off+int64(r.w-r.r), err)
}

// grow enlarges a full buffer. It grows fourfold, and jumps straight to the
// largest size it can ever need (limit + "\r" + BOM + one byte to notice the
// overflow) once the next step would reach a quarter of the limit, so that
// a maximal line costs little more than the limit in total allocation.
func (r *Reader) grow() {
	most := r.max + 5
	n := int64(len(r.buf)) * 4
	if n*4 >= r.max || n > most {
		n = most
	}
	if n <= int64(len(r.buf)) {
		n = int64(len(r.buf)) * 2
	}
	nb := make([]byte, n)
	copy(nb, r.buf[:r.w])
	r.buf = nb
}

// discard skips the rest of a line that is already known to be too long,
// reading through the buffer without keeping anything but counts.
func (r *Reader) discard() (Line, error) {
	bomLen := 0
	if r.n == 0 && bytes.HasPrefix(r.buf[r.r:r.w], bom) {
		bomLen = len(bom)
	}
	start := r.off
	total := int64(r.w - r.r)
	last := r.buf[r.w-1]
	r.r, r.w, r.scanned = 0, 0, 0
	r.off = start + total
	newline := false
	for {
		if r.err != nil {
			return Line{}, r.err
		}
		if r.eof {
			break
		}
		r.fill()
		if i := bytes.IndexByte(r.buf[:r.w], '\n'); i >= 0 {
			total += int64(i)
			if i > 0 {
				last = r.buf[i-1]
			}
			r.r, r.scanned = i+1, i+1
			newline = true
			break
		}
		total += int64(r.w)
		if r.w > 0 {
			last = r.buf[r.w-1]
		}
		r.off += int64(r.w)
		r.w, r.scanned = 0, 0
	}
	l := Line{
		Number:    r.n + 1,
		Offset:    start,
		Limit:     r.max,
		BOM:       bomLen > 0,
		CR:        last == '\r',
		TooLong:   true,
		NoNewline: !newline,
	}
	l.Len = total - int64(bomLen)
	if l.CR {
		l.Len--
	}
	r.off = start + total
	if newline {
		r.off++
	}
	r.n++
	r.stats.Lines++
	r.stats.TooLong++
	return l, nil
}
