package fakecli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentconform/agentconform/fakecli/faults"
)

// envRole tells a fake process that another fake started it for a process
// fault (fakecli/README.md, "Process faults"): "launched" for the CLI a
// launcher started (it runs as the CLI, without a launcher of its own).
// Nobody else sets it.
const envRole = "AGENTCONFORM_FAKE_ROLE"

// roleLaunched is the value of envRole for the CLI a launcher started.
const roleLaunched = "launched"

// runTree makes this process the launcher in front of the CLI: for the
// launcher fault, and for Gemini CLI always, as its npm install does (see
// geminiRelaunches). handled is false when this process is the CLI itself.
func runTree(name string, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) (code int, handled bool) {
	if env(envRole) == roleLaunched || !treeSupported {
		return 0, false
	}
	style, every := "", false
	if spec := env(EnvFaults); strings.Contains(spec, "launcher") {
		plan, err := faults.Parse(spec, 0)
		if err != nil || plan.Launcher() == "" {
			return 0, false // newProc reports a bad spec
		}
		style, every = plan.Launcher(), plan.LauncherForwardsEvery()
	}
	if style == "" && name == "gemini" && geminiRelaunches(env) {
		style = "gemini"
	}
	if style == "" {
		return 0, false
	}
	in, inOK := stdin.(*os.File)
	out, outOK := stdout.(*os.File)
	errf, errOK := stderr.(*os.File)
	if !inOK || !outOK || !errOK {
		return 0, false // not a process of its own (a test's Run): no launcher
	}
	return runLauncher(style, every, name, args, in, out, errf, stderr), true
}

// geminiRelaunches reports whether Gemini CLI runs behind its launcher:
// bundle/gemini.js, the npm package's bin, relaunches itself as its child
// (with GEMINI_CLI_NO_RELAUNCH=true) unless GEMINI_CLI_NO_RELAUNCH or
// SANDBOX is set, whatever the arguments (docs/protocols/gemini.md#launcher).
func geminiRelaunches(env func(string) string) bool {
	return env("GEMINI_CLI_NO_RELAUNCH") == "" && env("SANDBOX") == ""
}

// startTree logs the launcher that started the CLI process, if one did.
// It logs at once, not at the exit as the other faults are logged, so
// that a CLI killed outright still tells it.
func (p *proc) startTree() {
	if p.env(envRole) != roleLaunched {
		return
	}
	if p.plan == nil || p.plan.p.Launcher() == "" {
		if p.cli == "gemini" {
			p.obs.log("fault", "fault", "launcher", "params", map[string]string{"style": "gemini"},
				"detail", fmt.Sprintf("relaunched by Gemini CLI's own launcher, pid %d, as every gemini from npm is (%s)", os.Getppid(), launcherBehaviour["gemini"]))
		}
		return
	}
	if style := p.plan.p.Launcher(); style != "" {
		how := launcherBehaviour[style]
		if p.plan.p.LauncherForwardsEvery() {
			how = launcherForwardsEvery
		}
		p.obs.log("fault", "fault", "launcher", "params", map[string]string{"style": style},
			"detail", fmt.Sprintf("started by the %s launcher, pid %d (%s)", style, os.Getppid(), how))
	}
}

// launcherBehaviour says how each launcher handles signals, for the log.
var launcherBehaviour = map[string]string{
	"codex":  "forwards the first SIGINT, SIGTERM or SIGHUP, swallows later ones, ends as its child ended",
	"gemini": "ignores SIGINT, SIGTERM and SIGHUP and forwards none, exits with its child's status",
	"claude": "forwards no signal and dies of SIGINT, SIGTERM or SIGHUP itself",
}

// launcherForwardsEvery is how codex.js of 0.171.0 handles signals.
const launcherForwardsEvery = "forwards every SIGINT, SIGTERM or SIGHUP, ends as its child ended"
