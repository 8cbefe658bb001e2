//go:build unix

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// sdk is one driver in conformance/drivers and the npm package it wraps.
type sdk struct {
	dir string // the driver's directory: <dir>/driver.mjs
	pkg string // the npm package
	// group names the kind of driver in the results' adapter name
	// (<group>/<dir>): "sdk" (the default) for the official SDKs, "zoo"
	// for the third-party adapters of zoo_test.go.
	group string
	// profile, when set, is the profile the driver is started in
	// (`driver.mjs --profile unified`); its findings are triaged in
	// <dir>/<profile>.baseline instead of expected.baseline.
	profile string
}

// name is the adapter name the battery reports: <group>/<dir>, and
// @<profile> for a driver started in a profile of its own.
func (s sdk) name() string {
	g := s.group
	if g == "" {
		g = "sdk"
	}
	return g + "/" + s.label()
}

// label is the driver's directory, and @<profile> when it runs in one.
func (s sdk) label() string {
	if s.profile == "" {
		return s.dir
	}
	return s.dir + "@" + s.profile
}

// args are the driver's arguments.
func (s sdk) args() []string {
	if s.profile == "" {
		return nil
	}
	return []string{"--profile", s.profile}
}

// baseline is the file that triages the driver's findings.
func (s sdk) baseline() string {
	if s.profile == "" {
		return "expected.baseline"
	}
	return s.profile + ".baseline"
}

var (
	claudeSDK = sdk{dir: "claude-agent-sdk", pkg: "@anthropic-ai/claude-agent-sdk"}
	codexSDK  = sdk{dir: "codex-sdk", pkg: "@openai/codex-sdk"}
)

// caseTimeout bounds one driver run; the runner of HARNESS.md has such a
// deadline too, and kills the driver's process group when it passes.
const caseTimeout = 60 * time.Second

// The prerequisites, checked once: node, npm, and the drivers' directory.
var (
	prereqOnce sync.Once
	prereqErr  string // why the tests cannot run, or ""
	nodePath   string
	driversDir string
	pinned     map[string]string // package.json dependencies
)

func checkPrereqs() {
	dir, err := filepath.Abs(filepath.Join("..", "conformance", "drivers"))
	if err != nil {
		prereqErr = err.Error()
		return
	}
	driversDir = dir
	if nodePath, err = exec.LookPath("node"); err != nil {
		prereqErr = "node is not installed (not on PATH)"
		return
	}
	if _, err := exec.LookPath("npm"); err != nil {
		prereqErr = "npm is not installed (not on PATH)"
		return
	}
	out, err := exec.Command(nodePath, "--version").Output()
	if err != nil {
		prereqErr = fmt.Sprintf("node --version: %v", err)
		return
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if major < 18 {
		prereqErr = fmt.Sprintf("node %s is too old: the SDKs need 18 or later", v)
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		prereqErr = err.Error()
		return
	}
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		prereqErr = fmt.Sprintf("conformance/drivers/package.json: %v", err)
		return
	}
	pinned = pj.Dependencies
}

// requireDriver returns the driver of s, or skips the test when it cannot
// run here, saying why. Under CI=true it fails instead: CI must never pass
// by skipping these tests.
func requireDriver(t *testing.T, s sdk) string {
	t.Helper()
	prereqOnce.Do(checkPrereqs)
	reason := prereqErr
	if reason == "" {
		reason = installed(s)
	}
	if reason != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, so the SDK end-to-end tests must run, but: %s", reason)
		}
		t.Skip(reason)
	}
	return filepath.Join(driversDir, s.dir, "driver.mjs")
}

// installed says what is wrong with the installation of s ("" if nothing).
func installed(s sdk) string {
	want := pinned[s.pkg]
	if want == "" {
		return fmt.Sprintf("conformance/drivers/package.json does not depend on %s", s.pkg)
	}
	b, err := os.ReadFile(filepath.Join(driversDir, "node_modules", filepath.FromSlash(s.pkg), "package.json"))
	if err != nil {
		return fmt.Sprintf("%s is not installed (run `npm install` in conformance/drivers)", s.pkg)
	}
	var pj struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &pj) != nil || pj.Version != want {
		return fmt.Sprintf("conformance/drivers/node_modules has %s %q, package.json pins %q (run `npm install` in conformance/drivers)", s.pkg, pj.Version, want)
	}
	if _, err := os.Stat(filepath.Join(driversDir, s.dir, "driver.mjs")); err != nil {
		return err.Error()
	}
	return ""
}

