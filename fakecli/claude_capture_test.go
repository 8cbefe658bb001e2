//go:build unix

package fakecli_test

// Tests that hold the Claude fake to the real CLI as committed captures
// show it: testdata/captures/claude/<version>/<scenario>.jsonl, written by
// agentconform capture from Claude Code 2.1.329 and 2.1.331 against a mock
// model. Each test first reads what the capture shows, so that it fails
// if the evidence is not there, then drives the fake.

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

// captureVersions are the Claude versions with a capture of every scenario.
var captureVersions = []string{"2.1.329", "2.1.331"}

// loadClaudeCapture loads testdata/captures/claude/<version>/<scenario>.jsonl.
func loadClaudeCapture(t *testing.T, version, scenario string) *transcript.Transcript {
	t.Helper()
	return loadCapture(t, filepath.Join("..", "testdata", "captures", "claude", version, scenario+".jsonl"))
}

// capturedLine is the first stdout line of a capture whose type is typ.
func capturedLine(t *testing.T, version, scenario, typ string) string {
	t.Helper()
	for _, s := range loadClaudeCapture(t, version, scenario).Steps {
		if s.Op == transcript.OpOut && jsonField(s.Text, "type") == typ {
			return s.Text
		}
	}
	t.Fatalf("capture %s/%s: no %s line", version, scenario, typ)
	return ""
}

// branch returns the steps of a capture after its on_signal label (what
// the CLI did once signalled).
func branch(t *testing.T, tr *transcript.Transcript) []transcript.Step {
	t.Helper()
	for i, s := range tr.Steps {
		if s.Op == transcript.OpLabel {
			return tr.Steps[i+1:]
		}
	}
	t.Fatalf("%s: no signal branch", tr.Name)
	return nil
}

// kinds lists the type/subtype of the out steps.
func kinds(steps []transcript.Step) []string {
	var out []string
	for _, s := range steps {
		if s.Op == transcript.OpOut {
			out = append(out, kindOf(s.Text))
		}
	}
	return out
}

var (
	uuidField      = regexp.MustCompile(`"(uuid|session_id)":"[0-9a-f-]{36}"`)
	timestampField = regexp.MustCompile(`"timestamp":"[0-9T:.Z-]+"`)
)

// shape is a line with its uuids, session id and timestamp blanked: what
// must be the same between the real CLI's line and the fake's.
func shape(line string) string {
	line = uuidField.ReplaceAllString(line, `"$1":"-"`)
	return timestampField.ReplaceAllString(line, `"timestamp":"-"`)
}

// TestClaudeExitAfterErrorTurnCaptured: with stream-json input, stdin
// closed after a turn that ended in error (an interrupted turn, an API
// error) makes the real CLI exit 1. The fake does so on a transcript that
// recorded exit 0 for a clean session.
func TestClaudeExitAfterErrorTurnCaptured(t *testing.T) {
	for _, v := range captureVersions {
		for _, sc := range []string{"interrupt", "api-error-stream"} {
			steps := loadClaudeCapture(t, v, sc).Steps
			n := len(steps)
			last := steps[n-1]
			res := ""
			for _, s := range steps {
				if s.Op == transcript.OpOut && jsonField(s.Text, "type") == "result" {
					res = s.Text
				}
			}
			if !strings.Contains(res, `"is_error":true`) || steps[n-2].Op != transcript.OpStdinEOF || last.Op != transcript.OpExit || last.Code != 1 {
				t.Fatalf("capture %s/%s does not show exit 1 at stdin EOF after an error result", v, sc)
			}
		}
	}
	path := toolTurns(t, 10000) // records exit 0 at stdin EOF
	f := fakecli.Start(t, fakecli.Options{Transcript: path})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(user("run the suite"))
	l.until("tool_use", isToolUse)
	l.send(`{"type":"control_request","request_id":"req_int","request":{"subtype":"interrupt"}}`)
	l.until("result", typeIs("result", "error_during_execution"))
	if r, rest := l.wait(); r.code != 1 || len(rest) != 0 {
		t.Errorf("interrupted, then stdin closed: exit %d, more lines %q; want exit 1", r.code, rest)
	}
	// An API error in a stream-json session (the fixture is the -p
	// capture, exit 1 recorded; the fake's exit at stdin EOF says 1 too).
	f = fakecli.Start(t, fakecli.Options{Fixture: "claude/api-error"})
	if r := runFake(t, f, "claude", claudeStream, cmdOpts{stdin: user("hello") + "\n"}); r.code != 1 || !strings.Contains(r.stdout, `"is_error":true`) {
		t.Errorf("API error, then stdin closed: exit %d; want 1\n%s", r.code, r.stdout)
	}
}

