package sequence

import (
	"strings"
	"testing"
)

// Lines of the shim contract, after the example stream of the shim contract (docs/protocols/shim.md).
const (
	sInit      = `{"type":"system","subtype":"init","session_id":"sess_123","model":"gemini-1.5-pro","cwd":"/repo","permissionMode":"default","tools":["Read","Bash"]}`
	sText      = `{"type":"text","content":"Sure, I can help with that."}`
	sThinking  = `{"type":"thinking","is_thinking":true,"thought":"hm"}`
	sUsage     = `{"type":"usage","input_tokens":120,"output_tokens":310}`
	sResult    = `{"type":"result","is_error":false,"subtype":"success","usage":{"input_tokens":120,"output_tokens":310}}`
	sResultErr = `{"type":"result","is_error":true,"subtype":"error","errors":["timeout"]}`
	sCancelled = `{"type":"result","is_error":true,"subtype":"cancelled"}`
	sStop      = `{"type":"message_stop"}`
	sUser      = `{"type":"user","message":{"role":"user","content":"next question"}}`
	sErr       = `{"type":"error","message":"provider timeout","code":"timeout"}`
	sSysErr    = `{"type":"system","subtype":"error","message":"not logged in"}`
	sInterrupt = `{"type":"interrupt"}`
)

func sUse(id string) string {
	return `{"type":"tool_use","id":"` + id + `","name":"Edit","input":{"file_path":"src/app.tsx","old_string":"foo","new_string":"bar"}}`
}

func sRes(id string) string {
	return `{"type":"tool_result","tool_use_id":"` + id + `","content":"ok"}`
}

func sResErr(id string) string {
	return `{"type":"tool_result","tool_use_id":"` + id + `","content":"failed","is_error":true}`
}

