package sequence

import "github.com/agentconform/agentconform/finding"

// rule builds a catalogue entry.
func rule(id string, level finding.Level, source, requirement string) *finding.Rule {
	return &finding.Rule{ID: id, Requirement: requirement, Source: source, Level: level}
}

// Sources, spelled once so that the catalogue stays consistent: sections of
// the protocol reference (docs/protocols) that say what each rule enforces
// and on what evidence. A new rule picks one, or adds a constant for the
// section that says what it needs.
const (
	srcClaudeStdout    = "docs/protocols/claude.md#stdout"
	srcClaudeStdin     = "docs/protocols/claude.md#stdin"
	srcClaudeControl   = "docs/protocols/claude.md#control"
	srcClaudeCancel    = "docs/protocols/claude.md#control-cancel"
	srcClaudeInterrupt = "docs/protocols/claude.md#interrupt"
	srcClaudeOrder     = "docs/protocols/claude.md#turn-order"
	srcClaudeTools     = "docs/protocols/claude.md#tool-pairing"
	srcClaudeResult    = "docs/protocols/claude.md#result"
	srcClaudeExit      = "docs/protocols/claude.md#exit-codes"
	srcCodexCatalog    = "docs/protocols/codex.md#items"
	srcCodexEvents     = "docs/protocols/codex.md#events"
	srcCodexOrder      = "docs/protocols/codex.md#turn-order"
	srcCodexItemIDs    = "docs/protocols/codex.md#item-ids"
	srcCodexUsage      = "docs/protocols/codex.md#usage"
	srcCodexExit       = "docs/protocols/codex.md#exit-codes"
	srcGeminiOrder     = "docs/protocols/gemini.md#turn-order"
	srcGeminiTools     = "docs/protocols/gemini.md#tool-pairing"
	srcGeminiEnd       = "docs/protocols/gemini.md#turn-order; docs/protocols/gemini.md#pipe-cut"
	srcGeminiExit      = "docs/protocols/gemini.md#exit-codes"
	srcUnifiedModel    = "docs/protocols/unified.md#order"
	srcUnifiedSchema   = "docs/protocols/unified.md#order"
	srcUnifiedTools    = "docs/protocols/unified.md#tools"
	srcShimOrder       = "docs/protocols/shim.md#order"
	srcShimChunking    = "docs/protocols/shim.md#chunking"
	srcShimTypes       = "docs/protocols/shim.md#message-types"
	srcShimStrict      = "docs/protocols/shim.md#strictness"
	srcShimErrors      = "docs/protocols/shim.md#errors"
)

// srcCodexItemsAtTurnEnd says which items the Codex CLI completes when a
// turn ends.
const srcCodexItemsAtTurnEnd = "docs/protocols/codex.md#items-at-turn-end"

