package sequence

import (
	"strings"
	"testing"
)

// Minimal Claude Code lines, shaped like the captures but cut down to what
// ordering and pairing look at.
const (
	cInit   = `{"type":"system","subtype":"init","session_id":"s1","uuid":"u"}`
	cText   = `{"type":"assistant","session_id":"s1","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"hi"}]},"parent_tool_use_id":null}`
	cResult = `{"type":"result","subtype":"success","is_error":false,"terminal_reason":"completed","session_id":"s1"}`
	// cAborted is how an interrupted turn ends (docs/protocols/claude.md#interrupt).
	cAborted = `{"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"aborted_tools","errors":["x"],"session_id":"s1"}`
	cIdle    = `{"type":"system","subtype":"session_state_changed","state":"idle","session_id":"s1"}`
	cReplay  = `{"type":"user","isReplay":true,"session_id":"s1","message":{"role":"user","content":"<local-command-stdout>Set model</local-command-stdout>"}}`
	cStdinU  = `{"type":"user","session_id":"","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"text","text":"hello"}]}}`
)

func cUse(id string) string {
	return `{"type":"assistant","session_id":"s1","message":{"id":"m","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"echo hi"}}]}}`
}

func cRes(id string) string {
	return `{"type":"user","session_id":"s1","message":{"role":"user","content":[{"tool_use_id":"` + id + `","type":"tool_result","content":"hi","is_error":false}]}}`
}

func cResultIdx(i string) string {
	return `{"type":"result","subtype":"success","is_error":false,"result_index":` + i + `,"session_id":"s1"}`
}

func ctlReq(id, subtype string) string {
	return `{"type":"control_request","request_id":"` + id + `","request":{"subtype":"` + subtype + `"}}`
}

func ctlResp(id string) string {
	return `{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":{}}}`
}

func ctlCancel(id string) string {
	return `{"type":"control_cancel_request","request_id":"` + id + `"}`
}

