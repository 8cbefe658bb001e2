// Command agentconform proves that software which drives AI coding CLIs
// (Claude Code, Codex, Gemini CLI) works: it validates captured streams
// against what the real CLIs emit and against the contracts adapters
// promise.
//
// Usage:
//
//	agentconform validate [flags] [PATH... | -]
//
// Run "agentconform help" or "agentconform validate --help" for details.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/agentconform/agentconform/conformance"
)

func main() {
	if os.Getenv("AGENTCONFORM_RECORD_DIR") != "" {
		// Started as claude, codex or gemini to record the real one.
		if code, handled := recordShim(); handled {
			os.Exit(code)
		}
	}
	maybeRunFake()
	if v := moduleVersion(); v != "" {
		// Installed from the module proxy (go install …@vX.Y.Z): results
		// and reports carry that version, and link the sources at its tag.
		conformance.Version = strings.TrimPrefix(v, "v")
	}
	ctx, stop := signalContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalContext is signal.NotifyContext with the signal that arrived as
// the context's cause (a signalError), so that a command can exit with
// 128 plus its number.
func signalContext(parent context.Context, sigs ...os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case s := <-ch:
			cancel(signalError{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(context.Canceled)
	}
}

// signalError is the cause of a context a signal cancelled.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return "received " + signalName(e.sig) }

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// interruption names what cancelled ctx: the signal, or the context's error.
func interruption(ctx context.Context) string {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		return signalName(se.sig)
	}
	if err := ctx.Err(); err != nil {
		return err.Error()
	}
	return "interrupted"
}

// interruptedStatus is the exit status of a command that a signal
// stopped: 128 plus the signal's number (130 for SIGINT, 143 for
// SIGTERM); 130 when something else cancelled it.
func interruptedStatus(ctx context.Context) int {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		if n, ok := se.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return 130
}

// Exit codes shared by every subcommand.
const (
	exitOK       = 0 // nothing wrong
	exitFindings = 1 // violations found
	exitUsage    = 2 // bad usage or an I/O error
	// exitInterrupted stands for 128 + the signal's number (130, 143) of
	// a command a signal stopped.
	exitInterrupted = -1
)

// command is one subcommand.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"run", "run an adapter (default: the reference adapters) against the fake CLIs and judge it", runRun},
		{"report", "render, merge, diff and gate run results (text, JSON, NDJSON, JUnit, Markdown, HTML)", runReport},
		{"validate", "check captured JSONL streams line by line against schemas and sequence rules", runValidate},
		{"fake", "install fake claude, codex and gemini executables that replay transcripts", runFake},
		{"record", "run a real CLI, pass its stdio through, and record a redacted transcript", runRecord},
		{"capture", "run the real CLIs against a built-in mock model API and write redacted transcripts", runCapture},
		{"drift", "capture the installed CLIs and compare with the previous version's fixtures; exit 1 on drift", runDrift},
		{"adapter", "run the reference adapter: the harness protocol on stdio, unified or shim events out", runAdapter},
		{"acp-editor", "play the editor (the ACP client) for an ACP agent, behind the harness protocol (run --profile acp)", runACPEditor},
		{"fuzz", "fuzz an adapter (or the reference adapters) with mutated fixtures; replay saved crashers", runFuzz},
	}
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		fmt.Fprintln(stdout, versionString())
		return exitOK
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			return run(ctx, []string{args[1], "--help"}, stdin, stdout, stderr)
		}
		usage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "agentconform: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "agentconform proves that programs driving AI coding CLIs work.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: agentconform <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'agentconform <command> --help' for a command's flags, 'agentconform version' for the version.")
}

// modulePath is the path of this module.
const modulePath = "github.com/agentconform/agentconform"

// versionString is what `agentconform version` prints: the module
// version when go install fetched the module at one (moduleVersion);
// else, for a build in a checkout, the toolkit's version, the module
// version the VCS stamp gave it (if any), the commit, and in both cases the
// Go toolchain.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "agentconform " + conformance.Version
	}
	return versionOf(bi, conformance.Version)
}

// versionOf is versionString for the build info bi and the toolkit
// version a checkout build reports (conformance.Version's default).
func versionOf(bi *debug.BuildInfo, devVersion string) string {
	if m := moduleVersionOf(bi); m != "" {
		return "agentconform " + m + " " + bi.GoVersion
	}
	v := "agentconform " + devVersion
	if m := bi.Main.Version; m != "" && m != "(devel)" {
		v += " (module " + m + ")"
	}
	for _, st := range bi.Settings {
		if st.Key == "vcs.revision" && len(st.Value) >= 12 {
			v += " (commit " + st.Value[:12] + ")"
		}
	}
	return v + " " + bi.GoVersion
}

// moduleVersion is the module version this binary was built at when go
// install or go build fetched the module (…/cmd/agentconform@v0.2.0), ""
// for a build in a checkout (see moduleVersionOf).
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return moduleVersionOf(bi)
}

// moduleVersionOf returns bi's main module version when the module was
// fetched: a version, and no VCS stamp (a build in a checkout is either
// "(devel)" or, from Go 1.24 on, stamped with a version derived from its
// VCS, and then carries vcs settings too).
func moduleVersionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		return ""
	}
	for _, st := range bi.Settings {
		if strings.HasPrefix(st.Key, "vcs") {
			return ""
		}
	}
	return v
}
