package faults

import "strings"

// Process faults change which processes make up the CLI, not what it
// writes: Steps and Stdout leave them alone, and the fake reads them with
// Launcher and LauncherForwardsEvery, then runs them itself (fakecli's
// process tree). The one shape a real CLI takes on a machine is the npm
// launcher of its package in front of it (verified against each
// package's launcher: the capture scenarios launcher-sigterm and
// launcher-sigkill, docs/protocols/<cli>.md). A process a tool leaves
// behind is no fault here: the captures (bg-*) show every CLI putting a
// tool's processes in a session of their own, on the tool's own output,
// where no adapter reaches them.
var processDefs = []*faultDef{
	{name: "launcher", kind: "process",
		desc: "Runs the CLI behind its npm launcher: the process the adapter starts is a launcher that starts the fake as its child (same process group, stdin, stdout and stderr inherited) and handles signals as the real launcher does. style=codex: bin/codex.js of @openai/codex where Node has no process.execve (before 22.15), which passes SIGINT, SIGTERM and SIGHUP on to the child (forward=first: only the first, later ones swallowed, as 0.169.0's does; forward=every: every one, as 0.171.0's does) and ends as the child ended (its exit status, or the same signal). style=gemini: bundle/gemini.js of @google/gemini-cli, which ignores SIGINT, SIGTERM and SIGHUP and passes none on, and exits with the child's status (1 for a child killed by a signal). style=claude: cli-wrapper.cjs of @anthropic-ai/claude-code, the fallback launcher for an install whose postinstall did not put the native binary in place (spawnSync), which passes nothing on and dies of SIGINT, SIGTERM or SIGHUP itself, leaving the child running. Catches adapters that signal or kill only the process they started: the CLI never sees the signal, or is left running, holding stdout, after its launcher is gone.",
		params: []paramDef{
			{name: "style", kind: kindWord, dflt: "codex", fixed: true, words: launcherStyles,
				meaning: "whose launcher: " + strings.Join(launcherStyles, ", ")},
			{name: "forward", kind: kindWord, dflt: "first", fixed: true, words: []string{"first", "every"},
				meaning: "style=codex: which signals codex.js passes on, the first only (0.169.0) or every one (0.171.0); the other launchers pass none"},
		}},
}

// launcherStyles are the launchers the launcher fault imitates.
var launcherStyles = []string{"claude", "codex", "gemini"}

func init() { defs = append(defs, processDefs...) }

// Launcher is read by the fake, which logs what it does with it itself.

// Launcher returns the style of the plan's launcher fault (claude, codex
// or gemini), "" when it has none. With several, the first counts.
func (p *Plan) Launcher() string {
	if f := p.launcher(); f != nil {
		return f.strs["style"]
	}
	return ""
}

// LauncherForwardsEvery reports whether the plan's launcher passes every
// signal on, not only the first (codex.js of 0.171.0; forward=every).
func (p *Plan) LauncherForwardsEvery() bool {
	f := p.launcher()
	return f != nil && f.strs["style"] == "codex" && f.strs["forward"] == "every"
}

// launcher is the plan's first launcher fault, nil when it has none.
func (p *Plan) launcher() *fault {
	if p == nil {
		return nil
	}
	for _, f := range p.faults {
		if f.def.name == "launcher" {
			return f
		}
	}
	return nil
}
