package fakecli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/agentconform/agentconform/jsonl"
)

// inLine is one stdin line as it arrived.
type inLine struct {
	raw []byte        // without the "\n"
	at  time.Duration // when it arrived, since the process started
	// synthetic lines were made by the fake (Claude's prompt in text
	// mode) and are not logged as stdin.
	synthetic bool
}

// stdinMsg is an inLine decoded once, for matching and dispatch.
type stdinMsg struct {
	inLine
	// valid is whether the line is JSON at all; obj is set when it is an
	// object.
	valid bool
	obj   map[string]any
	typ   string // the object's "type", if a string
}

func decodeLine(l inLine) *stdinMsg {
	m := &stdinMsg{inLine: l}
	t := bytes.TrimSpace(l.raw)
	m.valid = json.Valid(t)
	if m.valid {
		m.obj, _ = jsonl.Parse(t, jsonl.ParseOptions{})
		if m.obj != nil {
			m.typ, _ = m.obj["type"].(string)
		}
	}
	return m
}

// lineSource delivers stdin lines to the replay; the channel is closed at
// EOF (or a read error, kept in err).
type lineSource struct {
	ch chan inLine
	// stop tells the reader goroutine nobody reads any more (Run may be
	// called in a process that goes on).
	stop     chan struct{}
	stopOnce sync.Once
	// silent sources (lines the fake already read or made up) do not log
	// their EOF as stdin_closed.
	silent bool
	eof    bool // set by the replay once it saw the channel closed
	err    error
	// closedAt is when stdin reached EOF, for the observation log.
	closedAt time.Duration
}

// maxStdinLine bounds one stdin line; a longer one is cut there (the real
// CLIs have budgets of their own, not all known).
const maxStdinLine = 256 << 20

// readLines starts a goroutine reading r line by line, concurrently with
// the replay.
func readLines(r io.Reader, start time.Time) *lineSource {
	s := &lineSource{ch: make(chan inLine, 64), stop: make(chan struct{})}
	go func() {
		defer close(s.ch)
		br := bufio.NewReaderSize(r, 64<<10)
		var acc []byte
		for {
			chunk, err := br.ReadSlice('\n')
			acc = append(acc, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) && len(acc) < maxStdinLine {
				continue
			}
			if len(acc) > 0 {
				line := bytes.TrimSuffix(acc, []byte("\n"))
				select {
				case s.ch <- inLine{raw: line, at: time.Since(start)}:
				case <-s.stop:
					return
				}
				acc = nil
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				if err != io.EOF {
					s.err = err
				}
				s.closedAt = time.Since(start)
				return
			}
		}
	}()
	return s
}

// close releases the reader goroutine.
func (s *lineSource) close() {
	if s.stop != nil {
		s.stopOnce.Do(func() { close(s.stop) })
	}
}

// staticLines is a source that holds lines already read and is at EOF
// after them.
func staticLines(lines []inLine, closedAt time.Duration) *lineSource {
	s := &lineSource{ch: make(chan inLine, len(lines)), closedAt: closedAt, silent: true}
	for _, l := range lines {
		s.ch <- l
	}
	close(s.ch)
	return s
}
