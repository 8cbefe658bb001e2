package reference

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/jsonl/linesplit"
)

// proc is one running CLI process: in its own process group, stdout read
// line by line with no length limit, stderr drained concurrently (to the
// caller's writer and a tail kept for error messages), always reaped.
type proc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser // nil when the CLI's stdin is /dev/null or was closed

	lines    chan outLine  // stdout lines; closed after the last one
	quit     chan struct{} // closed by abandon: nobody reads lines any more
	quitOnce sync.Once

	exited  chan struct{} // closed when the process was reaped
	errDone chan struct{} // closed when all of stderr has been passed on
	state   *os.ProcessState
	waitErr error

	stdoutR *os.File
	tail    *tailBuffer
	wg      sync.WaitGroup // the reader goroutines

	// active is when the CLI last wrote (stdout or stderr), the session
	// last finished handling one of its lines, or a turn last began, in
	// UnixNano: the watchdog's clock. The reader stops reading while the
	// session is behind, so the CLI's writes block then: that is the
	// adapter's slowness, not the CLI's silence.
	active atomic.Int64

	stdinMu sync.Mutex
}

// outLine is one stdout line, without its newline. partial marks a last
// line the CLI did not end with a newline (it may be cut mid-line).
type outLine struct {
	data    []byte
	partial bool
}

// procSpec is what startProc runs.
type procSpec struct {
	name   string   // for messages: "claude", "codex", "gemini"
	path   string   // the executable
	args   []string // without argv[0]
	dir    string
	env    []string
	stdin  bool   // give the CLI a stdin pipe (else /dev/null)
	input  string // written to the stdin pipe, which is then closed (when stdin is false and input is set)
	stderr io.Writer
}

// startProc starts a process as spec says.
func startProc(spec procSpec) (*proc, error) {
	cmd := exec.Command(spec.path, spec.args...)
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	setProcessGroup(cmd)

	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting %s: stdout pipe: %w", spec.name, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("starting %s: stderr pipe: %w", spec.name, err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	p := &proc{name: spec.name, cmd: cmd, lines: make(chan outLine, 64), quit: make(chan struct{}), exited: make(chan struct{}), errDone: make(chan struct{}), stdoutR: outR, tail: &tailBuffer{max: 4 << 10}}
	p.touch()

	var inW io.WriteCloser
	if spec.stdin || spec.input != "" {
		in, err := cmd.StdinPipe()
		if err != nil {
			closeAll(outR, outW, errR, errW)
			return nil, fmt.Errorf("starting %s: stdin pipe: %w", spec.name, err)
		}
		inW = in
	}
	if err := cmd.Start(); err != nil {
		closeAll(outR, outW, errR, errW)
		return nil, fmt.Errorf("starting %s (%s): %w", spec.name, spec.path, err)
	}
	// The child has its copies; ours would keep the pipes open forever.
	closeAll(outW, errW)

	p.wg.Add(2)
	go p.readStdout(outR)
	go p.drainStderr(errR, spec.stderr)
	go p.reap()

	if spec.stdin {
		p.stdin = inW
	} else if inW != nil {
		go func() {
			_, _ = io.WriteString(inW, spec.input)
			inW.Close()
		}()
	}
	return p, nil
}

func closeAll(fs ...io.Closer) {
	for _, f := range fs {
		f.Close()
	}
}

// readStdout splits stdout into lines (linesplit.Splitter: no length limit, a
// 64 MiB line arrives whole) and hands them to the session.
func (p *proc) readStdout(r *os.File) {
	defer p.wg.Done()
	defer close(p.lines)
	send := func(l outLine) {
		select {
		case p.lines <- l:
		case <-p.quit:
			// Nobody listens: keep draining so the CLI never blocks on a
			// full pipe while it is being stopped.
		}
	}
	// The lines are the receiver's (Keep): a 64 MiB line gathered across
	// reads is handed over in the splitter's buffer, not copied again.
	sp := linesplit.Splitter{Keep: true}
	buf := make([]byte, 256<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.touch()
			sp.Feed(buf[:n], func(l []byte) { send(outLine{data: l}) })
		}
		if err != nil {
			sp.Flush(func(l []byte, partial bool) { send(outLine{data: l, partial: partial}) })
			return
		}
	}
}