var shimCases = []ruleCase{
	{
		rule: ShimInitFirst, dialect: "shim",
		bad:  lines(sText, sInit, sUsage, sResult, sStop),
		want: []string{"shim/order/init-first@1"},
		// A startup failure: system error, then a result, no init.
		good: lines(sSysErr, sResultErr, sStop),
	},
	{
		rule: ShimInitOnce, dialect: "shim",
		bad:  lines(sInit, sText, sUsage, sResult, sStop, sInit),
		want: []string{"shim/order/init-once@6"},
		good: lines(sInit, sText, sUsage, sResult, sStop, sUser, sText, sUsage, sResult, sStop),
	},
	{
		rule: ShimResultBeforeText, dialect: "shim",
		bad:  lines(sInit, sUse("call_1"), sText, sText, sRes("call_1"), sUsage, sResult, sStop),
		want: []string{"shim/tool/result-before-text@3"},
		good: lines(sInit, sText, sUse("call_1"), sThinking, sRes("call_1"), sText, sUsage, sResult, sStop),
	},
	{
		rule: ShimSequential, dialect: "shim",
		bad:  lines(sInit, sUse("call_1"), sUse("call_2"), sRes("call_1"), sRes("call_2"), sUsage, sResult, sStop),
		want: []string{"shim/tool/sequential@3"},
		// Re-emitting a pending call is a retry (docs/protocols/shim.md#errors).
		good: lines(sInit, sUse("call_1"), sUse("call_1"), sRes("call_1"), sUse("call_2"), sRes("call_2"), sUsage, sResult, sStop),
	},
	{
		rule: ShimToolResultKnown, dialect: "shim",
		bad:  lines(sInit, sRes("call_9"), sUsage, sResult, sStop),
		want: []string{"shim/tool/result-known-use@2"},
		good: lines(sInit, sUse("call_9"), sRes("call_9"), sUsage, sResult, sStop),
	},
	{
		rule: ShimToolResultAfterUse, dialect: "shim",
		bad:  lines(sInit, sRes("call_1"), sUse("call_1"), sUsage, sResult, sStop),
		want: []string{"shim/tool/result-after-use@2"},
		good: lines(sInit, sUse("call_1"), sRes("call_1"), sUsage, sResult, sStop),
	},
	{
		rule: ShimToolResultOnce, dialect: "shim",
		bad:  lines(sInit, sUse("call_1"), sRes("call_1"), sRes("call_1"), sUsage, sResult, sStop),
		want: []string{"shim/tool/result-once@4"},
		// A retry after an error result reuses the id and gets a new result.
		good: lines(sInit, sUse("call_1"), sResErr("call_1"), sUse("call_1"), sRes("call_1"), sUsage, sResult, sStop),
	},
	{
		rule: ShimToolUseAnswered, dialect: "shim",
		bad:  lines(sInit, sUse("call_1"), sUsage, sResult, sStop),
		want: []string{"shim/tool/use-answered@2"},
		good: lines(sInit, sUse("call_1"), sInterrupt, sCancelled, sStop),
	},
	{
		rule: ShimToolUseUnique, dialect: "shim",
		bad:  lines(sInit, sUse("call_1"), sRes("call_1"), sUse("call_1"), sUsage, sResult, sStop),
		want: []string{"shim/tool/use-id-unique@4"},
		good: lines(sInit, sUse("call_1"), sRes("call_1"), sUse("call_2"), sRes("call_2"), sUsage, sResult, sStop),
	},
	{
		rule: ShimResultTerminal, dialect: "shim",
		bad:  lines(sInit, sText, sUsage, sResult, sStop, sText, sUsage, sResult, sStop),
		want: []string{"shim/order/result-terminal@6"},
		// A user line starts the next turn; usage after result still counts;
		// an error after result opens a turn that needs its own result.
		good: lines(sInit, sText, sResult, sUsage, sStop, sUser, sText, sUsage, sResult, sStop, sErr, sResultErr, sStop),
	},
	{
		rule: ShimResultTerminal, name: "second-result", dialect: "shim",
		bad:  lines(sInit, sText, sUsage, sResult, sResult, sStop),
		want: []string{"shim/order/result-terminal@5"},
	},
	{
		rule: ShimTurnResult, dialect: "shim",
		bad:  lines(sInit, sText, sUser, sText, sUsage, sResult, sStop),
		want: []string{"shim/turn/result@3"},
		// A user line that only carries tool results does not start a turn.
		good: lines(sInit, sUse("call_1"),
			`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"ok"}]}}`,
			sRes("call_1"), sText, sUsage, sResult, sStop),
	},
	{
		rule: ShimMessageStopAfterResult, dialect: "shim",
		bad:  lines(sInit, sText, sStop, sUsage, sResult, sStop),
		want: []string{"shim/order/message-stop-after-result@3"},
		good: lines(sInit, sText, sUsage, sResult, sStop, sStop),
	},
	{
		rule: ShimMessageStop, dialect: "shim",
		bad:  lines(sInit, sText, sUsage, sResult),
		want: []string{"shim/turn/message-stop@4"},
		good: lines(sInit, sText, sUsage, sResult, sStop),
	},
	{
		rule: ShimUsage, dialect: "shim",
		bad:  lines(sInit, sText, sResult, sStop),
		want: []string{"shim/turn/usage@3"},
		// Turns ending in error owe no usage.
		good: lines(sInit, sText, sErr, sResultErr, sStop),
	},
	{
		rule: ShimMaxLine, dialect: "shim", opts: Options{ShimMaxLine: 200},
		bad:  lines(sInit, `{"type":"text","content":"`+strings.Repeat("x", 200)+`"}`, sUsage, sResult, sStop),
		want: []string{"shim/line/max-size@2"},
		good: lines(sInit, `{"type":"text","content":"`+strings.Repeat("x", 150)+`"}`, sUsage, sResult, sStop),
	},
	{
		rule: ShimMaxLine, name: "default", dialect: "shim",
		bad:  lines(sInit, `{"type":"text","content":"`+strings.Repeat("x", 100*1024)+`"}`, sUsage, sResult, sStop),
		want: []string{"shim/line/max-size@2"},
		good: lines(sInit, `{"type":"text","content":"`+strings.Repeat("x", 100*1024-40)+`"}`, sUsage, sResult, sStop),
	},
	{
		rule: ShimErrorResult, dialect: "shim",
		bad:  lines(sInit, sSysErr),
		want: []string{"shim/error/result-follows@2"},
		good: lines(sInit, sSysErr, sResultErr, sStop),
	},
	{
		rule: ShimErrorResult, name: "then-user", dialect: "shim",
		bad:  lines(sInit, sText, sErr, sUser, sText, sUsage, sResult, sStop),
		want: []string{"shim/turn/result@4", "shim/error/result-follows@3"},
	},
	{
		rule: ShimTruncated, dialect: "shim",
		bad:  lines(sInit, sText),
		want: []string{"shim/stream/truncated@2"},
		// An idle session that never started a turn is not cut off.
		good: sInit,
	},
}

func TestShimRules(t *testing.T) { runRuleCases(t, shimCases) }
