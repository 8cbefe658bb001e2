//go:build unix

package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/fakecli"
)

// The Claude Agent SDK (TypeScript) through its driver: query() in
// streaming input mode, against the fake claude replaying each fixture.

// claudeArgv is how query() starts the CLI (sdk.mjs, ProcessTransport):
// always long-lived and bidirectional, and never -p (stdout is a pipe,
// which makes claude print mode); a canUseTool callback adds
// --permission-prompt-tool=stdio, resume adds --resume=ID, each as one
// token.
func claudeArgv(extra ...string) []string {
	return append([]string{"claude", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}, extra...)
}

// initializeRequest is the SDK's first stdin line: the initialize control
// request; with no systemPrompt option it sends an empty one.
var initializeRequest = map[string]any{"type": "control_request", "request_id": anyID,
	"request": map[string]any{"subtype": "initialize", "systemPrompt": []any{""}}}

// userLine is a user message as the driver gives it to the SDK, which
// writes it to the CLI unchanged (no session_id added).
func userLine(prompt string) map[string]any {
	return map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}, "parent_tool_use_id": nil}
}

// checkClaudeProcess checks what the SDK did to one claude process: its
// argv, the variables it set, its working directory, every stdin line, and
// that it closed stdin and the CLI exited 0.
func checkClaudeProcess(t *testing.T, r *run, p *cliProcess, argv []string, stdin []any) {
	t.Helper()
	if diff := cmp.Diff(argv, p.start.Argv); diff != "" {
		t.Errorf("claude argv (-want +got):\n%s", diff)
	}
	// The SDK marks the process as its own; it removes NODE_OPTIONS and
	// CLAUDECODE (this test's environment has neither, see driverEnv).
	for _, name := range []string{"CLAUDE_CODE_ENTRYPOINT", "CLAUDE_AGENT_SDK_VERSION"} {
		if !p.hasEnv(name) {
			t.Errorf("the SDK did not set %s for claude (env: %v)", name, p.start.Env)
		}
	}
	if !sameDir(p.start.Cwd, r.project) {
		t.Errorf("claude ran in %s, want the session's cwd %s (the SDK's cwd option)", p.start.Cwd, r.project)
	}
	var got []any
	for _, l := range p.stdinLines() {
		got = append(got, decode(t, l))
	}
	if diff := cmp.Diff(stdin, got, wildcards); diff != "" {
		t.Errorf("what the SDK wrote to claude's stdin (-want +got):\n%s", diff)
	}
	if !p.stdinClosed() {
		t.Errorf("the SDK never closed claude's stdin")
	}
	if got := p.exit(); got != "exit 0" {
		t.Errorf("claude ended with %s, want exit 0", got)
	}
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// checkTurnEnd checks a turn_end record.
func checkTurnEnd(t *testing.T, te map[string]any, ok bool, sessionID string) {
	t.Helper()
	if te["ok"] != ok {
		t.Errorf("turn_end ok = %v, want %v (error %v)", te["ok"], ok, te["error"])
	}
	if te["session_id"] != sessionID {
		t.Errorf("turn_end session_id = %v, want %s", te["session_id"], sessionID)
	}
}

// claudeSession runs prompts as the turns of one session (start, then
// send), closes, and returns the turns and the one claude process.
func claudeSession(t *testing.T, r *run, fields map[string]any, prompts ...string) ([]turn, *cliProcess) {
	t.Helper()
	for i, p := range prompts {
		if i == 0 {
			r.start("claude", p, fields)
		} else {
			r.send(map[string]any{"op": "send", "prompt": p})
		}
		r.turnEnd()
	}
	if end := r.close(); end.obj["ok"] != true {
		t.Errorf("end = %s, want ok", clip(end.raw))
	}
	turns := r.session(len(prompts))
	procs := processes(r.observations())
	if len(procs) != 1 {
		t.Fatalf("the SDK started %d claude processes, want 1 for the whole session", len(procs))
	}
	noProtocolErrors(t, procs)
	return turns, procs[0]
}

func TestClaudeSDKPlainText(t *testing.T) {
	t.Parallel()
	const fx = "claude/plain-text"
	r := startRun(t, claudeSDK, fakecli.Options{Fixture: fx})
	turns, p := claudeSession(t, r, nil, "hello")
	tr, _ := loadFixture(t, fx)
	checkTurnEnd(t, turns[0].end, true, tr.Header.SessionID)

	// A print-mode capture: the fake answers initialize itself (line 0),
	// then replays init, the assistant text and the result, between the
	// session states it writes for the SDK (hostState).
	samePath(t, []*cliProcess{p}, []int{0, 0, 2, 3, 4, 0})
	sameEvents(t, claudeSDK, wantEvents(t, fx, []*cliProcess{p}, []synthetic{{control: "control_response"}, hostState, hostState}, claudeView), events(turns))
	checkClaudeProcess(t, r, p, claudeArgv(), []any{initializeRequest, userLine("hello")})
}

func TestClaudeSDKSingleTool(t *testing.T) {
	t.Parallel()
	const fx = "claude/single-tool"
	r := startRun(t, claudeSDK, fakecli.Options{Fixture: fx})
	turns, p := claudeSession(t, r, nil, "run echo hi")
	tr, _ := loadFixture(t, fx)
	checkTurnEnd(t, turns[0].end, true, tr.Header.SessionID)

	// The text and tool_use blocks of one API message come as two
	// assistant messages, then the tool_result, the answer, the result: the
	// SDK neither merges nor reorders them.
	samePath(t, []*cliProcess{p}, []int{0, 0, 2, 3, 4, 5, 6, 7, 0})
	sameEvents(t, claudeSDK, wantEvents(t, fx, []*cliProcess{p}, []synthetic{{control: "control_response"}, hostState, hostState}, claudeView), events(turns))
	checkClaudeProcess(t, r, p, claudeArgv(), []any{initializeRequest, userLine("run echo hi")})
}

func TestClaudeSDKMultiTurn(t *testing.T) {
	t.Parallel()
	const fx = "claude/multi-turn"
	r := startRun(t, claudeSDK, fakecli.Options{Fixture: fx})
	turns, p := claudeSession(t, r, nil, "hello", "and again")
	tr, _ := loadFixture(t, fx)
	for _, tu := range turns {
		checkTurnEnd(t, tu.end, true, tr.Header.SessionID)
	}

	// One process for both turns: the second user message goes to the same
	// stdin, and each turn has its own init and result.
	samePath(t, []*cliProcess{p}, []int{3, 0, 5, 6, 7, 0, 0, 9, 10, 11, 0})
	want := wantEvents(t, fx, []*cliProcess{p}, []synthetic{hostState, hostState, hostState, hostState}, claudeView)
	sameEvents(t, claudeSDK, want, events(turns))
	if len(turns[0].events) != 3 || len(turns[1].events) != 3 {
		t.Errorf("events per turn = %d, %d; want 3, 3 (init, assistant, result)", len(turns[0].events), len(turns[1].events))
	}
	checkClaudeProcess(t, r, p, claudeArgv(), []any{initializeRequest, userLine("hello"), userLine("and again")})
}

func TestClaudeSDKInterrupt(t *testing.T) {
	t.Parallel()
	for _, mode := range interruptModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			claudeInterrupt(t, mode)
		})
	}
}

