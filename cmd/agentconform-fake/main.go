// Command agentconform-fake is the fake claude, codex and gemini in one
// small binary: installed under those names, it acts as the CLI it was
// started as (see fakecli/README.md). It carries only what the fakes need,
// so it starts in a few milliseconds, as an adapter under test expects a
// CLI to. `agentconform fake install` and `agentconform run` use it when it
// sits next to the agentconform binary (go install ./cmd/... puts both in
// place), and the agentconform binary itself otherwise.
//
// The fakes start hundreds of times in a run, so they read no cgroup CPU limit at
// start and run no GOMAXPROCS updater (a quarter of an empty Go
// program's start-up on Linux): a replay needs no more than the cores
// the machine has.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"fmt"
	"os"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/realcli"
)

func main() {
	if code, ok := realcli.Dispatch(os.Args[0]); ok {
		os.Exit(code) // the wrapper around a real CLI (agentconform run --cli real)
	}
	name, ok := fakecli.IsFake(os.Args[0])
	if !ok {
		fmt.Fprintln(os.Stderr, "agentconform-fake acts as claude, codex or gemini when started under one of those names; put it in place with 'agentconform fake install DIR'")
		os.Exit(2)
	}
	os.Exit(fakecli.RunProcess(name))
}
