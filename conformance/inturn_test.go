package conformance

import (
	"testing"
	"time"
)

// TestRPCAgentInTurnByModel: a real JSON-RPC agent (gemini --acp, codex
// app-server) whose first lines answered the client's set-up is not yet in
// its turn: it is once it asked the model. Taken at its first line, a real
// Gemini CLI slow to start was closed as quiet (CloseWhenQuiet) before the
// client's prompt had reached it, and a correct client's permission answer
// became "cancelled". Stream CLIs keep being in their turn at their first
// line.
func TestRPCAgentInTurnByModel(t *testing.T) {
	asked := 0
	for _, agent := range []string{AgentGeminiACP, AgentAppServer} {
		asked = 0
		d := &driver{c: &Case{Agent: agent}, modelAsked: func() int { return asked }}
		d.cli.lines = 2 // initialize's and session/new's answers
		if d.cliInTurn() {
			t.Errorf("%s: in its turn after its set-up answers, before it asked the model", agent)
		}
		asked = 1
		if !d.cliInTurn() || d.inTurnAt.IsZero() || time.Since(d.inTurnAt) > time.Minute {
			t.Errorf("%s: not in its turn once it asked the model (in turn since %v)", agent, d.inTurnAt)
		}
	}
	d := &driver{c: &Case{Agent: "gemini"}, modelAsked: func() int { return 0 }}
	d.cli.lines = 1
	if !d.cliInTurn() {
		t.Error("gemini: a stream CLI's first line no longer puts it in its turn")
	}
}
