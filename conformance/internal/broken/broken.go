// Package broken holds adapters with deliberate bugs, for the conformance
// package's own tests: each speaks the harness protocol of
// conformance/HARNESS.md and has one known defect, so that a test can run
// it through the battery and show that exactly the checks naming that
// defect fail.
//
// Two kinds of adapter carry the bugs. The reference adapter
// (reference.Serve) with a bug in what it reads from the runner or writes
// to it: an ignored interrupt, a wrong permission decision, success
// reported for a failure, lost text, usage or tool ids. And the naive
// adapter, a small one written from scratch for the bugs that live where
// the reference is careful: the CLI's pipes, flags and signals (a 64 KiB
// line limit, stderr never read, stdin never closed, no SIGKILL, a bare
// interrupt, a permission request answered twice, wrong flags). With no
// bug the naive adapter passes the cases its tests run.
//
// A test binary runs a mode with Main from its TestMain, when it is
// started as an adapter (conformance's tests pass the mode in argv).
package broken

import (
	"fmt"
	"io"
	"slices"
	"sync"
)

// Bug names an adapter mode: a deliberate defect, or one of the correct
// adapters the tests compare against.
type Bug string

// The correct adapters.
const (
	// ReferenceUnified and ReferenceShim are reference.Serve as
	// `agentconform adapter --profile unified|shim` runs it.
	ReferenceUnified Bug = "reference-unified"
	ReferenceShim    Bug = "reference-shim"
	// ReferencePatient is ReferenceUnified without a watchdog, as
	// `agentconform adapter` runs by default: for a case whose CLI is
	// silent longer than the watchdog on purpose (a long tool run).
	ReferencePatient Bug = "reference-patient"
	// Naive is the naive adapter without a bug.
	Naive Bug = "naive"
	// SigtermInterrupt is the naive adapter interrupting a stream-json
	// Claude as the Claude Agent SDK's abort does: SIGTERM to its process
	// group (SIGKILL after a grace) instead of the control request, and a
	// new process that resumes the session for the next turn. The CLI
	// honours SIGTERM with stream-json input (docs/protocols/claude.md,
	// stream-signals): a correct adapter.
	SigtermInterrupt Bug = "sigterm-interrupt"
)

// Bugs of the reference adapter, put in what it reads or writes.
const (
	// IgnoreInterrupt drops the runner's interrupt commands.
	IgnoreInterrupt Bug = "ignore-interrupt"
	// WrongDecision applies the opposite permission policy: allow for
	// deny and deny for allow.
	WrongDecision Bug = "wrong-decision"
	// SuccessOnFailure reports every turn and the session as successful
	// (ok:true), whatever the CLI did.
	SuccessOnFailure Bug = "success-on-failure"
	// NoSessionEnded writes sessionEnded only for a session that
	// completed: after a failure the event stream just stops.
	NoSessionEnded Bug = "no-session-ended"
	// SwapToolIDs hands the results of the session's first two tools to
	// each other's ids.
	SwapToolIDs Bug = "swap-tool-ids"
	// NoHello never writes its hello record.
	NoHello Bug = "no-hello"
	// LateHello writes its hello record after its first event.
	LateHello Bug = "late-hello"
	// DropTextChunk loses the session's first assistant text chunk.
	DropTextChunk Bug = "drop-text-chunk"
	// DropUsage drops the token usage of turnCompleted and sessionEnded.
	DropUsage Bug = "drop-usage"
	// StdoutLog writes a plain-text log line on stdout when a session
	// starts.
	StdoutLog Bug = "stdout-log"
	// NoFailedTurnEnd writes no turn_end for a turn that failed.
	NoFailedTurnEnd Bug = "no-failed-turn-end"
	// ReasonAlwaysFailed gives every turn that did not succeed the reason
	// failed, as a library that knows only success and error does: an
	// interrupted turn, a turn limit, an API error alike.
	ReasonAlwaysFailed Bug = "reason-always-failed"
	// DropErrorText loses the CLI's error message: turn_end, end and
	// sessionEnded say only that the turn failed, the notices that carry
	// the CLI's errors are dropped, and no reason is given (a wrapper
	// whose error is "claude exited with code 1").
	DropErrorText Bug = "drop-error-text"
	// PairByOrder gives each tool result to the oldest call still open,
	// not to the call it names (a queue of pending calls): results that
	// come in another order than their calls go to the wrong calls.
	PairByOrder Bug = "pair-by-order"
	// DeadAfterFailure is a client unusable after a failed turn: every
	// later send fails at once ("the client is closed"), never reaching
	// the CLI (an SDK client whose reader task died with the turn).
	DeadAfterFailure Bug = "dead-after-failure"
	// IgnoreResume drops the start command's resume: the session the
	// caller asked to continue is never resumed, a new one starts.
	IgnoreResume Bug = "ignore-resume"
	// DropEarlyInterrupt drops an interrupt that comes before the adapter
	// has handed on any event (a client whose interrupt needs a query the
	// CLI has not yet acknowledged).
	DropEarlyInterrupt Bug = "drop-early-interrupt"
	// TurnCap's watchdog times the turn, not the silence: it declares a
	// watchdog of turnCap (watchdog_ms, as the reference adapters run in
	// agentconform run) and cuts every turn that lasts as long, however
	// busy the CLI (a client with a hard cap on a turn's length).
	TurnCap Bug = "turn-cap"
	// DoubleTurnCompleted writes every turnCompleted twice, the copy with
	// an event id of its own (a turn's end handed on from the stream
	// reader and again from the code that waits for the process).
	DoubleTurnCompleted Bug = "double-turn-completed"
)