var claudeCases = []ruleCase{
	{
		rule: ClaudeInitFirst, dialect: "claude",
		bad:  lines(cText, cResult),
		want: []string{"claude/turn/init-first@1"},
		good: lines(ctlResp("req_1"), `{"type":"keep_alive"}`, cIdle, cReplay, cInit, cText, cResult),
	},
	{
		rule: ClaudeInitFirst, name: "result", dialect: "claude",
		bad:  lines(cResult),
		want: []string{"claude/turn/init-first@1"},
		good: `{"type":"result","subtype":"error_during_execution","is_error":true,"startup_failure_reason":"x","session_id":"s1"}`,
	},
	{
		rule: ClaudeInitFirst, name: "refused-session", dialect: "claude",
		bad:  lines(`{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":1,"session_id":"s1","errors":["x"]}`),
		want: []string{"claude/turn/init-first@1"},
		good: `{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"session_id":"s1","errors":["No conversation found with session ID: s1"]}`,
	},
	{
		rule: ClaudeOneResult, dialect: "claude",
		bad:  lines(cInit, cText, cResult, cText, cResult),
		want: []string{"claude/turn/one-result@4"},
		good: lines(cInit, cText, cResult, cIdle, `{"type":"prompt_suggestion","suggestion":"x","session_id":"s1"}`,
			`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"},"session_id":"s1"}`, cReplay,
			cInit, cText, cResult),
	},
	{
		rule: ClaudeOneResult, name: "second-result", dialect: "claude",
		bad:  lines(cInit, cText, cResult, cResult),
		want: []string{"claude/turn/one-result@4"},
	},
	{
		rule: ClaudeResultBeforeNextInit, dialect: "claude",
		bad:  lines(cInit, cUse("toolu_1"), cInit, cText, cResult),
		want: []string{"claude/turn/result-before-next-init@3"},
		good: lines(cInit, cText, cResult, cInit, cText, cResult),
	},
	{
		rule: ClaudeToolResultKnown, dialect: "claude",
		bad:  lines(cInit, cRes("toolu_x"), cResult),
		want: []string{"claude/tool/result-known-use@2"},
		good: lines(cInit, cUse("toolu_1"), cRes("toolu_1"), cText, cResult),
	},
	{
		rule: ClaudeToolResultAfterUse, dialect: "claude",
		bad:  lines(cInit, cRes("toolu_1"), cUse("toolu_1"), cResult),
		want: []string{"claude/tool/result-after-use@2"},
		good: lines(cInit, cUse("toolu_1"), cRes("toolu_1"), cResult),
	},
	{
		rule: ClaudeToolResultOnce, dialect: "claude",
		bad:  lines(cInit, cUse("toolu_1"), cRes("toolu_1"), cRes("toolu_1"), cResult),
		want: []string{"claude/tool/result-once@4"},
		good: lines(cInit, cUse("toolu_1"), cUse("toolu_2"), cRes("toolu_1"), cRes("toolu_2"), cResult),
	},
	{
		rule: ClaudeToolUseAnswered, dialect: "claude",
		bad:  lines(cInit, cUse("toolu_1"), cResult),
		want: []string{"claude/tool/use-answered@2"},
		good: lines(cInit, cUse("toolu_1"), cAborted),
	},
	{
		rule: ClaudeToolUseUnique, dialect: "claude",
		bad:  lines(cInit, cUse("toolu_1"), cUse("toolu_1"), cRes("toolu_1"), cResult),
		want: []string{"claude/tool/use-id-unique@3"},
		// A message that supersedes earlier ones repeats their blocks.
		good: lines(cInit, cUse("toolu_1"),
			`{"type":"assistant","session_id":"s1","supersedes":["u0"],"message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]}}`,
			cRes("toolu_1"), cResult),
	},
	{
		rule: ClaudeToolUseUnique, name: "across-turns", dialect: "claude",
		bad:  lines(cInit, cUse("toolu_1"), cRes("toolu_1"), cResult, cInit, cUse("toolu_1"), cResult),
		want: []string{"claude/tool/use-id-unique@6"},
	},
	{
		rule: ClaudeSessionConstant, dialect: "claude",
		bad:  lines(cInit, `{"type":"assistant","session_id":"s2","message":{"content":[]}}`, cResult),
		want: []string{"claude/session/id-constant@2"},
		// conversation_reset starts a new id; stdin session_id is free-form.
		good: lines(cInit, cText, cResult,
			`{"type":"conversation_reset","new_conversation_id":"s2","session_id":"s1"}`,
			`{"type":"system","subtype":"init","session_id":"s2"}`, `{"type":"result","subtype":"success","session_id":"s2"}`),
	},
	{
		rule: ClaudeSessionConstant, name: "transcript", dialect: "claude", opts: Options{Both: true},
		bad:  lines(cInit, cText, `{"type":"result","subtype":"success","session_id":"other"}`),
		want: []string{"claude/session/id-constant@3"},
		good: lines(in(cStdinU), cInit, cText, cResult,
			in(`{"type":"user","session_id":"default","message":{"role":"user","content":"again"}}`), cInit, cText, cResult),
	},
	{
		rule: ClaudeResultIndex, dialect: "claude",
		bad:  lines(cInit, cText, cResultIdx("0"), cInit, cText, cResultIdx("2")),
		want: []string{"claude/result/index-sequence@6"},
		good: lines(cInit, cText, cResultIdx("0"), cInit, cText, cResultIdx("1"), cInit, cResult),
	},
	{
		rule: ClaudeResultIndex, name: "back", dialect: "claude",
		bad:  lines(cInit, cResultIdx("0"), cInit, cResultIdx("0")),
		want: []string{"claude/result/index-sequence@4"},
	},
	{
		rule: ClaudeTruncated, dialect: "claude",
		bad:  lines(cInit, cUse("toolu_1")),
		want: []string{"claude/stream/truncated@2"},
		good: lines(cInit, cUse("toolu_1"), cRes("toolu_1"), cResult, cIdle),
	},
	{
		rule: ClaudeTruncated, name: "after-result", dialect: "claude",
		bad:  lines(cInit, cText, cResult, cText),
		want: []string{"claude/turn/one-result@4", "claude/stream/truncated@4"},
	},
	// After "[Request interrupted by user]" the real CLI may exit 0 with
	// no result (SIGINT before the model answered); anything after the
	// marker, or a marker among other text, is cut short as before.
	{
		rule: ClaudeTruncated, name: "interrupted", dialect: "claude",
		bad:  lines(cInit, cInterrupted, cText),
		want: []string{"claude/stream/truncated@3"},
		good: lines(cInit, cInterrupted),
	},
	{
		rule: ClaudeTruncated, name: "interrupted-string", dialect: "claude",
		bad:  lines(cInit, `{"type":"user","session_id":"s1","message":{"role":"user","content":"[Request interrupted by user] and more"}}`),
		want: []string{"claude/stream/truncated@2"},
		good: lines(cInit, `{"type":"user","session_id":"s1","message":{"role":"user","content":"[Request interrupted by user]"}}`),
	},
}

