package sequence

import (
	"strings"
	"testing"
)

const (
	xThread = `{"type":"thread.started","thread_id":"01a1fb3a-6aae-7a50-96c0-b475683253b8"}`
	xTurn   = `{"type":"turn.started"}`
	xDone   = `{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":1024,"cache_write_input_tokens":0,"output_tokens":12,"reasoning_output_tokens":0}}`
	xFailed = `{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}`
	xErr    = `{"type":"error","message":"Reconnecting... 2/5"}`
)

// xItem is an item event: ev is started, updated or completed.
func xItem(ev, id, typ string) string {
	return `{"type":"item.` + ev + `","item":{"id":"` + id + `","type":"` + typ + `"}}`
}

// xMsg is a completed agent_message (they only ever complete).
func xMsg(id string) string { return xItem("completed", id, "agent_message") }

// xWarn is a warning item, which may precede turn.started.
func xWarn(id string) string {
	return `{"type":"item.completed","item":{"id":"` + id + `","type":"error","message":"Model metadata for ` + "`gpt-5-codex`" + ` not found"}}`
}

var codexCases = []ruleCase{
	{
		rule: CodexThreadFirst, dialect: "codex",
		bad:  lines(xWarn("item_0"), xThread, xTurn, xMsg("item_1"), xDone),
		want: []string{"codex/order/thread-started-first@1"},
		good: lines(xThread, xWarn("item_0"), xTurn, xMsg("item_1"), xDone),
	},
	{
		rule: CodexThreadOnce, dialect: "codex",
		bad:  lines(xThread, xTurn, xThread, xMsg("item_0"), xDone),
		want: []string{"codex/order/thread-started-once@3"},
		good: lines(xThread, xTurn, xMsg("item_0"), xDone),
	},
	{
		// A second process's output appended: reported once, then its item
		// ids (restarting at item_0) are not duplicates.
		rule: CodexThreadOnce, name: "concatenated", dialect: "codex",
		bad: lines(xThread, xTurn, xItem("started", "item_0", "command_execution"), xItem("completed", "item_0", "command_execution"), xDone,
			xThread, xTurn, xItem("started", "item_0", "command_execution"), xItem("completed", "item_0", "command_execution"), xDone),
		want: []string{"codex/order/thread-started-once@6"},
	},
	{
		rule: CodexTurnStartedFirst, dialect: "codex",
		bad:  lines(xThread, xItem("started", "item_0", "command_execution"), xTurn, xItem("completed", "item_0", "command_execution"), xDone),
		want: []string{"codex/order/turn-started-first@2"},
		good: lines(xThread, xWarn("item_0"), xErr, xTurn, xMsg("item_1"), xDone),
	},
	{
		rule: CodexTurnStartedFirst, name: "terminal", dialect: "codex",
		bad:  lines(xThread, xDone),
		want: []string{"codex/order/turn-started-first@2"},
	},
	{
		rule: CodexTurnClosed, dialect: "codex",
		bad:  lines(xThread, xTurn, xTurn, xDone),
		want: []string{"codex/turn/closed@3"},
		// error is not terminal.
		good: lines(xThread, xTurn, xErr, xErr, xMsg("item_0"), xDone),
	},
	{
		rule: CodexOneTurn, dialect: "codex",
		bad:  lines(xThread, xTurn, xDone, xTurn, xMsg("item_0"), xDone),
		want: []string{"codex/turn/one-per-process@4"},
		good: lines(xThread, xTurn, xMsg("item_0"), xDone),
	},
	{
		rule: CodexNothingAfterTurnEnd, dialect: "codex",
		bad:  lines(xThread, xTurn, xDone, xMsg("item_0")),
		want: []string{"codex/order/nothing-after-turn-end@4"},
		good: lines(xThread, xTurn, xErr, xFailed),
	},
	{
		rule: CodexNothingAfterTurnEnd, name: "second-terminal", dialect: "codex",
		bad:  lines(xThread, xTurn, xErr, xFailed, xFailed),
		want: []string{"codex/order/nothing-after-turn-end@5"},
	},
	{
		rule: CodexTurnUsage, dialect: "codex",
		bad:  lines(xThread, xTurn, `{"type":"turn.completed"}`),
		want: []string{"codex/turn/usage@3"},
		good: lines(xThread, xTurn, xFailed),
	},
	{
		rule: CodexItemStartedFirst, dialect: "codex",
		bad:  lines(xThread, xTurn, xItem("completed", "item_0", "command_execution"), xDone),
		want: []string{"codex/item/started-first@3"},
		// agent_message, reasoning and error only ever complete; unknown
		// item types are not judged.
		good: lines(xThread, xTurn, xItem("completed", "item_0", "reasoning"), xWarn("item_1"),
			xItem("updated", "item_2", "agent_message"), xItem("completed", "item_2", "agent_message"),
			xItem("completed", "item_3", "future_item"), xDone),
	},
	{
		// A patch update may come before the file change's start; the CLI
		// then writes that start as item.updated too.
		rule: CodexItemStartedFirst, name: "file-change-update", dialect: "codex",
		bad:  lines(xThread, xTurn, xItem("completed", "item_0", "file_change"), xDone),
		want: []string{"codex/item/started-first@3"},
		good: lines(xThread, xTurn, xItem("updated", "item_0", "file_change"), xItem("updated", "item_0", "file_change"),
			xItem("completed", "item_0", "file_change"), xDone),
	},
	{
		rule: CodexItemCompletedOnce, dialect: "codex",
		bad:  lines(xThread, xTurn, xMsg("item_0"), xMsg("item_0"), xDone),
		want: []string{"codex/item/completed-once@4"},
		good: lines(xThread, xTurn, xMsg("item_0"), xMsg("item_1"), xDone),
	},
	{
		rule: CodexItemNoUpdateAfterCompleted, dialect: "codex",
		bad: lines(xThread, xTurn, xItem("started", "item_0", "todo_list"), xItem("completed", "item_0", "todo_list"),
			xItem("updated", "item_0", "todo_list"), xDone),
		want: []string{"codex/item/no-update-after-completed@5"},
		good: lines(xThread, xTurn, xItem("started", "item_0", "todo_list"), xItem("updated", "item_0", "todo_list"),
			xItem("updated", "item_0", "todo_list"), xItem("completed", "item_0", "todo_list"), xDone),
	},
	{
		rule: CodexItemIDUnique, dialect: "codex",
		bad: lines(xThread, xTurn, xItem("started", "item_0", "command_execution"), xItem("started", "item_0", "command_execution"),
			xItem("completed", "item_0", "command_execution"), xDone),
		want: []string{"codex/item/id-unique@4"},
		good: lines(xThread, xTurn, xItem("started", "item_0", "command_execution"), xItem("started", "item_1", "command_execution"),
			xItem("completed", "item_0", "command_execution"), xItem("completed", "item_1", "command_execution"), xDone),
	},
	{
		rule: CodexItemIDUnique, name: "after-completed", dialect: "codex",
		bad:  lines(xThread, xTurn, xMsg("item_0"), xItem("started", "item_0", "command_execution"), xDone),
		want: []string{"codex/item/id-unique@4"},
	},
	{
		rule: CodexItemTypeStable, dialect: "codex",
		bad:  lines(xThread, xTurn, xItem("started", "item_0", "command_execution"), xItem("completed", "item_0", "file_change"), xDone),
		want: []string{"codex/item/type-stable@4"},
		// web_search has two "id" keys; whichever the decoder keeps, the
		// started and completed events carry the same one.
		good: lines(xThread, xTurn,
			`{"type":"item.started","item":{"id":"item_1","type":"web_search","id":"ws_mock_1","query":"q","action":{"type":"search","query":"q"}}}`,
			`{"type":"item.completed","item":{"id":"item_1","type":"web_search","id":"ws_mock_1","query":"q","action":{"type":"search","query":"q"}}}`,
			`{"type":"item.started","item":{"id":"item_2","type":"web_search","query":"q"}}`,
			`{"type":"item.completed","item":{"id":"item_2","type":"web_search","query":"q"}}`,
			xDone),
	},
	{
		// The CLI completes the running plan at turn end; a command left
		// running in the background keeps only its item.started (captured
		// on 0.169.0), so an open command is no finding.
		rule: CodexTodoListClosedAtTurnEnd, dialect: "codex",
		bad:  lines(xThread, xTurn, xItem("started", "item_0", "todo_list"), xItem("started", "item_1", "command_execution"), xMsg("item_2"), xFailed),
		want: []string{"codex/item/todo-list-closed-at-turn-end@6"},
		good: lines(xThread, xTurn, xItem("started", "item_0", "todo_list"), xItem("started", "item_1", "command_execution"), xMsg("item_2"),
			xItem("completed", "item_0", "todo_list"), xDone),
	},
	{
		rule: CodexTruncated, dialect: "codex",
		bad:  lines(xThread, xTurn, xItem("started", "item_0", "command_execution")),
		want: []string{"codex/stream/truncated@3"},
		good: lines(xThread, xTurn, xItem("started", "item_0", "command_execution"), xItem("completed", "item_0", "command_execution"), xDone),
	},
}

func TestCodexRules(t *testing.T) { runRuleCases(t, codexCases) }

func TestCodexTruncatedMessage(t *testing.T) {
	got := check(t, "codex", Options{}, lines(xThread, xTurn))
	if len(got) != 1 || !strings.Contains(got[0].Message, "SIGINT (exit 1) or SIGTERM (143)") {
		t.Errorf("got %s", dump(got))
	}
	if got := check(t, "codex", Options{}, ""+xThread+"\n"+xTurn+"\n"+xDone); len(got) != 0 {
		t.Errorf("complete run: %s", dump(got))
	}
}
