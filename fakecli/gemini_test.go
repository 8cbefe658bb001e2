//go:build unix

package fakecli_test

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

var geminiP = []string{"-o", "stream-json", "-y", "-p"}

// TestGeminiResume: a second process resumes by init.session_id, by
// "latest" and by index; the resumed init carries the same id.
func TestGeminiResume(t *testing.T) {
	fx, err := loadFixture("gemini/multi-turn")
	if err != nil {
		t.Fatal(err)
	}
	parts := fx.Processes()
	f := fakecli.Start(t, fakecli.Options{Fixture: "gemini/multi-turn"})
	dir := t.TempDir()
	first := runFake(t, f, "gemini", append(geminiP, "What does greet.go do?"), cmdOpts{dir: dir})
	if first.code != 0 || first.stdout != walk(t, parts[0]).stdout {
		t.Fatalf("first process: exit %d, stderr %q\n%s", first.code, first.stderr, first.stdout)
	}
	sid := firstSessionID(first.stdout)
	second := runFake(t, f, "gemini", append([]string{"--resume", sid}, append(geminiP, "Make it end with an exclamation mark.")...), cmdOpts{dir: dir})
	if second.code != 0 || second.stdout != walk(t, parts[1]).stdout {
		t.Errorf("resume by id: exit %d, stderr %q\n%s", second.code, second.stderr, second.stdout)
	}
	for _, how := range [][]string{{"--resume", "latest"}, {"-r", "1"}, {"--resume"}} {
		r := runFake(t, f, "gemini", append(how, append(geminiP, "again")...), cmdOpts{dir: dir})
		if r.code != 0 || firstSessionID(r.stdout) != sid {
			t.Errorf("%v: exit %d, session %q, stderr %q", how, r.code, firstSessionID(r.stdout), r.stderr)
		}
	}
	dup := runFake(t, f, "gemini", append([]string{"--session-id", sid}, append(geminiP, "x")...), cmdOpts{dir: dir})
	if dup.code != 42 || !strings.HasPrefix(dup.stderr, `Error starting session: Session ID "`+sid+`" already exists.`) {
		t.Errorf("--session-id of an existing session: exit %d, stderr %q", dup.code, dup.stderr)
	}
	// Another directory is another project, with no session: "latest"
	// warns and starts one (testdata/captures/gemini/0.61.0/resume-latest-none.jsonl).
	other := runFake(t, f, "gemini", append([]string{"--resume", "latest"}, append(geminiP, "x")...), cmdOpts{})
	if other.code != 0 || !strings.HasPrefix(other.stderr, "No previous sessions found for this project.\n") {
		t.Errorf("latest in another directory: exit %d, stderr %q; want a new session after the warning", other.code, other.stderr)
	}
}

// TestGeminiSignals: SIGINT and SIGTERM end the process with exit 0 and
// no result, by Gemini's own behaviour and by the fixture's on_signal.
// The CLI is signalled without its npm launcher (GEMINI_CLI_NO_RELAUNCH),
// which ignores a signal to its pid alone (TestLauncherGeminiForwardsNothing).
func TestGeminiSignals(t *testing.T) {
	noLauncher := cmdOpts{env: []string{"GEMINI_CLI_NO_RELAUNCH=true"}}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			f := fakecli.Start(t, fakecli.Options{Fixture: "gemini/interrupt"})
			l := startFake(t, f, "gemini", append(geminiP, "Run the end-to-end tests."), noLauncher)
			l.stdin.Close()
			l.until("tool_use", typeIs("tool_use"))
			l.signal(sig)
			r, rest := l.wait()
			if r.code != 0 || r.signaled || len(rest) != 0 {
				t.Errorf("status %d (signaled %v), more lines %q", r.code, r.signaled, rest)
			}
		})
	}
	t.Run("default", func(t *testing.T) {
		fx, err := loadFixture("gemini/interrupt")
		if err != nil {
			t.Fatal(err)
		}
		// Without the fixture's on_signal, Gemini's own behaviour.
		steps := fx.Steps[:0:0]
		for _, st := range fx.Steps {
			if st.Op != transcript.OpOnSignal {
				steps = append(steps, st)
			}
		}
		fx.Steps = steps
		f := fakecli.Start(t, fakecli.Options{Transcript: saveTranscript(t, fx)})
		l := startFake(t, f, "gemini", append(geminiP, "Run"), noLauncher)
		l.stdin.Close()
		l.until("tool_use", typeIs("tool_use"))
		l.signal(syscall.SIGTERM)
		r, rest := l.wait()
		if r.code != 0 || len(rest) != 0 || strings.Contains(r.stdout, `"result"`) {
			t.Errorf("status %d, more lines %q", r.code, rest)
		}
	})
}

