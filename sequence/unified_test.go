package sequence

import "testing"

// u builds a unified event with the base fields; extra is appended inside
// the object and starts with a comma when not empty.
func u(typ, id, extra string) string {
	return `{"type":"` + typ + `","id":"` + id + `","sessionId":"S","timestamp":"2026-01-01T00:00:00Z"` + extra + `}`
}

func uStart(id string) string { return u("sessionStarted", id, `,"agentType":"claude"`) }
func uText(id string) string  { return u("textChunk", id, `,"content":"hi","isPartial":true`) }
func uTool(id, tool string) string {
	return u("toolStarted", id, `,"toolId":"`+tool+`","toolName":"shell"`)
}
func uProg(id, tool string) string {
	return u("toolProgress", id, `,"toolId":"`+tool+`","progress":0.5`)
}
func uDone(id, tool string) string {
	return u("toolCompleted", id, `,"toolId":"`+tool+`","success":true`)
}
func uEnd(id, reason string) string { return u("sessionEnded", id, `,"reason":"`+reason+`"`) }
func uTurn(id string) string {
	return u("turnCompleted", id, `,"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}`)
}
func uFile(id, path string) string {
	return u("fileChanged", id, `,"filePath":"`+path+`","changeType":"modified"`)
}
func uOther(id, sid string) string {
	return `{"type":"textChunk","id":"` + id + `","sessionId":"` + sid + `","content":"x"}`
}
func uUnknown(id string) string { return u("retry", id, "") }

var unifiedCases = []ruleCase{
	{
		rule: UnifiedStartedFirst, dialect: "unified",
		bad:  lines(uText("e1"), uStart("e2"), uEnd("e3", "completed")),
		want: []string{"unified/order/session-started-first@1"},
		good: lines(uUnknown("e0"), uStart("e1"), uText("e2"), uTurn("e3"), uEnd("e4", "completed")),
	},
	{
		rule: UnifiedStartedOnce, dialect: "unified",
		bad:  lines(uStart("e1"), uStart("e2"), uEnd("e3", "completed")),
		want: []string{"unified/order/session-started-once@2"},
		good: lines(uStart("e1"), uText("e2"), uEnd("e3", "completed")),
	},
	{
		rule: UnifiedEndedLast, dialect: "unified",
		bad:  lines(uStart("e1"), uEnd("e2", "completed"), uText("e3")),
		want: []string{"unified/order/session-ended-last@3"},
		good: lines(uStart("e1"), uText("e2"), uEnd("e3", "completed"), uUnknown("e4")),
	},
	{
		rule: UnifiedEndedLast, name: "twice", dialect: "unified",
		bad:  lines(uStart("e1"), uEnd("e2", "completed"), uEnd("e3", "completed")),
		want: []string{"unified/order/session-ended-last@3"},
	},
	{
		rule: UnifiedToolKnown, dialect: "unified",
		bad:  lines(uStart("e1"), uProg("e2", "t1"), uEnd("e3", "completed")),
		want: []string{"unified/tool/known-id@2"},
		good: lines(uStart("e1"), uTool("e2", "t1"), uProg("e3", "t1"), uProg("e4", "t1"), uDone("e5", "t1"), uEnd("e6", "completed")),
	},
	{
		rule: UnifiedToolKnown, name: "completed", dialect: "unified",
		bad:  lines(uStart("e1"), uDone("e2", "t1"), uEnd("e3", "completed")),
		want: []string{"unified/tool/known-id@2"},
	},
	{
		rule: UnifiedToolStartedFirst, dialect: "unified",
		bad:  lines(uStart("e1"), uDone("e2", "t1"), uTool("e3", "t1"), uEnd("e4", "completed")),
		want: []string{"unified/tool/started-first@2"},
		good: lines(uStart("e1"), uTool("e2", "t1"), uDone("e3", "t1"), uEnd("e4", "completed")),
	},
	{
		rule: UnifiedToolCompletedOnce, dialect: "unified",
		bad:  lines(uStart("e1"), uTool("e2", "t1"), uDone("e3", "t1"), uDone("e4", "t1"), uEnd("e5", "completed")),
		want: []string{"unified/tool/completed-once@4"},
		good: lines(uStart("e1"), uTool("e2", "t1"), uTool("e3", "t2"), uDone("e4", "t2"), uDone("e5", "t1"), uEnd("e6", "completed")),
	},
	{
		rule: UnifiedToolNoProgressAfterCompleted, dialect: "unified",
		bad:  lines(uStart("e1"), uTool("e2", "t1"), uDone("e3", "t1"), uProg("e4", "t1"), uEnd("e5", "completed")),
		want: []string{"unified/tool/no-progress-after-completed@4"},
		good: lines(uStart("e1"), uTool("e2", "t1"), uProg("e3", "t1"), uDone("e4", "t1"), uFile("e5", "a.go"), uEnd("e6", "completed")),
	},
	{
		rule: UnifiedToolCompleted, dialect: "unified",
		bad:  lines(uStart("e1"), uTool("e2", "t1"), uEnd("e3", "completed")),
		want: []string{"unified/tool/started-completed@2"},
		good: lines(uStart("e1"), uTool("e2", "t1"), uTool("e3", "t2"), uEnd("e4", "cancelled")),
	},
	{
		rule: UnifiedToolIDUnique, dialect: "unified",
		bad:  lines(uStart("e1"), uTool("e2", "t1"), uTool("e3", "t1"), uDone("e4", "t1"), uEnd("e5", "completed")),
		want: []string{"unified/tool/id-unique@3"},
		good: lines(uStart("e1"), uTool("e2", "t1"), uDone("e3", "t1"), uTool("e4", "t2"), uDone("e5", "t2"), uEnd("e6", "failed")),
	},
	{
		rule: UnifiedEventIDUnique, dialect: "unified",
		bad:  lines(uStart("e1"), uText("e1"), uEnd("e2", "completed")),
		want: []string{"unified/event/id-unique@2"},
		good: lines(uStart("e1"), uText("e2"), uEnd("e3", "completed")),
	},
	{
		rule: UnifiedSessionConstant, dialect: "unified",
		bad:  lines(uStart("e1"), uOther("e2", "T"), uEnd("e3", "completed")),
		want: []string{"unified/session/id-constant@2"},
		good: lines(uStart("e1"), uOther("e2", "S"), uEnd("e3", "completed")),
	},
	{
		rule: UnifiedTruncated, dialect: "unified",
		bad:  lines(uStart("e1"), uTool("e2", "t1")),
		want: []string{"unified/stream/truncated@2"},
		good: lines(uStart("e1"), uTool("e2", "t1"), uEnd("e3", "timeout")),
	},
}

func TestUnifiedRules(t *testing.T) { runRuleCases(t, unifiedCases) }
