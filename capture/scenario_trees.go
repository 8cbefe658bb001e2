package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentconform/agentconform/capture/mock"
)

// The commands of the process-tree scenarios: a background process that
// ignores SIGTERM, SIGINT and SIGHUP (its output sent away, so that only
// the signals differ), and one that keeps the command's stdout and stderr
// open (and writes to them later). The first is a subshell, not sh -c:
// Gemini CLI 0.61.0 takes a leading "sh -c" off a command (its
// stripShellWrapper), which left a command that could not run.
const (
	bgIgnoring = `(trap "" TERM INT HUP; exec sleep 120) >/dev/null 2>&1 &`
	bgHolding  = `(sleep 30; echo late) &`
)

// treeScenarios record what the CLIs do with the processes a shell
// command leaves in the background: the process tree of every run is
// recorded beside the transcript (ProcessTree: process group, session,
// who holds the CLI's stdout, what is left after the exit).
func treeScenarios() []Scenario {
	bgPlan := func(cli, command, desc string) *plan {
		first := mock.Turn{Calls: []mock.Call{shell(command)}}
		if cli == "claude" {
			first.Text = []string{"Starting it in the background."}
		}
		return &plan{
			description: desc,
			script:      mock.Script{Turns: []mock.Turn{first, mock.Text("It is running in the background.")}},
			procs:       []proc{treeShot(cli, "Start the watcher in the background.")},
			trees:       true,
		}
	}
	interruptCommand := bgIgnoring + " " + bgHolding + " sleep 8; echo done"
	interrupted := func(cli string, how interruptMode) *plan {
		p := &plan{
			script: mock.Script{Turns: []mock.Turn{
				{Text: textIf(cli == "claude", "Starting the watchers, then the tests."), Calls: []mock.Call{shell(interruptCommand)}},
				mock.Text("The tests passed."),
			}},
			procs: []proc{treeShot(cli, "Start the watchers and run the tests.")},
			trees: true,
		}
		what := fmt.Sprintf("A shell command that starts two background processes (one ignoring SIGTERM, SIGINT and SIGHUP with its output sent to /dev/null, one holding the command's stdout and stderr), then runs 8 s in the foreground, interrupted with %s one second in (on_signal branch); without the signal it completes (main path, a second real run). The process tree of both runs is recorded beside the transcript.", how)
		if how == interruptControl {
			p.procs = []proc{claudeStream([]string{"Start the watchers and run the tests."}, "--allowedTools", "Bash")}
			what = "A shell command that starts two background processes (one ignoring SIGTERM, SIGINT and SIGHUP with its output sent to /dev/null, one holding the command's stdout and stderr), then runs 8 s in the foreground, interrupted with a control_request interrupt over stream-json stdin one second in, then stdin closed. The process tree is recorded beside the transcript."
		}
		p.description = what
		p.procs[0].interrupt = how
		return p
	}
	return []Scenario{
		{Name: "bg-ignores-signals", Summary: "a command leaves a background process that ignores SIGTERM, SIGINT and SIGHUP; the process tree is recorded", plan: func(cli string) *plan {
			return bgPlan(cli, bgIgnoring+" echo started",
				"A shell command that starts a background process ignoring SIGTERM, SIGINT and SIGHUP (sleep 120, its output sent to /dev/null) and prints started; the model answers and the turn ends while it runs. The process tree is recorded beside the transcript: where the background process is, and whether it outlives the CLI.")
		}},
		{Name: "bg-holds-output", Summary: "a command leaves a background process holding its stdout and stderr; the process tree is recorded", plan: func(cli string) *plan {
			return bgPlan(cli, bgHolding+" echo started",
				"A shell command that starts a background process holding the command's stdout and stderr ((sleep 30; echo late) &) and prints started; the model answers and the turn ends while it runs. The process tree is recorded beside the transcript: whose stdout the background process holds, and whether it outlives the CLI.")
		}},
		{Name: "bg-interrupt-sigint", Summary: "background processes started, then the command interrupted by SIGINT; the process tree is recorded", plan: func(cli string) *plan {
			return interrupted(cli, interruptSIGINT)
		}},
		{Name: "bg-interrupt-sigterm", Summary: "background processes started, then the command interrupted by SIGTERM; the process tree is recorded", plan: func(cli string) *plan {
			return interrupted(cli, interruptSIGTERM)
		}},
		{Name: "launcher-sigterm", Summary: "SIGTERM to the npm launcher alone during a tool; the process tree is recorded", plan: func(cli string) *plan {
			return launcherPlan(cli, interruptSIGTERM)
		}},
		{Name: "launcher-sigkill", Summary: "SIGKILL to the npm launcher alone during a tool; the process tree is recorded", plan: func(cli string) *plan {
			return launcherPlan(cli, interruptSIGKILL)
		}},
		{Name: "bg-interrupt-sigterm-sandboxed", Summary: "Codex: background processes started in the workspace-write sandbox, then SIGTERM; the process tree is recorded", plan: func(cli string) *plan {
			if cli != "codex" {
				return nil
			}
			p := interrupted(cli, interruptSIGTERM)
			p.procs = []proc{oneShot(cli, "Start the watchers and run the tests.", true)} // -s workspace-write
			p.procs[0].interrupt = interruptSIGTERM
			p.description = strings.Replace(p.description, "A shell command", "In Codex's workspace-write sandbox (bubblewrap), a shell command", 1)
			return p
		}},
		claudeOnly("bg-interrupt-control", "background processes started, then the command interrupted by a control request; the process tree is recorded", func() *plan {
			return interrupted("claude", interruptControl)
		}),
	}
}