// TestGeminiStdinPrompt: stdin is the prompt (no -p); an open pipe with
// nothing in it is given up on after 500 ms.
func TestGeminiStdinPrompt(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "gemini/plain-text"})
	r := runFake(t, f, "gemini", []string{"-o", "stream-json"}, cmdOpts{stdin: "Say hello in one sentence.\n"})
	if r.code != 0 || !strings.Contains(r.stdout, `"type":"result"`) {
		t.Errorf("prompt on stdin: exit %d, stderr %q", r.code, r.stderr)
	}
	l := startFake(t, f, "gemini", []string{"-o", "stream-json", "-p", "hi"}, cmdOpts{})
	l.until("result", typeIs("result"))
	res, _ := l.wait()
	if res.code != 0 {
		t.Errorf("open empty stdin: exit %d", res.code)
	}
	empty := runFake(t, f, "gemini", []string{"-o", "stream-json"}, cmdOpts{})
	if empty.code != 1 || !strings.HasPrefix(empty.stderr, "No input provided via stdin.") {
		t.Errorf("no prompt at all: exit %d, stderr %q", empty.code, empty.stderr)
	}
}

// TestGeminiYOLONotice: Gemini writes "YOLO mode is enabled. ..." on stderr
// only when its command line turns YOLO mode on (-y/--yolo, --approval-mode
// yolo): loadCliConfig in google-gemini/gemini-cli@5411f113
// packages/cli/src/config/config.ts warns when the approval mode is yolo,
// once in the launcher and once in the relaunched child.
// testdata/captures/gemini/0.61.0/single-tool.jsonl (-y) has the two
// lines, plain-text.jsonl and api-error-401.jsonl (no -y) none.
// The fake follows its own argv, not the fixture's.
func TestGeminiYOLONotice(t *testing.T) {
	const notice = "YOLO mode is enabled. All tool calls will be automatically approved.\n"
	for _, fixture := range []string{"gemini/single-tool", "gemini/plain-text"} { // recorded with and without -y
		f := fakecli.Start(t, fakecli.Options{Fixture: fixture})
		for _, tc := range []struct {
			args []string
			want int
		}{
			{[]string{"-o", "stream-json", "-p", "hi"}, 0},
			{[]string{"-o", "stream-json", "--approval-mode", "auto_edit", "-p", "hi"}, 0},
			{[]string{"-o", "stream-json", "--approval-mode", "default", "-p", "hi"}, 0},
			{[]string{"-o", "stream-json", "-y", "-p", "hi"}, 2},
			{[]string{"-o", "stream-json", "--yolo", "-p", "hi"}, 2},
			{[]string{"-o", "stream-json", "--approval-mode", "yolo", "-p", "hi"}, 2},
			{[]string{"-o", "stream-json", "--approval-mode=yolo", "-p", "hi"}, 2},
		} {
			r := runFake(t, f, "gemini", tc.args, cmdOpts{})
			got := strings.Count(r.stderr, notice)
			if r.code != 0 || got != tc.want || (tc.want > 0 && !strings.HasPrefix(r.stderr, notice+notice)) {
				t.Errorf("%s %v: exit %d, %d notices (want %d), stderr:\n%s", fixture, tc.args, r.code, got, tc.want, r.stderr)
			}
		}
	}
}

