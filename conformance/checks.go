package conformance

import (
	"slices"
	"strings"
	"time"

	"github.com/agentconform/agentconform/finding"
)

// Sources of the checks' requirements.
const (
	srcHarness   = "conformance/HARNESS.md"
	srcIssue     = "agentconform issue 4 (Checks)"
	srcClaudeCtl = "protocols.md §1.3"
	srcClaudeInt = "protocols.md §1.5"
	srcCodexInv  = "protocols.md §2.1"
	srcCodexSig  = "protocols.md §2.4"
	srcGemini    = "protocols.md §3.1, §3.4"
	srcBuffers   = "protocols.md §1.6, §2.5; seed 001 §1 Chunking & Buffer Limits"
	srcSeed001   = "seed 001 §2 Strictness Rules"
	srcForward   = "protocols.md §1.2 (ignore unknown fields and types)"
)

// interruptDeadline is how soon after the interrupt the adapter must
// report the cancelled turn.
const interruptDeadline = 7 * time.Second

func rule(id, level, requirement, source string) finding.Rule {
	l := finding.Must
	switch level {
	case "SHOULD":
		l = finding.Should
	case "INFO":
		l = finding.Info
	}
	return finding.Rule{ID: id, Requirement: requirement, Source: source, Level: l}
}

func always(*Case, *Hello) (bool, string) { return true, "" }

func agentIs(agents ...string) func(*Case, *Hello) (bool, string) {
	return func(c *Case, _ *Hello) (bool, string) {
		if slices.Contains(agents, c.Agent) {
			return true, ""
		}
		return false, "applies to " + strings.Join(agents, " and ") + " only"
	}
}

func needs(capability string, cond func(*Case) bool) func(*Case, *Hello) (bool, string) {
	return func(c *Case, h *Hello) (bool, string) {
		if !cond(c) {
			return false, "not this kind of case"
		}
		if capability != "" && !h.supports(capability) {
			return false, "the adapter does not declare " + capability
		}
		return true, ""
	}
}

func normalCase(c *Case) bool {
	return !c.Expect.TurnFails && !c.Expect.Cancelled && !c.Expect.Stall
}

func multiTurn(c *Case) bool { return len(c.Prompts) > 1 }
