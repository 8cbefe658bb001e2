//go:build unix

package fakecli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

// The real CLIs' captures the fakes must reproduce: agentconform capture
// runs of Codex 0.169.0 and Gemini CLI 0.61.0 against the mock model API.
var realCaptures = map[string]string{
	"codex":  "../testdata/captures/codex/0.169.0",
	"gemini": "../testdata/captures/gemini/0.61.0",
}

// loadCapture loads one committed capture transcript.
func loadCapture(t *testing.T, file string) *transcript.Transcript {
	t.Helper()
	tr, err := transcript.LoadFile(os.DirFS(filepath.Dir(file)), filepath.Base(file), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// errLines are the stderr lines a process part writes along its default
// path (up to its exit).
func errLines(steps []transcript.Step) []string {
	var out []string
	for _, st := range steps {
		switch st.Op {
		case transcript.OpErr:
			out = append(out, st.Text)
		case transcript.OpExit, transcript.OpExitSignal:
			return out
		}
	}
	return out
}

// resumeArgs is how the capture resumed a session in its second process
// (capture/scenario.go: codexResume, geminiResume).
func resumeArgs(cli, session string) []string {
	if cli == "codex" {
		return []string{"exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "resume", session, "the next turn"}
	}
	return []string{"-p", "the next turn", "-o", "stream-json", "-y", "--resume", session}
}

// TestFakesReplayCaptures runs the fakes with each capture's command line
// and its transcript: stdout must be the real CLI's byte for byte along
// the run to its exit (a cut line included), the exit status the real
// one (Gemini's API errors exit with the HTTP status mod 256: 400 → 144,
// 401 → 145, 429 → 173, 500 → 244; Codex's retried HTTP 500 writes no
// event), and the stderr notices that depend on the command line as the
// real CLI wrote them: Gemini's YOLO notice (twice with -y, never without)
// and Codex's "Reading additional input from stdin..." (for exec with a
// prompt, not for exec resume).
func TestFakesReplayCaptures(t *testing.T) {
	n := 0
	for cli, dir := range realCaptures {
		files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if strings.HasPrefix(filepath.Base(file), "acp-") {
				continue // ACP sessions need a client: TestGeminiACPReplaysFixtures
			}
			if strings.HasPrefix(filepath.Base(file), "app-server-") {
				continue // JSON-RPC both ways: TestAppServerReplaysCaptures
			}
			n++
			t.Run(cli+"/"+strings.TrimSuffix(filepath.Base(file), ".jsonl"), func(t *testing.T) {
				tr := loadCapture(t, file)
				abs, err := filepath.Abs(file)
				if err != nil {
					t.Fatal(err)
				}
				f := fakecli.Start(t, fakecli.Options{Transcript: abs})
				dir := t.TempDir()
				args := tr.Header.Argv[1:]
				for i, part := range tr.Processes() {
					if i > 0 {
						args = resumeArgs(cli, tr.Header.SessionID)
					}
					want := walk(t, part)
					o := cmdOpts{dir: dir}
					if cli == "gemini" && strings.HasPrefix(filepath.Base(file), "launcher-") {
						// The capture's signal hit the npm launcher: the fake
						// plays the launcher's death in the CLI's place, so it
						// runs without a launcher of its own.
						o.env = []string{"GEMINI_CLI_NO_RELAUNCH=true"}
					}
					r := runFake(t, f, cli, args, o)
					if r.stdout != want.stdout {
						t.Errorf("process %d: stdout differs from the capture's (%d bytes, want %d):\n%s\nwant:\n%s", i+1, len(r.stdout), len(want.stdout), clipText(r.stdout), clipText(want.stdout))
					}
					if want.signal != "" {
						if !r.signaled || r.code != 128+signalNumber(want.signal) {
							t.Errorf("process %d: exit %d (signaled %v), want death by %s", i+1, r.code, r.signaled, want.signal)
						}
					} else if r.code != want.code || r.signaled {
						t.Errorf("process %d: exit %d (signaled %v), want %d", i+1, r.code, r.signaled, want.code)
					}
					for _, notice := range []string{"YOLO mode is enabled. All tool calls will be automatically approved.", "Reading additional input from stdin..."} {
						got, real := strings.Count(r.stderr, notice+"\n"), 0
						for _, l := range errLines(part) {
							if l == notice {
								real++
							}
						}
						if got != real {
							t.Errorf("process %d: %d times %q on stderr, the real CLI wrote it %d times; stderr:\n%s", i+1, got, notice, real, clipText(r.stderr))
						}
					}
				}
			})
		}
	}
	if n < 20 {
		t.Errorf("only %d captures found", n)
	}
}

// TestCodexRetriesAsCaptured keeps the two retries of Codex 0.169.0
// apart, as captured: an HTTP 500 is retried without a word on stdout
// (codex/0.169.0/api-retry.jsonl), a response stream cut short is retried
// after a non-fatal error event "Reconnecting... 1/2 (...)"
// (codex/stream_retry.stdout.jsonl); the fixtures of both say the same.
func TestCodexRetriesAsCaptured(t *testing.T) {
	for _, tc := range []struct {
		fixture, capture string
		reconnect        bool
	}{
		{"codex/api-retry", "0.169.0/api-retry.jsonl", false},
		{"codex/stream-retry", "stream_retry.stdout.jsonl", true},
	} {
		data, err := os.ReadFile(filepath.Join("../testdata/captures/codex", tc.capture))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(data), `"type\":\"error\"`) || strings.Contains(string(data), `"type":"error"`); got != tc.reconnect {
			t.Fatalf("%s: an error event in the capture is %v, want %v", tc.capture, got, tc.reconnect)
		}
		f := fakecli.Start(t, fakecli.Options{Fixture: tc.fixture})
		r := runFake(t, f, "codex", []string{"exec", "--json", "--skip-git-repo-check", "Say hello in one short sentence."}, cmdOpts{})
		errors := 0
		for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
			if jsonField(l, "type") == "error" {
				errors++
				if !strings.HasPrefix(jsonField(l, "message"), "Reconnecting... 1/2 (") {
					t.Errorf("%s: error event %s", tc.fixture, l)
				}
			}
		}
		if r.code != 0 || (errors == 1) != tc.reconnect || errors > 1 || !strings.HasSuffix(r.stdout, "\n") ||
			jsonField(r.stdout[strings.LastIndex(strings.TrimSuffix(r.stdout, "\n"), "\n")+1:], "type") != "turn.completed" {
			t.Errorf("%s: exit %d, %d error events (want a reconnect: %v):\n%s", tc.fixture, r.code, errors, tc.reconnect, r.stdout)
		}
	}
}

// clipText shortens a long text for a failure message.
func clipText(s string) string {
	if len(s) > 2000 {
		return s[:1000] + "\n...\n" + s[len(s)-1000:]
	}
	return s
}
