//go:build unix

package recorder

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/transcript"
)

func TestMain(m *testing.M) {
	if handled, code := ShimMain(os.Args[0], os.Args[1:]); handled {
		os.Exit(code)
	}
	if mode := os.Getenv("RECORDER_TEST_CHILD"); mode != "" {
		os.Exit(childMain(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// self is the test binary, which acts as the recorded CLI.
func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// childEnv returns the environment for a child in mode, with a home
// directory of its own.
func testEnv(t *testing.T, home, mode string, extra ...string) []string {
	env := append(os.Environ(), "HOME="+home, "RECORDER_TEST_CHILD="+mode)
	return append(env, extra...)
}

// run records the test binary in mode. Every child has a deadline.
func run(t *testing.T, cfg Config) *Result {
	t.Helper()
	cfg.Path = self(t)
	if cfg.Argv == nil {
		cfg.Argv = []string{"claude", "-p", "--output-format", "stream-json"}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	res, err := Record(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	return res
}

// written writes res's transcript as a file would hold it and loads it
// back.
func written(t *testing.T, res *Result) (string, *transcript.Transcript) {
	t.Helper()
	var buf bytes.Buffer
	if err := transcript.Write(&buf, res.Transcript); err != nil {
		t.Fatal(err)
	}
	tr, err := transcript.Load(bytes.NewReader(buf.Bytes()), "recorded.jsonl", transcript.Options{})
	if err != nil {
		t.Fatalf("transcript.Load rejects the recording: %v\n%s", err, buf.String())
	}
	return buf.String(), tr
}

// replay concatenates the out (or err) steps as a fake would write them.
func replay(tr *transcript.Transcript, op transcript.Op, vars transcript.Vars) string {
	var b strings.Builder
	for _, s := range tr.Steps {
		if s.Op == op {
			b.WriteString(vars.Fill(s.Text))
			if !s.NoNewline {
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

func TestPassthroughIsByteExact(t *testing.T) {
	var stdout, stderr bytes.Buffer
	res := run(t, Config{Env: testEnv(t, t.TempDir(), "bytes"), Stdout: &stdout, Stderr: &stderr, CLIVersion: "1"})
	if !bytes.Equal(stdout.Bytes(), childStdout()) {
		t.Errorf("stdout differs: %d bytes, want %d", stdout.Len(), len(childStdout()))
	}
	if !bytes.Equal(stderr.Bytes(), childStderr()) {
		t.Errorf("stderr = %q, want %q", stderr.Bytes(), childStderr())
	}
	if res.ExitCode != 3 || res.Status() != 3 {
		t.Errorf("exit = %d", res.ExitCode)
	}
	// The lines are recorded as they were (CR kept), the last one without
	// its newline.
	var outs []transcript.Step
	for _, s := range res.Transcript.Steps {
		if s.Op == transcript.OpOut {
			outs = append(outs, s)
		}
	}
	if len(outs) != 5 || outs[0].Text != "{\"type\":\"a\"}\r" || outs[1].Text != "" || len(outs[3].Text) != 300_011 {
		t.Fatalf("out steps: %d, first %q", len(outs), outs[0].Text)
	}
	if last := outs[4]; last.Text != "no newline at the end" || !last.NoNewline {
		t.Errorf("last out step = %+v", last)
	}
	if s := res.Transcript.Steps[len(res.Transcript.Steps)-1]; s.Op != transcript.OpExit || s.Code != 3 {
		t.Errorf("last step = %+v", s)
	}
}

// TestClientSeesTheSame runs the same child with and without the recorder
// and compares everything a client can observe: stdout, stderr, the exit
// status.
func TestClientSeesTheSame(t *testing.T) {
	home := t.TempDir()
	input := "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\nplain text\n"
	for _, mode := range []string{"bytes", "echo"} {
		t.Run(mode, func(t *testing.T) {
			env := testEnv(t, home, mode, "RECORDER_TEST_EXIT=4", "RECORDER_TEST_PARTIAL=1")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			direct := exec.CommandContext(ctx, self(t))
			direct.Args = []string{"claude"}
			direct.Env = env
			direct.Stdin = strings.NewReader(input)
			var dOut, dErr bytes.Buffer
			direct.Stdout, direct.Stderr = &dOut, &dErr
			err := direct.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) && err != nil {
				t.Fatal(err)
			}
			dCode := direct.ProcessState.ExitCode()

			var rOut, rErr bytes.Buffer
			res := run(t, Config{Argv: []string{"claude"}, Env: env, Stdin: strings.NewReader(input), Stdout: &rOut, Stderr: &rErr})
			if d := cmp.Diff(dOut.String(), rOut.String()); d != "" {
				t.Errorf("stdout differs (-direct +recorded):\n%.2000s", d)
			}
			if d := cmp.Diff(dErr.String(), rErr.String()); d != "" {
				t.Errorf("stderr differs (-direct +recorded):\n%s", d)
			}
			if res.Status() != dCode {
				t.Errorf("exit status %d, directly %d", res.Status(), dCode)
			}
		})
	}
}

func TestRecordsBothDirectionsWithTiming(t *testing.T) {
	stdin := strings.Join([]string{
		`{"type":"control_request","request_id":"req_client_1","request":{"subtype":"initialize","hooks":null}}`,
		`{"type":"user","session_id":"","message":{"role":"user","content":"hello"},"parent_tool_use_id":null}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"cli-req-7","response":{"behavior":"allow"}}}`,
		`{"no_type":1}`,
		`not json`,
	}, "\n") + "\n"
	var stdout bytes.Buffer
	res := run(t, Config{
		Argv:     []string{"/opt/bin/claude", "--input-format", "stream-json"},
		Env:      testEnv(t, t.TempDir(), "echo", "RECORDER_TEST_PLAIN=1", "RECORDER_TEST_PARTIAL=1", "ANTHROPIC_API_KEY=not-a-real-key-value"),
		Stdin:    strings.NewReader(stdin),
		Stdout:   &stdout,
		Scenario: "both-ways",
	})
	file, tr := written(t, res)

	h := tr.Header
	want := transcript.Header{Format: transcript.Format, CLI: "claude", CLIVersion: childVersion, Scenario: "both-ways",
		Argv: []string{"claude", "--input-format", "stream-json"}, Cwd: "<cwd>", SessionID: "sess-42", Source: "recorded"}
	got := h
	got.Env = nil
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	if !contains(h.Env, "ANTHROPIC_API_KEY") || !contains(h.Env, "HOME") || contains(h.Env, "RECORDER_TEST_CHILD") || strings.Contains(file, "not-a-real-key-value") {
		t.Errorf("env names %v (the value must not be recorded)", h.Env)
	}

	var ins []transcript.Step
	var last int64 = -1
	sawEOF := false
	for i, s := range tr.Steps {
		if s.T == nil {
			t.Fatalf("step %d has no time: %+v", i+1, s)
		}
		if *s.T < last {
			t.Errorf("step %d: t %d before %d", i+1, *s.T, last)
		}
		last = *s.T
		switch s.Op {
		case transcript.OpIn:
			ins = append(ins, s)
		case transcript.OpStdinEOF:
			sawEOF = true
		}
	}
	if len(ins) != 5 || !sawEOF {
		t.Fatalf("%d in steps, stdin_eof %v", len(ins), sawEOF)
	}
	wantIns := []transcript.Step{
		{Op: transcript.OpIn, Match: map[string]any{"type": "control_request", "request": map[string]any{"subtype": "initialize"}}, Capture: map[string]string{"req1": "/request_id"}},
		{Op: transcript.OpIn, Match: map[string]any{"type": "user"}},
		{Op: transcript.OpIn, Match: map[string]any{"type": "control_response", "response": map[string]any{"request_id": "cli-req-7"}}},
		{Op: transcript.OpIn, Match: map[string]any{"no_type": 1.0}},
		{Op: transcript.OpIn, Text: "not json"},
	}
	for i := range ins {
		ins[i].T, ins[i].Line, ins[i].Offset = nil, 0, 0
	}
	if d := cmp.Diff(wantIns, ins); d != "" {
		t.Errorf("in steps (-want +got):\n%s", d)
	}
	if !strings.Contains(file, `\"request_id\":\"{{req1}}\"`) || strings.Contains(file, "req_client_1") {
		t.Errorf("the echoed client request id should be templated:\n%s", file)
	}
	// Replaying the out steps, with the id the client sent, gives the
	// stdout the client saw, partial last line and all.
	if got := replay(tr, transcript.OpOut, transcript.Vars{"req1": "req_client_1"}); got != stdout.String() {
		t.Errorf("replay differs:\n%s", cmp.Diff(stdout.String(), got))
	}
	var lastOut transcript.Step
	for _, s := range tr.Steps {
		if s.Op == transcript.OpOut {
			lastOut = s
		}
	}
	if lastOut.Text != `{"type":"partial"` || !lastOut.NoNewline || !strings.Contains(file, `"newline":false`) {
		t.Errorf("the partial last line should be an out step with newline false: %+v", lastOut)
	}
}

func TestTextStdinForCodexAndGemini(t *testing.T) {
	for _, cli := range []string{"codex", "gemini"} {
		res := run(t, Config{Argv: []string{cli, "exec", "--json"}, Env: testEnv(t, t.TempDir(), "echo", "RECORDER_TEST_PLAIN=1"),
			Stdin: strings.NewReader("{\"type\":\"user\"}\nsecond line\nno newline"), CLIVersion: "0.1"})
		_, tr := written(t, res)
		var texts []string
		for _, s := range tr.Steps {
			if s.Op == transcript.OpIn {
				if s.Match != nil {
					t.Errorf("%s: a text stdin line became a match: %v", cli, s.Match)
				}
				texts = append(texts, s.Text)
			}
		}
		if d := cmp.Diff([]string{`{"type":"user"}`, "second line", "no newline"}, texts); d != "" {
			t.Errorf("%s in steps (-want +got):\n%s", cli, d)
		}
		if tr.Header.CLI != cli {
			t.Errorf("cli = %q", tr.Header.CLI)
		}
	}
}

func TestExitCodeAndDeathBySignal(t *testing.T) {
	res := run(t, Config{Env: testEnv(t, t.TempDir(), "echo", "RECORDER_TEST_PLAIN=1", "RECORDER_TEST_EXIT=7"), Stdin: strings.NewReader("")})
	_, tr := written(t, res)
	if end := tr.Steps[len(tr.Steps)-1]; end.Op != transcript.OpExit || end.Code != 7 || res.ExitCode != 7 {
		t.Errorf("end = %+v, result %+v", end, res)
	}

	res = run(t, Config{Env: testEnv(t, t.TempDir(), "die")})
	_, tr = written(t, res)
	if end := tr.Steps[len(tr.Steps)-1]; end.Op != transcript.OpExitSignal || end.Signal != "SIGTERM" {
		t.Errorf("end = %+v", end)
	}
	if res.Signal != "SIGTERM" || res.Status() != 128+int(syscall.SIGTERM) || res.Killed {
		t.Errorf("result = %+v", res)
	}
}

func TestVersionProbe(t *testing.T) {
	res := run(t, Config{Env: testEnv(t, t.TempDir(), "echo", "RECORDER_TEST_PLAIN=1", "RECORDER_TEST_NO_VERSION=1")})
	if v := res.Transcript.Header.CLIVersion; v != "unknown" {
		t.Errorf("cli_version = %q, want unknown when --version fails", v)
	}
	if v := res.Transcript.Header.CLIVersion; v == childVersion {
		t.Error("probe ignored the failure")
	}
}

// lineReader hands a test the child's stdout lines as they come.
func lineReader(t *testing.T) (io.Writer, <-chan string) {
	pr, pw := io.Pipe()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() { pw.Close() })
	return pw, lines
}

func nextLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l := <-lines:
		return l
	case <-time.After(20 * time.Second):
		t.Fatal("no line from the child")
	}
	return ""
}

func TestSignalIsForwarded(t *testing.T) {
	out, lines := lineReader(t)
	sigs := make(chan os.Signal, 2)
	done := make(chan *Result, 1)
	go func() {
		res, err := Record(context.Background(), Config{Path: self(t), Argv: []string{"gemini"}, Env: testEnv(t, t.TempDir(), "signal"),
			Stdout: out, Signals: sigs, Timeout: 30 * time.Second, CLIVersion: "1"})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	if l := nextLine(t, lines); l != "ready" {
		t.Fatalf("child said %q", l)
	}
	sigs <- syscall.SIGINT
	if l := nextLine(t, lines); l != "got SIGINT" {
		t.Errorf("child said %q after SIGINT", l)
	}
	res := <-done
	if res == nil {
		t.FailNow()
	}
	if res.ExitCode != 130 || res.Killed {
		t.Errorf("result = %+v", res)
	}
	if end := res.Transcript.Steps[len(res.Transcript.Steps)-1]; end.Op != transcript.OpExit || end.Code != 130 {
		t.Errorf("end = %+v", end)
	}
}

func TestChildClosingStdinBreaksTheClientsPipe(t *testing.T) {
	out, lines := lineReader(t)
	inR, inW := io.Pipe()
	done := make(chan *Result, 1)
	go func() {
		res, err := Record(context.Background(), Config{Path: self(t), Argv: []string{"codex"}, Env: testEnv(t, t.TempDir(), "closestdin"),
			Stdin: inR, Stdout: out, Timeout: 30 * time.Second, CLIVersion: "1"})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	if l := nextLine(t, lines); l != "closed" {
		t.Fatalf("child said %q", l)
	}
	var err error
	for deadline := time.Now().Add(10 * time.Second); err == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		_, err = inW.Write([]byte("more input\n"))
	}
	if !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("the client's write got %v, want a closed pipe", err)
	}
	if res := <-done; res == nil || res.ExitCode != 0 {
		t.Errorf("result %+v", res)
	}
}

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	// pid (comm) STATE ...
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d outlived the group kill", pid)
}

var grandchildRE = regexp.MustCompile(`^grandchild (\d+)$`)

func grandchild(t *testing.T, lines <-chan string) int {
	t.Helper()
	l := nextLine(t, lines)
	m := grandchildRE.FindStringSubmatch(l)
	if m == nil {
		t.Fatalf("child said %q", l)
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

func TestDeadlineKillsTheGroup(t *testing.T) {
	out, lines := lineReader(t)
	done := make(chan *Result, 1)
	start := time.Now()
	go func() {
		res, err := Record(context.Background(), Config{Path: self(t), Argv: []string{"claude"}, Env: testEnv(t, t.TempDir(), "hang"),
			Stdout: out, Timeout: 1500 * time.Millisecond, CLIVersion: "1", DrainWait: 200 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	pid := grandchild(t, lines)
	res := <-done
	if res == nil {
		t.FailNow()
	}
	if !res.TimedOut || !res.Killed || res.Signal != "SIGKILL" {
		t.Errorf("result = %+v", res)
	}
	if el := time.Since(start); el > 15*time.Second {
		t.Errorf("took %v", el)
	}
	_, tr := written(t, res)
	if end := tr.Steps[len(tr.Steps)-1]; end.Op != transcript.OpExitSignal || end.Signal != "SIGKILL" {
		t.Errorf("end = %+v", end)
	}
	waitGone(t, pid)
}

func TestSecondSignalKillsTheGroup(t *testing.T) {
	out, lines := lineReader(t)
	sigs := make(chan os.Signal, 2)
	done := make(chan *Result, 1)
	go func() {
		res, err := Record(context.Background(), Config{Path: self(t), Argv: []string{"codex"}, Env: testEnv(t, t.TempDir(), "hang"),
			Stdout: out, Signals: sigs, Timeout: time.Minute, KillGrace: 300 * time.Millisecond, DrainWait: 200 * time.Millisecond, CLIVersion: "1"})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	pid := grandchild(t, lines)
	sigs <- syscall.SIGINT // forwarded, ignored by the child
	select {
	case <-done:
		t.Fatal("one signal ended the recording")
	case <-time.After(500 * time.Millisecond):
	}
	sigs <- syscall.SIGTERM
	var res *Result
	select {
	case res = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the second signal did not end the child")
	}
	if res == nil {
		t.FailNow()
	}
	if !res.Killed || res.TimedOut || res.Signal != "SIGKILL" {
		t.Errorf("result = %+v", res)
	}
	waitGone(t, pid)
}

func TestSecretsAreRedactedStably(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home", "zed")
	work := filepath.Join(home, "src", "proj")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	envSecret := "corp-gateway-credential-991"
	stdin := "my key is " + keyB + "\n" + "the gateway takes " + envSecret + "\n"
	var stdout, stderr bytes.Buffer
	res := run(t, Config{
		Argv:   []string{"codex", "exec", "-c", "api_key=" + keyA, "--cd", work},
		Env:    testEnv(t, home, "echo", "MY_GATEWAY_TOKEN="+envSecret),
		Dir:    work,
		Stdin:  strings.NewReader(stdin),
		Stdout: &stdout, Stderr: &stderr,
	})
	file, tr := written(t, res)
	// The client saw the secrets; the file has none of them, nor any
	// local path.
	if !strings.Contains(stdout.String(), keyA) {
		t.Fatal("the passthrough should be untouched")
	}
	for _, secret := range []string{keyA, keyB, email, envSecret, home, work, base, "zed"} {
		if strings.Contains(file, secret) {
			t.Errorf("%q is in the recording:\n%s", secret, file)
		}
	}
	outs := replay(tr, transcript.OpOut, nil)
	errs := replay(tr, transcript.OpErr, nil)
	ins := replay(tr, transcript.OpIn, nil)
	a, b := "<redacted:anthropic-key:1>", "<redacted:openai-key:1>"
	// keyA appears in argv, in two stdout lines and on stderr; keyB once
	// on stdin and twice on stdout (once echoed).
	if tr.Header.Argv[3] != "api_key="+a || tr.Header.Argv[5] != "<cwd>" {
		t.Errorf("argv = %v", tr.Header.Argv)
	}
	if strings.Count(outs, a) != 2 || strings.Count(errs, a) != 1 || strings.Count(outs, b) != 2 || strings.Count(ins, b) != 1 {
		t.Errorf("placeholders not stable:\nout %s\nerr %s\nin %s", outs, errs, ins)
	}
	if !strings.Contains(outs, "<redacted:email:1>") || !strings.Contains(ins, "the gateway takes <redacted:secret:1>") {
		t.Errorf("email or env secret not replaced:\n%s\n%s", outs, ins)
	}
	for _, want := range []string{`"cwd":"<cwd>"`, `"file":"<cwd>/main.go"`, `"memory":"/home/user/.claude/projects/x"`} {
		if !strings.Contains(outs, want) {
			t.Errorf("stdout replay lacks %s:\n%s", want, outs)
		}
	}
	if !strings.Contains(errs, "from /home/user\n") {
		t.Errorf("stderr replay: %s", errs)
	}
	if res.Redactions.Total() == 0 || strings.Contains(res.Redactions.String(), "sk-") {
		t.Errorf("report = %v", res.Redactions)
	}
}

func TestStartFailures(t *testing.T) {
	if _, err := Record(context.Background(), Config{Argv: []string{"not-a-cli"}, Path: self(t)}); err == nil || !strings.Contains(err.Error(), "cannot tell which CLI") {
		t.Errorf("unknown CLI: %v", err)
	}
	if _, err := Record(context.Background(), Config{Argv: []string{"claude"}, Path: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing executable started")
	}
	if _, err := Record(context.Background(), Config{Argv: []string{"x"}, CLI: "cursor", Path: self(t)}); err == nil {
		t.Error("an unknown --cli was accepted")
	}
}

func TestCLINameAndRelevantEnv(t *testing.T) {
	for in, want := range map[string]string{"claude": "claude", "/usr/local/bin/codex": "codex", "gemini.exe": "gemini",
		"claude-code": "claude", "node": "", "cli.js": ""} {
		if got := CLIName(in); got != want {
			t.Errorf("CLIName(%q) = %q, want %q", in, got, want)
		}
	}
	got := RelevantEnv([]string{"PATH=/bin", "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_ENTRYPOINT=sdk-py", "HOME=/h", "NO_COLOR=1", "USER=u",
		"AGENTCONFORM_RECORD_DIR=/d", "AGENTCONFORM_FIXTURE=codex/x", "GEMINI_API_KEY=y", "ANTHROPIC_API_KEY=dup"})
	want := []string{"AGENTCONFORM_FIXTURE", "ANTHROPIC_API_KEY", "CLAUDE_CODE_ENTRYPOINT", "GEMINI_API_KEY", "HOME", "NO_COLOR", "PATH"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("RelevantEnv (-want +got):\n%s", d)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
