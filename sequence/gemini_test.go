package sequence

import (
	"strings"
	"testing"
)

const (
	gInit      = `{"type":"init","timestamp":"2026-11-20T23:12:42.753Z","session_id":"7e48","model":"auto"}`
	gUser      = `{"type":"message","timestamp":"2026-11-20T23:12:42.756Z","role":"user","content":"run echo"}`
	gText      = `{"type":"message","timestamp":"2026-11-20T23:12:42.851Z","role":"assistant","content":"Hello","delta":true}`
	gWarn      = `{"type":"error","timestamp":"2026-11-20T23:12:42.851Z","severity":"warning","message":"Loop detected, stopping execution"}`
	gResult    = `{"type":"result","timestamp":"2026-11-20T23:12:42.920Z","status":"success","stats":{"total_tokens":1}}`
	gResultErr = `{"type":"result","timestamp":"2026-11-20T23:12:42.920Z","status":"error","error":{"type":"unknown","message":"x"},"stats":{"duration_ms":0}}`
)

func gUse(id string) string {
	return `{"type":"tool_use","timestamp":"2026-11-20T23:12:51.120Z","tool_name":"run_shell_command","tool_id":"` + id + `","parameters":{"command":"echo hi"}}`
}

func gRes(id string) string {
	return `{"type":"tool_result","timestamp":"2026-11-20T23:12:51.255Z","tool_id":"` + id + `","status":"success","output":"hi"}`
}

var geminiCases = []ruleCase{
	{
		rule: GeminiInitFirst, dialect: "gemini",
		bad:  lines(gUser, gInit, gText, gResult),
		want: []string{"gemini/order/init-first@1"},
		good: lines(gInit, gUser, gText, gResult),
	},
	{
		// handleError writes a result even when the run failed before
		// init; only an error result may come alone.
		rule: GeminiInitFirst, name: "error-before-init", dialect: "gemini",
		bad:  lines(gResult),
		want: []string{"gemini/order/init-first@1"},
		good: lines(gResultErr),
	},
	{
		rule: GeminiInitOnce, dialect: "gemini",
		bad:  lines(gInit, gUser, gInit, gResult),
		want: []string{"gemini/order/init-once@3"},
		good: lines(gInit, gUser, gResult),
	},
	{
		rule: GeminiResultLast, dialect: "gemini",
		bad:  lines(gInit, gUser, gResult, gText),
		want: []string{"gemini/order/result-last@4"},
		good: lines(gInit, gUser, gWarn, gText, gResult),
	},
	{
		rule: GeminiResultLast, name: "second-result", dialect: "gemini",
		bad:  lines(gInit, gUser, gResult, gResult),
		want: []string{"gemini/order/result-last@4"},
	},
	{
		rule: GeminiOneUser, dialect: "gemini",
		bad:  lines(gInit, gUser, gText, gUser, gResult),
		want: []string{"gemini/message/one-user@4"},
		good: lines(gInit, gUser, gText, gText, gResult),
	},
	{
		rule: GeminiOneUser, name: "none", dialect: "gemini",
		bad:  lines(gInit, gText, gResult),
		want: []string{"gemini/message/one-user@3"},
		// An @-file reference that cannot be read fails the run between
		// init and the user message.
		good: lines(gInit, gResultErr),
	},
	{
		rule: GeminiToolResultKnown, dialect: "gemini",
		bad:  lines(gInit, gUser, gRes("read_file__1_0"), gResult),
		want: []string{"gemini/tool/result-known-use@3"},
		good: lines(gInit, gUser, gUse("read_file__1_0"), gRes("read_file__1_0"), gResult),
	},
	{
		rule: GeminiToolResultAfterUse, dialect: "gemini",
		bad:  lines(gInit, gUser, gRes("a"), gUse("a"), gResult),
		want: []string{"gemini/tool/result-after-use@3"},
		good: lines(gInit, gUser, gUse("a"), gRes("a"), gResult),
	},
	{
		rule: GeminiToolResultOnce, dialect: "gemini",
		bad:  lines(gInit, gUser, gUse("a"), gRes("a"), gRes("a"), gResult),
		want: []string{"gemini/tool/result-once@5"},
		// Parallel calls: all uses, then all results (docs/protocols/gemini.md#tool-pairing).
		good: lines(gInit, gUser, gUse("a"), gUse("b"), gRes("a"), gRes("b"), gText, gResult),
	},
	{
		rule: GeminiToolUseAnswered, dialect: "gemini",
		bad:  lines(gInit, gUser, gUse("a"), gResult),
		want: []string{"gemini/tool/use-answered@3"},
		good: lines(gInit, gUser, gUse("a"), gWarn, gResultErr),
	},
	{
		rule: GeminiToolUseUnique, dialect: "gemini",
		bad:  lines(gInit, gUser, gUse("a"), gUse("a"), gRes("a"), gResult),
		want: []string{"gemini/tool/use-id-unique@4"},
		good: lines(gInit, gUser, gUse("a"), gRes("a"), gUse("b"), gRes("b"), gResult),
	},
	{
		rule: GeminiTruncated, dialect: "gemini",
		bad:  lines(gInit, gUser, gText),
		want: []string{"gemini/stream/truncated@3"},
		good: lines(gInit, gUser, gText, gResult),
	},
}

func TestGeminiRules(t *testing.T) { runRuleCases(t, geminiCases) }

func TestGeminiTruncatedMessage(t *testing.T) {
	got := check(t, "gemini", Options{}, lines(gInit, gUser, gUse("a")))
	if len(got) != 1 || !strings.Contains(got[0].Message, "exit 0, no result") {
		t.Errorf("got %s", dump(got))
	}
}
