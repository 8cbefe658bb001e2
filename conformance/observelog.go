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
				var o fakecli.Observation
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