// TestGeminiAPIErrorExit: an API error ends a stream-json run with result
// status error and the exit status the error's HTTP status gives, mod 256:
// handleError in google-gemini/gemini-cli@5411f113
// packages/cli/src/utils/errors.ts exits with
// getNumericExitCode(extractErrorCode(error)), the error's status. Captured
// on 0.61.0: 400 → 144, 401 → 145, 429 → 173, 500 → 244
// (testdata/captures/gemini/0.61.0/api-error-*.jsonl, the fixtures' source).
func TestGeminiAPIErrorExit(t *testing.T) {
	for fixture, code := range map[string]int{"gemini/api-error": 144, "gemini/api-error-401": 145, "gemini/api-error-429": 173, "gemini/api-error-500": 244} {
		f := fakecli.Start(t, fakecli.Options{Fixture: fixture})
		r := runFake(t, f, "gemini", []string{"-p", "Say hello in one short sentence.", "-o", "stream-json"}, cmdOpts{})
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		last := lines[len(lines)-1]
		if r.code != code || r.signaled || jsonField(last, "type") != "result" || jsonField(last, "status") != "error" {
			t.Errorf("%s: exit %d (want %d), last line %s", fixture, r.code, code, last)
		}
		if status := strings.TrimPrefix(fixture, "gemini/api-error-"); status != fixture && !strings.Contains(r.stderr, "status: "+status) {
			t.Errorf("%s: stderr has no error report for %s:\n%s", fixture, status, r.stderr)
		}
	}
}

// TestGeminiPipeCut: the pipe_cut fault reproduces a quirk of the real
// Gemini CLI on a pipe. After runNonInteractive, main in
// google-gemini/gemini-cli@5411f113 packages/cli/src/gemini.tsx calls
// process.exit(ExitCodes.SUCCESS) without draining stdout, so the tail of a
// big line still queued behind the full 64 KiB pipe is lost, with every line
// after it. Captured on 0.61.0 (testdata/captures/gemini/
// pipe_cut.long-output.jsonl, the long-output scenario): stdout ended
// 196608 bytes (3 × 64 KiB) into the 400 KB tool_result line, without its
// newline, the answer or the result, and the CLI exited 0; in other runs
// 5 × 64 KiB (pipe_cut.meta.json). The fake with pipe_cut at that offset
// writes what the real CLI wrote: the same lines whole, the same number of
// bytes of the cut line, the same exit.
func TestGeminiPipeCut(t *testing.T) {
	real := loadCapture(t, "../testdata/captures/gemini/pipe_cut.long-output.jsonl")
	want := walk(t, real.Steps)
	whole := strings.Split(want.stdout[:strings.LastIndexByte(want.stdout, '\n')+1], "\n")
	whole = whole[:len(whole)-1]
	cutAt := len(want.stdout) - strings.LastIndexByte(want.stdout, '\n') - 1
	if want.code != 0 || cutAt == 0 || cutAt%65536 != 0 || strings.Contains(want.stdout, `"type":"result"`) {
		t.Fatalf("the capture does not show the cut: exit %d, %d bytes of its last line", want.code, cutAt)
	}
	argv := real.Header.Argv[1:]
	f := fakecli.Start(t, fakecli.Options{Fixture: "gemini/long-output"})
	full := runFake(t, f, "gemini", argv, cmdOpts{})
	for _, at := range []int{cutAt, 327680} {
		r := runFake(t, f, "gemini", argv, cmdOpts{env: []string{"AGENTCONFORM_FAULTS=pipe_cut:at=" + strconv.Itoa(at)}})
		lines := strings.Split(r.stdout, "\n")
		tail := lines[len(lines)-1]
		lines = lines[:len(lines)-1]
		if r.code != 0 || r.signaled || len(tail) != at || !strings.HasPrefix(full.stdout, r.stdout) || strings.Contains(r.stdout, `"type":"result"`) {
			t.Errorf("at=%d: exit %d, %d bytes of the cut line (want %d), ends %q", at, r.code, len(tail), at, r.stdout[max(0, len(r.stdout)-40):])
		}
		if len(lines) != len(whole) {
			t.Fatalf("at=%d: %d whole lines before the cut, the real CLI wrote %d", at, len(lines), len(whole))
		}
		for i := range lines {
			if a, b := jsonField(lines[i], "type"), jsonField(whole[i], "type"); a != b {
				t.Errorf("at=%d: line %d is %s, the real CLI's %s", at, i+1, a, b)
			}
		}
		if !strings.HasPrefix(tail, `{"type":"tool_result"`) {
			t.Errorf("at=%d: the cut line is not the tool_result: %.60s", at, tail)
		}
		if r.stderr != full.stderr {
			t.Errorf("at=%d: stderr %q, want %q", at, r.stderr, full.stderr)
		}
	}
}
