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
func TestGeminiSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			f := fakecli.Start(t, fakecli.Options{Fixture: "gemini/interrupt"})
			l := startFake(t, f, "gemini", append(geminiP, "Run the end-to-end tests."), cmdOpts{})
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
		l := startFake(t, f, "gemini", append(geminiP, "Run"), cmdOpts{})
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
// testdata/captures/gemini/tool_single.stderr.txt (--yolo) has the two
// lines, plain_text.stderr.txt and api_error_401.stderr.txt (no -y) none.
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
// on 0.61.0: 401 → 145, 429 → 173, 500 → 244
// (testdata/captures/gemini/api_error_*.meta.json); 400 → 144.
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
// after it: observed on 0.61.0 in 2 of 4 runs on a slow pipe, stdout ended 5
// × 64 KiB into a 368 KB tool_result line, with no result and exit 0
// (testdata/captures/gemini/pipe_cut.meta.json).
func TestGeminiPipeCut(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "gemini/long-output"})
	full := runFake(t, f, "gemini", append(geminiP, "How many requests in logs/server.log failed?"), cmdOpts{})
	start := strings.Index(full.stdout, `{"type":"tool_result"`) // the 300 KB line
	for _, at := range []int{65536, 262144} {
		l := startFake(t, f, "gemini", append(geminiP, "How many requests in logs/server.log failed?"),
			cmdOpts{env: []string{"AGENTCONFORM_FAULTS=pipe_cut:at=" + strconv.Itoa(at)}})
		r, _ := l.wait()
		if r.code != 0 || r.signaled || r.stdout != full.stdout[:start+at] || strings.Contains(r.stdout, `"type":"result"`) {
			t.Errorf("at=%d: exit %d, %d stdout bytes (want %d: the lines before the tool_result and %d bytes of it), ends %q",
				at, r.code, len(r.stdout), start+at, at, r.stdout[max(0, len(r.stdout)-40):])
		}
		if r.stderr != full.stderr {
			t.Errorf("at=%d: stderr %q, want %q", at, r.stderr, full.stderr)
		}
	}
}
