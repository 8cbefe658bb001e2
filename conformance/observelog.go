package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/agentconform/agentconform/fakecli"
)

// observeLog reads the fakes' observation log as it grows, as
// fakecli.ReadObservations reads it whole (a torn last line waits for its
// end; the records stop at the first line that does not decode), but
// parsing each record once: the runner looks at the log every few milliseconds while a
// case settles, and a 64 MiB ladder line alone logs 16,000 records. It is
// safe for concurrent use (the deadline's kill reads it too).
type observeLog struct {
	path string

	mu   sync.Mutex
	off  int64 // bytes of the file consumed (up to the last full line)
	n    int   // lines consumed
	recs []fakecli.Observation
	err  error // sticky: the first line that did not decode
	buf  []byte
}

func newObserveLog(path string) *observeLog { return &observeLog{path: path} }

// read returns the records logged so far, and the error that stopped
// them (a record that does not decode; the file not there yet). The slice
// is the caller's to append to (its capacity ends at its length).
func (l *observeLog) read() ([]fakecli.Observation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.err
	if err == nil {
		err = l.more()
	}
	return l.recs[:len(l.recs):len(l.recs)], err
}

// more parses the lines completed since the last read.
func (l *observeLog) more() error {
	f, err := os.Open(l.path)
	if err != nil {
		return err // no fake has started yet
	}
	defer f.Close()
	if len(l.buf) == 0 {
		l.buf = make([]byte, 64<<10)
	}
	for {
		n, err := f.ReadAt(l.buf, l.off)
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading the observation log: %w", err)
		}
		data := l.buf[:n]
		if n == len(l.buf) && bytes.IndexByte(data, '\n') < 0 {
			// A record longer than the buffer: read it in a bigger one.
			l.buf = make([]byte, 2*len(l.buf))
			continue
		}
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break // a torn last line, or one still being written
			}
			line := data[:i]
			data = data[i+1:]
			l.off += int64(i + 1)
			l.n++
			if t := bytes.TrimSpace(line); len(t) > 0 {
				o, ok := writeRecord(t)
				if ok {
					l.recs = append(l.recs, o)
					continue
				}
				if uerr := json.Unmarshal(t, &o); uerr != nil {
					l.err = fmt.Errorf("observation log line %d: %w", l.n, uerr)
					return l.err
				}
				l.recs = append(l.recs, o)
			}
		}
		if n < len(l.buf) {
			return nil
		}
	}
}

// writeRecord decodes the commonest record of the log, a write to stdout
// or stderr, as the fakes write it ({"t_ms":T,"pid":P,"kind":"out",
// "bytes":B,"line":L}), without encoding/json, which took a tenth of the
// runner's time on the log (a 64 MiB Claude line alone logs 4,096 of
// them). ok is false for any other line, which is then decoded in full.
func writeRecord(b []byte) (o fakecli.Observation, ok bool) {
	field := func(name string) (int64, bool) {
		if !bytes.HasPrefix(b, []byte(name)) {
			return 0, false
		}
		b = b[len(name):]
		n, i := int64(0), 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if i == 18 {
				return 0, false // past what an int64 surely holds: the long way
			}
			n = n*10 + int64(b[i]-'0')
		}
		if i == 0 || i > 1 && b[0] == '0' {
			return 0, false // no digits, or a leading zero JSON does not allow
		}
		b = b[i:]
		return n, true
	}
	tms, ok1 := field(`{"t_ms":`)
	pid, ok2 := field(`,"pid":`)
	if !ok1 || !ok2 {
		return o, false
	}
	var kind string
	switch {
	case bytes.HasPrefix(b, []byte(`,"kind":"out"`)):
		kind = "out"
	case bytes.HasPrefix(b, []byte(`,"kind":"err"`)):
		kind = "err"
	default:
		return o, false
	}
	b = b[len(`,"kind":"out"`):]
	n, ok3 := field(`,"bytes":`)
	step, ok4 := field(`,"line":`)
	if !ok3 || !ok4 || string(b) != "}" || pid > 1<<31-1 || n > 1<<31-1 || step > 1<<31-1 {
		return o, false
	}
	return fakecli.Observation{TMS: tms, PID: int(pid), Kind: kind, Bytes: int(n), Step: int(step)}, true
}
