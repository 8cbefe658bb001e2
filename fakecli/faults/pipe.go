package faults

import (
	"fmt"
	"io"
	"math/rand"
	"sync"
	"time"
)

// Stdout wraps the fake's stdout with the plan's writer faults (slicer,
// latency, bandwidth, limit_data, pipe_cut), in spec order: the first listed sees
// the engine's writes, and each passes its own writes to the next. The
// engine writes each line, newline included, in one Write call; the
// returned writer is safe for concurrent use.
//
// end is called, once, when a fault has ended the output (limit_data,
// after writing a partial line): the engine then closes stdout and exits
// with code. It is called after the Write that cut the output has
// released the writer, so it may write. Writes after that are discarded.
//
// Without writer faults (or on a nil plan) Stdout returns w itself, so
// the fault-free path costs nothing.
func (p *Plan) Stdout(w io.Writer, end func(code int)) io.Writer {
	if p == nil {
		return w
	}
	var wrapped []*fault
	for _, f := range p.faults {
		if f.def.wrap != nil {
			wrapped = append(wrapped, f)
		}
	}
	if len(wrapped) == 0 {
		return w
	}
	e := &ender{end: end}
	out := w
	for i := len(wrapped) - 1; i >= 0; i-- {
		out = wrapped[i].def.wrap(p, wrapped[i], out, e)
	}
	return &serial{w: out, e: e}
}

// ender remembers that a fault ended the output, and calls end once.
type ender struct {
	end     func(code int)
	mu      sync.Mutex
	pending bool
	fired   bool
	code    int
}

// request asks for end(code) once the current Write returns.
func (e *ender) request(code int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.pending && !e.fired {
		e.pending, e.code = true, code
	}
}

// flush calls end if a fault asked for it.
func (e *ender) flush() {
	e.mu.Lock()
	if !e.pending || e.fired {
		e.mu.Unlock()
		return
	}
	e.pending, e.fired = false, true
	code := e.code
	e.mu.Unlock()
	if e.end != nil {
		e.end(code)
	}
}

// serial serialises writes through the chain of fault writers.
type serial struct {
	mu sync.Mutex
	w  io.Writer
	e  *ender
}

func (s *serial) Write(b []byte) (int, error) {
	s.mu.Lock()
	n, err := s.w.Write(b)
	s.mu.Unlock()
	s.e.flush()
	return n, err
}

// once records an Applied entry the first time it is called (callers
// check done first, to format the detail only once).
type once struct {
	p    *Plan
	f    *fault
	done bool
}

func (o *once) record(detail string, resolved ...string) {
	if !o.done {
		o.done = true
		o.p.record(o.f, detail, resolved...)
	}
}

// writeAll writes b to w, turning a short write into an error.
func writeAll(w io.Writer, b []byte) (int, error) {
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return n, err
}

// slicer splits every write into several.
type slicer struct {
	once
	w     io.Writer
	rng   *rand.Rand
	max   int
	delay time.Duration
	utf8  bool
}

func wrapSlicer(p *Plan, f *fault, w io.Writer, _ *ender) io.Writer {
	return &slicer{once: once{p: p, f: f}, w: w, rng: f.rng(p.seed, streamWriter),
		max: int(f.ints["max"]), delay: time.Duration(f.ints["delay_us"]) * time.Microsecond, utf8: f.ints["utf8"] == 1}
}

// runeCuts returns where utf8=1 cuts b: after the lead byte of every
// multibyte UTF-8 sequence (a byte 0xC2 to 0xF4 followed by a
// continuation byte), so that each such character is split across two
// writes; len(b) last.
func runeCuts(b []byte) []int {
	var cuts []int
	for i := 0; i+1 < len(b); i++ {
		if b[i] >= 0xC2 && b[i] <= 0xF4 && b[i+1]&0xC0 == 0x80 {
			cuts = append(cuts, i+1)
		}
	}
	return append(cuts, len(b))
}

