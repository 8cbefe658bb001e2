package conformance

import (
	"github.com/agentconform/agentconform/transcript"
)

// treeCases are the cases of one agent where the CLI is more than one
// process (the fakes' process faults, fakecli/README.md): the CLI behind
// its npm launcher, and a process a tool leaves behind. A correct adapter
// signals and stops the CLI's whole process group (or its tree), and does
// not wait for the end of stdout once the CLI has exited; what it leaves
// running is judged by lifecycle/reaps-cli and lifecycle/no-stray-process,
// how it interrupts by the interrupt checks, a wait that never ends by the
// case's deadline.
func treeCases(agent string, byName map[string]*transcript.Transcript) []*Case {
	base := agent + "/single-tool"
	one := Prompts(byName[base])
	var out []*Case
	if t := byName[agent+"/interrupt"]; t != nil {
		out = append(out, &Case{ID: agent + "/interrupt/npm-launcher", Agent: agent, Fixture: agent + "/interrupt",
			Faults: "launcher:style=" + agent, Permission: "allow", Prompts: Prompts(t),
			Interrupt: &InterruptPlan{AfterEvents: 1}, Expect: Expect{Cancelled: true},
			Description: launcherDescriptions[agent]})
	}
	out = append(out,
		&Case{ID: base + "/tool-ignores-sigterm", Agent: agent, Fixture: base, Faults: "grandchild:ignore=1",
			Permission: "allow", Prompts: one,
			Description: "the CLI leaves a tool's background process (a dev server, a watcher) running in its process group, and it ignores SIGINT, SIGTERM and SIGHUP: the adapter must kill the group (SIGKILL), not only the CLI"},
		&Case{ID: base + "/grandchild-holds-stdout", Agent: agent, Fixture: base, Faults: "grandchild:stdout=1",
			Permission: "allow", Prompts: one,
			Description: "the CLI leaves a process in its process group that inherited its stdout and stderr, so the pipes stay open after the CLI exits: the adapter must not wait for their end, and must stop the group"},
	)
	return out
}

// launcherDescriptions say what each launcher case shows.
var launcherDescriptions = map[string]string{
	"codex":  "the CLI runs behind codex.js, the npm launcher of the native binary where Node has no process.execve: it passes on only the first SIGINT, SIGTERM or SIGHUP it gets and swallows later ones, so killing the launcher alone leaves the CLI running",
	"gemini": "the CLI runs behind Gemini CLI's launcher, which relaunches it as a child and ignores SIGINT, SIGTERM and SIGHUP without passing them on: only a signal to the process group reaches the CLI",
	"claude": "the CLI runs behind cli-wrapper.cjs, Claude Code's fallback npm launcher (spawnSync): a signal to the launcher kills the launcher alone and never reaches the CLI, which goes on running and holding stdout",
}
