//go:build unix

package fakecli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
	"github.com/agentconform/agentconform/validate"
)

var claudeStream = []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}

const initialize = `{"type":"control_request","request_id":"req_1_init","request":{"subtype":"initialize","hooks":null}}`

func user(text string) string {
	return `{"type":"user","session_id":"","message":{"role":"user","content":"` + text + `"},"parent_tool_use_id":null}`
}

// saveTranscript writes a transcript made in a test.
func saveTranscript(t testing.TB, tr *transcript.Transcript) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if err := transcript.Write(file, tr); err != nil {
		t.Fatal(err)
	}
	if _, err := transcript.LoadFile(os.DirFS(filepath.Dir(path)), "t.jsonl", transcript.Options{}); err != nil {
		t.Fatalf("the test transcript does not load: %v", err)
	}
	return path
}

// outsOf returns the out steps of a fixture's first process, by their
// event type (and subtype).
func outsOf(t testing.TB, tr *transcript.Transcript) map[string][]transcript.Step {
	t.Helper()
	m := map[string][]transcript.Step{}
	for _, st := range tr.Processes()[0] {
		if st.Op != transcript.OpOut {
			continue
		}
		k := jsonField(st.Text, "type")
		if sub := jsonField(st.Text, "subtype"); sub != "" {
			k += "/" + sub
		}
		m[k] = append(m[k], st)
	}
	return m
}

// toolTurns builds a bidirectional Claude transcript from the interrupt
// fixture's lines: a first turn whose Bash call takes delay ms (no
// on_signal: the fake's own behaviour applies), then a second, plain turn.
func toolTurns(t testing.TB, delay int64) string {
	t.Helper()
	fx, err := loadFixture("claude/interrupt")
	if err != nil {
		t.Fatal(err)
	}
	o := outsOf(t, fx)
	plain := func(st transcript.Step) transcript.Step { st.T = nil; return st }
	steps := []transcript.Step{
		{Op: transcript.OpIn, Match: map[string]any{"type": "control_request", "request": map[string]any{"subtype": "initialize"}},
			Capture: map[string]string{"init_req": "/request_id"}, Optional: true},
		plain(o["control_response"][0]),
		{Op: transcript.OpIn, Match: map[string]any{"type": "user"}},
		plain(o["system/init"][0]),
		plain(o["assistant"][0]),
		plain(o["assistant"][1]), // tool_use
		{Op: transcript.OpDelay, DelayMS: delay},
		plain(o["user"][0]), // tool_result
		plain(o["assistant"][2]),
		plain(o["result/success"][0]),
		{Op: transcript.OpIn, Match: map[string]any{"type": "user"}},
		plain(o["system/init"][0]),
		plain(o["assistant"][2]),
		plain(o["result/success"][0]),
		{Op: transcript.OpStdinEOF},
		{Op: transcript.OpExit, Code: 0},
	}
	h := fx.Header
	h.Scenario = "tool-turns"
	return saveTranscript(t, &transcript.Transcript{Header: h, Steps: steps})
}

// printToolTurn is a print-mode transcript (no "in" steps) whose Bash
// call takes delay ms.
func printToolTurn(t testing.TB, delay int64) string {
	t.Helper()
	fx, err := loadFixture("claude/interrupt")
	if err != nil {
		t.Fatal(err)
	}
	o := outsOf(t, fx)
	plain := func(st transcript.Step) transcript.Step { st.T = nil; return st }
	steps := []transcript.Step{
		plain(o["system/init"][0]), plain(o["assistant"][0]), plain(o["assistant"][1]),
		{Op: transcript.OpDelay, DelayMS: delay},
		plain(o["user"][0]), plain(o["assistant"][2]), plain(o["result/success"][0]),
		{Op: transcript.OpExit, Code: 0},
	}
	return saveTranscript(t, &transcript.Transcript{Header: fx.Header, Steps: steps})
}

// isToolUse matches an assistant message carrying a tool_use block.
func isToolUse(ev map[string]any) bool {
	return ev["type"] == "assistant" && lookup(ev, "/message/content/0/type") == "tool_use"
}