// sdkVersion is the version of s that package.json pins (and the tests
// checked is installed).
func sdkVersion(s sdk) string { return pinned[s.pkg] }

// line is one line the driver wrote: a harness record (record is its kind)
// or an event.
type line struct {
	raw    []byte
	obj    map[string]any
	record string
}

// run is one driver process, driven as HARNESS.md's runner drives an
// adapter: a fresh working directory, the fakes first on PATH, a deadline
// that kills the process group.
type run struct {
	t     *testing.T
	sdk   sdk
	fakes *fakecli.Fakes
	// cwd is the driver's working directory; project, inside it, the
	// session's (the start command's cwd): kept apart so the log shows
	// whether an SDK starts the CLI in the session's directory.
	cwd     string
	project string
	ctx     context.Context
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan []byte
	stderr  *lockedBuffer
	waited  chan struct{}
	err     error // from Wait, once waited is closed

	out []line // every line read so far
	eof bool
}

// startRun starts s's driver against fakes set up with opts. extraEnv is
// added to the driver's environment.
func startRun(t *testing.T, s sdk, opts fakecli.Options, extraEnv ...string) *run {
	t.Helper()
	driver := requireDriver(t, s)
	r := &run{t: t, sdk: s, fakes: fakecli.Start(t, opts), cwd: t.TempDir(), lines: make(chan []byte, 1<<16),
		stderr: &lockedBuffer{}, waited: make(chan struct{})}
	r.project = filepath.Join(r.cwd, "project")
	if err := os.Mkdir(r.project, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	r.ctx = ctx
	cmd := exec.CommandContext(ctx, nodePath, driver)
	cmd.Dir = r.cwd
	cmd.Env = append(r.driverEnv(), extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stderr = r.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// stdout is a pipe of our own, so reading it never races with Wait.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		cancel()
		t.Fatalf("starting the %s driver: %v", s.dir, err)
	}
	pw.Close()
	r.cmd, r.stdin = cmd, stdin
	go func() {
		defer close(r.lines)
		defer pr.Close()
		br := bufio.NewReaderSize(pr, 1<<16)
		for {
			b, err := br.ReadBytes('\n')
			if len(b) > 0 {
				r.lines <- b
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		r.err = cmd.Wait()
		close(r.waited)
	}()
	t.Cleanup(func() {
		// Let a driver still running end as it would when its runner goes
		// (stdin closes), then kill the whole group: the driver if it did
		// not end, and any CLI it left behind.
		stdin.Close()
		select {
		case <-r.waited:
		case <-time.After(5 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-r.waited
		cancel()
		if t.Failed() {
			t.Logf("%s driver stderr:\n%s", s.dir, tail(r.stderr.String(), 8000))
		}
	})
	hello := r.next("the hello record")
	if hello.record != "hello" {
		t.Fatalf("the driver's first line is not the hello record: %s", clip(hello.raw))
	}
	if hello.obj["profile"] != "native" {
		t.Errorf("hello profile = %v, want native", hello.obj["profile"])
	}
	if hello.obj["version"] != sdkVersion(s) {
		t.Errorf("hello version = %v, want the pinned %s", hello.obj["version"], sdkVersion(s))
	}
	return r
}

// driverEnv is the environment of HARNESS.md: the fakes' (PATH, the
// AGENTCONFORM_* variables) and the variables that point adapters at the
// fakes, without the variables an SDK sets itself (so the observation log
// shows what the SDK set, not what this test ran under).
func (r *run) driverEnv() []string {
	var env []string
	for _, kv := range r.fakes.Env() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_AGENT_SDK_VERSION", "CODEX_INTERNAL_ORIGINATOR_OVERRIDE",
			"CLAUDE_CODE_EXECUTABLE", "CODEX_EXECUTABLE", "GEMINI_EXECUTABLE", "NODE_OPTIONS":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"CLAUDE_CODE_EXECUTABLE="+r.fakes.Path("claude"),
		"CODEX_EXECUTABLE="+r.fakes.Path("codex"),
		"GEMINI_EXECUTABLE="+r.fakes.Path("gemini"),
		"AGENTCONFORM_CLAUDE="+r.fakes.Path("claude"),
		"AGENTCONFORM_CODEX="+r.fakes.Path("codex"),
		"AGENTCONFORM_GEMINI="+r.fakes.Path("gemini"),
		"AGENTCONFORM_CASE="+r.t.Name(),
	)
}

// send writes one command.
func (r *run) send(cmd map[string]any) {
	r.t.Helper()
	b, err := json.Marshal(cmd)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.stdin.Write(append(b, '\n')); err != nil {
		r.t.Fatalf("sending %s to the driver: %v", b, err)
	}
}

// start sends the start command for the run's project directory.
func (r *run) start(agent, prompt string, fields map[string]any) {
	r.t.Helper()
	cmd := map[string]any{"op": "start", "agent": agent, "prompt": prompt, "cwd": r.project}
	for k, v := range fields {
		cmd[k] = v
	}
	r.send(cmd)
}

// next reads the next line, failing the test at EOF or the deadline.
func (r *run) next(what string) line {
	r.t.Helper()
	l, ok := r.tryNext(r.ctx)
	if !ok {
		r.t.Fatalf("waiting for %s: the driver's stdout ended (%s)", what, r.state())
	}
	return l
}

// tryNext reads the next line; false at EOF or when ctx ends.
func (r *run) tryNext(ctx context.Context) (line, bool) {
	r.t.Helper()
	if r.eof {
		return line{}, false
	}
	select {
	case b, ok := <-r.lines:
		if !ok {
			r.eof = true
			return line{}, false
		}
		l := line{raw: b}
		if err := json.Unmarshal(b, &l.obj); err != nil {
			r.t.Fatalf("the driver wrote a line that is not a JSON object (%v): %s", err, clip(b))
		}
		l.record, _ = l.obj["agentconform"].(string)
		r.out = append(r.out, l)
		return l, true
	case <-ctx.Done():
		if r.ctx.Err() != nil {
			r.t.Fatalf("the %v case deadline passed (%s)", caseTimeout, r.state())
		}
		return line{}, false
	}
}

// until reads lines until one satisfies pred and returns it.
func (r *run) until(what string, pred func(line) bool) line {
	r.t.Helper()
	for {
		if l := r.next(what); pred(l) {
			return l
		}
	}
}

// during reads every line that comes within d.
func (r *run) during(d time.Duration) []line {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, d)
	defer cancel()
	var got []line
	for {
		l, ok := r.tryNext(ctx)
		if !ok {
			return got
		}
		got = append(got, l)
	}
}

// interrupt interrupts the running turn the way the runner does: the
// interrupt op, or in signal mode (agentconform run --interrupt signal)
// SIGINT to the driver process alone.
func (r *run) interrupt(mode string) {
	r.t.Helper()
	switch mode {
	case "op":
		r.send(map[string]any{"op": "interrupt"})
	case "signal":
		if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
			r.t.Fatalf("SIGINT to the driver: %v", err)
		}
	default:
		r.t.Fatalf("unknown interrupt mode %q", mode)
	}
}

// interruptModes are the runner's two ways to interrupt, for subtests.
var interruptModes = []string{"op", "signal"}

// turnEnd reads up to the next turn_end record and returns it.
func (r *run) turnEnd() line {
	r.t.Helper()
	return r.until("turn_end", func(l line) bool { return l.record == "turn_end" })
}

// close sends close, reads up to the end record, and requires the driver
// to exit 0 with nothing more on stdout.
func (r *run) close() line {
	r.t.Helper()
	r.send(map[string]any{"op": "close"})
	end := r.until("the end record", func(l line) bool { return l.record == "end" })
	if more, ok := r.tryNext(r.ctx); ok {
		r.t.Errorf("the driver wrote after its end record: %s", clip(more.raw))
	}
	select {
	case <-r.waited:
	case <-r.ctx.Done():
		r.t.Fatalf("the driver did not exit after its end record")
	}
	if r.err != nil {
		r.t.Errorf("the driver exited with %v after its end record", r.err)
	}
	return end
}

func (r *run) state() string {
	select {
	case <-r.waited:
		return fmt.Sprintf("driver exited: %v", r.err)
	default:
		return "driver still running"
	}
}

// turn is what the driver wrote for one turn: its events and turn_end.
type turn struct {
	events []any
	end    map[string]any
}

// session splits everything the driver wrote into turns; it requires the
// HARNESS.md order (hello, then events and turn_end records, then end) and
// the given number of turns.
func (r *run) session(turns int) []turn {
	r.t.Helper()
	var out []turn
	var cur turn
	for i, l := range r.out {
		switch l.record {
		case "hello":
			if i != 0 {
				r.t.Errorf("line %d: a second hello", i+1)
			}
		case "turn_end":
			cur.end = l.obj
			out = append(out, cur)
			cur = turn{}
		case "end":
			if i != len(r.out)-1 {
				r.t.Errorf("line %d: end is not the last line", i+1)
			}
			if len(cur.events) > 0 {
				r.t.Errorf("%d events after the last turn_end", len(cur.events))
			}
		case "":
			var v any
			if err := json.Unmarshal(l.raw, &v); err != nil {
				r.t.Fatal(err)
			}
			cur.events = append(cur.events, v)
		default:
			r.t.Errorf("line %d: unknown harness record %q", i+1, l.record)
		}
	}
	if len(out) != turns {
		r.t.Fatalf("the driver reported %d turns, want %d", len(out), turns)
	}
	return out
}

// events is every event of the session, across turns.
func events(turns []turn) []any {
	var all []any
	for _, t := range turns {
		all = append(all, t.events...)
	}
	return all
}

// observations reads the fakes' observation log.
func (r *run) observations() []fakecli.Observation {
	r.t.Helper()
	obs, err := r.fakes.Observations()
	if err != nil {
		r.t.Fatal(err)
	}
	return obs
}

// exited returns the fake processes once every one has its exit record
// (a process the driver abandoned or signalled may still be running when
// the driver ends), or as they are at the case's deadline.
func (r *run) exited() []*cliProcess {
	r.t.Helper()
	for {
		procs := processes(r.observations())
		done := true
		for _, p := range procs {
			if len(p.kinds("exit")) == 0 {
				done = false
			}
		}
		if done || r.ctx.Err() != nil {
			return procs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cliProcess is the observation log of one fake process.
type cliProcess struct {
	start fakecli.Observation
	recs  []fakecli.Observation // every record, start included, in order
}

// processes groups the log by process, in the order they started.
func processes(obs []fakecli.Observation) []*cliProcess {
	var out []*cliProcess
	by := map[int]*cliProcess{}
	for _, o := range obs {
		p := by[o.PID]
		if o.Kind == "start" {
			p = &cliProcess{start: o}
			by[o.PID] = p
			out = append(out, p)
		}
		if p != nil {
			p.recs = append(p.recs, o)
		}
	}
	return out
}

// kinds are the records of the given kinds.
func (p *cliProcess) kinds(kinds ...string) []fakecli.Observation {
	var out []fakecli.Observation
	for _, o := range p.recs {
		for _, k := range kinds {
			if o.Kind == k {
				out = append(out, o)
			}
		}
	}
	return out
}

// outSteps are the transcript lines of what the process wrote to stdout,
// in order (0 for a line the fake synthesized).
func (p *cliProcess) outSteps() []int {
	var out []int
	for _, o := range p.kinds("out") {
		out = append(out, o.Step)
	}
	return out
}

// stdinLines are the lines the process read from stdin.
func (p *cliProcess) stdinLines() []string {
	var out []string
	for _, o := range p.kinds("stdin") {
		out = append(out, o.Text)
	}
	return out
}

// exit says how the process ended: "exit 0", "signal SIGTERM", or
// "no exit record".
func (p *cliProcess) exit() string {
	ex := p.kinds("exit")
	switch {
	case len(ex) == 0:
		return "no exit record"
	case ex[0].Code != nil:
		return fmt.Sprintf("exit %d", *ex[0].Code)
	default:
		return "signal " + ex[0].Signal
	}
}

// stdinClosed reports whether the process saw its stdin close.
func (p *cliProcess) stdinClosed() bool { return len(p.kinds("stdin_closed")) > 0 }

// hasEnv reports whether the start record lists the variable as set.
func (p *cliProcess) hasEnv(name string) bool {
	for _, e := range p.start.Env {
		if e == name {
			return true
		}
	}
	return false
}

// noProtocolErrors fails the test for every protocol_error the fakes logged.
func noProtocolErrors(t *testing.T, procs []*cliProcess) {
	t.Helper()
	for _, p := range procs {
		for _, o := range p.kinds("protocol_error") {
			t.Errorf("fake %s (pid %d) logged a protocol error: %s", p.start.CLI, p.start.PID, o.Message)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for the exec copier and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func clip(b []byte) string {
	const max = 300
	s := strings.TrimRight(string(b), "\n")
	if len(s) > max {
		return fmt.Sprintf("%s... (%d bytes)", s[:max], len(s))
	}
	return s
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
