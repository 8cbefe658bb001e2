package main

import (
	"context"
	"io"

	"github.com/agentconform/agentconform/reference"
)

// runAdapter is `agentconform adapter`: the reference adapter's command
// line (reference.Main), which the lean agentconform-adapter binary runs
// too.
func runAdapter(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return reference.Main(ctx, "agentconform adapter", args, stdin, stdout, stderr)
}
