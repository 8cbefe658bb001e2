package conformance

import (
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// Case is one run of the adapter: a fixture the fakes replay (perhaps with
// faults), and the harness commands the runner sends. Every applicable
// check judges every case; a case's ID is "<agent>/<scenario>[/<variant>]"
// ("codex/single-tool/line-1048577") and stays stable across releases.
type Case struct {
	ID string
	// Agent is the CLI the adapter drives: claude, codex or gemini.
	Agent string
	// Fixture is the embedded fixture the fakes replay ("codex/single-tool"),
	// or "" when Transcript names a file.
	Fixture    string
	Transcript string
	// Faults is the fault spec given to the fakes (AGENTCONFORM_FAULTS).
	Faults string
	// FaultsFirstOnly applies Faults only in the first CLI process that
	// runs a turn, not in one the adapter starts to resume the session.
	FaultsFirstOnly bool
	// FaultsLaterOnly applies Faults in every CLI process that runs a turn
	// but the first: a later turn's process (Codex and Gemini run one per
	// turn) that is slow to start.
	FaultsLaterOnly bool
	// Seed, when not 0, is the fakes' seed for this case instead of
	// Config.Seed: the fuzzer gives every execution its own.
	Seed int64
	// Permission is the policy the adapter must apply: allow or deny.
	Permission string
	// Prompts holds one prompt per turn; the first goes in start, the
	// others in send after each turn_end.
	Prompts []string
	// Resume, when set, is the session id the start command asks the
	// adapter to resume (its "resume" field).
	Resume string
	// MaxTurns, when set, is the caller's turn limit the start command
	// gives (its "max_turns" field): the case needs an adapter that
	// declares max_turns, as the CLI stops a turn at a limit only when
	// asked for one (docs/protocols/claude.md#max-turns).
	MaxTurns int
	// PermissionDelay, when set, is how long the caller takes to decide
	// each permission request, as a person in the loop does: the start
	// command gives it (its "permission_delay_ms" field), and the case
	// needs an adapter that declares permission_delay.
	PermissionDelay time.Duration
	// Sessions are put into the fakes' session store before the adapter
	// starts: the session a case resumes, a decoy beside it. A seed
	// without Cwd belongs to the adapter's working directory.
	Sessions []fakecli.SessionSeed
	// Interrupt, when set, says when the runner interrupts.
	Interrupt *InterruptPlan
	// Close, when set, makes the runner send close early: after the adapter
	// has been quiet for this long (a stalled CLI).
	CloseWhenQuiet time.Duration
	// Watchdog, when set, makes the runner leave a stalled CLI to the
	// adapter's own watchdog: it sends no early close, and gives up only
	// once the CLI has been silent for the watchdog time and watchdogGrace
	// more (lifecycle/watchdog).
	Watchdog bool
	// LongTurn marks a long-turn case, whose pause per line the runner
	// sets for the adapter's watchdog time (longTurnCase).
	LongTurn bool
	// Expect says how the CLI behaves in this case, so checks know what a
	// correct adapter reports.
	Expect Expect
	// Timeout bounds the whole case.
	Timeout time.Duration
	// Description says what the case shows, for reports.
	Description string
	// CLIVersion is the version of the CLI the case replays (its fixture's).
	CLIVersion string
	// Unavailable, when set, says why the case cannot run at the CLI
	// version asked for (no fixture of its scenario at that version): it
	// is reported SKIP with this reason.
	Unavailable string

	probe bool      // only read hello, then close
	real  *realCase // how it plays on a real CLI (Config.Real)
}

// InterruptPlan says when and how the runner interrupts a turn.
type InterruptPlan struct {
	// AfterEvents interrupts once the adapter has written this many events
	// (0: as soon as the turn has started, i.e. after start is sent and the
	// adapter is quiet for Quiet).
	AfterEvents int
	// Quiet is how long the adapter must have been silent before the
	// interrupt is sent (lets a stalled fake settle; default 150 ms).
	Quiet time.Duration
	// ThenTurn sends one more prompt after the interrupted turn ends.
	ThenTurn bool
	// Early interrupts as soon as the CLI process is seen, quiet or not,
	// before it has written anything (a CLI slow to start is still
	// loading; Claude has not written system/init).
	Early bool
}

// Expect describes the CLI's behaviour in a case.
type Expect struct {
	// TurnFails is true when the CLI fails the turn (API error, crash,
	// exit without a terminal event): the adapter must not report success.
	TurnFails bool
	// Cancelled is true when the turn is interrupted.
	Cancelled bool
	// IgnoresSIGTERM is true when the fake ignores SIGTERM, so only SIGKILL
	// stops it.
	IgnoresSIGTERM bool
	// LineSize is the size of the ladder line in a buffer case.
	LineSize int
	// Volume is how many bytes the CLI writes in one turn of small lines
	// in a volume case.
	Volume int
	// Unknown is true when the stream carries events or fields the adapter
	// cannot know (forward compatibility).
	Unknown bool
	// Stall is true when the CLI stops writing and stays alive.
	Stall bool
	// StreamOnly is true when the failure shows only in a JSON stream (a
	// missing terminal event): a CLI asked for text or JSON output exits 0
	// with an answer that cannot be told from a success.
	StreamOnly bool
	// NextTurn is true when the first turn fails (an API error, a line
	// too long, a CLI that dies) and the caller's next turn must work, in
	// the same session.
	NextTurn bool
	// CLIDies is true when the CLI process dies in the failed turn: a
	// CLI that keeps one process (Claude) must be started again, resuming
	// the session, for the next turn.
	CLIDies bool
	// UnknownSession is true when Resume names a session the CLI does not
	// have: the CLI refuses it and the turn fails.
	UnknownSession bool
}

// Hello is what the adapter declared in its hello record.
type Hello struct {
	Profile string `json:"profile"`
	// Protocol is "acp" when the adapter is agentconform's ACP editor
	// (acp/editor) in front of an ACP agent: the checks of the acp family
	// judge the agent on the editor's wire log.
	Protocol string   `json:"protocol,omitempty"`
	Agents   []string `json:"agents"`
	Supports []string `json:"supports"`
	Name     string   `json:"name"`
	Version  string   `json:"version"`
	// WatchdogMS is how long, in milliseconds, the adapter lets a CLI stay
	// silent in a turn before it reports the turn failed and stops it (0:
	// not declared); lifecycle/watchdog waits for that instead of the run's
	// --stall-after.
	WatchdogMS int64 `json:"watchdog_ms,omitempty"`
}

// Supports reports whether the adapter claims a capability.
func (h *Hello) supports(what string) bool {
	if h == nil {
		return false
	}
	for _, s := range h.Supports {
		if s == what {
			return true
		}
	}
	return false
}

// drives reports whether the adapter claims to drive agent.
func (h *Hello) drives(agent string) bool {
	if h == nil {
		return false
	}
	for _, a := range h.Agents {
		if a == agent {
			return true
		}
	}
	return false
}
