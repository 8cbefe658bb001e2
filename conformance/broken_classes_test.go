package conformance

import (
	"testing"

	"github.com/agentconform/agentconform/conformance/internal/broken"
)

// classAdapters are the deliberately broken adapters of the bug classes
// found in programs that drive the CLIs (cases_classes.go, and the checks
// lossless/no-doubles, lifecycle/session-id, lossless/opt-in-streams,
// buffer/long-line-intact): each bug, on the cases that show it, and
// exactly what the battery must find there. Before those checks and cases,
// each of these adapters passed every case listed here.
var classAdapters = []brokenAdapter{
	// The end of every turn handed on twice (the copy with an id of its
	// own, so that the unified grammar's unique ids do not catch it): the
	// usage the caller adds up is doubled, too.
	{bug: broken.DoubleTurnCompleted, cases: []string{"codex/plain-text", "claude/single-tool", "gemini/plain-text"},
		want: each([]string{"codex/plain-text", "claude/single-tool", "gemini/plain-text"}, Fail, "lossless/no-doubles", "lossless/usage")},
	// A line's uuid, an item's id, reported as the session's.
	{bug: broken.MessageIDAsSession, cases: []string{"claude/plain-text", "claude/multi-turn", "codex/single-tool", "codex/multi-turn"},
		want: each([]string{"claude/plain-text", "claude/multi-turn", "codex/single-tool", "codex/multi-turn"}, Fail, "lifecycle/session-id")},
	// Asked for, dropped: the partial messages, the echoed user messages.
	{bug: broken.PartialsDropped, cases: []string{"claude/plain-text", "claude/multi-tool", "codex/plain-text"},
		want: each([]string{"claude/plain-text", "claude/multi-tool"}, Fail, "lossless/opt-in-streams")},
	{bug: broken.ReplayDropped, cases: []string{"claude/plain-text", "claude/multi-turn", "codex/plain-text"},
		want: each([]string{"claude/plain-text", "claude/multi-turn"}, Fail, "lossless/opt-in-streams")},
	// A cap on a turn's output: the 9 MiB turn of small lines is cut (what
	// comes past 8 MiB never reaches the caller: Claude's tool call and
	// answer, Codex's answer), and the turn fails; an ordinary turn is not.
	{bug: broken.TurnOutputCap, cases: []string{"claude/single-tool/volume", "codex/single-tool/volume", "codex/single-tool"},
		want: merge(each([]string{"claude/single-tool/volume", "codex/single-tool/volume"}, Fail, "lifecycle/reports-success", "lossless/text"),
			each([]string{"claude/single-tool/volume"}, Fail, "lossless/tools"))},
	// A cap on what one Claude process writes in its whole session: two
	// turns stay under it, sixteen do not.
	{bug: broken.SessionOutputCap, cases: []string{"claude/multi-turn/long-session", "claude/multi-turn"},
		want: each([]string{"claude/multi-turn/long-session"}, Fail, "lifecycle/reports-success", "lossless/text")},
	// The watchdog counts the caller's time to answer a permission request
	// as the CLI's silence: the CLI, waiting for the answer, is stopped, and
	// the turn is lost (the answer, once it comes, finds no CLI).
	{bug: broken.WatchdogCountsPermission, cases: []string{"claude/permission-allow/late-answer", "claude/permission-allow"},
		want: each([]string{"claude/permission-allow/late-answer"}, Fail, "lifecycle/reports-success", "control/can-use-tool")},
	// The watchdog's abort ends the session: the next turn never runs.
	{bug: broken.WatchdogEndsSession, cases: []string{"claude/multi-turn/watchdog-then-turn", "codex/multi-turn/watchdog-then-turn", "codex/multi-turn"},
		want: each([]string{"claude/multi-turn/watchdog-then-turn", "codex/multi-turn/watchdog-then-turn"}, Fail, "lifecycle/next-turn")},
	// No watchdog at all: the stalled turn is the runner's to give up on,
	// and no next turn runs. Only the watchdog's SHOULD fails; the next
	// turn is not judged (it never was asked for).
	{bug: broken.NoWatchdog, cases: []string{"codex/multi-turn/watchdog-then-turn", "claude/multi-turn/watchdog-then-turn"},
		want: each([]string{"codex/multi-turn/watchdog-then-turn", "claude/multi-turn/watchdog-then-turn"}, NonStrict, "lifecycle/watchdog")},
	// A refused resume asked for again: every later turn is refused too.
	// (Claude's refusal ends its process: starting it again for the next
	// turn is lifecycle/restarts-cli's, a SHOULD.)
	{bug: broken.StickyResume, cases: []string{"claude/plain-text/resume-unknown-then-turn", "codex/plain-text/resume-unknown-then-turn", "codex/plain-text/resume-unknown", "codex/multi-turn"},
		want: merge(each([]string{"codex/plain-text/resume-unknown-then-turn"}, Fail, "lifecycle/next-turn"),
			each([]string{"claude/plain-text/resume-unknown-then-turn"}, NonStrict, "lifecycle/restarts-cli"))},
	// Patient with the first turn's start only: a later process slow to
	// start is given up on.
	{bug: broken.WarmStartTimeout, cases: []string{"codex/multi-turn/slow-next-start", "codex/multi-turn", "codex/plain-text/slow-start"},
		want: each([]string{"codex/multi-turn/slow-next-start"}, Fail, "lifecycle/reports-success", "lifecycle/same-session")},
}

// TestBugClassAdapters proves the checks and cases of the bug classes as
// TestBrokenAdapters proves the others.
func TestBugClassAdapters(t *testing.T) {
	t.Parallel()
	runBrokenAdapters(t, classAdapters)
}
