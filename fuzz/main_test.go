package fuzz

import (
	"testing"

	"github.com/agentconform/agentconform/acp/editor"
	"github.com/agentconform/agentconform/fakecli"
)

// TestMain lets the test binary act as the fake CLIs (for the external
// targets' tests) and as agentconform's ACP editor (for an ACP agent's).
func TestMain(m *testing.M) {
	editor.ServeIfAsked("test")
	fakecli.Main(m)
}
