package conformance

import "time"

// slowStartCase makes the case of the claude/slow-start fixture an
// interrupt case, and reports whether c is that case. Claude Code holds a
// SIGINT that comes before its turn has begun and acts on it once the
// turn begins (captured from 2.1.331: sigint-during-startup); the fixture
// begins its turn 10 s after it took the prompt, so an adapter whose
// interrupt is a SIGINT and a wait for the CLI reports the turn late,
// while one that escalates, or interrupts with a control request, does
// not. The runner interrupts once the adapter has been quiet for a
// second, time enough to start the CLI.
func slowStartCase(c *Case, scenario string) bool {
	if c.Agent != "claude" || scenario != "slow-start" {
		return false
	}
	c.Interrupt = &InterruptPlan{Quiet: time.Second}
	c.Expect.Cancelled = true
	return true
}
