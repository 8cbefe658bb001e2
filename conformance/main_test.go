package conformance

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/agentconform/agentconform/conformance/internal/broken"
	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/realcli"
)

// adapterArg, as the test binary's first argument, makes it an adapter:
// the mode (package broken) follows. The runner sets the adapter's
// environment itself (HARNESS.md), so the mode travels in argv.
const adapterArg = "conformance-test-adapter"

// TestMain lets the test binary act as the fake CLIs (started as claude,
// codex or gemini), as the wrapper around a real CLI (package realcli),
// and as the adapters under test (started with
// adapterArg and a mode): reference.Serve as `agentconform adapter` runs
// it, or one of the broken adapters.
func TestMain(m *testing.M) {
	if _, fake := fakecli.IsFake(os.Args[0]); !fake && len(os.Args) == 3 && os.Args[1] == adapterArg {
		os.Exit(broken.Main(os.Args[2], os.Stdin, os.Stdout, os.Stderr))
	}
	realcli.Main(m)
}

// testAdapter returns the Adapter that runs mode in this test binary.
func testAdapter(t testing.TB, mode broken.Bug) Adapter {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("finding the test binary: %v", err)
	}
	return Adapter{Name: string(mode), Command: func(ctx context.Context) *exec.Cmd {
		return exec.CommandContext(ctx, exe, adapterArg, string(mode))
	}}
}
