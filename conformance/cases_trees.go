package conformance

import (
	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
)

// treeCases are the cases of one agent where the CLI is more than one
// process (the fakes' process faults, fakecli/README.md): the CLI behind
// its npm launcher, as each real package's launcher runs it (verified by
// the captures launcher-sigterm and launcher-sigkill,
// docs/protocols/<agent>.md#launcher). A correct adapter signals and
// stops the CLI's whole process group (or its tree); what it leaves
// running is judged by lifecycle/reaps-cli, how it interrupts by the
// interrupt checks, a wait that never ends by the case's deadline.
//
// A process a tool leaves behind has no case: every CLI runs a command in
// a session of its own, on output of the tool's own (the bg-* captures,
// docs/protocols/<agent>.md#background-processes), so nothing it leaves
// is in the CLI's process group or holds the CLI's stdout, and nothing an
// adapter could reach.
func treeCases(agent string, byName map[string]*transcript.Transcript) []*Case {
	t := byName[agent+"/interrupt"]
	if t == nil {
		return nil
	}
	faults := "launcher:style=" + agent
	desc := launcherDescriptions[agent]
	if agent == "codex" && codexForwardsEvery(t.Header.CLIVersion) {
		faults += ",forward=every"
		desc = codexLauncherEvery
	}
	return []*Case{{ID: agent + "/interrupt/npm-launcher", Agent: agent, Fixture: agent + "/interrupt",
		Faults: faults, Permission: "allow", Prompts: Prompts(t),
		Interrupt: &InterruptPlan{AfterEvents: 1}, Expect: Expect{Cancelled: true},
		Description: desc}}
}

// codexForwardsEvery reports whether the codex.js of Codex version passes
// every signal on (0.171.0 does; 0.169.0's passes the first alone).
func codexForwardsEvery(version string) bool {
	return version != "" && fixtures.CompareVersions(version, "0.171.0") >= 0
}

// launcherDescriptions say what each launcher case shows.
var launcherDescriptions = map[string]string{
	"codex":  "the CLI runs behind codex.js, the npm launcher of the native binary where Node has no process.execve (0.169.0's): it passes on only the first SIGINT, SIGTERM or SIGHUP it gets and swallows later ones, so a SIGKILL to the launcher alone leaves the CLI running, holding stdout",
	"gemini": "the CLI runs behind Gemini CLI's npm launcher, which relaunches it as a child and ignores SIGINT, SIGTERM and SIGHUP without passing them on: only a signal to the process group reaches the CLI, and a SIGKILL to the launcher alone leaves the CLI running, holding stdout",
	"claude": "the CLI runs behind cli-wrapper.cjs, Claude Code's npm fallback launcher for an install whose postinstall did not place the native binary (spawnSync): a signal to the launcher kills the launcher alone and never reaches the CLI, which goes on running and holding stdout",
}

// codexLauncherEvery is the codex case's description from 0.171.0 on.
const codexLauncherEvery = "the CLI runs behind codex.js, the npm launcher of the native binary where Node has no process.execve (0.171.0's): it passes every SIGINT, SIGTERM and SIGHUP on, but a SIGKILL to the launcher alone leaves the CLI running, holding stdout"