// TestClaudeControlLayer drives the built-in control layer around a
// print-mode transcript replayed with stream-json input: initialize is
// answered, set_permission_mode answers and reports the new mode,
// an unknown subtype gets the error response, keep_alive, unknown types
// and a bare interrupt are ignored, the user message runs the turn, and
// stdin EOF ends the process with 0.
func TestClaudeControlLayer(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text"})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})

	l.send(initialize)
	ev := l.nextEvent()
	if ev["type"] != "control_response" || lookup(ev, "/response/subtype") != "success" || lookup(ev, "/response/request_id") != "req_1_init" {
		t.Fatalf("initialize answer: %v", ev)
	}
	if _, ok := lookup(ev, "/response/response/pid").(float64); !ok {
		t.Errorf("initialize answer has no pid: %v", lookup(ev, "/response/response"))
	}
	if _, ok := lookup(ev, "/response/response/commands").([]any); !ok {
		t.Errorf("initialize answer has no commands: %v", lookup(ev, "/response/response"))
	}

	l.send(`{"type":"control_request","request_id":"req_2","request":{"subtype":"set_permission_mode","mode":"acceptEdits"}}`)
	if got, want := l.next(lineTimeout), `{"type":"control_response","response":{"subtype":"success","request_id":"req_2","response":{"mode":"acceptEdits"}}}`; got != want {
		t.Errorf("set_permission_mode answer:\n%s\nwant\n%s", got, want)
	}
	ev = l.nextEvent()
	if ev["type"] != "system" || ev["subtype"] != "status" || ev["permissionMode"] != "acceptEdits" || ev["status"] != nil {
		t.Errorf("after set_permission_mode: %v", ev)
	}
	if _, ok := ev["uuid"].(string); !ok {
		t.Errorf("system/status without uuid: %v", ev)
	}

	l.send(`{"type":"control_request","request_id":"req_3","request":{"subtype":"bogus_subtype"}}`)
	if got, want := l.next(lineTimeout), `{"type":"control_response","response":{"subtype":"error","request_id":"req_3","error":"Unsupported control request subtype: bogus_subtype","error_code":"unsupported_request"}}`; got != want {
		t.Errorf("unknown subtype answer:\n%s\nwant\n%s", got, want)
	}
	l.send(`{"type":"control_request","request_id":"req_4","request":{"subtype":"mcp_status"}}`)
	if got, want := l.next(lineTimeout), `{"type":"control_response","response":{"subtype":"success","request_id":"req_4","response":{}}}`; got != want {
		t.Errorf("known subtype answer:\n%s\nwant\n%s", got, want)
	}

	l.send(`{"type":"keep_alive"}`)
	l.send(`{"type":"no_such_type","x":1}`)
	l.send(`{"subtype":"interrupt"}`)
	l.send(``)
	l.quiet(200 * time.Millisecond)

	fx, err := loadFixture("claude/plain-text")
	if err != nil {
		t.Fatal(err)
	}
	l.send(user("hello"))
	for _, st := range fx.Steps {
		if st.Op == transcript.OpOut {
			if got := l.next(lineTimeout); got != st.Text {
				t.Errorf("turn line:\n%.200s\nwant\n%.200s", got, st.Text)
			}
		}
	}
	l.quiet(100 * time.Millisecond)
	r, rest := l.wait()
	if r.code != 0 || len(rest) > 0 || r.stderr != "" {
		t.Errorf("after stdin EOF: exit %d, more lines %q, stderr %q", r.code, rest, r.stderr)
	}
}

