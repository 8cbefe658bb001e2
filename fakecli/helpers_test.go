//go:build unix

package fakecli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
)

// deadline bounds every fake process a test starts; lineTimeout is how
// long a test waits for one stdout line.
const (
	deadline    = 30 * time.Second
	lineTimeout = 10 * time.Second
)

// result is how a fake process ended.
type result struct {
	stdout, stderr string
	// code is the status as a shell reports it: the exit status, or 128+N
	// for death by signal N (then signaled is set).
	code     int
	signaled bool
}

// cmdOpts configure one fake process.
type cmdOpts struct {
	stdin string   // written, then stdin is closed
	env   []string // extra NAME=value
	dir   string   // working directory; "" is a fresh temp dir
}

// command makes an exec.Cmd for a fake with a deadline that kills the
// whole process group.
func command(t testing.TB, f *fakecli.Fakes, cli string, args []string, o cmdOpts) (*exec.Cmd, context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	cmd := exec.CommandContext(ctx, f.Path(cli), args...)
	cmd.Args[0] = cli
	// A race-enabled test binary would otherwise sleep 1 s at every exit.
	cmd.Env = append(append(f.Env(), "GORACE=atexit_sleep_ms=0"), o.env...)
	cmd.Dir = o.dir
	if cmd.Dir == "" {
		cmd.Dir = t.TempDir()
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	return cmd, ctx, cancel
}

// runFake runs a fake to the end.
func runFake(t testing.TB, f *fakecli.Fakes, cli string, args []string, o cmdOpts) result {
	t.Helper()
	cmd, ctx, cancel := command(t, f, cli, args, o)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd.Stdin = strings.NewReader(o.stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s: still running at the %v deadline\nstdout: %s\nstderr: %s", strings.Join(cmd.Args, " "), deadline, stdout.String(), stderr.String())
	}
	return finished(t, cmd, err, stdout.String(), stderr.String())
}

func finished(t testing.TB, cmd *exec.Cmd, err error, stdout, stderr string) result {
	t.Helper()
	r := result{stdout: stdout, stderr: stderr}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v\nstderr: %s", strings.Join(cmd.Args, " "), err, stderr)
	}
	if cmd.ProcessState == nil {
		t.Fatalf("%s: did not run", strings.Join(cmd.Args, " "))
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		r.code, r.signaled = 128+int(ws.Signal()), true
	default:
		r.code = ws.ExitStatus()
	}
	return r
}

// live is a fake process a test talks to line by line.
type live struct {
	t      testing.TB
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdin  io.WriteCloser
	lines  chan string
	all    []string

	mu     sync.Mutex
	stderr bytes.Buffer
	stdout bytes.Buffer
}