// Bugs of the naive adapter.
const (
	// Scanner64K reads the CLI's stdout with a default bufio.Scanner
	// (64 KiB per line) and ignores its error: a longer line ends the
	// output silently.
	Scanner64K Bug = "scanner-64k"
	// StderrUndrained gives the CLI a stderr pipe and never reads it: a
	// CLI that writes more than the pipe holds blocks.
	StderrUndrained Bug = "stderr-undrained"
	// SigtermOnly stops a CLI with SIGTERM only: one that ignores it is
	// left running when the adapter gives up waiting.
	SigtermOnly Bug = "sigterm-only"
	// CodexStdinOpen gives Codex a stdin pipe and never closes it.
	CodexStdinOpen Bug = "codex-stdin-open"
	// BareInterrupt writes Claude's interrupt as a bare
	// {"subtype":"interrupt"}, without the control_request envelope.
	BareInterrupt Bug = "bare-interrupt"
	// EnvelopeNoRequest writes Claude's interrupt as a control_request
	// whose subtype is outside its request member:
	// {"type":"control_request","request_id":...,"subtype":"interrupt"}.
	EnvelopeNoRequest Bug = "envelope-no-request"
	// DoubleAnswer answers every can_use_tool request twice.
	DoubleAnswer Bug = "double-answer"
	// CodexFullAuto passes codex exec the --full-auto flag, which exec
	// does not have.
	CodexFullAuto Bug = "codex-full-auto"
	// ClaudeNoVerbose runs Claude with stream-json output but without
	// --verbose, which the CLI rejects in print mode.
	ClaudeNoVerbose Bug = "claude-no-verbose"
	// StrictTypes fails the turn on an event type, field or item type it
	// does not know.
	StrictTypes Bug = "strict-types"
	// ResumeLast resumes Codex with `resume --last` instead of the
	// thread id the first turn reported.
	ResumeLast Bug = "resume-last"
	// KillClaude ends a Claude session with SIGTERM instead of closing
	// the CLI's stdin.
	KillClaude Bug = "kill-claude"
	// AnswerAfterCancel answers can_use_tool a second late, whether or
	// not the CLI has withdrawn the request meanwhile.
	AnswerAfterCancel Bug = "answer-after-cancel"
	// HumanPrompt sends every prompt as "Human: <prompt>", as a provider
	// that flattens a chat into one text does.
	HumanPrompt Bug = "human-prompt"
	// ChunkLines splits every read of the CLI's stdout on newlines by
	// itself, carrying no partial line over (an AI SDK provider's data
	// handler): a line that spans two reads is lost.
	ChunkLines Bug = "chunk-lines"
	// AllowNoInput answers can_use_tool allow as {"behavior":"allow"},
	// without updatedInput: Claude Code 2.1.329 and later run the tool
	// with its own input, 2.1.197 refuses the answer (a ZodError) and
	// denies the tool.
	AllowNoInput Bug = "allow-no-input"
	// ResultTextOnly shows Claude's result.result as the turn's answer
	// and no assistant text block: result.result holds the last text
	// block alone, so every earlier text of the turn is lost.
	ResultTextOnly Bug = "result-text-only"
	// ThinkingAsText shows Claude's thinking blocks as answer text.
	ThinkingAsText Bug = "thinking-as-text"
	// FirstBlockPerMessage takes the first assistant line of each
	// message id and drops the others: Claude writes one line per content
	// block, all with the response's message id, so the text after a
	// thinking block, and the tool_use after a text, are lost.
	FirstBlockPerMessage Bug = "first-block-per-message"
	// DenyNoMessage answers can_use_tool deny as {"behavior":"deny"},
	// without a message: the CLI refuses the answer (the tool is denied
	// all the same, the model told "The canUseTool callback returned an
	// invalid permission result" instead of why).
	DenyNoMessage Bug = "deny-no-message"
	// ResultPrefix takes a Claude line for the turn's result only when it
	// begins with {"type":"result" (as Claude Code 2.1.197 wrote it; from
	// 2.1.329 on a result begins {"duration_api_ms":...): a version-fragile
	// adapter, which waits for a result it never recognises and gives the
	// turn up when the CLI has been quiet for a while.
	ResultPrefix Bug = "result-prefix"
	// NoRestart leaves a session whose Claude process died dead: every
	// later turn fails with the death (the naive adapter otherwise starts
	// Claude again with --resume).
	NoRestart Bug = "no-restart"
	// RestartNewSession starts Claude again after its process died, but
	// without --resume: the next turn runs in a new session.
	RestartNewSession Bug = "restart-new-session"
	// NoWatchdog has no watchdog: a CLI that stalls in a turn is waited
	// for until the caller gives up.
	NoWatchdog Bug = "no-watchdog"
	// WatchdogNoStop gives a silent CLI's turn up as failed but leaves the
	// CLI running (until the session's end).
	WatchdogNoStop Bug = "watchdog-no-stop"
	// MaxTurnsDropped declares max_turns but starts Claude without the
	// caller's --max-turns: the CLI runs on past the limit.
	MaxTurnsDropped Bug = "max-turns-dropped"
	// MessageIDAsSession reports as the turn's session id the id of the
	// last line it read (a Claude line's uuid, a Codex item's id) instead
	// of the session's: an id that looks right and resumes nothing.
	MessageIDAsSession Bug = "message-id-as-session"
	// PartialsDropped starts Claude with --include-partial-messages and
	// drops the stream_event lines: every block reaches the caller whole,
	// as if it had never asked.
	PartialsDropped Bug = "partials-dropped"
	// ReplayDropped starts Claude with --replay-user-messages and drops
	// the echoes.
	ReplayDropped Bug = "replay-dropped"
	// TurnOutputCap keeps at most turnOutputCap bytes of what the CLI
	// writes in one turn, as a child process's maxBuffer does: past it,
	// it stops the CLI and fails the turn ("stdout maxBuffer length
	// exceeded").
	TurnOutputCap Bug = "turn-output-cap"
	// SessionOutputCap keeps everything its Claude process writes, for
	// the session's transcript, up to sessionOutputCap bytes: past it, it
	// stops the CLI and fails the turn. Claude's process lives for the
	// whole session, so only a long session reaches the cap.
	SessionOutputCap Bug = "session-output-cap"
	// WatchdogCountsPermission's watchdog counts the time a permission
	// request waits for its caller's answer as the CLI's silence: a
	// person who takes longer than the watchdog time to answer loses the
	// turn.
	WatchdogCountsPermission Bug = "watchdog-counts-permission"
	// WatchdogEndsSession aborts the whole session when its watchdog
	// fires (an AbortController the session's turns share): every later
	// turn fails at once, never reaching a CLI.
	WatchdogEndsSession Bug = "watchdog-ends-session"
	// StickyResume keeps asking the CLI to resume the session the start
	// named after the CLI refused it: every later turn is refused too.
	StickyResume Bug = "sticky-resume"
	// WarmStartTimeout waits for a CLI's first line patiently in the
	// first turn only: from the second turn on, a Codex that has written
	// nothing a second after it was started is given up on (the CLI is
	// "warm" now, a start must be quick).
	WarmStartTimeout Bug = "warm-start-timeout"
)