// TestClaudeInterruptDuringTool interrupts a turn while its Bash call
// runs: the fake answers with the receipt, an is_error tool_result, the
// "[Request interrupted by user for tool use]" message and an
// error_during_execution result (aborted_tools), in that order, all valid
// under the observed schema; then the process takes another turn.
func TestClaudeInterruptDuringTool(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Transcript: toolTurns(t, 10000)})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(initialize)
	l.nextEvent()
	l.send(user("run the suite"))
	tool := l.until("tool_use", isToolUse)
	toolID := lookup(tool, "/message/content/0/id")
	sessionID := tool["session_id"]

	l.send(`{"type":"control_request","request_id":"req_int","request":{"subtype":"interrupt"}}`)
	if got, want := l.next(lineTimeout), `{"type":"control_response","response":{"subtype":"success","request_id":"req_int","response":{"still_queued":[]}}}`; got != want {
		t.Errorf("receipt:\n%s\nwant\n%s", got, want)
	}
	ev := l.nextEvent()
	if ev["type"] != "user" || lookup(ev, "/message/content/0/type") != "tool_result" ||
		lookup(ev, "/message/content/0/tool_use_id") != toolID || lookup(ev, "/message/content/0/is_error") != true {
		t.Errorf("tool_result: %v", ev)
	}
	ev = l.nextEvent()
	if ev["type"] != "user" || lookup(ev, "/message/content/0/text") != "[Request interrupted by user for tool use]" {
		t.Errorf("interrupted message: %v", ev)
	}
	res := l.nextEvent()
	if res["type"] != "result" || res["subtype"] != "error_during_execution" || res["is_error"] != true ||
		res["terminal_reason"] != "aborted_tools" || res["session_id"] != sessionID {
		t.Errorf("result: %v", res)
	}
	if _, ok := res["result"]; ok {
		t.Errorf("an error result has a result key: %v", res)
	}
	if errs, ok := res["errors"].([]any); !ok || len(errs) == 0 {
		t.Errorf("result errors: %v", res["errors"])
	}
	for _, ev := range []map[string]any{tool, res} {
		if s, _ := ev["uuid"].(string); len(s) != 36 {
			t.Errorf("uuid %q is not a UUID", s)
		}
	}
	l.quiet(100 * time.Millisecond)

	// The interrupted turn's stream validates under the observed schema.
	stream := strings.Join(l.all, "\n") + "\n"
	vres, err := validate.Stream(context.Background(), strings.NewReader(stream), "interrupted", validate.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if vres.Dialect == "" || vres.SchemaFile == "" || vres.Lines != len(l.all) {
		t.Errorf("validated as dialect %q with schema %q, %d lines", vres.Dialect, vres.SchemaFile, vres.Lines)
	}
	if vres.Violations != 0 {
		t.Errorf("the interrupted stream has %d violations: %v\n%s", vres.Violations, vres.Counts, stream)
	}

	// Another turn.
	l.send(user("and now?"))
	l.until("system/init", typeIs("system", "init"))
	l.nextEvent()
	if ev := l.nextEvent(); ev["type"] != "result" || ev["subtype"] != "success" {
		t.Errorf("second turn ends with %v", ev)
	}
	r, rest := l.wait()
	if r.code != 0 || len(rest) > 0 {
		t.Errorf("exit %d, more lines %q, stderr %q", r.code, rest, r.stderr)
	}
}

// TestClaudeBareInterruptIgnored sends {"subtype":"interrupt"} without the
// control envelope during a tool: the real CLI ignores it, so the turn
// completes normally.
func TestClaudeBareInterruptIgnored(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Transcript: toolTurns(t, 300)})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(user("run the suite"))
	l.until("tool_use", isToolUse)
	l.send(`{"subtype":"interrupt"}`)
	ev := l.nextEvent()
	if ev["type"] != "user" || lookup(ev, "/message/content/0/is_error") != false {
		t.Errorf("tool_result: %v", ev)
	}
	l.nextEvent()
	if ev := l.nextEvent(); ev["type"] != "result" || ev["subtype"] != "success" {
		t.Errorf("turn ends with %v", ev)
	}
	l.stdin.Close()
	r, _ := l.wait()
	if r.code != 0 {
		t.Errorf("exit %d", r.code)
	}
}

// TestClaudeInterruptWhileIdle: an interrupt between turns gets only the
// receipt.
func TestClaudeInterruptWhileIdle(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/multi-turn"})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(`{"type":"control_request","request_id":"req_idle","request":{"subtype":"interrupt"}}`)
	if got, want := l.next(lineTimeout), `{"type":"control_response","response":{"subtype":"success","request_id":"req_idle","response":{"still_queued":[]}}}`; got != want {
		t.Errorf("receipt:\n%s\nwant\n%s", got, want)
	}
	l.quiet(150 * time.Millisecond)
	l.send(user("hello"))
	l.until("result", typeIs("result", "success"))
	r, rest := l.wait()
	if r.code != 0 || len(rest) != 0 {
		t.Errorf("EOF after the first result: exit %d, more lines %q", r.code, rest)
	}
}

