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

// runTree runs the launcher fault, which makes this process the launcher
// in front of the CLI. handled is false when this process is the CLI
// itself.
func runTree(name string, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) (code int, handled bool) {
	if env(envRole) == roleLaunched || !treeSupported {
		return 0, false
	}
	spec := env(EnvFaults)
	if !strings.Contains(spec, "launcher") {
		return 0, false
	}
	plan, err := faults.Parse(spec, 0)
	if err != nil || plan.Launcher() == "" {
		return 0, false // newProc reports a bad spec
	}
	in, inOK := stdin.(*os.File)
	out, outOK := stdout.(*os.File)
	errf, errOK := stderr.(*os.File)
	if !inOK || !outOK || !errOK {
		return 0, false // not a process of its own (a test's Run): no launcher
	}
	return runLauncher(plan.Launcher(), plan.LauncherForwardsEvery(), name, args, in, out, errf, stderr), true
}

// startTree logs the launcher that started the CLI process, if one did.
// It logs at once, not at the exit as the other faults are logged, so
// that a CLI killed outright still tells it.
func (p *proc) startTree() {
	if p.plan == nil || p.env(envRole) != roleLaunched {
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
