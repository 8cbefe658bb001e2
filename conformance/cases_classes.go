package conformance

import (
	"fmt"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

// The cases of the bug classes found in programs that drive the CLIs
// beyond a single turn of ordinary size: volume (one turn of many small
// lines, a session of many turns), a permission answered as late as a
// person answers it, and the next turn after the adapter's own watchdog
// fired, after a refused resume, and in a later process slow to start.

// Sizes of the volume cases.
const (
	// volumeBytes is what the volume case's turn writes in small lines:
	// past the 8 MiB caps on a turn's (or a child process's) output found
	// in adapters.
	volumeBytes = 9 << 20
	// volumeLine is the length of each of its lines: small beside any
	// line limit (64 KiB and up), and few enough lines that the runner
	// holds their decoding in tens of MiB.
	volumeLine = 4 << 10
	// longSessionTurns is how many turns the long-session case runs.
	longSessionTurns = 16
	// longSessionTimeout bounds the long-session case: sixteen processes
	// of a real Gemini CLI, each 2 to 4 s to start, take a minute.
	longSessionTimeout = 3 * time.Minute
)

// lateAnswerMargin is how much longer than the adapter's watchdog time
// the caller of the late-answer case takes to decide Claude's permission
// request, as a person in the loop does: a watchdog that counts the wait
// as the CLI's silence fires first. The real CLI waits as long as it
// takes (docs/protocols/claude.md#permission-late).
const lateAnswerMargin = 2 * time.Second

// lateAnswerCase is c with its caller's delay set past the watchdog time
// the runner assumes of the adapter (its declared one, else the run's),
// when c is a late-answer case.
func lateAnswerCase(cfg *Config, c *Case, h *Hello) *Case {
	if c.PermissionDelay <= 0 {
		return c
	}
	lc := *c
	lc.PermissionDelay = stallAfter(cfg, h) + lateAnswerMargin
	// The case's deadline leaves the turn its usual time after the wait.
	lc.Timeout = max(c.Timeout, lc.PermissionDelay+lateAnswerRoom)
	return &lc
}

// lateAnswerRoom is how long a late-answer case may take besides its
// caller's wait: a real Claude's turn takes seconds of its own.
const lateAnswerRoom = 40 * time.Second

// classCases are those cases of one agent. byName holds the fixtures.
func classCases(agent string, byName map[string]*transcript.Transcript) []*Case {
	var cases []*Case
	multi, plain, single := agent+"/multi-turn", agent+"/plain-text", agent+"/single-tool"
	if t := byName[single]; t != nil {
		cases = append(cases, &Case{ID: single + "/volume", Agent: agent, Fixture: single,
			Faults:     fmt.Sprintf("volume:bytes=%d,line=%d", volumeBytes, volumeLine),
			Permission: "allow", Prompts: Prompts(t), Expect: Expect{Volume: volumeBytes},
			Description: fmt.Sprintf("one turn of %d assistant text lines of %d bytes (%d MiB in all) before the answer: every line short, the turn long, past the per-turn byte caps adapters keep (a child process's maxBuffer)", volumeBytes/volumeLine, volumeLine, volumeBytes>>20)})
	}
	if t := byName[multi]; t != nil {
		two := Prompts(t)
		long := &Case{ID: multi + "/long-session", Agent: agent, Fixture: multi, Permission: "allow",
			Prompts: sessionPrompts(two[0], "multi-turn", longSessionTurns), Timeout: longSessionTimeout,
			Description: fmt.Sprintf("a session of %d turns: Claude's in one process (its last recorded turn again and again, each with message ids of its own), Codex's and Gemini's a process per turn resuming the session", longSessionTurns)}
		if agent == "claude" {
			long.Faults = fmt.Sprintf("turns:n=%d", longSessionTurns)
		}
		cases = append(cases, long,
			&Case{ID: multi + "/watchdog-then-turn", Agent: agent, Fixture: multi, Faults: "stall:after=2", FaultsFirstOnly: true,
				Permission: "allow", Prompts: two, Watchdog: true,
				Expect:      Expect{TurnFails: true, Stall: true, NextTurn: true},
				Description: "the first turn's CLI stops writing after two lines and stays alive until the adapter's own watchdog gives up on it; the caller's next turn must work all the same, in the same session"})
		if agent != "claude" {
			// Claude keeps one process for the session: no later start.
			cases = append(cases, &Case{ID: multi + "/slow-next-start", Agent: agent, Fixture: multi,
				Faults: fmt.Sprintf("start_delay:ms=%d", slowStart.Milliseconds()), FaultsLaterOnly: true,
				Permission: "allow", Prompts: two,
				Description: fmt.Sprintf("the second turn's process (a resume) stays silent for %s when it starts, as the first may: a start within reason, which the adapter must wait for in every turn, not only the first", slowStart)})
		}
	}
	if t := byName[plain]; t != nil {
		cases = append(cases, &Case{ID: plain + "/resume-unknown-then-turn", Agent: agent, Fixture: plain, Permission: "allow",
			Prompts: sessionPrompts(Prompts(t)[0], "plain-text", 2), Resume: unknownID,
			Sessions: []fakecli.SessionSeed{{CLI: agent, ID: decoyID, Fixture: plain, Next: 1, Title: "a later session", Age: time.Minute}},
			// Claude's process exits with its refusal: bringing a process
			// back for the next turn is lifecycle/restarts-cli's, as after
			// any death of Claude's one process.
			Expect:      Expect{TurnFails: true, UnknownSession: true, NextTurn: true, CLIDies: agent == "claude"},
			Description: "start by resuming a session the CLI does not have, which it refuses; the caller's next turn must work, in a session the CLI has (a new one), not run into the same refusal again"})
	}
	if t := byName[agent+"/permission-allow"]; t != nil && agent == "claude" {
		cases = append(cases, &Case{ID: agent + "/permission-allow/late-answer", Agent: agent, Fixture: agent + "/permission-allow",
			Permission: "allow", PermissionDelay: DefaultStallAfter + lateAnswerMargin, Prompts: Prompts(t),
			Description: fmt.Sprintf("the caller answers the CLI's permission request %s longer than the adapter's watchdog time after it came (the delay shown is for the default 5 s; the runner sets it for the adapter's), as a person in the loop does: the CLI waits as long as it takes, and so must the adapter (no watchdog counting the wait, no timeout on the answer)", lateAnswerMargin)})
	}
	return cases
}

// sessionPrompts are n prompts for a session whose first prompt is first.
func sessionPrompts(first, scenario string, n int) []string {
	out := []string{first}
	for i := 2; i <= n; i++ {
		out = append(out, fmt.Sprintf("prompt %d of %s", i, scenario))
	}
	return out
}