// TestClaudePermissionPrompt checks that can_use_tool is written only with
// --permission-prompt-tool stdio, that the allow and deny branches follow
// the client's answer, and that without the prompt tool the deny branch
// runs with no request at all.
func TestClaudePermissionPrompt(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/permission-deny"})
	answer := func(id, behavior string) string {
		extra := `"updatedInput":{}`
		if behavior == "deny" {
			extra = `"message":"not today"`
		}
		return `{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":{"behavior":"` + behavior + `",` + extra + `}}}`
	}
	for _, behavior := range []string{"allow", "deny"} {
		t.Run(behavior, func(t *testing.T) {
			l := startFake(t, f, "claude", append(claudeStream, "--permission-prompt-tool", "stdio"), cmdOpts{})
			l.send(initialize)
			l.send(user("please create a file"))
			req := l.until("can_use_tool", func(ev map[string]any) bool {
				return ev["type"] == "control_request" && lookup(ev, "/request/subtype") == "can_use_tool"
			})
			l.send(answer(req["request_id"].(string), behavior))
			ev := l.nextEvent()
			switch behavior {
			case "allow":
				if ev["type"] != "user" || lookup(ev, "/message/content/0/is_error") != false {
					t.Errorf("after allow: %v", ev)
				}
			case "deny":
				// No system/permission_denied after a client's deny
				// (TestClaudePermissionDeniedOnlyUnasked).
				if ev["type"] != "user" || lookup(ev, "/message/content/0/is_error") != true {
					t.Errorf("after deny: %v", ev)
				}
			}
			l.until("result", typeIs("result"))
			r, _ := l.wait()
			if r.code != 0 {
				t.Errorf("exit %d", r.code)
			}
		})
	}
	t.Run("no prompt tool", func(t *testing.T) {
		l := startFake(t, f, "claude", claudeStream, cmdOpts{})
		l.send(user("please create a file"))
		l.until("result", typeIs("result"))
		r, _ := l.wait()
		if r.code != 0 {
			t.Errorf("exit %d", r.code)
		}
		sawDenied := false
		for _, line := range l.all {
			if strings.Contains(line, `"can_use_tool"`) {
				t.Errorf("can_use_tool written without --permission-prompt-tool stdio: %.120s", line)
			}
			sawDenied = sawDenied || strings.Contains(line, `"permission_denied"`)
		}
		if !sawDenied {
			t.Errorf("the deny branch did not run:\n%s", strings.Join(l.all, "\n"))
		}
	})
}

// TestClaudeMalformedStdin: a line that is not JSON ends the process with
// the real CLI's message and exit 1, nothing on stdout.
func TestClaudeMalformedStdin(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/multi-turn"})
	r := runFake(t, f, "claude", claudeStream, cmdOpts{stdin: "{\"type\":\"user\",\n"})
	if r.code != 1 || r.stdout != "" || r.stderr != "Error parsing streaming input line (type=unknown, 15 chars): SyntaxError\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestClaudeSIGINTPrintMode: SIGINT during a -p turn gives the
// interrupted messages and result (no receipt: no request) and exit 0.
func TestClaudeSIGINTPrintMode(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Transcript: printToolTurn(t, 10000)})
	l := startFake(t, f, "claude", []string{"-p", "run it", "--output-format", "stream-json", "--verbose"}, cmdOpts{})
	l.until("tool_use", isToolUse)
	l.signal(syscall.SIGINT)
	r, rest := l.wait()
	if r.code != 0 || r.signaled {
		t.Errorf("exit %d (signaled %v), want 0", r.code, r.signaled)
	}
	var kinds []string
	for _, line := range rest {
		kinds = append(kinds, jsonField(line, "type"))
	}
	if strings.Join(kinds, ",") != "user,user,result" {
		t.Fatalf("after SIGINT: %q", rest)
	}
	if !strings.Contains(rest[1], "[Request interrupted by user for tool use]") || !strings.Contains(rest[2], `"error_during_execution"`) {
		t.Errorf("after SIGINT: %q", rest)
	}
}

