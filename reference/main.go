package reference

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/pflag"
)

const mainUsage = `Usage: %s [--profile unified|shim] [flags]

Runs the reference adapter: speaks the harness protocol of
conformance/HARNESS.md on stdin and stdout, drives claude, codex or gemini
as their SDKs do, and hands out their events translated to the unified
event model (--profile unified) or the shim stream (--profile
shim). SIGINT interrupts the running turn (signal mode); SIGTERM stops the
CLI and ends. The CLIs' stderr goes to stderr.

Flags:
`

// Main is the reference adapter's command line, shared by `agentconform
// adapter` and the lean agentconform-adapter binary (which starts in a
// tenth of the time, since it initialises nothing else); name is how it
// calls itself in messages. It returns the exit status: 0, or 2 for bad
// usage or an I/O error.
func Main(ctx context.Context, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		profile        = fl.String("profile", "unified", "events to hand out: unified or shim")
		turnTimeout    = fl.Duration("turn-timeout", 0, "stop a turn that runs longer than this (0: no limit)")
		stallTimeout   = fl.Duration("stall-timeout", 0, "the watchdog: stop a turn whose CLI writes nothing (stdout or stderr) for this long and report it failed, declared in the hello as watchdog_ms (0: no watchdog)")
		interruptGrace = fl.Duration("interrupt-grace", 0, "how long a CLI has to end an interrupted turn before the next signal (0: 5s)")
		stopGrace      = fl.Duration("stop-grace", 0, "how long a CLI has to exit before SIGTERM, then SIGKILL (0: 5s)")
	)
	fl.Usage = func() {
		fmt.Fprintf(stderr, mainUsage, name)
		fl.PrintDefaults()
	}
	usage := func(err error) int {
		fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", name, err, name)
		return 2
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return usage(err)
	}
	if fl.NArg() > 0 {
		return usage(fmt.Errorf("unexpected argument %q", fl.Arg(0)))
	}
	p, err := ParseProfile(*profile)
	if err != nil {
		return usage(err)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A 64 MiB line is held a few times over while it is decoded and
		// handed on; without a limit the collector lets the heap grow to
		// twice that.
		debug.SetMemoryLimit(memoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		// A long text streams as thousands of 16 KiB deltas, each a few
		// short-lived copies: with the default target the collector ran
		// a hundred times a case on a heap of 4 MiB.
		debug.SetGCPercent(gcPercent)
	}

	// SIGINT is an interrupt here, not the end: run on a context of our
	// own that only SIGTERM ends.
	sctx, stop := signal.NotifyContext(context.WithoutCancel(ctx), syscall.SIGTERM)
	defer stop()
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	defer signal.Stop(sigint)
	interrupts := make(chan struct{}, 1)
	go func() {
		for {
			select {
			case <-sigint:
				select {
				case interrupts <- struct{}{}:
				default:
				}
			case <-sctx.Done():
				return
			}
		}
	}()

	err = Serve(sctx, stdin, stdout, ServeOptions{
		Profile: p, Version: buildVersion(), Interrupts: interrupts, Stderr: stderr,
		TurnTimeout: *turnTimeout, StallTimeout: *stallTimeout, InterruptGrace: *interruptGrace, StopGrace: *stopGrace,
	})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	return 0
}

// memoryLimit is the adapter's soft memory limit (unless GOMEMLIMIT
// sets one).
const memoryLimit = 256 << 20

// gcPercent is the adapter's collection target (unless GOGC sets one):
// the heap may grow to five times what is live, 16 MiB at the least, and
// memoryLimit bounds it on long lines.
const gcPercent = 400

// buildVersion is the module version the binary was built from, for the
// hello record ("devel" for a build from a work tree).
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