// Claude Code stdout (and the stdout side of a transcript).
var (
	// ClaudeInitFirst: turn messages come only inside a turn opened by system/init.
	ClaudeInitFirst = rule("claude/turn/init-first", finding.Must, srcClaudeOrder,
		"A system/init message opens every turn: assistant, user and result messages come only after the turn's system/init (control messages, keep_alive and informational system messages may come before and between turns; a run that fails before its first turn, with a startup_failure_reason or num_turns 0 as for an unknown --resume id, writes its error result alone).")
	// ClaudeOneResult: one result per turn, and nothing of the turn after it.
	ClaudeOneResult = rule("claude/turn/one-result", finding.Must, srcClaudeOrder,
		"Exactly one result closes a turn: after it there is no second result and no assistant or user message until the next system/init opens a new turn (informational system messages, prompt_suggestion and rate_limit_event may follow it).")
	// ClaudeResultBeforeNextInit: a turn is closed before the next opens.
	ClaudeResultBeforeNextInit = rule("claude/turn/result-before-next-init", finding.Must, srcClaudeOrder,
		"A turn ends with its result before the next system/init opens another turn.")
	// ClaudeToolResultKnown: tool_result blocks name an earlier tool_use.
	ClaudeToolResultKnown = rule("claude/tool/result-known-use", finding.Must, srcClaudeTools,
		"Every tool_result block's tool_use_id (in user message content) names the id of a tool_use block (in assistant message content) seen earlier in the stream.")
	// ClaudeToolResultAfterUse: a tool_result never precedes its tool_use.
	ClaudeToolResultAfterUse = rule("claude/tool/result-after-use", finding.Must, srcClaudeTools,
		"A tool_result block comes after the tool_use block it answers, never before it.")
	// ClaudeToolResultOnce: a tool_use is answered once.
	ClaudeToolResultOnce = rule("claude/tool/result-once", finding.Must, srcClaudeTools,
		"A tool_use is answered by exactly one tool_result: there is no second tool_result for the same id.")
	// ClaudeToolUseAnswered: every tool_use is answered within its turn.
	ClaudeToolUseAnswered = rule("claude/tool/use-answered", finding.Must, srcClaudeTools,
		"Every tool_use gets a tool_result before its turn's result, unless the turn ended abnormally (result subtype other than success, is_error true, or a terminal_reason other than completed, such as aborted_tools after an interrupt).")
	// ClaudeToolUseUnique: tool_use ids are unique.
	ClaudeToolUseUnique = rule("claude/tool/use-id-unique", finding.Must, srcClaudeTools,
		"tool_use ids are unique within the session (an assistant message that supersedes earlier ones may repeat their blocks).")
	// ClaudeSessionConstant: one session_id per process.
	ClaudeSessionConstant = rule("claude/session/id-constant", finding.Must, srcClaudeOrder,
		"session_id is the same on every stdout message of a process that carries one (after conversation_reset a new id may start); stdin session_id values are free-form and not checked.")
	// ClaudeResultIndex: result_index counts results without gaps.
	ClaudeResultIndex = rule("claude/result/index-sequence", finding.Should, srcClaudeResult,
		"result_index, when present, counts the results of a process 0, 1, 2, …; a gap means a result was lost.")
	// ClaudeTruncated: the stream does not stop mid-turn.
	ClaudeTruncated = rule("claude/stream/truncated", finding.Must, srcClaudeOrder,
		"The stream does not end mid-turn: a turn that was opened (by system/init, or by turn messages after the last result) ends with a result, unless its last message is the user's \"[Request interrupted by user]\", after which the CLI may exit with none.")
)

// Claude Code control protocol, in both directions.
var (
	// ClaudeControlRequestUnique: request ids are unique per sender.
	ClaudeControlRequestUnique = rule("claude/control/request-id-unique", finding.Must, srcClaudeControl,
		"control_request request_ids are unique among the requests of their sender (the client on stdin, the CLI on stdout).")
	// ClaudeControlResponsePending: a response answers a pending request.
	ClaudeControlResponsePending = rule("claude/control/response-pending", finding.Must, srcClaudeControl,
		"Every control_response (request_id nested at response.request_id) answers a pending control_request with the same request_id sent the other way: stdin requests are answered on stdout, stdout requests (can_use_tool, hook_callback, …) on stdin. Checkable only on a transcript holding both directions.")
	// ClaudeControlResponseOnce: at most one response per request.
	ClaudeControlResponseOnce = rule("claude/control/response-once", finding.Must, srcClaudeControl,
		"A control_request gets at most one control_response.")
	// ClaudeControlCancelPending: a cancel names a request its sender sent.
	ClaudeControlCancelPending = rule("claude/control/cancel-pending", finding.Must, srcClaudeCancel,
		"control_cancel_request names a control_request that its sender sent earlier and has not already cancelled (an answer that crossed the cancel in flight is tolerated).")
	// ClaudeControlNoResponseAfterCancel: cancelled requests are not answered.
	ClaudeControlNoResponseAfterCancel = rule("claude/control/no-response-after-cancel", finding.Must, srcClaudeCancel,
		"A control_request withdrawn by control_cancel_request gets no control_response (the Python SDK cancels its handler and writes none).")
	// ClaudeControlRequestAnswered: requests are answered before the end.
	ClaudeControlRequestAnswered = rule("claude/control/request-answered", finding.Should, srcClaudeControl,
		"Every control_request is answered by a control_response, or withdrawn by control_cancel_request, before the stream ends. Checkable only on a transcript holding both directions.")
)