// TestClaudeScriptedSIGINT: the interrupt fixture handles SIGINT itself
// (on_signal goto): the scripted branch runs.
func TestClaudeScriptedSIGINT(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/interrupt"})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(user("run the suite"))
	l.until("tool_use", isToolUse)
	l.signal(syscall.SIGINT)
	r, rest := l.wait()
	if r.code != 0 || len(rest) != 3 || !strings.Contains(rest[2], `"terminal_reason":"aborted_tools"`) {
		t.Errorf("exit %d, after SIGINT %q", r.code, rest)
	}
}

// TestClaudeSIGTERM: SIGTERM during a turn stops the stream with no result
// and exit 143; the Bash command it killed gets its tool_result "Exit code
// 137" first (TestClaudeSIGTERMCaptured has the evidence).
func TestClaudeSIGTERM(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Transcript: printToolTurn(t, 10000)})
	l := startFake(t, f, "claude", []string{"-p", "run it", "--output-format", "stream-json", "--verbose"}, cmdOpts{})
	l.until("tool_use", isToolUse)
	l.signal(syscall.SIGTERM)
	r, rest := l.wait()
	if r.code != 143 || len(rest) != 1 || !strings.Contains(rest[0], `"content":"Exit code 137","is_error":true`) {
		t.Errorf("status %d, after SIGTERM %q; want 143 and the killed command's tool_result", r.code, rest)
	}
	// While no tool runs: nothing more.
	f = fakecli.Start(t, fakecli.Options{Transcript: toolTurns(t, 0)})
	l = startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(user("run it"))
	l.until("result", typeIs("result"))
	l.signal(syscall.SIGTERM)
	awaitRecord(t, f, "signal") // before wait closes stdin
	if r, rest := l.wait(); r.code != 143 || len(rest) != 0 {
		t.Errorf("idle: status %d, after SIGTERM %q; want 143 and nothing", r.code, rest)
	}
}

// TestClaudeSessions: --resume keeps the session id, --fork-session makes
// a new one, --continue takes the latest, --session-id names a new one.
func TestClaudeSessions(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text"})
	dir := t.TempDir()
	p := []string{"-p", "--output-format", "stream-json", "--verbose"}
	first := runFake(t, f, "claude", append(p, "hello"), cmdOpts{dir: dir})
	sid := firstSessionID(first.stdout)
	if first.code != 0 || sid == "" {
		t.Fatalf("first run: exit %d, stdout %q", first.code, first.stdout)
	}
	resumed := runFake(t, f, "claude", append(p, "--resume", sid, "again"), cmdOpts{dir: dir})
	if resumed.code != 0 || resumed.stdout != first.stdout {
		t.Errorf("resume: exit %d, stderr %q, stdout differs from the first run: %v", resumed.code, resumed.stderr, resumed.stdout != first.stdout)
	}
	forked := runFake(t, f, "claude", append(p, "--resume="+sid, "--fork-session", "again"), cmdOpts{dir: dir})
	fid := firstSessionID(forked.stdout)
	if forked.code != 0 || fid == "" || fid == sid || strings.Contains(forked.stdout, sid) {
		t.Errorf("fork: exit %d, session %q (was %q)", forked.code, fid, sid)
	}
	cont := runFake(t, f, "claude", append(p, "--continue", "again"), cmdOpts{dir: dir})
	if cont.code != 0 || firstSessionID(cont.stdout) != fid {
		t.Errorf("continue: exit %d, session %q, want the fork %q (stderr %q)", cont.code, firstSessionID(cont.stdout), fid, cont.stderr)
	}
	const named = "5f2b0c1e-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
	own := runFake(t, f, "claude", append(p, "--session-id", named, "hi"), cmdOpts{dir: dir})
	if own.code != 0 || firstSessionID(own.stdout) != named {
		t.Errorf("--session-id: exit %d, session %q", own.code, firstSessionID(own.stdout))
	}
	none := runFake(t, f, "claude", append(p, "--continue", "x"), cmdOpts{})
	if none.code != 1 || none.stderr != "No conversation found to continue\n" {
		t.Errorf("--continue in a fresh directory: exit %d, stderr %q", none.code, none.stderr)
	}
}