// drainStderr copies stderr to w (if any) and keeps its tail. A slow or
// failing w never blocks the CLI: write errors stop the copy to w only.
func (p *proc) drainStderr(r *os.File, w io.Writer) {
	defer p.wg.Done()
	defer close(p.errDone)
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.touch()
			p.tail.Write(buf[:n])
			if w != nil {
				if _, werr := w.Write(buf[:n]); werr != nil {
					w = nil
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// reap waits for the process, then kills what is left of its process group
// (children the CLI started and abandoned), and closes stdout after a
// grace period if a leftover process still holds it.
func (p *proc) reap() {
	err := p.cmd.Wait()
	p.state, p.waitErr = p.cmd.ProcessState, err
	killGroup(p.cmd, syscall.SIGKILL)
	close(p.exited)
	go func() {
		done := make(chan struct{})
		go func() { p.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			p.stdoutR.Close() // unblocks the reader; the CLI is gone anyway
		}
	}()
}

// touch notes activity now: the CLI wrote, or a turn began.
func (p *proc) touch() { p.active.Store(time.Now().UnixNano()) }

// silentFor is how long the CLI has written nothing (since a turn began).
func (p *proc) silentFor() time.Duration {
	return time.Since(time.Unix(0, p.active.Load()))
}

// abandon tells the stdout reader that nobody will read lines any more.
func (p *proc) abandon() { p.quitOnce.Do(func() { close(p.quit) }) }

// writeLine writes one line to the CLI's stdin.
func (p *proc) writeLine(b []byte) error {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.stdin == nil {
		return fmt.Errorf("%s: stdin is closed", p.name)
	}
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing to %s: %w", p.name, err)
	}
	return nil
}

// closeStdin closes the CLI's stdin (once).
func (p *proc) closeStdin() {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.stdin != nil {
		p.stdin.Close()
		p.stdin = nil
	}
}

// signal sends sig to the CLI's process group.
func (p *proc) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
	default:
		killGroup(p.cmd, sig)
	}
}

// waitExit waits up to d for the process to exit; it reports whether it did.
func (p *proc) waitExit(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-p.exited:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// waitStderr waits up to d for the last of stderr to be passed on, so
// that a turn or a session is not reported over while the CLI's last
// words are still on their way (a 4 MiB flood could lose its tail).
func (p *proc) waitStderr(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.errDone:
	case <-t.C:
	}
}

// stop ends the process: SIGTERM to its group, then SIGKILL after grace.
// It returns once the process is reaped.
func (p *proc) stop(grace time.Duration) {
	p.closeStdin()
	p.signal(syscall.SIGTERM)
	if !p.waitExit(grace) {
		p.signal(syscall.SIGKILL)
		<-p.exited
	}
}

// exitErr describes how the reaped process ended: nil for exit status 0.
func (p *proc) exitErr() error {
	<-p.exited
	st := p.state
	if st == nil {
		if p.waitErr != nil {
			return fmt.Errorf("%s: %w", p.name, p.waitErr)
		}
		return nil
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return &ExitError{CLI: p.name, Signal: signalName(ws.Signal()), Stderr: p.tail.String()}
	}
	if st.ExitCode() != 0 {
		return &ExitError{CLI: p.name, Code: st.ExitCode(), Stderr: p.tail.String()}
	}
	return nil
}

// ExitError is a CLI that exited with a non-zero status or died by a
// signal.
type ExitError struct {
	// CLI is the agent's name.
	CLI string
	// Code is the exit status (0 when Signal is set).
	Code int
	// Signal names the signal that killed it, "" if none did.
	Signal string
	// Stderr is the end of what the CLI wrote to stderr.
	Stderr string
}

// Error says how the CLI ended, with the last line of its stderr.
func (e *ExitError) Error() string {
	msg := fmt.Sprintf("%s exited with status %d", e.CLI, e.Code)
	if e.Signal != "" {
		msg = fmt.Sprintf("%s was killed by %s", e.CLI, e.Signal)
	}
	if last := lastLine(e.Stderr); last != "" {
		msg += ": " + last
	}
	return msg
}

// signalName is a signal's conventional name ("SIGKILL"); Go's own String
// gives a description ("killed") that reads badly in "killed by killed".
func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT",
		syscall.SIGHUP: "SIGHUP", syscall.SIGQUIT: "SIGQUIT", syscall.SIGPIPE: "SIGPIPE", syscall.SIGSEGV: "SIGSEGV",
		syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS"}
	if n, ok := names[s]; ok {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}

// IsExitError reports whether err is (or wraps) an ExitError.
func IsExitError(err error) bool {
	var e *ExitError
	return errors.As(err, &e)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// Write appends p, dropping the oldest bytes beyond max.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns the kept bytes.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
