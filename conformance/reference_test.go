package conformance

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/agentconform/agentconform/conformance/internal/broken"
)

// referenceTimeout bounds each case of the reference batteries: generous,
// as the 64 MiB ladder cases are slow on a loaded CI machine; a case that
// hangs still fails.
const referenceTimeout = 60 * time.Second

// referenceCommand starts the reference adapter of a profile in this test
// binary, as `agentconform adapter --profile P` would.
func referenceCommand(t *testing.T, mode broken.Bug) func(ctx context.Context) *exec.Cmd {
	return testAdapter(t, mode).Command
}

// TestReferenceUnified runs the whole battery against the reference
// adapter with the unified profile: every check of every case passes or
// does not apply.
func TestReferenceUnified(t *testing.T) {
	t.Parallel()
	TestAdapter(t, referenceCommand(t, broken.ReferenceUnified), Strict(), CaseTimeout(referenceTimeout))
}

// TestReferenceShim runs the battery against the reference adapter with
// the shim profile: all of it, or under -short the Codex cases and the
// Claude interrupt and buffer cases.
func TestReferenceShim(t *testing.T) {
	t.Parallel()
	opts := []Option{Strict(), CaseTimeout(referenceTimeout)}
	if testing.Short() {
		opts = append(opts, Cases("codex/", "claude/interrupt", "claude/multi-turn", "claude/single-tool/line-*", "gemini/single-tool"))
	}
	TestAdapter(t, referenceCommand(t, broken.ReferenceShim), opts...)
}

// TestReferenceSignalInterrupt interrupts the reference adapter the way
// `agentconform run --interrupt signal` does: SIGINT to the adapter.
func TestReferenceSignalInterrupt(t *testing.T) {
	t.Parallel()
	TestAdapter(t, referenceCommand(t, broken.ReferenceUnified), Strict(), SignalInterrupt(), CaseTimeout(referenceTimeout),
		Cases("*/interrupt", "claude/multi-turn/interrupt-then-turn", "*/single-tool/interrupt-after-2", "*/single-tool/ignores-sigterm"))
}
