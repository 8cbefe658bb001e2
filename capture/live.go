package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentconform/agentconform/recorder"
	"github.com/agentconform/agentconform/redact"
)

// live is one CLI process a capture driver runs through the recorder and
// talks to: the skeleton the drivers of `exec` streams (driver.run), of
// `codex app-server` (asDriver.run) and of ACP agents (driver.runACP)
// share. It starts the process with its stdout cut into lines and (unless
// stdin is given) a pipe for stdin, and its drive loop hands each line and
// each timer to the driver, kills the process group a grace after the
// driver finished its input, and returns how the process ended.
type live struct {
	in     stdinLines
	proc   Process
	start  time.Time
	lines  <-chan string
	done   <-chan recorded
	cancel func()
	// strace is the file the process's connect(2) calls go to under
	// Options.Strace, "" when it does not run under strace.
	strace string
	grace  time.Duration

	// interruptAt, afterAt and killAt are the drive loop's timers, which
	// the driver's handlers set: the driver's own interrupt (or cancel), a
	// look at the process a while after it, and the kill of a process that
	// outlived its grace.
	interruptAt, afterAt, killAt <-chan time.Time
}

// liveHandlers are what a driver does in the drive loop: with each stdout
// line, when its interrupt timer fires, and when its after timer does
// (nil when it sets none).
type liveHandlers struct {
	line      func(line string)
	interrupt func()
	after     func()
}

// liveConfig is what startLive needs besides the binary and sandbox.
type liveConfig struct {
	// argv is the process's argv as recorded (argv[0] the CLI's name);
	// path, when set, is what runs instead of the binary, with execArgv
	// (a shell that records its pid, node running a wrapper).
	argv     []string
	path     string
	execArgv []string
	// drainWait, when set, is how long the recorder waits for the
	// process's pipes after it exits (the recorder's default otherwise).
	drainWait time.Duration
	// stdin, when set, is the process's stdin; noStdin gives it none
	// (the recorder's empty stdin); otherwise the driver writes it
	// through live.in.
	stdin   io.Reader
	noStdin bool
	// signals carries the signals the driver sends the process, nil for
	// none.
	signals chan os.Signal
	// strace runs the process under Options.Strace (when set).
	strace bool
	// interrupt is what the process's Process record says interrupted it.
	interrupt string
}

// startLive starts a process through the recorder in the sandbox, with
// the capture's timeout and the secrets redacted.
func startLive(ctx context.Context, bin *Binary, sb *Sandbox, red *redact.Redactor, o Options, lc liveConfig) *live {
	l := &live{grace: o.exitGrace(), proc: Process{Argv: make([]string, len(lc.argv)), Interrupt: lc.interrupt}}
	for i, a := range lc.argv {
		l.proc.Argv[i] = red.String(a)
	}
	feed := newLineFeed()
	cfg := recorder.Config{
		Argv: lc.argv, Path: bin.Path, CLI: bin.CLI, CLIVersion: bin.Version,
		Env: sb.Env, Dir: sb.Project, Stdin: lc.stdin, Stdout: feed, Stderr: io.Discard,
		Timeout: o.timeout(), Signals: lc.signals, Redactor: red,
		KillGrace: 5 * time.Second, DrainWait: 2 * time.Second,
	}
	if lc.path != "" {
		cfg.Path, cfg.Argv = lc.path, lc.execArgv
	}
	if lc.drainWait > 0 {
		cfg.DrainWait = lc.drainWait
	}
	if lc.stdin == nil && !lc.noStdin {
		pr, pw := io.Pipe()
		cfg.Stdin, l.in.w = pr, pw
	}
	if lc.strace && o.Strace != "" {
		l.strace = filepath.Join(sb.Root, fmt.Sprintf("strace-%d.txt", time.Now().UnixNano()))
		real := append([]string{cfg.Path}, cfg.Argv[1:]...)
		cfg.Path = o.Strace
		cfg.Argv = append([]string{"strace", "-f", "-qq", "-e", "trace=connect", "-o", l.strace}, real...)
	}
	l.done, l.cancel = record(ctx, cfg, feed)
	l.lines = feed.C()
	l.start = time.Now()
	return l
}

// finish closes the process's stdin, as a client does once it has sent
// everything, and gives the process the capture's grace to exit before
// the drive loop kills it.
func (l *live) finish() {
	l.in.close()
	if l.killAt == nil {
		l.killAt = time.After(l.grace)
	}
}

// drive runs the loop: each stdout line and each timer to its handler,
// the kill a grace after finish (o's log says why), until the process
// ends; then it returns the recording, the process's record, and the
// connections its strace saw leave loopback (nil when it ran without).
func (l *live) drive(o Options, h liveHandlers) (res *recorder.Result, proc Process, leaks []string, err error) {
	defer l.cancel()
	lines := l.lines
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			h.line(line)
		case <-l.interruptAt:
			l.interruptAt = nil
			h.interrupt()
		case <-l.afterAt:
			l.afterAt = nil
			h.after()
		case <-l.killAt:
			l.killAt = nil
			o.logf("%s: still running %v after it was told to stop; killing its process group", l.proc.Argv[0], l.grace)
			l.cancel()
		case r := <-l.done:
			l.in.close()
			if r.err != nil {
				return nil, l.proc, nil, r.err
			}
			l.proc.ended(r.res, l.start)
			if l.strace != "" {
				if leaks, err = straceLeaks(l.strace); err != nil {
					return nil, l.proc, nil, err
				}
			}
			r.res.Transcript.Header.Argv = l.proc.Argv
			return r.res, l.proc, leaks, nil
		}
	}
}

// stdinLines writes JSON lines to a process's stdin until it is closed or
// a write fails (the process is gone); safe for concurrent use.
type stdinLines struct {
	mu   sync.Mutex
	w    io.WriteCloser
	done bool
}

// send writes v as one JSON line.
func (s *stdinLines) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil || s.done {
		return
	}
	if _, err := s.w.Write(append(b, '\n')); err != nil {
		s.done = true
	}
}

// close closes stdin, once.
func (s *stdinLines) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w != nil && !s.done {
		s.done = true
		s.w.Close()
	}
}
