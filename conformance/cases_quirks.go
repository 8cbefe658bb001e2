package conformance

// quirkCases are the cases of known CLI quirks that no fixture shows by
// itself, for agent, on its single-tool fixture base with prompts one.
func quirkCases(agent, base string, one []string) []*Case {
	if agent != "claude" {
		return nil
	}
	return []*Case{
		// Claude Code holds a SIGINT that comes before its turn has begun
		// and acts on it once the turn begins (captured from 2.1.331:
		// sigint-during-startup); a CLI stuck in its start-up never does,
		// and an adapter that only sends SIGINT and waits hangs its
		// caller.
		{ID: base + "/interrupt-at-startup", Agent: agent, Fixture: base, Faults: "stall:after=0", Permission: "allow", Prompts: one,
			Interrupt: &InterruptPlan{}, Expect: Expect{Cancelled: true, Stall: true},
			Description: "interrupt a CLI stuck in its start-up, before its first line: Claude Code holds a SIGINT until its turn begins, so only a control request, SIGTERM or SIGKILL stops it"},
	}
}
