// Command agentconform-adapter is the reference adapter alone: what
// `agentconform adapter` runs, in a binary that initialises nothing else,
// so that it starts in under 2 ms instead of about 12 (the whole toolkit
// initialises its JSON Schema validator first). `agentconform run` uses it
// for the built-in default when it sits next to agentconform, and the fuzz
// benchmarks use it as their external adapter. Build it with
// CGO_ENABLED=0 for a static binary, which starts faster still.
package main

import (
	"context"
	"os"

	"github.com/agentconform/agentconform/conformance/reference"
)

func main() {
	os.Exit(reference.Main(context.Background(), "agentconform-adapter", os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
