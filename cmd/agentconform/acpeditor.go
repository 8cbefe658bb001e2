package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agentconform/agentconform/acp/editor"
	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fakecli"
)

const acpEditorUsage = `Usage: agentconform acp-editor --agent 'COMMAND' [flags]

Plays the editor (the Agent Client Protocol client) for the ACP agent that
COMMAND starts, and speaks the adapter harness protocol
(conformance/HARNESS.md) on stdin and stdout: what agentconform run
--profile acp starts as the adapter. start is initialize, session/new and
session/prompt; send the next session/prompt; interrupt session/cancel;
close cancels a running turn, closes the agent's stdin and waits for it.
Every session/update and prompt result is handed on as a native event;
every line of both directions goes to acp-wire.jsonl next to the fakes'
observation log (AGENTCONFORM_OBSERVE), for the checks of the acp family.

Flags:
`

// runACPEditor is `agentconform acp-editor`.
func runACPEditor(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := pflag.NewFlagSet("acp-editor", pflag.ContinueOnError)
	fl.SetOutput(stderr)
	agent := fl.String("agent", "", "shell command that starts the ACP agent")
	agents := fl.StringSlice("drives", nil, "the CLIs the agent drives, for the hello (default: those its command names, else all three)")
	fl.Usage = func() {
		fmt.Fprint(stderr, acpEditorUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *agent == "" {
		fmt.Fprintln(stderr, "agentconform acp-editor: --agent is required")
		return exitUsage
	}
	drives := *agents
	if len(drives) == 0 {
		drives = editor.AgentsOf(*agent)
	}
	cfg := editor.Config{Agent: *agent, Agents: drives, Version: conformance.Version,
		WireLog: editor.WireLogFor(os.Getenv(fakecli.EnvObserve))}
	return editor.Run(ctx, cfg, stdin, stdout, stderr)
}

// fakeCLIOf is the CLI an agent command starts when its program is one of
// the CLIs the runner fakes ("" otherwise).
func fakeCLIOf(command string) string {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return ""
	}
	name := filepath.Base(strings.Trim(fields[0], `'"`))
	for _, cli := range []string{"claude", "codex", "gemini"} {
		if name == cli {
			return cli
		}
	}
	return ""
}

// acpAdapter is the adapter `run --profile acp` judges: this executable's
// acp-editor in front of the agent command.
func acpAdapter(self, agent string) conformance.Adapter {
	abs := conformance.ResolveCommand(agent, "")
	a := conformance.ShellAdapter(shellQuote(self) + " acp-editor --agent " + shellQuote(abs))
	a.Name = agent
	a.Reproduce = agent
	a.Profile = "acp"
	return a
}