// TestClaudeResultLinesCaptured: the real result line begins with
// "duration_api_ms" and has "type" as its 17th to 19th key (2.1.329 and
// 2.1.331, success and error results). The fake replays a captured result
// line byte for byte and makes its own (an interrupted turn's) in the
// captured error result's key order.
func TestClaudeResultLinesCaptured(t *testing.T) {
	for _, v := range captureVersions {
		for _, sc := range []string{"single-tool", "interrupt", "max-turns", "api-error-401"} {
			res := capturedLine(t, v, sc, "result")
			keys := topKeys(t, res)
			at := -1
			for i, k := range keys {
				if k == "type" {
					at = i + 1
				}
			}
			if keys[0] != "duration_api_ms" || at < 17 || at > 19 {
				t.Errorf("capture %s/%s: result keys %v (type is key %d)", v, sc, keys, at)
			}
		}
	}
	// Replayed: the fixture's lines come out as they are.
	fx, err := loadFixture("claude/single-tool")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range fx.Steps {
		if s.Op == transcript.OpOut {
			want = append(want, s.Text)
		}
	}
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/single-tool"})
	r := runFake(t, f, "claude", fx.Header.Argv[1:], cmdOpts{})
	if got := lines(r.stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("claude/single-tool is not replayed byte for byte:\n%s", r.stdout)
	}
	// Made by the fake: SIGINT in -p mode during a tool the transcript
	// gives no branch for.
	errKeys := topKeys(t, capturedLine(t, "2.1.331", "interrupt", "result"))
	f = fakecli.Start(t, fakecli.Options{Transcript: printToolTurn(t, 10000)})
	l := startFake(t, f, "claude", []string{"-p", "run the suite", "--output-format", "stream-json", "--verbose"}, cmdOpts{})
	l.until("tool_use", isToolUse)
	l.signal(syscall.SIGINT)
	l.until("result", typeIs("result", "error_during_execution"))
	l.wait()
	got := l.all[len(l.all)-1]
	if keys := topKeys(t, got); strings.Join(keys, ",") != strings.Join(errKeys, ",") {
		t.Errorf("the fake's error result keys\n%v\nwant the capture's\n%v", keys, errKeys)
	}
}

// TestClaudeInterruptLinesCaptured: the tool_result of a tool stopped by
// an interrupt, as the real CLI writes it (2.1.329, 2.1.331): after a
// control_request interrupt the refusal text is followed by a correction
// ("this call was stopped while running"), after SIGINT it is not; both
// carry tool_result_meta non_execution_kind user-rejected. The fake's own
// lines have the captured shape.
func TestClaudeInterruptLinesCaptured(t *testing.T) {
	toolResult := func(steps []transcript.Step) string {
		for _, s := range steps {
			if s.Op == transcript.OpOut && strings.Contains(s.Text, `"type":"tool_result"`) && strings.Contains(s.Text, `"is_error":true`) {
				return s.Text
			}
		}
		t.Fatal("no is_error tool_result")
		return ""
	}
	for _, v := range captureVersions {
		ctl := toolResult(loadClaudeCapture(t, v, "interrupt").Steps)
		sig := toolResult(branch(t, loadClaudeCapture(t, v, "interrupt-stream-sigint")))
		if !strings.Contains(ctl, "Correction to the text above") || strings.Contains(sig, "Correction to the text above") ||
			!strings.Contains(ctl, `"non_execution_kind":"user-rejected"`) || !strings.Contains(sig, `"non_execution_kind":"user-rejected"`) {
			t.Fatalf("captures %s: control interrupt %s\nSIGINT %s", v, ctl, sig)
		}
	}
	wantCtl := shape(toolResult(loadClaudeCapture(t, "2.1.331", "interrupt").Steps))
	wantSig := shape(toolResult(branch(t, loadClaudeCapture(t, "2.1.331", "interrupt-stream-sigint"))))
	for _, bySignal := range []bool{false, true} {
		f := fakecli.Start(t, fakecli.Options{Transcript: toolTurns(t, 10000)})
		l := startFake(t, f, "claude", claudeStream, cmdOpts{})
		l.send(user("run the suite"))
		l.until("tool_use", isToolUse)
		want := wantCtl
		if bySignal {
			l.signal(syscall.SIGINT)
			want = wantSig
		} else {
			l.send(`{"type":"control_request","request_id":"req_int","request":{"subtype":"interrupt"}}`)
			l.next(lineTimeout) // the receipt
		}
		if got := shape(l.next(lineTimeout)); got != want {
			t.Errorf("interrupted tool_result (signal %v):\n%s\nwant the capture's\n%s", bySignal, got, want)
		}
		l.wait()
	}
}