// cInterrupted is the user message Claude Code writes for a turn
// interrupted before the model answered.
const cInterrupted = `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]},"parent_tool_use_id":null,"session_id":"s1","uuid":"u2"}`

var claudeControlCases = []ruleCase{
	{
		rule: ClaudeControlRequestUnique, dialect: "claude-stdin",
		bad:  lines(ctlReq("req_1", "initialize"), cStdinU, ctlReq("req_1", "interrupt")),
		want: []string{"claude/control/request-id-unique@3"},
		good: lines(ctlReq("req_1", "initialize"), cStdinU, ctlReq("req_2", "interrupt")),
	},
	{
		rule: ClaudeControlRequestUnique, name: "transcript", dialect: "claude", opts: Options{Both: true},
		bad:  lines(in(ctlReq("req_1", "initialize")), ctlResp("req_1"), in(ctlReq("req_1", "interrupt")), ctlResp("req_1")),
		want: []string{"claude/control/request-id-unique@3", "claude/control/response-once@4"},
		// The two sides pick their ids independently.
		good: lines(in(ctlReq("x", "initialize")), ctlResp("x"), ctlReq("x", "can_use_tool"), in(ctlResp("x"))),
	},
	{
		rule: ClaudeControlResponsePending, dialect: "claude", opts: Options{Both: true},
		bad:  lines(in(ctlReq("req_1", "initialize")), ctlResp("req_1"), ctlResp("req_2")),
		want: []string{"claude/control/response-pending@3"},
		good: lines(in(ctlReq("req_1", "initialize")), ctlResp("req_1"), in(cStdinU), cInit,
			ctlReq("c1", "can_use_tool"), in(ctlResp("c1")), cText, cResult),
	},
	{
		rule: ClaudeControlResponsePending, name: "wrong-direction", dialect: "claude", opts: Options{Both: true},
		// A CLI request answered on stdout by the CLI itself answers nothing.
		bad:  lines(ctlReq("c1", "can_use_tool"), ctlResp("c1"), in(ctlResp("c1"))),
		want: []string{"claude/control/response-pending@2"},
	},
	{
		rule: ClaudeControlResponseOnce, dialect: "claude",
		bad:  lines(ctlResp("req_1"), cInit, ctlResp("req_1"), cResult),
		want: []string{"claude/control/response-once@3"},
		// Without both directions an unknown id cannot be judged.
		good: lines(ctlResp("req_1"), cInit, ctlResp("req_2"), cResult),
	},
	{
		rule: ClaudeControlCancelPending, dialect: "claude",
		bad:  lines(ctlReq("c1", "can_use_tool"), ctlCancel("c9")),
		want: []string{"claude/control/cancel-pending@2"},
		good: lines(ctlReq("c1", "can_use_tool"), ctlCancel("c1")),
	},
	{
		rule: ClaudeControlCancelPending, name: "twice", dialect: "claude", opts: Options{Both: true},
		bad:  lines(ctlReq("c1", "can_use_tool"), ctlCancel("c1"), ctlCancel("c1")),
		want: []string{"claude/control/cancel-pending@3"},
		// The client's answer crossed the cancel in flight.
		good: lines(ctlReq("c1", "can_use_tool"), in(ctlResp("c1")), ctlCancel("c1")),
	},
	{
		rule: ClaudeControlNoResponseAfterCancel, dialect: "claude", opts: Options{Both: true},
		bad:  lines(ctlReq("c1", "can_use_tool"), ctlCancel("c1"), in(ctlResp("c1"))),
		want: []string{"claude/control/no-response-after-cancel@3"},
		// docs/protocols/claude.md#interrupt: cancel, interrupt receipt, tool_result, result.
		good: lines(cInit, cUse("toolu_1"), ctlReq("c1", "can_use_tool"), in(ctlReq("req_2", "interrupt")),
			ctlCancel("c1"), ctlResp("req_2"), cRes("toolu_1"), cAborted),
	},
	{
		rule: ClaudeControlRequestAnswered, dialect: "claude", opts: Options{Both: true},
		bad:  lines(in(ctlReq("req_1", "initialize")), ctlReq("c1", "can_use_tool")),
		want: []string{"claude/control/request-answered@1", "claude/control/request-answered@2"},
		good: lines(in(ctlReq("req_1", "initialize")), ctlResp("req_1")),
	},
}

