package conformance

import (
	"fmt"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// The interrupt family.
var (
	CheckPassedOn = register(&Check{Family: FamilyInterrupt, Rule: rule("interrupt/passed-on", "MUST",
		"After the caller's interrupt, and before it reports the turn over, the adapter passes the interrupt to the CLI the way the CLI needs: a control request on a stream-json Claude's stdin, else a signal (or a kill). Judged only on evidence the CLI saw: a signal it logged, the control request on its stdin, or its death by SIGKILL before the runner killed anything.", srcInterruptPassed),
		Applies: needs("interrupt", func(c *Case) bool { return c.Interrupt != nil }), Judge: judgePassedOn})
	CheckCancelled = register(&Check{Family: FamilyInterrupt, Rule: rule("interrupt/cancelled-ending", "MUST",
		"After an interrupt the adapter reports the turn as not successful (cancelled) within 7 seconds: the 5-second SIGKILL grace common in SDKs plus a 2-second margin.", srcInterrupt),
		Applies: needs("interrupt", func(c *Case) bool { return c.Interrupt != nil }), Judge: judgeCancelled})
	CheckEscalates = register(&Check{Family: FamilyInterrupt, Rule: rule("interrupt/escalates", "MUST",
		"A CLI that ignores SIGTERM is killed (SIGKILL): no CLI process outlives the adapter.", srcInterrupt+"; "+srcClaudeShutdown),
		Applies: needs("interrupt", func(c *Case) bool { return c.Expect.IgnoresSIGTERM }), Judge: judgeReapsCLI})
	CheckNextTurn = register(&Check{Family: FamilyInterrupt, Rule: rule("interrupt/next-turn", "MUST",
		"A further turn works after an interrupt (Claude in the same process, Codex and Gemini in a new one that resumes the session): the next prompt reaches the CLI, which completes it, and the adapter reports it successful.", srcClaudeInt),
		Applies: needs("multi_turn", func(c *Case) bool { return c.Interrupt != nil && c.Interrupt.ThenTurn }), Judge: judgeNextTurn})
)

func interruptSent(o *Observation) bool {
	for _, s := range o.Sent {
		if s.Op == "interrupt" || s.Op == "SIGINT" {
			return true
		}
	}
	return false
}

func judgePassedOn(o *Observation) Outcome {
	if !interruptSent(o) {
		return failf("the runner's interrupt", "the runner never sent it: the CLI never reached its turn (or ended it first)")
	}
	log := o.interruptLog()
	window := " before the adapter reported the turn over"
	if o.GaveUp {
		window = fmt.Sprintf(" within %s of the interrupt (then the runner gave up and closed)", interruptDeadline+giveUpAfter)
	} else if o.FakeAtTurnEnd == nil {
		window = " before the adapter exited"
	}
	if ev := interruptEvidence(o, log); ev != "" {
		return pass()
	}
	if o.Case.Agent == "claude" {
		return failf("a control_request interrupt (or a signal) reaching Claude", "nothing reached the CLI%s", window)
	}
	return failf("SIGINT, SIGTERM or SIGKILL to the "+o.Case.Agent+" CLI", "the CLI received no signal%s", window)
}

// interruptEvidence returns what in log shows that the interrupt reached
// the CLI ("" if nothing does): a control_request interrupt on Claude's
// stdin, a signal the fake logged, or a fake killed outright (SIGKILL, no
// record of its own) before the runner killed anything.
func interruptEvidence(o *Observation, log []fakecli.Observation) string {
	if o.Case.Agent == "claude" {
		for _, s := range stdinLinesOf(log) {
			if s.obj != nil && s.obj["type"] == "control_request" && str(s.obj, "request", "subtype") == "interrupt" {
				return "control_request interrupt"
			}
		}
	}
	for _, r := range log {
		switch {
		case r.Kind == "signal":
			return r.Signal
		case r.Kind == "exit" && r.Action == killedOutright:
			return "SIGKILL"
		}
	}
	return ""
}

func judgeCancelled(o *Observation) Outcome {
	var at time.Duration = -1
	for _, s := range o.Sent {
		if s.Op == "interrupt" || s.Op == "SIGINT" {
			at = s.At
			break
		}
	}
	if at < 0 {
		return failf("the runner's interrupt", "never sent")
	}
	for _, r := range o.TurnEnds() {
		if r.At < at {
			continue
		}
		if r.OK {
			return failf("turn_end ok:false after the interrupt", "turn_end ok:true: the interrupted turn was reported as a success")
		}
		if d := r.At - at; d > interruptDeadline {
			return failf(fmt.Sprintf("the cancelled turn reported within %s", interruptDeadline), "reported after %s", d.Round(time.Millisecond))
		}
		return pass()
	}
	return failf("turn_end ok:false after the interrupt", "no turn_end after the interrupt: the caller spins forever")
}

func judgeNextTurn(o *Observation) Outcome {
	ends := o.TurnEnds()
	if len(ends) < 2 {
		return failf("a second turn after the interrupted one", "%d turn_end records", len(ends))
	}
	last := ends[len(ends)-1]
	if !last.OK {
		return failf("the next turn succeeds", "turn_end ok:false: %s", last.Error)
	}
	turns := o.cliTurns()
	if len(turns) < len(ends) {
		return failf("the next prompt reaches the CLI, which runs the turn", "the CLI ran %d turns for the adapter's %d turn_end records: the turn reported successful never reached it", len(turns), len(ends))
	}
	if t := turns[len(ends)-1]; t.format == formatStream {
		if term := terminalOf(o.Case.Agent, t.lines); term == nil || terminalFailed(term.Obj) {
			return failf("the CLI completes the next turn", "the CLI's turn %d did not complete, yet the adapter reported it successful", len(ends))
		}
	}
	return pass()
}