// claudeInterrupt interrupts claude/interrupt's tool call through the
// driver (the interrupt op, or SIGINT in signal mode): Query.interrupt().
func claudeInterrupt(t *testing.T, mode string) {
	const fx = "claude/interrupt"
	r := startRun(t, claudeSDK, fakecli.Options{Fixture: fx})
	r.start("claude", "Run the end-to-end tests.", nil)
	// The Bash tool_use (fixture line 7) is out: the fake now waits 30 s
	// for the tool (line 9), the window in which a client interrupts.
	r.until("the Bash tool_use", func(l line) bool { return l.record == "" && hasBlock(l.obj, "tool_use") })
	r.interrupt(mode)
	te := r.turnEnd()
	end := r.close()
	turns := r.session(1)
	tr, _ := loadFixture(t, fx)
	sid := tr.Header.SessionID
	checkTurnEnd(t, te.obj, false, sid)

	procs := processes(r.observations())
	if len(procs) != 1 {
		t.Fatalf("%d claude processes, want 1", len(procs))
	}
	p := procs[0]
	noProtocolErrors(t, procs)

	// What the CLI writes on an interrupt request during a tool, as the
	// fixture records it from the real CLI (lines 19-22: the receipt, the
	// tool's error result, "[Request interrupted by user for tool use]"
	// and the error_during_execution / aborted_tools result), between the
	// session states the fake writes for the SDK.
	samePath(t, procs, []int{3, 0, 5, 6, 7, 19, 20, 21, 22, 0})
	sameEvents(t, claudeSDK, wantEvents(t, fx, procs, []synthetic{hostState, hostState}, claudeView), events(turns))
	if te.obj["error"] != "[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use" {
		t.Errorf("turn_end error = %v, want the result's errors", te.obj["error"])
	}

	// interrupt() is a control request on stdin, never a signal.
	interrupt := map[string]any{"type": "control_request", "request_id": anyID, "request": map[string]any{"subtype": "interrupt"}}
	var stdin []any
	for _, l := range p.stdinLines() {
		stdin = append(stdin, decode(t, l))
	}
	if diff := cmp.Diff([]any{initializeRequest, userLine("Run the end-to-end tests."), interrupt}, stdin, wildcards); diff != "" {
		t.Errorf("claude stdin (-want +got):\n%s", diff)
	}
	if sig := p.kinds("signal"); len(sig) > 0 {
		t.Errorf("the SDK signalled claude (%s) instead of only sending the interrupt request", sig[0].Signal)
	}
	if !p.stdinClosed() {
		t.Errorf("the SDK never closed claude's stdin")
	}
	// After an interrupted turn the real CLI exits 1 at stdin EOF
	// (docs/protocols/claude.md#stdin-close); the SDK then fails the stream with the
	// interrupted result's error. Either way, end must agree with the exit.
	exit := p.exit()
	t.Logf("after the interrupted turn and stdin EOF, claude ended with %s; the driver's end record: %s", exit, clip(end.raw))
	if (exit == "exit 0") != (end.obj["ok"] == true) {
		t.Errorf("claude ended with %s but the end record is %s", exit, clip(end.raw))
	}
}