// Claude Code stdin (and the stdin side of a transcript).
var (
	// ClaudeStdinInterruptEnvelope: interrupts must use the control envelope.
	ClaudeStdinInterruptEnvelope = rule("claude-stdin/interrupt/envelope", finding.Must, srcClaudeInterrupt,
		`An interrupt is written as {"type":"control_request","request_id":…,"request":{"subtype":"interrupt"}}; the CLI silently ignores a bare {"subtype":"interrupt"} or one outside the request object, so such a line interrupts nothing.`)
	// ClaudeStdinDirection: only stdin message types on stdin.
	ClaudeStdinDirection = rule("claude-stdin/line/direction", finding.Should, srcClaudeStdin,
		"stdin carries user, control_request, control_response, control_cancel_request and keep_alive lines; a stdout message type (system, assistant, result, …) written to stdin does nothing.")
)

// Codex CLI `exec --json`.
var (
	// CodexThreadFirst: thread.started opens the stream.
	CodexThreadFirst = rule("codex/order/thread-started-first", finding.Must, srcCodexOrder,
		"thread.started is the first event of a process.")
	// CodexThreadOnce: one thread.started per process.
	CodexThreadOnce = rule("codex/order/thread-started-once", finding.Must, srcCodexOrder,
		"thread.started appears exactly once per process.")
	// CodexTurnStartedFirst: items come inside a started turn.
	CodexTurnStartedFirst = rule("codex/order/turn-started-first", finding.Must, srcCodexOrder,
		"turn.started comes before the turn's items and its turn.completed or turn.failed; only item.completed warnings of item type error (and error events) may come between thread.started and turn.started.")
	// CodexTurnClosed: a turn is closed before another starts.
	CodexTurnClosed = rule("codex/turn/closed", finding.Must, srcCodexOrder,
		"turn.completed or turn.failed closes a turn before any other turn.started.")
	// CodexOneTurn: exec runs one turn per process.
	CodexOneTurn = rule("codex/turn/one-per-process", finding.Should, srcCodexOrder,
		"codex exec runs exactly one turn per process: no turn.started after the turn ended (the next turn is a new `codex exec resume` process).")
	// CodexNothingAfterTurnEnd: the terminal event is the last line.
	CodexNothingAfterTurnEnd = rule("codex/order/nothing-after-turn-end", finding.Must, srcCodexOrder,
		"Nothing follows turn.completed or turn.failed in the same process: the terminal event is the last line (a new turn.started is reported by codex/turn/one-per-process instead).")
	// CodexTurnUsage: turn.completed carries usage.
	CodexTurnUsage = rule("codex/turn/usage", finding.Must, srcCodexUsage,
		"turn.completed carries a usage object (thread-cumulative token counts).")
	// CodexItemStartedFirst: lifecycle items start before they update or complete.
	CodexItemStartedFirst = rule("codex/item/started-first", finding.Should, srcCodexCatalog,
		"Items with a lifecycle (command_execution, file_change, mcp_tool_call, web_search, todo_list, collab_tool_call) get item.started before item.updated or item.completed (a file_change may begin with item.updated: a patch update that comes before its start); agent_message, reasoning and error items only ever complete and are exempt.")
	// CodexItemCompletedOnce: an item completes at most once.
	CodexItemCompletedOnce = rule("codex/item/completed-once", finding.Must, srcCodexOrder,
		"An item completes at most once.")
	// CodexItemNoUpdateAfterCompleted: completed items are final.
	CodexItemNoUpdateAfterCompleted = rule("codex/item/no-update-after-completed", finding.Must, srcCodexOrder,
		"An item gets no item.updated after its item.completed.")
	// CodexItemIDUnique: item.started introduces a fresh id.
	CodexItemIDUnique = rule("codex/item/id-unique", finding.Must, srcCodexItemIDs,
		"item.started introduces a new item.id: not one already started or completed in this process (ids restart at item_0 in every process).")
	// CodexItemTypeStable: one id, one item type.
	CodexItemTypeStable = rule("codex/item/type-stable", finding.Must, srcCodexCatalog,
		"item.started, item.updated and item.completed sharing an item.id carry the same item.type.")
	// CodexTodoListClosedAtTurnEnd: the running plan is completed before the
	// turn ends. Other items need not be: the exec JSONL processor completes
	// at turn end only the running todo_list and the started items that the
	// thread's stored history lists for the turn, so a command left running
	// in the background stays open (captured on 0.169.0:
	// testdata/captures/codex/0.169.0/background-command.jsonl).
	CodexTodoListClosedAtTurnEnd = rule("codex/item/todo-list-closed-at-turn-end", finding.Must, srcCodexItemsAtTurnEnd,
		"A started todo_list item (the plan) is completed before turn.completed or turn.failed: the CLI completes the running plan itself when the turn ends. Other started items may stay open when the turn ends (a command left running in the background keeps only its item.started), so no rule asks for their completion.")
	// CodexTruncated: the stream ends with a terminal event.
	CodexTruncated = rule("codex/stream/truncated", finding.Must, srcCodexOrder,
		"The stream ends with turn.completed or turn.failed.")
)