var serveModes = []Bug{ReferenceUnified, ReferenceShim, ReferencePatient, IgnoreInterrupt, WrongDecision, SuccessOnFailure,
	NoSessionEnded, SwapToolIDs, DropTextChunk, DropUsage, StdoutLog, NoFailedTurnEnd, NoHello, LateHello,
	ReasonAlwaysFailed, DropErrorText, PairByOrder, DeadAfterFailure, IgnoreResume, DropEarlyInterrupt, TurnCap,
	DoubleTurnCompleted}

var naiveModes = []Bug{Naive, SigtermInterrupt, Scanner64K, StderrUndrained, SigtermOnly, CodexStdinOpen, BareInterrupt, EnvelopeNoRequest,
	DoubleAnswer, CodexFullAuto, ClaudeNoVerbose, StrictTypes, ResumeLast, KillClaude, AnswerAfterCancel, HumanPrompt, ChunkLines, ResultPrefix,
	NoRestart, RestartNewSession,
	AllowNoInput, DenyNoMessage, ResultTextOnly, ThinkingAsText, FirstBlockPerMessage,
	NoWatchdog, WatchdogNoStop, MaxTurnsDropped,
	MessageIDAsSession, PartialsDropped, ReplayDropped, TurnOutputCap, SessionOutputCap,
	WatchdogCountsPermission, WatchdogEndsSession, StickyResume, WarmStartTimeout}

// Modes lists every mode Main runs.
func Modes() []Bug { return append(slices.Clone(serveModes), naiveModes...) }

// Main runs the adapter mode on stdin and stdout, with diagnostics on
// stderr, and returns the process's exit status: 0 after the end record,
// 2 for an unknown mode or an I/O error.
func Main(mode string, stdin io.Reader, stdout, stderr io.Writer) int {
	bug := Bug(mode)
	var err error
	switch {
	case slices.Contains(serveModes, bug):
		err = serve(bug, stdin, stdout, stderr)
	case slices.Contains(naiveModes, bug):
		err = runNaive(bug, stdin, stdout, stderr)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		fmt.Fprintf(stderr, "broken adapter %s: %v\n", mode, err)
		return 2
	}
	return 0
}

// lines is a writer of whole lines to the runner, safe for concurrent use.
type lines struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// line writes b and a newline in one write.
func (l *lines) line(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	if _, err := l.w.Write(append(b[:len(b):len(b)], '\n')); err != nil {
		l.err = fmt.Errorf("writing to the runner: %w", err)
	}
}

func (l *lines) failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}