// TestClaudeSIGTERMCaptured: SIGTERM while a Bash command runs makes the
// real CLI write an is_error tool_result "Exit code 137" for it, then exit
// 143 with no result (2.1.329 and 2.1.331, -p and stream-json input). The
// fake replays the captured branch of claude/interrupt, and writes the
// same line itself where a transcript scripts no branch.
func TestClaudeSIGTERMCaptured(t *testing.T) {
	var want string
	for _, v := range captureVersions {
		for _, sc := range []string{"interrupt-sigterm", "interrupt-stream-sigterm"} {
			br := branch(t, loadClaudeCapture(t, v, sc))
			if got := kinds(br); len(got) != 1 || got[0] != "user" || !strings.Contains(br[0].Text, `"content":"Exit code 137","is_error":true`) ||
				br[len(br)-1].Op != transcript.OpExit || br[len(br)-1].Code != 143 {
				t.Fatalf("capture %s/%s: SIGTERM branch %v", v, sc, got)
			}
			if v == "2.1.331" && sc == "interrupt-stream-sigterm" {
				want = shape(br[0].Text)
			}
		}
	}
	// The fixture's captured branch.
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/interrupt"})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(user("run the suite"))
	l.until("tool_use", isToolUse)
	l.signal(syscall.SIGTERM)
	if got := shape(l.next(lineTimeout)); got != want {
		t.Errorf("claude/interrupt after SIGTERM:\n%s\nwant\n%s", got, want)
	}
	if r, rest := l.wait(); r.code != 143 || len(rest) != 0 {
		t.Errorf("claude/interrupt after SIGTERM: exit %d, more lines %q; want 143", r.code, rest)
	}
	// The fake's own answer (no on_signal in the transcript).
	f = fakecli.Start(t, fakecli.Options{Transcript: toolTurns(t, 10000)})
	l = startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(user("run the suite"))
	l.until("tool_use", isToolUse)
	l.signal(syscall.SIGTERM)
	if got := shape(l.next(lineTimeout)); got != want {
		t.Errorf("SIGTERM during a Bash call:\n%s\nwant the capture's\n%s", got, want)
	}
	if r, rest := l.wait(); r.code != 143 || len(rest) != 0 {
		t.Errorf("SIGTERM during a Bash call: exit %d, more lines %q; want 143", r.code, rest)
	}
}

// TestClaudePermissionCaptured: after a client answers can_use_tool with
// deny, the real CLI goes straight to the is_error tool_result; in a
// session without a prompt tool it refuses by itself and writes
// system/permission_denied first (the permission-deny and
// permission-unasked captures). The fake follows each.
func TestClaudePermissionCaptured(t *testing.T) {
	after := func(steps []transcript.Step, from string) []string {
		k := kinds(steps)
		for i, x := range k {
			if x == from {
				return k[i+1:]
			}
		}
		t.Fatalf("no %s line in %v", from, k)
		return nil
	}
	for _, v := range captureVersions {
		deny := after(loadClaudeCapture(t, v, "permission-deny").Steps, "control_request")
		unasked := after(loadClaudeCapture(t, v, "permission-unasked").Steps, "assistant")
		for len(unasked) > 0 && unasked[0] == "assistant" {
			unasked = unasked[1:] // the tool_use line after the text
		}
		if strings.Join(deny, ",") != "user,assistant,result/success" || strings.Join(unasked, ",") != "system/permission_denied,user,assistant,result/success" {
			t.Fatalf("captures %s: after a deny answer %v; without a prompt tool %v", v, deny, unasked)
		}
	}
	for _, name := range []string{"claude/permission-deny", "claude/permission-allow"} {
		f := fakecli.Start(t, fakecli.Options{Fixture: name})
		l := startFake(t, f, "claude", append(claudeStream, "--permission-prompt-tool", "stdio"), cmdOpts{})
		l.send(user("please create a file"))
		req := l.until("can_use_tool", func(ev map[string]any) bool {
			return ev["type"] == "control_request" && lookup(ev, "/request/subtype") == "can_use_tool"
		})
		l.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + req["request_id"].(string) + `","response":{"behavior":"deny","message":"not today"}}}`)
		_, rest := l.wait()
		var got []string
		for _, line := range rest {
			got = append(got, kindOf(line))
		}
		if strings.Join(got, ",") != "user,assistant,result/success" {
			t.Errorf("%s, a deny answer: %v", name, got)
		}

		l = startFake(t, f, "claude", claudeStream, cmdOpts{})
		l.send(user("please create a file"))
		l.until("tool_use", isToolUse)
		_, rest = l.wait()
		got = nil
		for _, line := range rest {
			got = append(got, kindOf(line))
		}
		if strings.Join(got, ",") != "system/permission_denied,user,assistant,result/success" {
			t.Errorf("%s without a prompt tool: %v", name, got)
		}
	}
}