var claudeStdinCases = []ruleCase{
	{
		rule: ClaudeStdinInterruptEnvelope, dialect: "claude-stdin",
		bad:  lines(cStdinU, `{"subtype":"interrupt"}`),
		want: []string{"claude-stdin/interrupt/envelope@2"},
		good: lines(cStdinU, ctlReq("req_1", "interrupt")),
	},
	{
		rule: ClaudeStdinInterruptEnvelope, name: "top-level-subtype", dialect: "claude-stdin",
		bad:  `{"type":"control_request","request_id":"req_1","subtype":"interrupt"}`,
		want: []string{"claude-stdin/interrupt/envelope@1"},
	},
	{
		rule: ClaudeStdinInterruptEnvelope, name: "transcript", dialect: "claude", opts: Options{Both: true},
		bad:  lines(in(cStdinU), cInit, in(`{"subtype":"interrupt"}`), cText, cResult),
		want: []string{"claude-stdin/interrupt/envelope@3"},
		good: lines(in(cStdinU), cInit, in(ctlReq("r", "interrupt")), ctlResp("r"), cAborted),
	},
	{
		rule: ClaudeStdinDirection, dialect: "claude-stdin",
		bad:  lines(cStdinU, cText),
		want: []string{"claude-stdin/line/direction@2"},
		good: lines(ctlReq("req_1", "initialize"), cStdinU, `{"type":"keep_alive"}`, ctlResp("c1"), `{"type":"future_thing"}`),
	},
}

func TestClaudeRules(t *testing.T) {
	runRuleCases(t, claudeCases)
	runRuleCases(t, claudeControlCases)
	runRuleCases(t, claudeStdinCases)
}

// A finding that involves two lines names the other one.
func TestClaudeMessagesNameOtherLine(t *testing.T) {
	got := check(t, "claude", Options{}, lines(cInit, cRes("toolu_1"), cText, cUse("toolu_1"), cResult))
	if len(got) != 1 || got[0].Line != 2 {
		t.Fatalf("got %v", dump(got))
	}
	if want := "tool_use at line 4"; !strings.Contains(got[0].Message, want) {
		t.Errorf("message %q does not name %q", got[0].Message, want)
	}
	got = check(t, "claude", Options{}, lines(cInit, cUse("toolu_1")))
	if len(got) != 1 || !strings.Contains(got[0].Message, "SIGTERM") || !strings.Contains(got[0].Message, "143") {
		t.Errorf("truncation message does not explain a killed CLI: %v", dump(got))
	}
}
