package conformance

import (
	"slices"
	"strings"
	"time"

	"github.com/agentconform/agentconform/finding"
)

// Sources of the checks' requirements: sections of the protocol reference
// (docs/protocols) that say what each check enforces and on what evidence.
// A new check picks one, or adds a constant for the section that says what
// it needs.
const (
	srcHarness     = "docs/protocols/unified.md#harness"
	srcHello       = "docs/protocols/unified.md#hello"
	srcProfiles    = "docs/protocols/unified.md#profiles"
	srcRecords     = "docs/protocols/unified.md#records"
	srcTurnEnd     = "docs/protocols/unified.md#turn-end"
	srcTurnReasons = "docs/protocols/unified.md#turn-end-reasons"
	srcEnding      = "docs/protocols/unified.md#ending"
	srcPrompt      = "docs/protocols/unified.md#prompt"
	srcResume      = "docs/protocols/unified.md#session-resume"
	srcInterrupt   = "docs/protocols/unified.md#interrupt"
	srcLines       = "docs/protocols/unified.md#lines"
	srcLeftovers   = "docs/protocols/unified.md#leftovers"
	srcLossless    = "docs/protocols/unified.md#lossless"
	srcUsage       = "docs/protocols/unified.md#usage"
	srcForward     = "docs/protocols/unified.md#forward-compat"
	srcShimErrors  = "docs/protocols/shim.md#errors"
	srcClaudeCtl   = "docs/protocols/claude.md#permission"
	srcClaudeInt   = "docs/protocols/claude.md#interrupt"
	// srcClaudeStreamSignals is what SIGINT and SIGTERM do to Claude with
	// stream-json input.
	srcClaudeStreamSignals = "docs/protocols/claude.md#stream-signals"
	srcClaudeCancel        = "docs/protocols/claude.md#control-cancel"
	srcClaudeMaxTurns      = "docs/protocols/claude.md#max-turns"
	srcClaudeStdin         = "docs/protocols/claude.md#stdin-close"
	srcClaudeShutdown      = "docs/protocols/claude.md#sdk-shutdown"
	srcCodexInv            = "docs/protocols/codex.md#stdin"
	srcCodexSig            = "docs/protocols/codex.md#signals"
	srcGemini              = "docs/protocols/gemini.md#signals"
	srcGeminiStdin         = "docs/protocols/gemini.md#stdin"
	srcInvocation          = "docs/protocols/claude.md#invocation; docs/protocols/codex.md#invocation; docs/protocols/gemini.md#invocation"
	srcInterruptPassed     = srcClaudeInt + "; docs/protocols/claude.md#sigint; " + srcCodexSig + "; " + srcGemini
	srcNativeEvents        = "docs/protocols/claude.md#stdout; docs/protocols/codex.md#events; docs/protocols/gemini.md#events"
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