// startFake starts a fake with pipes on stdin and stdout.
func startFake(t testing.TB, f *fakecli.Fakes, cli string, args []string, o cmdOpts) *live {
	t.Helper()
	cmd, _, cancel := command(t, f, cli, args, o)
	l := &live{t: t, cmd: cmd, cancel: cancel, lines: make(chan string, 1024)}
	var err error
	if l.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = lockedWriter{&l.mu, &l.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		l.cmd.Wait()
	})
	go func() {
		defer close(l.lines)
		br := bufio.NewReader(out)
		for {
			s, err := br.ReadString('\n')
			if s != "" {
				l.mu.Lock()
				l.stdout.WriteString(s)
				l.mu.Unlock()
				l.lines <- strings.TrimSuffix(s, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	return l
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(b)
}

// send writes one stdin line.
func (l *live) send(line string) {
	l.t.Helper()
	if _, err := io.WriteString(l.stdin, line+"\n"); err != nil {
		l.t.Fatalf("writing stdin: %v", err)
	}
}

// next returns the next stdout line, failing after timeout.
func (l *live) next(timeout time.Duration) string {
	l.t.Helper()
	select {
	case s, ok := <-l.lines:
		if !ok {
			l.t.Fatalf("stdout closed; so far:\n%s\nstderr: %s", strings.Join(l.all, "\n"), l.stderrText())
		}
		l.all = append(l.all, s)
		return s
	case <-time.After(timeout):
		l.t.Fatalf("no stdout line within %v; so far:\n%s\nstderr: %s", timeout, strings.Join(l.all, "\n"), l.stderrText())
	}
	return ""
}

// nextEvent returns the next stdout line decoded.
func (l *live) nextEvent() map[string]any {
	l.t.Helper()
	s := l.next(lineTimeout)
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		l.t.Fatalf("stdout line is not JSON: %v\n%s", err, s)
	}
	return m
}

// until reads stdout lines until one decodes to an event pred accepts.
func (l *live) until(what string, pred func(map[string]any) bool) map[string]any {
	l.t.Helper()
	end := time.Now().Add(lineTimeout)
	for time.Now().Before(end) {
		ev := l.nextEvent()
		if pred(ev) {
			return ev
		}
	}
	l.t.Fatalf("no %s on stdout", what)
	return nil
}

// quiet asserts that no stdout line comes within d.
func (l *live) quiet(d time.Duration) {
	l.t.Helper()
	select {
	case s, ok := <-l.lines:
		if ok {
			l.t.Fatalf("unexpected stdout line: %s", s)
		}
	case <-time.After(d):
	}
}

// wait closes stdin and waits for the process to end; remaining stdout
// lines are collected into rest.
func (l *live) wait() (res result, rest []string) {
	l.t.Helper()
	l.stdin.Close()
	for s := range l.lines {
		rest = append(rest, s)
	}
	err := l.cmd.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return finished(l.t, l.cmd, err, l.stdout.String(), l.stderr.String()), rest
}

// signal sends sig to the fake process (not its group).
func (l *live) signal(sig syscall.Signal) {
	l.t.Helper()
	if err := l.cmd.Process.Signal(sig); err != nil {
		l.t.Fatalf("signal: %v", err)
	}
}

func (l *live) stderrText() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stderr.String()
}

// writeTranscript writes a v1 transcript (header and steps as JSON
// objects) into a temp file and returns its path.
func writeTranscript(t testing.TB, header map[string]any, steps ...map[string]any) string {
	t.Helper()
	var b bytes.Buffer
	for _, v := range append([]map[string]any{header}, steps...) {
		line, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := transcript.LoadFile(os.DirFS(filepath.Dir(path)), filepath.Base(path), transcript.Options{}); err != nil {
		t.Fatalf("test transcript does not load: %v", err)
	}
	return path
}

// out is an "out" step writing the JSON of v.
func out(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return map[string]any{"out": string(b)}
}

// typeIs matches events by type (and subtype when given).
func typeIs(typ string, subtype ...string) func(map[string]any) bool {
	return func(ev map[string]any) bool {
		if ev["type"] != typ {
			return false
		}
		return len(subtype) == 0 || ev["subtype"] == subtype[0]
	}
}

// lookup is transcript.Lookup for test assertions.
func lookup(v any, ptr string) any {
	x, _ := transcript.Lookup(v, ptr)
	return x
}

// loadFixture loads an embedded fixture by name ("codex/plain-text").
func loadFixture(name string) (*transcript.Transcript, error) {
	all, err := fixtures.All()
	if err != nil {
		return nil, err
	}
	for _, fx := range all {
		if fx.Name == name {
			return transcript.LoadFile(fixtures.FS(), fx.Path, transcript.Options{})
		}
	}
	return nil, fmt.Errorf("no fixture %s", name)
}

// signalNumber resolves a transcript's signal name.
func signalNumber(name string) int {
	switch name {
	case "SIGHUP":
		return int(syscall.SIGHUP)
	case "SIGINT":
		return int(syscall.SIGINT)
	case "SIGQUIT":
		return int(syscall.SIGQUIT)
	case "SIGKILL":
		return int(syscall.SIGKILL)
	case "SIGPIPE":
		return int(syscall.SIGPIPE)
	case "SIGTERM":
		return int(syscall.SIGTERM)
	}
	return 0
}

// jsonField is a top-level string field of a JSON line ("" if none).
func jsonField(line, key string) string {
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}
