package oracle

// Format is what a CLI process was asked to write on stdout.
type Format int

const (
	// Stream is one JSON event per line (Claude and Gemini --output-format
	// stream-json, Codex exec --json).
	Stream Format = iota
	// JSON is one JSON object at the end (--output-format json).
	JSON
	// Text is the answer as plain text (the CLIs' default).
	Text
)

// Output is what a CLI wrote for one turn: the lines of a stream, or the
// answer of a text or JSON turn.
type Output struct {
	// Format is the output format the turn was run with.
	Format Format
	// Lines are the turn's stdout lines, each decoded as encoding/json
	// decodes a JSON object into a map (nil for a line that is none): a
	// Stream turn's only content.
	Lines []map[string]any
	// Answer is a JSON or Text turn's answer (the text of a text turn, a
	// JSON turn's result text): its only content.
	Answer string
}

// Session is what a CLI said over a session, turn by turn.
type Session struct {
	// Agent is the CLI: claude, codex or gemini.
	Agent string
	// Turns are the turns, in the order they ran.
	Turns []*Turn
	// Tools are every tool call of the session, in the order they
	// started (the same calls as the turns' items point to).
	Tools []*Tool
}

// Turn is what the CLI said in one turn.
type Turn struct {
	// Format is the output format the turn ran with; a JSON or Text turn
	// holds only its Answer.
	Format Format
	// Answer is a JSON or Text turn's answer.
	Answer string
	// Items are the texts, tool events and file changes of a Stream turn
	// in the order the CLI wrote them.
	Items []Item
	// End is what the turn's terminal event said, nil when the CLI wrote
	// none (it was interrupted, died, or was cut).
	End *End
}

// ItemKind says what an Item is.
type ItemKind int

const (
	// Answer is the assistant's answer text.
	Answer ItemKind = iota
	// Thinking is reasoning: Claude's thinking blocks, Codex's reasoning
	// items. Not the answer (docs/protocols/claude.md#thinking).
	Thinking
	// Notice is text the CLI showed that is neither answer nor thinking:
	// Codex error events and error items (docs/protocols/codex.md#errors),
	// Gemini error events (docs/protocols/gemini.md#error-events).
	Notice
	// Echo is user-role text the CLI wrote: the prompt echoed (Gemini's
	// user message, Claude's replayed user messages) or a note it made in
	// the user's name (Claude's "[Request interrupted by user]"). It is
	// not what the assistant said.
	Echo
	// ToolStart is a tool call starting.
	ToolStart
	// ToolProgress is a running tool's progress: new output of a command,
	// the new state of a plan.
	ToolProgress
	// ToolEnd is a tool call ending with its result.
	ToolEnd
	// FileChange is a file the CLI changed.
	FileChange
)

// Item is one thing the CLI said, in its turn's order.
type Item struct {
	// Kind says what it is.
	Kind ItemKind
	// Text is the text of Answer, Thinking, Notice and Echo items, and
	// the new output of a command's ToolProgress.
	Text string
	// Partial marks a text streamed in pieces (Claude's deltas, Gemini's
	// chunks): a piece of a longer block.
	Partial bool
	// Tool is the call of ToolStart, ToolProgress and ToolEnd items.
	Tool *Tool
	// State is the new state of a plan a ToolProgress reports (Codex's
	// todo_list items), nil for a command's output.
	State any
	// File is the change of a FileChange item.
	File File
}

// Tool is one tool call.
type Tool struct {
	// ID is the CLI's id of the call (Codex restarts its item ids in every
	// process: docs/protocols/codex.md#item-ids).
	ID string
	// Name is the tool's name, as the CLI calls it (Codex items are named
	// for their type: shell, file_change, <server>/<tool>, web_search,
	// todo_list, collab/<tool>).
	Name string
	// Input is the call's input as the CLI gave it, nil if none.
	Input any
	// Turn is the index in Session.Turns of the turn the call started in.
	Turn int
	// Ended is set when the CLI reported the call's end. A call the CLI
	// left open (Codex's background command,
	// docs/protocols/codex.md#items-at-turn-end) has no outcome.
	Ended bool
	// Success is whether the call succeeded, as the CLI said; false for
	// one that did not end.
	Success bool
	// Result is the call's result as the CLI gave it, nil if none.
	Result any
	// Error is the CLI's own message for a failed call apart from its
	// result (Gemini's error.message, a Codex MCP call's error.message),
	// "" if none. Claude's failed call is its result, flagged is_error.
	Error string
	// States are the states of a plan (Codex's todo_list), first to last:
	// its input, every update, and the result it completed with.
	States []any
}

// File is a file change.
type File struct {
	// Path is the file's path as the CLI wrote it.
	Path string
	// Change is created, modified or deleted.
	Change string
}

// End is what a turn's terminal event said: Claude's result, Codex's
// turn.completed or turn.failed, Gemini's result.
type End struct {
	// Failed is set when the CLI said the turn failed.
	Failed bool
	// Aborted is set when the CLI said the turn was cut short by its
	// caller (Claude terminal_reason aborted_*, Gemini
	// FatalCancellationError).
	Aborted bool
	// MaxTurns is set when the turn limit stopped it (Claude
	// error_max_turns, Gemini FatalTurnLimitedError).
	MaxTurns bool
	// Message is the failure in the CLI's words, "" for a turn that did
	// not fail.
	Message string
	// Errors are the error strings Claude lists in a failed result's
	// errors, which its session outlives: text the caller is shown.
	Errors []string
	// Usage is the token usage as the CLI reported it (Codex: the
	// thread's running total), nil if none.
	Usage *Usage
	// TurnUsage is this turn's usage alone: Usage, or for Codex the
	// difference from the thread's previous total
	// (docs/protocols/codex.md#usage). nil if none.
	TurnUsage *Usage
	// CostUSD is Claude's total_cost_usd (the process's so far), nil if
	// none.
	CostUSD *float64
	// DurationMs is the turn's duration as the CLI reported it, nil if
	// none.
	DurationMs *int64
}

// Usage is token usage in terms every CLI's counts map onto: uncached
// input, cache reads and cache writes (together the whole prompt), output,
// and reasoning (part of output) where reported.
type Usage struct {
	// InputTokens is the prompt count as the CLI wrote it (input_tokens):
	// Codex and Gemini count the cached tokens in it, Claude does not.
	InputTokens int64
	// Uncached is the prompt tokens read from no cache nor written to one.
	Uncached int64
	// CacheRead is the prompt tokens read from a cache.
	CacheRead int64
	// CacheWrite is the prompt tokens written to a cache (Claude's
	// cache_creation_input_tokens, Codex's cache_write_input_tokens).
	CacheWrite int64
	// Output is the output tokens.
	Output int64
	// Reasoning is the reasoning output tokens, nil where the CLI does not
	// report them (only Codex does).
	Reasoning *int64
	// Total is the CLI's own total, nil where it gives none (only Gemini
	// does).
	Total *int64
}

// Input is every prompt token, cached or not.
func (u *Usage) Input() int64 { return u.Uncached + u.CacheRead + u.CacheWrite }

// TotalTokens is the CLI's total, or input plus output.
func (u *Usage) TotalTokens() int64 {
	if u.Total != nil {
		return *u.Total
	}
	return u.Input() + u.Output
}
