//go:build linux

package fakecli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowReader delays its first read: the fake's stdin reader has not yet
// got to the EOF that is already in the pipe.
type slowReader struct {
	r     io.Reader
	delay time.Duration
	slept bool
}

func (s *slowReader) Read(b []byte) (int, error) {
	if !s.slept {
		s.slept = true
		time.Sleep(s.delay)
	}
	return s.r.Read(b)
}

// TestDrainWaitsForAPendingEOF: a fake that ends (a signal, say) while
// the EOF of a stdin its adapter closed just before is still in the pipe
// logs stdin_closed; it had logged none, and invocation/claude-stdin
// failed an adapter that closed stdin and then sent SIGTERM
// (claude-code-provider on claude/single-tool/banner, the fakes only).
// A stdin still open is not waited for.
func TestDrainWaitsForAPendingEOF(t *testing.T) {
	for _, closed := range []bool{true, false} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		logPath := filepath.Join(t.TempDir(), "observe.jsonl")
		start := time.Now()
		obs, err := openObserver(logPath, start)
		if err != nil {
			t.Fatal(err)
		}
		if closed {
			w.Close()
		} else {
			defer w.Close()
		}
		p := &proc{obs: obs, stdin: r}
		e := newEngine(p, nil, readLines(&slowReader{r: r, delay: 50 * time.Millisecond}, start))
		if got := stdinPending(r); got != closed {
			t.Errorf("stdinPending = %v on a pipe closed=%v, empty", got, closed)
		}
		e.drainStdin()
		obs.flush()
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		logged := strings.Contains(string(b), `"stdin_closed"`)
		if closed && !logged {
			t.Errorf("stdin closed before the end: no stdin_closed in the log:\n%s", b)
		}
		if !closed && logged {
			t.Errorf("stdin open: stdin_closed logged")
		}
		r.Close()
	}
}