// treeShot is the one-process run of the process-tree scenarios: Codex's
// command runs unsandboxed (-s danger-full-access), as a caller that lets
// it touch the machine runs it; in its workspace-write sandbox a command
// runs in a PID namespace of its own that ends with it
// (bg-ignores-signals-sandboxed).
func treeShot(cli, prompt string) proc {
	p := oneShot(cli, prompt, true)
	if cli == "codex" {
		for i, a := range p.args {
			if a == "workspace-write" {
				p.args[i] = "danger-full-access"
			}
		}
	}
	return p
}

// claudeWrapper finds Claude Code's fallback npm launcher, cli-wrapper.cjs
// in the package of the claude binary at bin (node_modules/.bin/claude
// links to the package's bin/claude.exe), and node on the PATH of env.
func claudeWrapper(bin string, env []string) (node, wrapper string, err error) {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return "", "", fmt.Errorf("capture: claude's npm launcher: %w", err)
	}
	wrapper = filepath.Join(filepath.Dir(filepath.Dir(real)), "cli-wrapper.cjs")
	if _, err := os.Stat(wrapper); err != nil {
		return "", "", fmt.Errorf("capture: claude's npm launcher: %s is not in an npm package of @anthropic-ai/claude-code (no %s): %w", bin, filepath.Base(wrapper), err)
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if st, err := os.Stat(filepath.Join(dir, "node")); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return filepath.Join(dir, "node"), wrapper, nil
		}
	}
	return "", "", fmt.Errorf("capture: claude's npm launcher needs node, and there is none on PATH %q", path)
}

// launcherNames say which npm launcher a launcher scenario runs behind.
var launcherNames = map[string]string{
	"claude": "cli-wrapper.cjs of @anthropic-ai/claude-code, the package's fallback launcher (run with node; installed normally, claude is the native binary itself)",
	"codex":  "bin/codex.js of @openai/codex, which spawns the native binary as its child where Node has no process.execve (before 22.15)",
	"gemini": "bundle/gemini.js of @google/gemini-cli, which relaunches the CLI as its child",
}

// launcherPlan interrupts a 6 s command with sig sent to the process the
// caller started alone: the npm launcher in front of the CLI. The
// recorder reads stdout until its end, however long the CLI behind a dead
// launcher goes on writing. SIGTERM is captured twice like the other
// signals (a main path and the signal's branch); SIGKILL, which no
// process can handle, once: the transcript is that run.
func launcherPlan(cli string, sig interruptMode) *plan {
	p := interruptPlan(cli)
	p.procs[0].interrupt, p.procs[0].signalAlone, p.procs[0].drainWait = sig, true, 30*time.Second
	p.procs[0].wrapper = cli == "claude"
	p.trees = true
	runs := "without the signal it completes (main path, a second real run); the signal's run is the on_signal branch, read to the end of stdout, whoever holds it"
	if sig == interruptSIGKILL {
		runs = "the transcript is that run alone (no main path), read to the end of stdout, whoever holds it"
	}
	p.description = fmt.Sprintf("A 6 s shell command; one second in, %s goes to the process the caller started alone, %s; %s. The process tree is recorded beside the transcript: whether the CLI behind the launcher got the signal, and what was left running, holding stdout.", sig, launcherNames[cli], runs)
	return p
}
