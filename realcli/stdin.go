package realcli

import (
	"bufio"
	"io"
	"os"
	"sync"
	"time"
)

// stdinRelay passes the adapter's stdin to the CLI and logs each line
// once the CLI has read it, as a fake logs the lines it reads: a line the
// adapter wrote that the CLI never read (it refused its session, or died,
// first) is in no stdin record. What the CLI has read is what has left the
// pipe: the bytes written less those still in it (unreadBytes, on a read
// end of the pipe the relay holds and never reads).
//
// Whether the CLI read the end of its stdin no pipe tells. The end is
// logged (stdin_closed, at the time the adapter closed it) once the CLI
// has read all before it and then wrote anything, or lived closeLead past
// it, time for any reader to see it; a CLI that ends sooner without a
// word was stopped with the close (an adapter that closes stdin only as it
// kills the CLI), and the end goes unlogged, as a fake killed before it
// read the end logs none, unless a signal came after the close: then the
// close came first and the CLI had read all before it (it was reading),
// and the end is logged. A CLI that lived past closeLead and ended with
// bytes unread (it was still loading) gets stdin_closed_unread: the
// adapter did close it in time.
type stdinRelay struct {
	r     *relay
	to    *os.File // the CLI's stdin, write end
	watch *os.File // a read end of it, never read
	start time.Time

	mu        sync.Mutex
	written   int64         // bytes written to the CLI
	pending   []stdinLine   // lines written, not yet read by the CLI
	closed    bool          // the adapter's stdin ended
	closedAt  time.Duration // when it did
	loggedEOF bool
	kick      chan struct{}
}

// stdinLine is a line written to the CLI and not yet logged.
type stdinLine struct {
	text string
	at   time.Duration // when it arrived from the adapter
	end  int64         // written, counting it
}

// pollRead is how often the relay looks at what the CLI has read while
// lines wait.
const pollRead = 5 * time.Millisecond

// closeLead is how long a CLI must outlive the close of its stdin for the
// close to count as one it saw.
const closeLead = 250 * time.Millisecond

// pump reads the adapter's stdin line by line and writes each to the
// CLI at once; a watcher logs them as the CLI reads them.
func (s *stdinRelay) pump(from io.Reader) {
	s.kick = make(chan struct{}, 1)
	go s.watchReads()
	br := bufio.NewReaderSize(from, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			at := time.Since(s.start)
			text := line
			if text[len(text)-1] == '\n' {
				text = text[:len(text)-1]
			}
			s.r.rpc.client(line)
			if _, werr := s.to.Write(line); werr != nil {
				s.to.Close()
				return
			}
			// Counted once it is in the pipe: counted before, a watcher
			// that looked between the two took a line not yet written for
			// one the CLI had read (TestUnreadStdin, on a loaded runner).
			s.mu.Lock()
			s.written += int64(len(line))
			s.pending = append(s.pending, stdinLine{text: string(text), at: at, end: s.written})
			s.mu.Unlock()
			s.poke()
		}
		if err != nil {
			s.mu.Lock()
			s.closed, s.closedAt = true, time.Since(s.start)
			s.mu.Unlock()
			s.to.Close()
			s.poke()
			return
		}
	}
}

func (s *stdinRelay) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// watchReads logs lines as the CLI reads them, until nothing is left to
// log.
func (s *stdinRelay) watchReads() {
	for {
		if s.logRead() {
			return
		}
		select {
		case <-s.kick:
		case <-time.After(pollRead):
		}
	}
}

// logRead logs the lines the CLI has read so far, and the end of its
// stdin once it has read all before it; done reports that the end is
// logged.
func (s *stdinRelay) logRead() (done bool) {
	unread, ok := unreadBytes(s.watch)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		unread = 0 // no way to tell: take every line as read
	}
	read := s.written - int64(unread)
	n := 0
	for _, l := range s.pending {
		if l.end > read {
			break
		}
		s.r.log.logAt(l.at, "stdin", "line", l.text)
		n++
	}
	s.pending = s.pending[n:]
	if s.closed && len(s.pending) == 0 && !s.loggedEOF {
		ended, endedAt := s.r.outputEnd()
		switch {
		case s.r.wroteSince(s.closedAt):
			s.r.log.logAt(s.closedAt, "stdin_closed")
			s.loggedEOF = true
		case ended && endedAt < s.closedAt+closeLead:
			// The CLI ended with the close, without a word after it.
		case time.Since(s.start) >= s.closedAt+closeLead:
			s.r.log.logAt(s.closedAt, "stdin_closed")
			s.loggedEOF = true
		}
	}
	if n > 0 || s.loggedEOF {
		s.r.log.flush()
	}
	return s.loggedEOF
}

// settle logs what the CLI read before it ended; lines still in the pipe
// never reached it. An end of stdin the CLI never came to read (it ended
// first) is logged as stdin_closed_unread: the adapter did close it.
func (s *stdinRelay) settle() {
	if s.kick == nil {
		return
	}
	s.logRead()
	s.mu.Lock()
	ended, endedAt := s.r.outputEnd()
	switch {
	case !s.closed || s.loggedEOF:
	case ended && endedAt >= s.closedAt+closeLead:
		s.r.log.logAt(s.closedAt, "stdin_closed_unread")
	case len(s.pending) == 0 && s.r.log.signalledSince(s.closedAt):
		// Stopped by a signal that came after the close, with all before
		// the end read: the close came first, and the CLI, reading, saw
		// it (a fake exits on it before the signal comes).
		s.r.log.logAt(s.closedAt, "stdin_closed")
	}
	s.loggedEOF = true // the watcher stops
	s.mu.Unlock()
	s.watch.Close()
}
