//go:build unix

package e2e

import (
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// TestMain lets this test binary act as claude, codex and gemini: the SDKs
// start it under those names (fakecli.Start links them to it).
func TestMain(m *testing.M) { fakecli.Main(m) }