// hasBlock reports whether an assistant or user message has a content
// block of the given type.
func hasBlock(ev map[string]any, typ string) bool {
	msg, _ := ev["message"].(map[string]any)
	blocks, _ := msg["content"].([]any)
	for _, b := range blocks {
		if blk, _ := b.(map[string]any); blk["type"] == typ {
			return true
		}
	}
	return false
}

// permissionCase runs a permission fixture with the driver's canUseTool
// answering the given way, and checks the path (allow: the tool runs;
// deny: an error tool_result, with no permission_denied, which the real
// CLI writes only for a denial it decided without asking) and the answer
// on stdin.
func permissionCase(t *testing.T, fx, answer string, path []int) {
	r := startRun(t, claudeSDK, fakecli.Options{Fixture: fx})
	turns, p := claudeSession(t, r, map[string]any{"permission": answer}, "Create created.txt")
	tr, steps := loadFixture(t, fx)
	checkTurnEnd(t, turns[0].end, true, tr.Header.SessionID)

	samePath(t, []*cliProcess{p}, path)
	if answer != "allow" {
		// A deny's tool_result carries the client's message
		// (docs/protocols/claude.md#permission-answers), not the one the
		// capture's client sent.
		for i := range tr.Steps {
			tr.Steps[i].Text = strings.ReplaceAll(tr.Steps[i].Text, "denied by agentconform capture", "agentconform: Bash denied by the harness")
		}
	}
	sameEvents(t, claudeSDK, wantEventsOf(t, tr, []*cliProcess{p}, []synthetic{hostState, hostState, hostState, hostState}, claudeView), events(turns))

	// The can_use_tool request (line 8) went to canUseTool, never to the
	// caller; the SDK wrote its answer with the request's id. On allow it
	// passes the input back as updatedInput; on deny the callback's message.
	req := fixtureEvent(t, steps, 8)
	inner := req["request"].(map[string]any)
	var decision map[string]any
	switch answer {
	case "allow":
		decision = map[string]any{"behavior": "allow", "updatedInput": inner["input"], "toolUseID": inner["tool_use_id"]}
	default:
		decision = map[string]any{"behavior": "deny", "message": "agentconform: Bash denied by the harness", "toolUseID": inner["tool_use_id"]}
	}
	response := map[string]any{"type": "control_response", "response": map[string]any{
		"subtype": "success", "request_id": req["request_id"], "response": decision}}
	checkClaudeProcess(t, r, p, claudeArgv("--permission-prompt-tool=stdio"),
		[]any{initializeRequest, userLine("Create created.txt"), response})
}

func TestClaudeSDKPermissionAllow(t *testing.T) {
	t.Parallel()
	permissionCase(t, "claude/permission-allow", "allow", []int{3, 0, 5, 6, 7, 0, 8, 0, 12, 13, 14, 0})
}

func TestClaudeSDKPermissionDeny(t *testing.T) {
	t.Parallel()
	permissionCase(t, "claude/permission-deny", "deny", []int{3, 0, 5, 6, 7, 0, 8, 0, 18, 19, 20, 0})
}

// TestClaudeSDKResume resumes a session in a new process: the SDK passes
// --resume=ID as one token, and the fake continues the stored session.
func TestClaudeSDKResume(t *testing.T) {
	t.Parallel()
	const fx = "claude/plain-text"
	tr, _ := loadFixture(t, fx)
	sid := tr.Header.SessionID
	sessions := t.TempDir()
	first := startRun(t, claudeSDK, fakecli.Options{Fixture: fx, Sessions: sessions})
	claudeSession(t, first, nil, "hello")

	r := startRun(t, claudeSDK, fakecli.Options{Fixture: fx, Sessions: sessions})
	turns, p := claudeSession(t, r, map[string]any{"resume": sid}, "hello again")
	checkTurnEnd(t, turns[0].end, true, sid)
	samePath(t, []*cliProcess{p}, []int{0, 0, 2, 3, 4, 0})
	sameEvents(t, claudeSDK, wantEvents(t, fx, []*cliProcess{p}, []synthetic{{control: "control_response"}, hostState, hostState}, claudeView), events(turns))
	checkClaudeProcess(t, r, p, claudeArgv("--resume="+sid), []any{initializeRequest, userLine("hello again")})
	if !strings.HasPrefix(p.start.Transcript, "claude/") {
		t.Errorf("the resumed process replays %q", p.start.Transcript)
	}
}