func (s *slicer) Write(b []byte) (int, error) {
	if s.utf8 {
		return s.writeRunes(b)
	}
	if !s.done && s.max > 0 {
		s.record(fmt.Sprintf("every stdout write split into writes of 1 to %d bytes, from the first write on", s.max))
	} else if !s.done {
		s.record("every stdout write split into at least two writes of random sizes, from the first write on")
	}
	done := 0
	for done < len(b) {
		rest := len(b) - done
		var n int
		switch {
		case s.max > 0:
			n = 1 + s.rng.Intn(min(s.max, rest))
		case done == 0 && rest > 1:
			n = 1 + s.rng.Intn(rest-1) // never the whole line at once
		default:
			n = 1 + s.rng.Intn(rest)
		}
		if done > 0 && s.delay > 0 {
			s.p.sleep(s.delay)
		}
		m, err := writeAll(s.w, b[done:done+n])
		done += m
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// writeRunes writes b in pieces cut inside its multibyte characters.
func (s *slicer) writeRunes(b []byte) (int, error) {
	if !s.done {
		s.record("every stdout write split inside each of its multibyte UTF-8 characters, after the first byte, from the first write on")
	}
	done := 0
	for _, cut := range runeCuts(b) {
		if done > 0 && s.delay > 0 {
			s.p.sleep(s.delay)
		}
		m, err := writeAll(s.w, b[done:cut])
		done += m
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// latency sleeps before every write, or (line) before one.
type latency struct {
	once
	w      io.Writer
	rng    *rand.Rand
	ms     int64
	jitter int64
	line   int64 // 0: every write; else only the line-th (1-based)
	n      int64 // writes so far
}

func wrapLatency(p *Plan, f *fault, w io.Writer, _ *ender) io.Writer {
	return &latency{once: once{p: p, f: f}, w: w, rng: f.rng(p.seed, streamWriter), ms: f.ints["ms"], jitter: f.ints["jitter"], line: f.ints["line"]}
}

func (l *latency) Write(b []byte) (int, error) {
	l.n++
	if l.line > 0 && l.n != l.line {
		return writeAll(l.w, b)
	}
	if !l.done {
		if l.line > 0 {
			l.record(fmt.Sprintf("stdout write %d delayed by %d ms (± %d ms)", l.line, l.ms, l.jitter))
		} else {
			l.record(fmt.Sprintf("every stdout write delayed by %d ms (± %d ms), from the first write on", l.ms, l.jitter))
		}
	}
	d := l.ms
	if l.jitter > 0 {
		d += l.rng.Int63n(2*l.jitter+1) - l.jitter
	}
	if d > 0 {
		l.p.sleep(time.Duration(d) * time.Millisecond)
	}
	return writeAll(l.w, b)
}

// bandwidth writes in pieces of 1/20 s worth of bytes and sleeps after
// each for as long as the piece takes at the rate.
type bandwidth struct {
	once
	w     io.Writer
	bps   int64
	chunk int
}

func wrapBandwidth(p *Plan, f *fault, w io.Writer, _ *ender) io.Writer {
	bps := f.ints["bps"]
	return &bandwidth{once: once{p: p, f: f}, w: w, bps: bps, chunk: int(max(1, min(bps/20, 1<<20)))}
}

func (bw *bandwidth) Write(b []byte) (int, error) {
	if !bw.done {
		bw.record(fmt.Sprintf("stdout throttled to %d bytes per second, from the first write on", bw.bps))
	}
	done := 0
	for done < len(b) {
		n := min(bw.chunk, len(b)-done)
		m, err := writeAll(bw.w, b[done:done+n])
		done += m
		if err != nil {
			return done, err
		}
		bw.p.sleep(time.Duration(float64(n) / float64(bw.bps) * float64(time.Second)))
	}
	return done, nil
}

// limitData passes the first limit bytes, then ends the output.
type limitData struct {
	once
	w       io.Writer
	e       *ender
	limit   int64
	written int64
	writes  int
	cut     bool
}

func wrapLimitData(p *Plan, f *fault, w io.Writer, e *ender) io.Writer {
	return &limitData{once: once{p: p, f: f}, w: w, e: e, limit: f.ints["bytes"]}
}

func (l *limitData) Write(b []byte) (int, error) {
	if l.cut {
		return len(b), nil
	}
	l.writes++
	left := l.limit - l.written
	if int64(len(b)) < left {
		n, err := writeAll(l.w, b)
		l.written += int64(n)
		return n, err
	}
	l.cut = true
	if left > 0 {
		n, _ := writeAll(l.w, b[:left])
		l.written += int64(n)
	}
	l.record(fmt.Sprintf("stdout ended after %d bytes, %d bytes into write %d (of %d bytes); exit 0", l.written, left, l.writes, len(b)))
	l.e.request(0)
	return len(b), nil
}

// pipeCut writes the first write longer than at only up to at bytes, and
// discards it and everything after, without ending the process: Gemini
// CLI's process.exit with the tail of a big line still queued behind the
// full pipe (testdata/captures/gemini/pipe_cut.long-output.jsonl: the cut
// fell 3 × 64 KiB into a 400 KB line, the lines before it whole;
// pipe_cut.meta.json: 5 × 64 KiB into a 368 KB line in other runs).
type pipeCut struct {
	once
	w       io.Writer
	at      int64
	written int64
	writes  int
	cut     bool
}

func wrapPipeCut(p *Plan, f *fault, w io.Writer, _ *ender) io.Writer {
	return &pipeCut{once: once{p: p, f: f}, w: w, at: f.ints["at"]}
}

func (c *pipeCut) Write(b []byte) (int, error) {
	if c.cut {
		return len(b), nil
	}
	c.writes++
	if int64(len(b)) <= c.at {
		n, err := writeAll(c.w, b)
		c.written += int64(n)
		return n, err
	}
	c.cut = true
	n, _ := writeAll(c.w, b[:c.at])
	c.written += int64(n)
	c.record(fmt.Sprintf("stdout lost %d bytes into write %d (of %d bytes), after %d bytes in all; the process goes on and exits as the transcript says", c.at, c.writes, len(b), c.written))
	return len(b), nil
}