// TestClaudePermissionDeniedSkipped: a transcript whose deny branch is the
// one recorded without a prompt tool (system/permission_denied first) and
// that has no no-prompt-tool label: replayed for a client that answered
// deny, the fake leaves the permission_denied line out, as the real CLI
// writes none then (the permission-deny captures); replayed without a
// prompt tool, it keeps it.
func TestClaudePermissionDeniedSkipped(t *testing.T) {
	fx, err := loadFixture("claude/permission-deny")
	if err != nil {
		t.Fatal(err)
	}
	var steps []transcript.Step
	skip := false
	for _, s := range fx.Steps {
		if s.Op == transcript.OpLabel {
			skip = s.Label == "deny"
			if s.Label == "no-prompt-tool" {
				s.Label = "deny"
			}
		}
		if !skip {
			steps = append(steps, s)
		}
	}
	tr := &transcript.Transcript{Header: fx.Header, Steps: steps}
	f := fakecli.Start(t, fakecli.Options{Transcript: saveTranscript(t, tr)})
	for _, prompt := range []bool{true, false} {
		args := claudeStream
		if prompt {
			args = append(append([]string(nil), claudeStream...), "--permission-prompt-tool", "stdio")
		}
		l := startFake(t, f, "claude", args, cmdOpts{})
		l.send(user("please create a file"))
		if prompt {
			req := l.until("can_use_tool", func(ev map[string]any) bool {
				return ev["type"] == "control_request" && lookup(ev, "/request/subtype") == "can_use_tool"
			})
			l.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + req["request_id"].(string) + `","response":{"behavior":"deny","message":"not today"}}}`)
		} else {
			l.until("tool_use", isToolUse)
		}
		_, rest := l.wait()
		var got []string
		for _, line := range rest {
			got = append(got, kindOf(line))
		}
		want := "system/permission_denied,user,assistant,result/success"
		if prompt {
			want = "user,assistant,result/success"
		}
		if strings.Join(got, ",") != want {
			t.Errorf("prompt tool %v: %v, want %s", prompt, got, want)
		}
	}
}

// TestClaudeTaskAndRetryLinesCaptured: a Bash call running more than about
// 3 s gets system/task_started and system/task_notification, one running
// 30 s a tool_progress heartbeat, and a retried request system/api_retry
// (2.1.329 and 2.1.331); the fixtures replay them.
func TestClaudeTaskAndRetryLinesCaptured(t *testing.T) {
	for _, v := range captureVersions {
		k := strings.Join(kinds(loadClaudeCapture(t, v, "interrupt-stream-sigint").Steps), ",")
		if !strings.Contains(k, "assistant,system/task_started,tool_progress,system/task_notification,user") {
			t.Fatalf("capture %s/interrupt-stream-sigint: %s", v, k)
		}
		if k := strings.Join(kinds(loadClaudeCapture(t, v, "api-retry").Steps), ","); k != "system/init,system/api_retry,assistant,result/success" {
			t.Fatalf("capture %s/api-retry: %s", v, k)
		}
	}
	r, _ := driveFixture(t, "claude/interrupt", nil, nil, func(string) bool { return false })
	var got []string
	for _, line := range lines(r.stdout) {
		got = append(got, kindOf(line))
	}
	if k := strings.Join(got, ","); !strings.Contains(k, "assistant,system/task_started,tool_progress,system/task_notification,user,assistant,result/success") {
		t.Errorf("claude/interrupt left alone: %s", k)
	}
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/api-retry"})
	r = runFake(t, f, "claude", []string{"-p", "hello", "--output-format", "stream-json", "--verbose"}, cmdOpts{})
	got = nil
	for _, line := range lines(r.stdout) {
		got = append(got, kindOf(line))
	}
	if k := strings.Join(got, ","); k != "system/init,system/api_retry,assistant,result/success" || r.code != 0 {
		t.Errorf("claude/api-retry: exit %d, %s", r.code, k)
	}
	var retry map[string]any
	if err := json.Unmarshal([]byte(lines(r.stdout)[1]), &retry); err != nil || retry["error_status"] != 500.0 || retry["attempt"] != 1.0 {
		t.Errorf("api_retry line: %v %v", retry, err)
	}
}