// Gemini CLI stream-json.
var (
	// GeminiInitFirst: init opens the stream.
	GeminiInitFirst = rule("gemini/order/init-first", finding.Must, srcGeminiOrder,
		"init is the first event, except for a result with status error: the CLI reports an error that happens before init (resuming the chat failed) with a result alone.")
	// GeminiInitOnce: one init per process.
	GeminiInitOnce = rule("gemini/order/init-once", finding.Must, srcGeminiOrder,
		"init appears exactly once.")
	// GeminiResultLast: result ends the stream.
	GeminiResultLast = rule("gemini/order/result-last", finding.Must, srcGeminiOrder,
		"result is the last event and appears once: nothing, not even another result, follows it.")
	// GeminiOneUser: one user message per process.
	GeminiOneUser = rule("gemini/message/one-user", finding.Should, srcGeminiOrder,
		"Exactly one message with role user follows init (the raw prompt; one user turn per process); a run that fails before the prompt is sent (result status error) may have none.")
	// GeminiToolResultKnown: tool_result names an earlier tool_use.
	GeminiToolResultKnown = rule("gemini/tool/result-known-use", finding.Must, srcGeminiTools,
		"Every tool_result.tool_id names the tool_id of a tool_use seen earlier.")
	// GeminiToolResultAfterUse: a tool_result never precedes its tool_use.
	GeminiToolResultAfterUse = rule("gemini/tool/result-after-use", finding.Must, srcGeminiTools,
		"A tool_result comes after the tool_use it answers, never before it.")
	// GeminiToolResultOnce: one result per tool_use.
	GeminiToolResultOnce = rule("gemini/tool/result-once", finding.Must, srcGeminiTools,
		"A tool_use gets exactly one tool_result: there is no second tool_result for the same tool_id.")
	// GeminiToolUseAnswered: every tool_use is answered.
	GeminiToolUseAnswered = rule("gemini/tool/use-answered", finding.Must, srcGeminiTools,
		"Every tool_use gets a tool_result before result, unless result.status is error.")
	// GeminiToolUseUnique: tool_ids are unique.
	GeminiToolUseUnique = rule("gemini/tool/use-id-unique", finding.Must, srcGeminiTools,
		"tool_use tool_ids are unique.")
	// GeminiTruncated: the stream ends with result.
	GeminiTruncated = rule("gemini/stream/truncated", finding.Must, srcGeminiEnd,
		"The stream ends with a result event.")
)

