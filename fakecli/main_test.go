package fakecli_test

import (
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// TestMain lets this test binary act as claude, codex and gemini: the
// tests start it under those names (fakecli.Start links them to it).
func TestMain(m *testing.M) { fakecli.Main(m) }