// TestClaudeWithoutInitialize: initialize is optional; a client that
// starts with a user message (or sends nothing) never gets the recorded
// initialize answer, whose request id it never chose.
func TestClaudeWithoutInitialize(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/multi-turn"})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(user("hello"))
	if ev := l.nextEvent(); ev["type"] != "system" || ev["subtype"] != "init" {
		t.Errorf("first line %v, want system/init", ev)
	}
	l.until("result", typeIs("result"))
	r, rest := l.wait()
	if r.code != 0 || len(rest) != 0 || strings.Contains(r.stdout, "{{") {
		t.Errorf("exit %d, more lines %q", r.code, rest)
	}
	empty := runFake(t, f, "claude", claudeStream, cmdOpts{})
	if empty.code != 0 || empty.stdout != "" {
		t.Errorf("no input at all: exit %d, stdout %q", empty.code, empty.stdout)
	}
}

// TestClaudeQueuedUserMessage: a user message sent while a turn runs is
// queued and starts the next turn once the first has its result.
func TestClaudeQueuedUserMessage(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Transcript: toolTurns(t, 300)})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(user("first"))
	l.until("tool_use", isToolUse)
	l.send(user("second"))
	var kinds []string
	for len(kinds) < 6 {
		ev := l.nextEvent()
		k, _ := ev["type"].(string)
		if sub, ok := ev["subtype"].(string); ok {
			k += "/" + sub
		}
		kinds = append(kinds, k)
	}
	want := "user,assistant,result/success,system/init,assistant,result/success"
	if got := strings.Join(kinds, ","); got != want {
		t.Errorf("after the queued message: %s, want %s", got, want)
	}
	if r, rest := l.wait(); r.code != 0 || len(rest) != 0 {
		t.Errorf("exit %d, more lines %q", r.code, rest)
	}
}

// TestClaudeUserBeforeOptionalInitialize pins a race: a user message that
// arrives before the replay reaches an optional initialize step (here,
// while a delay runs) must skip that step, not leave the two waiting for
// each other.
func TestClaudeUserBeforeOptionalInitialize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	tr := `{"transcript":"agentconform/v1","cli":"claude","cli_version":"2.1.329","scenario":"race"}
{"delay_ms":300}
{"in":{"type":"control_request","request":{"subtype":"initialize"}},"capture":{"init":"/request_id"},"optional":true}
{"out":"{\"type\":\"control_response\",\"response\":{\"subtype\":\"success\",\"request_id\":\"{{init}}\"}}"}
{"in":{"type":"user"}}
{"out":"{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"session_id\":\"s\"}"}
{"stdin_eof":true}
{"exit":0}
`
	if err := os.WriteFile(path, []byte(tr), 0o644); err != nil {
		t.Fatal(err)
	}
	f := fakecli.Start(t, fakecli.Options{Transcript: path})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(user("hi"))
	l.until("result", typeIs("result"))
	r, _ := l.wait()
	if r.code != 0 {
		t.Errorf("exit %d", r.code)
	}
}

// TestClaudeBannerFirst: a start-up banner (the banner fault at its
// first line) is the fake Claude's first stdout line, ahead of its answer
// to an initialize already waiting on stdin, as a real CLI's banner comes
// ahead of its first answer; its turn comes no sooner than the gap a real
// Claude leaves between its first line and its next. Played after the answer, the banner let an SDK
// initialize and send its prompt, and the fake played a turn no real
// Claude got to play (claude-agent-acp on claude/single-tool/banner).
func TestClaudeBannerFirst(t *testing.T) {
	const banner = "[SandboxDebug] Seccomp filtering not available"
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/single-tool", Faults: "banner:text=" + banner})
	l := startFake(t, f, "claude", append([]string{"-p"}, claudeStream...), cmdOpts{})
	l.send(initialize)
	l.send(user("hi"))
	if got := l.next(lineTimeout); got != banner {
		t.Fatalf("first line %q, want the banner", got)
	}
	start := time.Now()
	if got := l.next(lineTimeout); !strings.Contains(got, `"control_response"`) {
		t.Errorf("second line %q, want the initialize answer", got)
	}
	if got := l.next(lineTimeout); strings.Contains(got, `"control_response"`) {
		t.Errorf("third line %q, want the turn's first", got)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("the turn came %v after the banner, want the CLI's gap (75 ms)", d)
	}
}
