package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

// The cases of start-up and timing, recovery and resume: a CLI slow to
// start or that never answers, an interrupt before the CLI has started its
// turn, a long turn; the caller's next turn after one that failed; a start
// that resumes a session, or one the CLI does not have.

// Session ids the resume cases seed: the one the caller resumes, a decoy
// (younger: "the latest" for --continue, resume --last and --resume
// latest), and one nobody has. Fixed, so that a case reproduces.
const (
	resumeID  = "5e55104e-0000-4000-8000-00000000a001"
	decoyID   = "5e55104e-0000-4000-8000-00000000d002"
	unknownID = "5e55104e-0000-4000-8000-0000000ee003"
)

// firstAnswer is, per agent, which text-bearing event of the first turn
// of multi-turn (see the ladder fault) is the first the caller must get:
// Claude's answer, Codex's command output, Gemini's first answer chunk
// (after its echo of the prompt and an empty tool output).
var firstAnswer = map[string]int{"claude": 1, "codex": 1, "gemini": 3}

// longTurnLines is, per agent, how many stdout lines the CLI writes in
// the turn of a long-turn case (its multi-tool fixture; Claude's with the
// partial messages adapters ask for): TestLongTurnLines counts them.
var longTurnLines = map[string]int{"claude": 57, "codex": 17, "gemini": 14}

// longTurnFaults is the fault of a long-turn case of agent for an adapter
// whose watchdog time is stallAfter: a pause before every line, so that
// the turn lasts a quarter longer than the watchdog time while no pause
// comes near it. A watchdog that times the turn instead of the silence
// cuts it; one that times the silence does not.
func longTurnFaults(agent string, stallAfter time.Duration) string {
	gap := stallAfter * 5 / 4 / time.Duration(longTurnLines[agent])
	return fmt.Sprintf("latency:ms=%d", gap.Milliseconds()+1)
}

// longTurnCase is c with its pause per line set for the watchdog time the
// runner waits for (stallAfter: the adapter's declared one, else the
// run's), when c is a long-turn case.
func longTurnCase(cfg *Config, c *Case, h *Hello) *Case {
	if !c.LongTurn {
		return c
	}
	lc := *c
	lc.Faults = longTurnFaults(c.Agent, stallAfter(cfg, h))
	return &lc
}

// slowStart is how long the CLI of a slow-start case stays silent: a
// start within reason (Claude Code loading MCP servers and plugins takes
// as long), which no adapter may take for a failure.
const slowStart = 2500 * time.Millisecond

// recoveryFixture sets up the case of a fixture whose first turn fails
// and whose next turn completes (<cli>/*-then-turn); it reports whether c
// is one.
func recoveryFixture(c *Case, scenario string) bool {
	if !strings.HasSuffix(scenario, "-then-turn") {
		return false
	}
	c.Expect.TurnFails, c.Expect.NextTurn = true, true
	return true
}

