package reference

import (
	"encoding/json"

	"github.com/agentconform/agentconform/reference/unified"
)

// A fact is what a CLI parser extracted from its stream, in a vocabulary
// neutral between the output profiles: each parser (one per CLI) turns
// lines into facts, and each renderer (one per profile) turns facts into
// events. The translator core between them keeps session state, makes tool
// ids unique and closes what a turn left open.
type fact interface{ isFact() }

// factSession: the CLI announced (or re-announced) its session.
type factSession struct {
	id             string
	model          string
	cwd            string
	permissionMode string   // Claude's permissionMode, for the shim
	tools          []string // Claude's tool list, for the shim
	approvalMode   string   // unified SessionConfig approvalMode, "" if unknown
	sandboxMode    string   // unified SessionConfig sandboxMode, "" if unknown
}

// factTurnBegin: the caller starts a turn with prompt (core-made).
type factTurnBegin struct {
	turn   int
	prompt string
}

// factPrompt: the CLI echoed the user's prompt (Gemini's user message,
// Claude's replayed user messages).
type factPrompt struct{ text string }

// textKind says whose text a factText is.
type textKind int

const (
	textAnswer    textKind = iota // the assistant's answer
	textUser                      // user-role text the CLI made up (Claude's "[Request interrupted ...]")
	textReasoning                 // reasoning or thinking
	textNotice                    // warnings, retry notices, non-fatal errors, error strings of failed turns
)

// factText: text the CLI showed.
type factText struct {
	kind    textKind
	text    string
	partial bool // a streamed piece of a longer block
}

// factToolStart: a tool call started. id is the CLI's id (the core makes
// it unique); name is the unified tool name, shimName the shim's.
type factToolStart struct {
	id       string
	name     string
	shimName string
	input    json.RawMessage // a JSON object, or nil
	// snapshot marks a tool whose start, progress and end are successive
	// states of one thing (Codex's todo_list): the shim renders each state
	// as a call answered at once, as Claude's TodoWrite is.
	snapshot bool
}

// factToolProgress: new output of a running tool.
type factToolProgress struct {
	id     string
	output string
}

// factToolEnd: a tool call ended.
type factToolEnd struct {
	id      string
	ok      bool
	result  json.RawMessage // any JSON value, or nil
	errText string
	// text is what result encodes when that is a string the parser had
	// (isText): the shim, which shows a result as text, need not decode
	// a 64 MiB result again to show its first 16 KiB.
	text   string
	isText bool
	// detail is the CLI's own error message besides a result (Gemini's
	// error.message next to its output), "" if none: unified carries it
	// as the error, and the shim, which has no error field, after the
	// result's text.
	detail string
}

// factFile: a file changed.
type factFile struct {
	path   string
	change unified.ChangeType
}

// outcome is how a turn ended.
type outcome int

const (
	outcomeNone      outcome = iota // no turn ended yet
	outcomeCompleted                // the CLI finished the turn successfully
	outcomeFailed                   // the CLI reported a failure, or broke
	outcomeCancelled                // the caller interrupted it
	outcomeTimeout                  // the deadline passed
)

// terminal is what a parser learned from a turn's terminal event (Claude
// result, Codex turn.completed/turn.failed, Gemini result).
type terminal struct {
	failed     bool
	aborted    bool     // the caller aborted the turn (Claude terminal_reason aborted_*, Gemini FatalCancellationError)
	maxTurns   bool     // the turn limit stopped it (Claude error_max_turns, Gemini FatalTurnLimitedError)
	errText    string   // the failure, in one string
	errors     []string // Claude's result.errors
	subtype    string   // Claude's result subtype, passed to the shim
	usage      *usage
	durationMs *int64
	costUSD    *float64
}

// factTurnEnd: the turn is over (core-made, after EndTurn).
type factTurnEnd struct {
	outcome     outcome
	term        *terminal // nil when the CLI sent no terminal event
	errText     string
	sessionOver bool
}

// factSessionEnd: the session is over (core-made).
type factSessionEnd struct {
	reason  unified.Reason
	errText string
	total   *usage
}

func (factSession) isFact()      {}
func (factTurnBegin) isFact()    {}
func (factPrompt) isFact()       {}
func (factText) isFact()         {}
func (factToolStart) isFact()    {}
func (factToolProgress) isFact() {}
func (factToolEnd) isFact()      {}
func (factFile) isFact()         {}
func (factTurnEnd) isFact()      {}
func (factSessionEnd) isFact()   {}
