package fakecli

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// proc is one fake process: what it was started with, and the plumbing
// every personality shares (stdout, observation log, signals, timing,
// faults, randomness).
type proc struct {
	cli   string
	args  []string
	env   func(string) string
	start time.Time

	stdin    io.Reader
	stdinTTY bool
	// stdoutTTY is whether stdout is a terminal (Claude's print mode is
	// implied when it is not).
	stdoutTTY bool
	out       *outWriter
	stderr    io.Writer

	obs    *observer
	timing timing
	seed   int64
	plan   *faultPlan

	sigs     chan os.Signal
	endCh    chan struct{} // closed when a fault ends the process
	endOnce  sync.Once
	endCode  int
	dieSig   syscall.Signal // set when the process must kill itself on the way out
	finished bool
	wire     *os.File // the copy of stdout (EnvWire), or nil
}

// teeWriter copies to copy exactly the bytes w accepted.
type teeWriter struct {
	w    io.Writer
	copy io.Writer
}

// teeChunk is how much of a long write goes to stdout at a time, so that
// the wire copy holds what the reader took, to within this much, even when
// the process is killed while the rest of the line blocks on a full pipe.
const teeChunk = 64 << 10

func (t *teeWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		c := b[:min(len(b), teeChunk)]
		n, err := t.w.Write(c)
		if n > 0 {
			t.copy.Write(c[:n]) // best effort: the copy must never change what the fake does
		}
		written += n
		b = b[n:]
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// WriteString writes s as Write does, without copying it first (bufio
// hands a long line, the 64 MiB ladder line, straight through).
func (t *teeWriter) WriteString(s string) (int, error) {
	return t.Write(unsafe.Slice(unsafe.StringData(s), len(s))) // read only
}

func newProc(cli string, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) (*proc, error) {
	p := &proc{cli: cli, args: args, env: env, start: time.Now(), stdin: stdin, stderr: stderr,
		endCh: make(chan struct{})}
	p.stdinTTY = isTerminalReader(stdin)
	p.stdoutTTY = isTerminalWriter(stdout)

	// Signals first, so that a signal sent right after the process starts
	// is handled as the CLI would, not by the Go runtime's default.
	p.sigs = make(chan os.Signal, 8)
	signal.Notify(p.sigs, watchedSignals...)
	ignoreSIGPIPE()

	var err error
	if p.timing, err = parseTiming(env(EnvTiming)); err != nil {
		return nil, err
	}
	p.seed = 1
	if s := strings.TrimSpace(env(EnvSeed)); s != "" {
		n, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil {
			return nil, fmt.Errorf("%s=%q is not an integer", EnvSeed, s)
		}
		p.seed = n
	}
	if path := env(EnvObserve); path != "" {
		if p.obs, err = openObserver(path, p.start); err != nil {
			return nil, err
		}
	}
	if dir := env(EnvWire); dir != "" {
		f, werr := os.OpenFile(filepath.Join(dir, strconv.Itoa(os.Getpid())+".out"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if werr != nil {
			p.obs.close()
			return nil, fmt.Errorf("%s: %w", EnvWire, werr)
		}
		p.wire = f
		stdout = &teeWriter{w: stdout, copy: f}
	}
	if spec := env(EnvFaults); spec != "" && faultsInScope(args, env) {
		if p.plan, err = parseFaults(spec, p.seed); err != nil {
			p.obs.close()
			return nil, fmt.Errorf("%s: %w", EnvFaults, err)
		}
	}
	p.out = newOutWriter(stdout, p.plan, p.end)
	return p, nil
}

// end is what a stdout fault calls to end the process (after cutting
// stdout): the replay stops at its next step or wait and exits with code.
func (p *proc) end(code int) {
	p.endOnce.Do(func() {
		p.endCode = code
		close(p.endCh)
	})
}

// ended reports whether a fault ended the process.
func (p *proc) ended() bool {
	select {
	case <-p.endCh:
		return true
	default:
		return false
	}
}

// rng returns a generator seeded from the seed and the given parts, so
// that different uses (a session, a process part) draw different but
// reproducible values.
func (p *proc) rng(parts ...string) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d", p.seed)
	for _, s := range parts {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	sum := h.Sum64()
	return rand.New(rand.NewPCG(sum, sum^0x9e3779b97f4a7c15))
}

// elapsed is the time since the process started, for the observation log.
func (p *proc) elapsed() time.Duration { return time.Since(p.start) }

// flagsError reports an invalid invocation the way the CLI does: the
// message on stderr, nothing on stdout, and the CLI's status.
func (p *proc) flagsError(msg string, code int) int {
	if msg != "" && !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	io.WriteString(p.stderr, msg)
	p.obs.log("flags_error", "message", strings.TrimSuffix(msg, "\n"), "exit_code", code)
	return code
}

// harnessError reports a mistake of whoever set the fake up (not of the
// adapter under test), clearly marked as coming from the fake.
func (p *proc) harnessError(err error) int {
	fmt.Fprintf(p.stderr, "agentconform fake %s: %v\n", p.cli, err)
	p.obs.log("flags_error", "message", err.Error(), "exit_code", exitHarness)
	return exitHarness
}

// finish writes the exit record and, when the process must die by a
// signal, kills itself. It returns the status Run returns.
func (p *proc) finish(code int) int {
	if p.finished {
		return code
	}
	p.finished = true
	if p.ended() {
		code = p.endCode
	}
	p.out.flush()
	for _, a := range p.plan.applied() {
		p.obs.log("fault", "fault", a.Fault, "params", a.Params, "detail", a.Detail)
	}
	if p.dieSig != 0 {
		p.obs.log("exit", "signal", signalName(p.dieSig))
		p.obs.close()
		signal.Stop(p.sigs)
		return killSelf(p.dieSig)
	}
	p.obs.log("exit", "code", code)
	return code
}

// close releases what newProc set up.
func (p *proc) close() {
	signal.Stop(p.sigs)
	p.obs.close()
	if p.wire != nil {
		p.wire.Close()
	}
}

// timing says how long a replay sleeps: before a step with a recorded time
// (until scale × t after the start; never when scale is 0, "fast") and for
// a delay step (scale × delay, and delay × 1 when fast).
type timing struct {
	scale float64
}

func parseTiming(s string) (timing, error) {
	switch s = strings.TrimSpace(s); s {
	case "", "fast":
		return timing{scale: 0}, nil
	case "recorded":
		return timing{scale: 1}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1000 {
		return timing{}, fmt.Errorf(`%s=%q: want "fast", "recorded" or a scale factor from 0 to 1000`, EnvTiming, s)
	}
	return timing{scale: f}, nil
}

// at is how long after the start a step recorded at t ms runs; ok is false
// when timing is fast.
func (t timing) at(ms int64) (time.Duration, bool) {
	if t.scale == 0 {
		return 0, false
	}
	return time.Duration(float64(ms) * t.scale * float64(time.Millisecond)), true
}

// delay is how long a delay step of ms sleeps.
func (t timing) delay(ms int64) time.Duration {
	s := t.scale
	if s == 0 {
		s = 1
	}
	return time.Duration(float64(ms) * s * float64(time.Millisecond))
}

// outWriter writes stdout lines, each as one Write call to the fault
// writer when faults are on, or into a buffer flushed before every wait
// otherwise (one write syscall per burst of lines).
type outWriter struct {
	buf     *bufio.Writer // nil when faults write straight through
	w       io.Writer
	scratch []byte
	err     error
}

func newOutWriter(stdout io.Writer, plan *faultPlan, end func(int)) *outWriter {
	if w, faulty := plan.stdout(stdout, end); faulty {
		return &outWriter{w: w}
	}
	b := bufio.NewWriterSize(stdout, 64<<10)
	return &outWriter{buf: b, w: b}
}

// line writes s and, if newline, "\n", in one Write to the fault
// writers (through the buffer otherwise, which a long line bypasses
// without being copied); it returns the bytes written.
func (o *outWriter) line(s string, newline bool) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	if o.buf != nil {
		n, err := o.buf.WriteString(s)
		if err == nil && newline {
			err = o.buf.WriteByte('\n')
			if err == nil {
				n++
			}
		}
		if err != nil {
			o.err = fmt.Errorf("writing stdout: %w", err)
		}
		return n, o.err
	}
	o.scratch = append(o.scratch[:0], s...)
	if newline {
		o.scratch = append(o.scratch, '\n')
	}
	n, err := o.w.Write(o.scratch)
	if err != nil {
		o.err = fmt.Errorf("writing stdout: %w", err)
	}
	if cap(o.scratch) > 1<<20 {
		o.scratch = nil // do not keep a huge line's buffer
	}
	return n, o.err
}

// flush writes out what is buffered.
func (o *outWriter) flush() error {
	if o.buf == nil || o.err != nil {
		return o.err
	}
	if err := o.buf.Flush(); err != nil {
		o.err = fmt.Errorf("writing stdout: %w", err)
	}
	return o.err
}

// faultsInScope reports whether this process applies EnvFaults: always,
// unless EnvFaultsScope is "first", where only the first process of the
// session store that is not a --version or --help probe does (it claims
// a marker file there, atomically), or "later", where every such process
// but the first does.
func faultsInScope(args []string, env func(string) string) bool {
	scope := env(EnvFaultsScope)
	if scope != "first" && scope != "later" {
		return true
	}
	for _, a := range args {
		switch a {
		case "--version", "-v", "-V", "--help", "-h":
			return false
		}
	}
	dir := env(EnvSessions)
	if dir == "" {
		return true
	}
	f, err := os.OpenFile(filepath.Join(dir, ".agentconform-faulted"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return scope == "later" // not the first
	}
	f.Close()
	return scope == "first"
}
