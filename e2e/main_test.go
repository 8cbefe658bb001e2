//go:build unix

package e2e

import (
	"testing"

	"github.com/agentconform/agentconform/acp/editor"
	"github.com/agentconform/agentconform/fakecli"
)

// TestMain lets this test binary act as claude, codex and gemini: the SDKs
// start it under those names (fakecli.Start links them to it); and as the
// ACP editor of the acp profile (acp_test.go).
func TestMain(m *testing.M) {
	editor.ServeIfAsked("e2e")
	fakecli.Main(m)
}
