package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/realcli"
)

// maybeRunFake makes the binary act as a fake CLI when it was started as
// claude, codex or gemini (the links `agentconform fake install` writes),
// or as the wrapper around a real CLI (and its helpers) when a run on
// the real CLIs set it up so.
func maybeRunFake() {
	if code, ok := realcli.Dispatch(os.Args[0]); ok {
		os.Exit(code)
	}
	if name, ok := fakecli.IsFake(os.Args[0]); ok {
		os.Exit(fakecli.RunProcess(name))
	}
}

const fakeUsage = `Usage: agentconform fake install [--copy] DIR

Writes claude, codex and gemini into DIR: links to agentconform-fake when
it sits next to this binary (it starts fastest), else to this binary; either
acts as the CLI it is started as (copies when links cannot be made, or with
--copy). Put DIR first on PATH to run an adapter against the fakes; the
AGENTCONFORM_* environment variables choose what they replay (see
fakecli/README.md).

Flags:
`

func runFake(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := pflag.NewFlagSet("fake", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	copyFiles := fl.Bool("copy", false, "copy the binary instead of linking to it")
	fl.Usage = func() {
		fmt.Fprint(stderr, fakeUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	rest := fl.Args()
	if len(rest) != 2 || rest[0] != "install" {
		fl.Usage()
		return exitUsage
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "agentconform fake: finding this binary: %v\n", err)
		return exitUsage
	}
	if err := fakecli.Install(rest[1], fakecli.Executable(exe), *copyFiles); err != nil {
		fmt.Fprintf(stderr, "agentconform fake: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "installed claude, codex and gemini in %s\n", rest[1])
	return exitOK
}
