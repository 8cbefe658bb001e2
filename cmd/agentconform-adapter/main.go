// Command agentconform-adapter is the reference adapter alone: what
// `agentconform adapter` runs, in a binary that initialises nothing else,
// so that it starts in under 2 ms instead of about 12 (the whole toolkit
// initialises its JSON Schema validator first). `agentconform run` uses it
// for the built-in default when it sits next to agentconform, and the fuzz
// benchmarks use it as their external adapter. Build it with
// CGO_ENABLED=0 for a static binary, which starts faster still.
//
// The adapter starts once a case, so it reads no cgroup CPU limit at
// start and runs no GOMAXPROCS updater (a quarter of an empty Go
// program's start-up on Linux): an adapter needs no more than the cores
// the machine has.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"context"
	"os"

	"github.com/agentconform/agentconform/reference"
)

func main() {
	os.Exit(reference.Main(context.Background(), "agentconform-adapter", os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
