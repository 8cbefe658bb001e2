package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"

	"github.com/spf13/pflag"

	"github.com/agentconform/agentconform/recorder"
	"github.com/agentconform/agentconform/redact"
)

const recordUsage = `Usage: agentconform record --out FILE [flags] -- CLI [ARGS...]

Runs a real CLI (claude, codex or gemini) and records both directions into
an agentconform/v1 transcript that the fake CLIs replay. Stdin goes to the
CLI and its stdout and stderr come back byte for byte, so record can sit
wherever the CLI would: the client sees no difference. SIGINT, SIGTERM,
SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGWINCH are forwarded to the CLI.

The CLI runs in its own process group with a deadline (--timeout); when it
passes, or when a second SIGINT/SIGTERM/SIGHUP is not obeyed within two
seconds, the whole group is killed.

Before anything is written, API keys and tokens of some thirty kinds
(also split across streamed text deltas, or base64-encoded), private
keys, passwords and secret fields, the passwords of URLs
(scheme://user:password@host, whatever characters they hold), e-mail
addresses, the values of
credential environment variables and whatever --redact, --redact-literal
and --redact-regexp add are replaced with stable placeholders
(<redacted:openai-key:1>), the home directory with /home/user and the
working directory with <cwd>; every JSON line stays JSON with the same
keys. Only the names of environment variables are recorded.

A --redact rule file holds one rule per line (blank lines and # comments
are ignored):

  NAME REGEXP                redact what REGEXP matches (or its first group)
  NAME key:KEYREGEXP         redact the values of fields and assignments
                             whose names KEYREGEXP matches
  NAME key:KEYREGEXP REGEXP  ... only what REGEXP matches in them

NAME (lower-case letters, digits, dashes) is the kind in the placeholders:
<redacted:NAME:1>. For example:

  acme-token     acme_(?:live|test)_[0-9a-f]{32}
  acme-password  key:(?i)^internal_pass(word)?$

To record every run of a CLI an adapter starts, use the PATH shim instead:
link the agentconform binary as claude, codex or gemini in a directory put
first on PATH, and set AGENTCONFORM_RECORD_DIR=DIR and
AGENTCONFORM_RECORD_REAL=/path/to/the/real/cli.

Exit status: the CLI's (128+N when a signal N ended it), 127 when the CLI
cannot be started, 2 for bad usage or when the transcript cannot be written.

Flags:
`

func runRecord(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := pflag.NewFlagSet("record", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.SetInterspersed(false) // everything from the CLI's name on is the CLI's
	var (
		out         = fl.StringP("out", "o", "", "write the transcript to FILE (required)")
		cli         = fl.String("cli", "", "which CLI this is: claude, codex or gemini (default: from the command's name)")
		cliVersion  = fl.String("cli-version", "", "the CLI's version for the header (default: what \"CLI --version\" prints, else unknown)")
		scenario    = fl.String("scenario", "", "the scenario name for the header")
		description = fl.String("description", "", "a sentence describing the scenario, for the header")
		timeout     = fl.Duration("timeout", recorder.DefaultTimeout, "kill the CLI's process group after this long")
		ruleFiles   = fl.StringArray("redact", nil, "also apply the redaction rules of this file (repeatable; format above)")
		literals    = fl.StringArray("redact-literal", nil, "also redact this string (repeatable)")
		patterns    = fl.StringArray("redact-regexp", nil, "also redact what this regular expression matches, or its first group (repeatable)")
		verbose     = fl.BoolP("verbose", "v", false, "print a summary (steps, exit, redactions) to stderr at the end")
	)
	fl.Usage = func() {
		fmt.Fprint(stderr, recordUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	argv := fl.Args()
	switch {
	case len(argv) == 0:
		return recordUsageError(stderr, errors.New("no CLI to run: give it after --"))
	case *out == "" || *out == "-":
		return recordUsageError(stderr, errors.New("--out FILE is required (stdout belongs to the CLI)"))
	case *timeout <= 0:
		return recordUsageError(stderr, errors.New("--timeout must be positive"))
	}
	name := *cli
	if name == "" {
		name = recorder.CLIName(argv[0])
	}
	if name != "claude" && name != "codex" && name != "gemini" {
		return recordUsageError(stderr, fmt.Errorf("cannot tell which CLI %q is: pass --cli claude, codex or gemini", argv[0]))
	}
	var res []*regexp.Regexp
	for _, p := range *patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return recordUsageError(stderr, fmt.Errorf("--redact-regexp: %w", err))
		}
		res = append(res, re)
	}
	rules, err := readRuleFiles(*ruleFiles)
	if err != nil {
		return recordUsageError(stderr, fmt.Errorf("--redact: %w", err))
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "agentconform record: %v\n", err)
		return 127
	}
	file, err := recorder.CreateFile(*out)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform record: %v\n", err)
		return exitUsage
	}
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	env := os.Environ()
	red := redact.New(redact.Options{Home: home, Cwd: cwd, Secrets: redact.EnvSecrets(env), Literals: *literals, Patterns: res, Rules: rules})

	signals, stopSignals := recorder.NotifySignals()
	result, err := recorder.Record(context.WithoutCancel(ctx), recorder.Config{
		Argv:        argv,
		Path:        path,
		CLI:         name,
		CLIVersion:  *cliVersion,
		Scenario:    *scenario,
		Description: *description,
		Env:         env,
		Stdin:       stdin,
		Stdout:      stdout,
		Stderr:      stderr,
		Timeout:     *timeout,
		Signals:     signals,
		Redactor:    red,
	})
	stopSignals()
	if err != nil {
		file.Abort()
		fmt.Fprintf(stderr, "agentconform record: %v\n", err)
		return 127
	}
	if result.TimedOut {
		fmt.Fprintf(stderr, "agentconform record: %s ran past --timeout %v; its process group was killed\n", name, *timeout)
	}
	if err := file.Commit(result.Transcript); err != nil {
		fmt.Fprintf(stderr, "agentconform record: %v\n", err)
		return exitUsage
	}
	if *verbose {
		end := fmt.Sprintf("exit %d", result.ExitCode)
		if result.Signal != "" {
			end = "killed by " + result.Signal
		}
		fmt.Fprintf(stderr, "agentconform record: wrote %s: %s %s, %d steps, %s; redacted: %s\n",
			*out, name, result.Transcript.Header.CLIVersion, len(result.Transcript.Steps), end, result.Redactions)
	}
	return result.Status()
}

// readRuleFiles reads redaction rule files (--redact FILE).
func readRuleFiles(paths []string) ([]redact.Rule, error) {
	var all []redact.Rule
	for _, p := range paths {
		rules, err := redact.ReadRulesFile(p)
		if err != nil {
			return nil, err
		}
		all = append(all, rules...)
	}
	return all, nil
}

func recordUsageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "agentconform record: %v\nRun 'agentconform record --help' for usage.\n", err)
	return exitUsage
}

// recordShim runs the PATH-shim mode of the recorder when the binary was
// started as claude, codex or gemini with AGENTCONFORM_RECORD_DIR set.
func recordShim() (code int, handled bool) {
	handled, code = recorder.ShimMain(os.Args[0], os.Args[1:])
	return code, handled
}
