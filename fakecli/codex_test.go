//go:build unix

package fakecli_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

var codexExec = []string{"exec", "--json", "--skip-git-repo-check"}

// codexTranscript is a one-turn Codex transcript whose command runs for
// delay ms, with the given on_signal (nil: the CLI's own behaviour).
func codexTranscript(t testing.TB, delay int64, onSignal map[string]string) string {
	t.Helper()
	steps := []transcript.Step{{Op: transcript.OpStdinEOF}}
	if onSignal != nil {
		steps = append(steps, transcript.Step{Op: transcript.OpOnSignal, OnSignal: onSignal})
	}
	for _, l := range []string{
		`{"type":"thread.started","thread_id":"01a1fb5c-b7c0-79e4-96b1-5c30b118bf83"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'sleep 30'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
	} {
		steps = append(steps, transcript.Step{Op: transcript.OpOut, Text: l})
	}
	steps = append(steps, transcript.Step{Op: transcript.OpDelay, DelayMS: delay})
	for _, l := range []string{
		`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'sleep 30'","aggregated_output":"","exit_code":0,"status":"completed"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":2,"reasoning_output_tokens":0}}`,
	} {
		steps = append(steps, transcript.Step{Op: transcript.OpOut, Text: l})
	}
	steps = append(steps, transcript.Step{Op: transcript.OpExit, Code: 0})
	return saveTranscript(t, &transcript.Transcript{Header: transcript.Header{Format: transcript.Format, CLI: "codex", CLIVersion: "0.169.0"}, Steps: steps})
}

// TestCodexReadsStdinFirst: with a pipe on stdin, exec writes nothing on
// stdout until stdin reaches EOF, then the whole turn.
func TestCodexReadsStdinFirst(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/plain-text"})
	l := startFake(t, f, "codex", append(codexExec, "hi"), cmdOpts{})
	l.send("more context")
	l.quiet(300 * time.Millisecond)
	r, rest := l.wait()
	if r.code != 0 || len(rest) != 4 || !strings.Contains(rest[3], "turn.completed") {
		t.Errorf("exit %d, stdout after EOF %q", r.code, rest)
	}
	if r.stderr != "Reading additional input from stdin...\n" {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestCodexResume plays a two-process fixture: exec, then exec resume with
// the thread id from thread.started (and with --last); an unknown id
// fails.
func TestCodexResume(t *testing.T) {
	fx, err := loadFixture("codex/multi-turn")
	if err != nil {
		t.Fatal(err)
	}
	parts := fx.Processes()
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/multi-turn"})
	dir := t.TempDir()
	first := runFake(t, f, "codex", append(codexExec, "What does greet.go do?"), cmdOpts{dir: dir})
	if first.code != 0 || first.stdout != walk(t, parts[0]).stdout {
		t.Fatalf("first process: exit %d\n%s", first.code, first.stdout)
	}
	thread := jsonField(strings.SplitN(first.stdout, "\n", 2)[0], "thread_id")
	second := runFake(t, f, "codex", append(codexExec, "resume", thread, "Make it end with an exclamation mark."), cmdOpts{dir: dir})
	if second.code != 0 || second.stdout != walk(t, parts[1]).stdout {
		t.Errorf("resumed process: exit %d, stderr %q\n%s", second.code, second.stderr, second.stdout)
	}
	// --last in the same directory finds the thread again (its last part
	// replays once the transcript has no more).
	last := runFake(t, f, "codex", []string{"exec", "--skip-git-repo-check", "resume", "--last", "--json", "again"}, cmdOpts{dir: dir})
	if last.code != 0 || jsonField(strings.SplitN(last.stdout, "\n", 2)[0], "thread_id") != thread {
		t.Errorf("resume --last: exit %d, stderr %q\n%s", last.code, last.stderr, last.stdout)
	}
	unknown := runFake(t, f, "codex", append(codexExec, "resume", "0199a213-81c0-7800-8aa1-bbab2a035a53", "x"), cmdOpts{dir: dir})
	if unknown.code != 1 || unknown.stdout != "" || !strings.HasSuffix(unknown.stderr, "no rollout found for thread id 0199a213-81c0-7800-8aa1-bbab2a035a53 (code -32600)\n") {
		t.Errorf("unknown thread: exit %d, stdout %q, stderr %q", unknown.code, unknown.stdout, unknown.stderr)
	}
}

// TestCodexSignals: SIGINT stops with exit 1 and no turn.completed;
// SIGTERM kills it (143); a transcript that ignores SIGTERM keeps running
// until SIGKILL.
func TestCodexSignals(t *testing.T) {
	t.Run("SIGINT", func(t *testing.T) {
		f := fakecli.Start(t, fakecli.Options{Transcript: codexTranscript(t, 10000, nil)})
		l := startFake(t, f, "codex", append(codexExec, "run"), cmdOpts{})
		l.stdin.Close()
		l.until("item.started", typeIs("item.started"))
		l.signal(syscall.SIGINT)
		r, rest := l.wait()
		if r.code != 1 || r.signaled || len(rest) != 0 {
			t.Errorf("status %d (signaled %v), more lines %q; want exit 1 and nothing", r.code, r.signaled, rest)
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		f := fakecli.Start(t, fakecli.Options{Transcript: codexTranscript(t, 10000, nil)})
		l := startFake(t, f, "codex", append(codexExec, "run"), cmdOpts{})
		l.stdin.Close()
		l.until("item.started", typeIs("item.started"))
		l.signal(syscall.SIGTERM)
		r, rest := l.wait()
		if r.code != 143 || !r.signaled || len(rest) != 0 {
			t.Errorf("status %d (signaled %v), more lines %q; want death by SIGTERM", r.code, r.signaled, rest)
		}
	})
	t.Run("SIGTERM ignored", func(t *testing.T) {
		f := fakecli.Start(t, fakecli.Options{Transcript: codexTranscript(t, 10000, map[string]string{"SIGTERM": "ignore"})})
		l := startFake(t, f, "codex", append(codexExec, "run"), cmdOpts{})
		l.stdin.Close()
		l.until("item.started", typeIs("item.started"))
		l.signal(syscall.SIGTERM)
		time.Sleep(300 * time.Millisecond)
		if err := l.cmd.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("the fake died on an ignored SIGTERM: %v", err)
		}
		l.quiet(100 * time.Millisecond)
		l.signal(syscall.SIGKILL)
		r, _ := l.wait()
		if r.code != 137 || !r.signaled {
			t.Errorf("status %d, want death by SIGKILL", r.code)
		}
	})
	t.Run("fixture", func(t *testing.T) {
		f := fakecli.Start(t, fakecli.Options{Fixture: "codex/interrupt"})
		l := startFake(t, f, "codex", append(codexExec, "Run the end-to-end tests."), cmdOpts{})
		l.stdin.Close()
		l.until("command started", func(ev map[string]any) bool {
			return ev["type"] == "item.started" && lookup(ev, "/item/type") == "command_execution"
		})
		l.signal(syscall.SIGINT)
		r, rest := l.wait()
		if r.code != 1 || len(rest) != 0 {
			t.Errorf("status %d, more lines %q", r.code, rest)
		}
	})
}

// TestCodexHumanOutput: without --json only the last agent message goes
// to stdout; -o writes it to a file too.
func TestCodexHumanOutput(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/single-tool"})
	dir := t.TempDir()
	r := runFake(t, f, "codex", []string{"exec", "--skip-git-repo-check", "-o", "last.txt", "hi"}, cmdOpts{dir: dir})
	if r.code != 0 || strings.Contains(r.stdout, "{") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("exit %d, stdout %q", r.code, r.stdout)
	}
}

// TestCodexHumanSessionID: without --json, codex-cli 0.169.0 writes on
// stderr a configuration summary that names the session ("session id:
// <thread id>"), the prompt and every event as text, and on stdout only the
// final agent message (testdata/captures/codex/human_exec.*; the summary is
// print_config_summary and the tail print_final_output in
// codex-rs/exec/src/event_processor_with_human_output.rs). Clients read the
// id from stderr to resume with `codex exec resume <id>`, which continues
// that session (human_resume.*: same id, default sandbox read-only).
func TestCodexHumanSessionID(t *testing.T) {
	fx, err := loadFixture("codex/multi-turn")
	if err != nil {
		t.Fatal(err)
	}
	thread := fx.Header.SessionID
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/multi-turn"})
	dir := t.TempDir()
	first := runFake(t, f, "codex", []string{"exec", "--skip-git-repo-check", "-s", "workspace-write", "-c", `model_provider="mock"`, "What does greet.go do?"}, cmdOpts{dir: dir})
	want := "Reading additional input from stdin...\n" +
		"OpenAI Codex v0.169.0\n--------\n" +
		"workdir: DIR\nmodel: gpt-5.5\nprovider: mock\napproval: never\n" +
		"sandbox: workspace-write [workdir, /tmp, $TMPDIR]\nreasoning effort: none\nreasoning summaries: none\n" +
		"session id: " + thread + "\n--------\n" +
		"user\nWhat does greet.go do?\n" +
		"exec\n/bin/bash -lc 'cat greet.go' in DIR\n succeeded in 0ms:\n" +
		"package greet\n\n" +
		"codex\nIt declares package greet.\n" +
		"tokens used\n446\n" // 400 input - 0 cached + 46 output
	if first.code != 0 || human(first.stderr, dir) != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", first.code, human(first.stderr, dir), want)
	}
	if first.stdout != "It declares package greet.\n" {
		t.Errorf("stdout %q", first.stdout)
	}
	// As a client does: the id from stderr, then resume in human mode.
	m := regexp.MustCompile(`(?m)^session id: (\S+)$`).FindStringSubmatch(first.stderr)
	if m == nil || m[1] != thread {
		t.Fatalf("session id on stderr: %q, want %s", m, thread)
	}
	second := runFake(t, f, "codex", []string{"exec", "--skip-git-repo-check", "resume", m[1], "Document that in greet.go."}, cmdOpts{dir: dir})
	if second.code != 0 || second.stdout != "Documented the package.\n" {
		t.Errorf("resumed: exit %d, stdout %q, stderr %q", second.code, second.stdout, second.stderr)
	}
	// exec resume with a prompt reads no stdin: no "Reading ..." line.
	if strings.HasPrefix(second.stderr, "Reading") {
		t.Errorf("resumed stderr begins with a stdin notice:\n%s", second.stderr)
	}
	for _, s := range []string{"\nsandbox: read-only\n", "\nsession id: " + thread + "\n", "\nuser\nDocument that in greet.go.\n",
		"\napply patch\npatch: completed\n/home/user/project/greet.go\ncodex\n", "\ntokens used\n891\n"} {
		if !strings.Contains(second.stderr, s) {
			t.Errorf("resumed stderr lacks %q:\n%s", s, second.stderr)
		}
	}
}

// TestCodexHumanErrors: the human output of a failed turn is "ERROR:
// <message>" for the error notification and again for the failed turn, and
// nothing on stdout (testdata/captures/codex/human_api_error.*); a retried
// stream prints "ERROR: Reconnecting... 1/2" without the details --json
// appends, and the turn goes on (human_stream_retry.*).
func TestCodexHumanErrors(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/api-error"})
	r := runFake(t, f, "codex", []string{"exec", "--skip-git-repo-check", "Say hello."}, cmdOpts{})
	fx, err := loadFixture("codex/api-error")
	if err != nil {
		t.Fatal(err)
	}
	msg := jsonField(strings.Split(walk(t, fx.Processes()[0]).stdout, "\n")[2], "message")
	if r.code != 1 || r.stdout != "" || !strings.HasSuffix(r.stderr, "\nSay hello.\nERROR: "+msg+"\nERROR: "+msg+"\n") || strings.Contains(r.stderr, "tokens used") {
		t.Errorf("api error: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	f = fakecli.Start(t, fakecli.Options{Fixture: "codex/stream-retry"})
	r = runFake(t, f, "codex", []string{"exec", "--skip-git-repo-check", "hi"}, cmdOpts{})
	if r.code != 0 || r.stdout != "It printed `hi`.\n" || !strings.Contains(r.stderr, "\nhi\nERROR: Reconnecting... 1/2\nexec\n") {
		t.Errorf("stream retry: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// human normalises a human-output stderr: the working directory becomes
// DIR and command durations 0ms.
func human(stderr, dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		stderr = strings.ReplaceAll(stderr, real, "DIR")
	}
	stderr = strings.ReplaceAll(stderr, dir, "DIR")
	return regexp.MustCompile(`(?m)^ (succeeded|exited \d+) in \d+ms:$`).ReplaceAllString(stderr, " $1 in 0ms:")
}