// Unified event model.
var (
	// UnifiedStartedFirst: sessionStarted opens the stream.
	UnifiedStartedFirst = rule("unified/order/session-started-first", finding.Must, srcUnifiedModel,
		"sessionStarted is the first event.")
	// UnifiedStartedOnce: one sessionStarted.
	UnifiedStartedOnce = rule("unified/order/session-started-once", finding.Must, srcUnifiedModel,
		"sessionStarted appears exactly once.")
	// UnifiedEndedLast: sessionEnded ends the stream.
	UnifiedEndedLast = rule("unified/order/session-ended-last", finding.Must, srcUnifiedModel,
		"sessionEnded is the last event and appears once: nothing, not even another sessionEnded, follows it.")
	// UnifiedToolKnown: tool events name an earlier toolStarted.
	UnifiedToolKnown = rule("unified/tool/known-id", finding.Must, srcUnifiedTools,
		"toolProgress and toolCompleted name the toolId of an earlier toolStarted.")
	// UnifiedToolStartedFirst: toolCompleted never precedes its toolStarted.
	UnifiedToolStartedFirst = rule("unified/tool/started-first", finding.Must, srcUnifiedTools,
		"toolCompleted comes after the toolStarted it completes, never before it.")
	// UnifiedToolCompletedOnce: one toolCompleted per toolStarted.
	UnifiedToolCompletedOnce = rule("unified/tool/completed-once", finding.Must, srcUnifiedTools,
		"A toolStarted gets at most one toolCompleted.")
	// UnifiedToolNoProgressAfterCompleted: completed tools are final.
	UnifiedToolNoProgressAfterCompleted = rule("unified/tool/no-progress-after-completed", finding.Must, srcUnifiedTools,
		"A tool gets no toolProgress after its toolCompleted.")
	// UnifiedToolCompleted: every started tool completes.
	UnifiedToolCompleted = rule("unified/tool/started-completed", finding.Must, srcUnifiedTools,
		"Every toolStarted gets a toolCompleted before sessionEnded, unless the session ended with reason cancelled, failed or timeout.")
	// UnifiedToolIDUnique: toolIds are unique.
	UnifiedToolIDUnique = rule("unified/tool/id-unique", finding.Must, srcUnifiedTools,
		"toolStarted toolIds are unique within the session.")
	// UnifiedEventIDUnique: event ids are unique.
	UnifiedEventIDUnique = rule("unified/event/id-unique", finding.Must, srcUnifiedSchema,
		"Every event's id is unique within the session.")
	// UnifiedSessionConstant: one sessionId per session.
	UnifiedSessionConstant = rule("unified/session/id-constant", finding.Must, srcUnifiedSchema,
		"sessionId is the same on every event of the stream.")
	// UnifiedTruncated: the stream ends with sessionEnded.
	UnifiedTruncated = rule("unified/stream/truncated", finding.Must, srcUnifiedModel,
		"The stream ends with sessionEnded.")
)