// recoveryCases are the cases of one agent whose first turn fails or is cut
// short and whose next turn must work, in the same session, and the resume
// cases. byName holds the fixtures.
func recoveryCases(agent string, byName map[string]*transcript.Transcript) []*Case {
	base := agent + "/multi-turn"
	t := byName[base]
	if t == nil {
		return nil
	}
	two := Prompts(t)
	var cases []*Case
	if agent != "claude" {
		// Claude's is made with the fixture (Generate).
		cases = append(cases, &Case{ID: base + "/interrupt-then-turn", Agent: agent, Fixture: base,
			Faults: "stall:after=2", FaultsFirstOnly: true, Permission: "allow", Prompts: two,
			Interrupt: &InterruptPlan{ThenTurn: true}, Expect: Expect{Cancelled: true},
			Description: "the first turn stalls after the CLI's second line and is interrupted; the caller's next turn resumes the session in a new process"})
	}
	size := 8 << 20
	cases = append(cases,
		&Case{ID: fmt.Sprintf("%s/line-%d-then-turn", base, size), Agent: agent, Fixture: base,
			Faults: fmt.Sprintf("ladder:size=%d,nth=%d", size, firstAnswer[agent]), FaultsFirstOnly: true, Permission: "allow", Prompts: two,
			Expect:      Expect{LineSize: size, NextTurn: true},
			Description: fmt.Sprintf("the first turn's text comes in one line of %d bytes (which an adapter may refuse, with an error that says so); the caller's next turn must work all the same", size)},
		&Case{ID: base + "/killed-then-turn", Agent: agent, Fixture: base,
			Faults: "die:signal=SIGKILL,after=2", FaultsFirstOnly: true, Permission: "allow", Prompts: two,
			Expect:      Expect{TurnFails: true, NextTurn: true, CLIDies: true},
			Description: "the CLI is killed by SIGKILL after its second line of the first turn; the caller's next turn must work, resuming the session in a new process"},
	)
	seeds := func(scenario string) []fakecli.SessionSeed {
		return []fakecli.SessionSeed{
			{CLI: agent, ID: resumeID, Fixture: scenario, Next: 1, Title: "the session to resume", Age: time.Hour},
			{CLI: agent, ID: decoyID, Fixture: scenario, Next: 1, Title: "a later session", Age: time.Minute},
		}
	}
	cases = append(cases,
		&Case{ID: base + "/resume", Agent: agent, Fixture: base, Permission: "allow", Prompts: two[1:],
			Resume: resumeID, Sessions: seeds(base),
			Description: "start by resuming a session of an earlier run (its first turn done); a later session of the same directory is there too, which --continue, resume --last or --resume latest would take instead"},
		&Case{ID: agent + "/plain-text/resume-unknown", Agent: agent, Fixture: agent + "/plain-text", Permission: "allow",
			Prompts: Prompts(byName[agent+"/plain-text"]), Resume: unknownID, Sessions: seeds(agent + "/plain-text")[1:],
			Expect:      Expect{TurnFails: true, UnknownSession: true},
			Description: "start by resuming a session the CLI does not have (unknown, or expired and deleted): the CLI refuses it and the adapter must report the failure, not resume another session or start a new one"},
	)
	return cases
}

// startupCases are the cases of start-up and timing of one agent.
func startupCases(agent string, byName map[string]*transcript.Transcript) []*Case {
	plain, long, multi := agent+"/plain-text", agent+"/interrupt", agent+"/multi-tool"
	if byName[plain] == nil || byName[long] == nil || byName[multi] == nil {
		return nil
	}
	one := Prompts(byName[plain])
	return []*Case{
		{ID: plain + "/slow-start", Agent: agent, Fixture: plain, Faults: fmt.Sprintf("start_delay:ms=%d", slowStart.Milliseconds()),
			Permission: "allow", Prompts: one,
			Description: fmt.Sprintf("the CLI stays silent for %s when it starts (Claude answers initialize only then), as one loading MCP servers and plugins does: a start within reason, which the adapter must wait for", slowStart)},
		{ID: plain + "/hangs-at-start", Agent: agent, Fixture: plain, Faults: "start_delay:ms=600000",
			Permission: "allow", Prompts: one, CloseWhenQuiet: time.Second,
			Expect:      Expect{TurnFails: true, Stall: true},
			Description: "the CLI never gets past its start (Claude never answers initialize); the caller gives up and closes: the adapter must stop the CLI and report the failure, not hang nor leave it running"},
		// The interrupt fixture's turn runs a long tool, so that an
		// interrupt queued behind the prompt lands in the turn, as with
		// the real CLI (whose turns take time), never after a replay that
		// took none.
		{ID: long + "/before-init", Agent: agent, Fixture: long, Faults: "start_delay:ms=1500", FaultsFirstOnly: true,
			Permission: "allow", Prompts: Prompts(byName[long]), Interrupt: &InterruptPlan{Early: true},
			Expect:      Expect{Cancelled: true},
			Description: "the caller interrupts while the CLI is still starting (before Claude's system/init, before Codex or Gemini write a line): the turn must end cancelled, the interrupt passed on (Claude cancels a turn whose user message came before the interrupt) or the CLI stopped"},
		{ID: multi + "/long-turn", Agent: agent, Fixture: multi, Faults: longTurnFaults(agent, DefaultStallAfter),
			Permission: "allow", Prompts: Prompts(byName[multi]), LongTurn: true,
			Description: "a long turn that keeps making progress: a line at a steady pace, the turn a quarter longer than the adapter's watchdog time (the faults shown are for the default 5 s; the runner sets them for the adapter's), no pause near it: an adapter must not cut a turn for its length alone"},
	}
}

// seedSessions puts the case's sessions into the fakes' store; a seed
// without a directory belongs to work, the adapter's.
func seedSessions(c *Case, store, work string) error {
	for _, s := range c.Sessions {
		if s.Cwd == "" {
			s.Cwd = work
		}
		if err := fakecli.SeedSession(store, s); err != nil {
			return err
		}
	}
	return nil
}
