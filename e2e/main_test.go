//go:build unix

package e2e

import (
	"context"
	"os"
	"testing"

	"github.com/agentconform/agentconform/acp/editor"
	"github.com/agentconform/agentconform/realcli"
	"github.com/agentconform/agentconform/reference"
)

// TestMain lets this test binary act as claude, codex and gemini: the SDKs
// start it under those names (fakecli.Start links them to it), as the
// fakes or as the wrapper around a real CLI (realcli); as the ACP editor
// of the acp profile (acp_test.go); and as the reference adapter
// (referenceArg, real_test.go).
func TestMain(m *testing.M) {
	editor.ServeIfAsked("e2e")
	if len(os.Args) > 1 && os.Args[1] == referenceArg {
		os.Exit(reference.Main(context.Background(), "agentconform-adapter", os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	realcli.Main(m)
}

// referenceArg, as the test binary's first argument, makes it the
// reference adapter (`agentconform adapter`), the rest its arguments.
const referenceArg = "e2e-reference-adapter"