// Shim contract (Claude-compatible output of an adapter).
var (
	// ShimInitFirst: system init opens the stream.
	ShimInitFirst = rule("shim/order/init-first", finding.Must, srcShimOrder,
		"system (subtype init) is emitted first: no text, thinking, tool or result line comes before it (a startup failure announced by system/error or error may be closed by result, usage and message_stop without an init).")
	// ShimInitOnce: one init per session.
	ShimInitOnce = rule("shim/order/init-once", finding.Must, srcShimOrder,
		"system (subtype init) is emitted exactly once per session.")
	// ShimResultBeforeText: a tool_use is answered before more text.
	ShimResultBeforeText = rule("shim/tool/result-before-text", finding.Must, srcShimOrder,
		"After a tool_use the shim waits for its tool_result before emitting more text.")
	// ShimSequential: tool calls one at a time.
	ShimSequential = rule("shim/tool/sequential", finding.Must, srcShimOrder,
		"Multiple tool calls are emitted sequentially: a tool_use comes only when every earlier tool_use has its tool_result (re-emitting a pending call's id is a retry, not a new call).")
	// ShimToolResultKnown: tool_result names an earlier tool_use.
	ShimToolResultKnown = rule("shim/tool/result-known-use", finding.Must, srcShimStrict,
		"tool_result.tool_use_id matches the id of an earlier tool_use.")
	// ShimToolResultAfterUse: a tool_result never precedes its tool_use.
	ShimToolResultAfterUse = rule("shim/tool/result-after-use", finding.Must, srcShimStrict,
		"A tool_result comes after the tool_use it answers, never before it.")
	// ShimToolResultOnce: one result per call.
	ShimToolResultOnce = rule("shim/tool/result-once", finding.Must, srcShimOrder,
		"A tool_use gets one tool_result: a second tool_result for the same id comes only after the call was retried.")
	// ShimToolUseAnswered: every call is answered within its turn.
	ShimToolUseAnswered = rule("shim/tool/use-answered", finding.Must, srcShimOrder,
		"Every tool_use gets its tool_result before the turn's result, unless the turn was interrupted or its result has is_error true or subtype cancelled.")
	// ShimToolUseUnique: tool_use ids are unique, retries aside.
	ShimToolUseUnique = rule("shim/tool/use-id-unique", finding.Must, srcShimStrict,
		"tool_use ids are unique per session and stable across retries: an id repeats only to retry a call that is still pending or whose result had is_error true.")
	// ShimResultTerminal: result ends the turn.
	ShimResultTerminal = rule("shim/order/result-terminal", finding.Must, srcShimOrder,
		"result is the terminal message of its turn: after it come only message_stop and usage until a new user turn starts (a user line that is not a tool-result carrier, or an error that needs its own result); text, thinking, tool lines and a second result do not.")
	// ShimTurnResult: every turn gets a result before the next.
	ShimTurnResult = rule("shim/turn/result", finding.Must, srcShimOrder,
		"Every turn ends with a result before the next user turn starts.")
	// ShimMessageStopAfterResult: message_stop follows result.
	ShimMessageStopAfterResult = rule("shim/order/message-stop-after-result", finding.Must, srcShimOrder,
		"message_stop is emitted after the turn's result, never before it.")
	// ShimMessageStop: message_stop is recommended after result.
	ShimMessageStop = rule("shim/turn/message-stop", finding.Should, srcShimTypes,
		"message_stop follows each result (optional but recommended).")
	// ShimUsage: usage once per completed turn.
	ShimUsage = rule("shim/turn/usage", finding.Must, srcShimStrict,
		"A usage line is emitted at least once per completed turn (a turn whose result does not have is_error true).")
	// ShimMaxLine: each line fits Yume's parser buffer.
	ShimMaxLine = rule("shim/line/max-size", finding.Must, srcShimChunking,
		"Every line fits the parser's line budget (about 100 KB): long text is chunked into several text lines and large tool results are summarised.")
	// ShimErrorResult: errors are followed by a result.
	ShimErrorResult = rule("shim/error/result-follows", finding.Must, srcShimStrict,
		"An error (an error line or a system error) is followed by a result, so that the UI leaves the streaming state.")
	// ShimTruncated: the last turn ends with result.
	ShimTruncated = rule("shim/stream/truncated", finding.Must, srcShimOrder,
		"The stream does not end mid-turn: the last turn ends with a result.")
)

var (
	claudeStdoutRules = []*finding.Rule{
		ClaudeInitFirst, ClaudeOneResult, ClaudeResultBeforeNextInit,
		ClaudeToolResultKnown, ClaudeToolResultAfterUse, ClaudeToolResultOnce,
		ClaudeToolUseAnswered, ClaudeToolUseUnique, ClaudeSessionConstant,
		ClaudeResultIndex, ClaudeTruncated,
	}
	claudeControlRules = []*finding.Rule{
		ClaudeControlRequestUnique, ClaudeControlResponsePending,
		ClaudeControlResponseOnce, ClaudeControlCancelPending,
		ClaudeControlNoResponseAfterCancel, ClaudeControlRequestAnswered,
	}
	claudeStdinRules = []*finding.Rule{ClaudeStdinInterruptEnvelope, ClaudeStdinDirection}
	codexRules       = []*finding.Rule{
		CodexThreadFirst, CodexThreadOnce, CodexTurnStartedFirst, CodexTurnClosed,
		CodexOneTurn, CodexNothingAfterTurnEnd, CodexTurnUsage,
		CodexItemStartedFirst, CodexItemCompletedOnce, CodexItemNoUpdateAfterCompleted,
		CodexItemIDUnique, CodexItemTypeStable, CodexTodoListClosedAtTurnEnd, CodexTruncated,
	}
	geminiRules = []*finding.Rule{
		GeminiInitFirst, GeminiInitOnce, GeminiResultLast, GeminiOneUser,
		GeminiToolResultKnown, GeminiToolResultAfterUse, GeminiToolResultOnce,
		GeminiToolUseAnswered, GeminiToolUseUnique, GeminiTruncated,
	}
	unifiedRules = []*finding.Rule{
		UnifiedStartedFirst, UnifiedStartedOnce, UnifiedEndedLast,
		UnifiedToolKnown, UnifiedToolStartedFirst, UnifiedToolCompletedOnce,
		UnifiedToolNoProgressAfterCompleted, UnifiedToolCompleted, UnifiedToolIDUnique,
		UnifiedEventIDUnique, UnifiedSessionConstant, UnifiedTruncated,
	}
	shimRules = []*finding.Rule{
		ShimInitFirst, ShimInitOnce, ShimResultBeforeText, ShimSequential,
		ShimToolResultKnown, ShimToolResultAfterUse, ShimToolResultOnce,
		ShimToolUseAnswered, ShimToolUseUnique, ShimResultTerminal, ShimTurnResult,
		ShimMessageStopAfterResult, ShimMessageStop, ShimUsage, ShimMaxLine,
		ShimErrorResult, ShimTruncated,
	}
)

// AllRules is every rule this package can report, each once, grouped by
// dialect. Catalogue printers and baseline tools list it.
var AllRules = concat(claudeStdoutRules, claudeControlRules, claudeStdinRules,
	codexRules, geminiRules, unifiedRules, shimRules)

// Rules returns the rules a checker of the given dialect can report, or nil
// for an unknown dialect. "claude" includes the control and stdin rules
// (a transcript checks both sides); "claude-stdin" includes the control
// rules that one side alone can break.
func Rules(dialect string) []*finding.Rule {
	switch dialect {
	case "claude":
		return concat(claudeStdoutRules, claudeControlRules, claudeStdinRules)
	case "claude-stdin":
		return concat(claudeStdinRules, []*finding.Rule{
			ClaudeControlRequestUnique, ClaudeControlResponseOnce, ClaudeControlCancelPending,
		})
	case "codex":
		return concat(codexRules)
	case "gemini":
		return concat(geminiRules)
	case "unified":
		return concat(unifiedRules)
	case "shim":
		return concat(shimRules)
	}
	return nil
}

// concat returns a fresh slice holding the given groups in order, so that
// callers cannot alter the catalogue through it.
func concat(groups ...[]*finding.Rule) []*finding.Rule {
	var out []*finding.Rule
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}
