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
// launcher started (it runs as the CLI, without a launcher of its own),
// "grandchild:<params>" for the process a CLI leaves behind. Nobody else
// sets it.
const envRole = "AGENTCONFORM_FAKE_ROLE"

// roleLaunched and rolePrefixGrandchild are the values of envRole.
const (
	roleLaunched         = "launched"
	rolePrefixGrandchild = "grandchild:"
)

// grandchildArg is the argument a grandchild is started with, so that it
// reads as what it is in a process listing.
const grandchildArg = "--agentconform-grandchild"

// runTree runs the process faults that make this process something other
// than the CLI: the grandchild a CLI left behind, or the launcher in front
// of the CLI. handled is false when this process is the CLI itself.
func runTree(name string, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) (code int, handled bool) {
	role := env(envRole)
	if spec, ok := strings.CutPrefix(role, rolePrefixGrandchild); ok {
		g, err := faults.ParseGrandchild(spec)
		if err != nil {
			fmt.Fprintf(stderr, "agentconform fake %s: %s: %v\n", name, envRole, err)
			return exitHarness, true
		}
		return runGrandchild(g), true
	}
	if role == roleLaunched || !treeSupported {
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
	return runLauncher(plan.Launcher(), name, args, in, out, errf, stderr), true
}

// startTree does what the process faults ask of the CLI process once it
// runs: it logs the launcher that started it, and starts (and logs) the
// grandchildren a process that runs a turn leaves behind. It logs at once,
// not at the exit as the other faults are logged, so that a CLI killed
// outright still tells what it left behind.
func (p *proc) startTree() {
	if p.plan == nil {
		return
	}
	if p.env(envRole) == roleLaunched {
		if style := p.plan.p.Launcher(); style != "" {
			p.obs.log("fault", "fault", "launcher", "params", map[string]string{"style": style},
				"detail", fmt.Sprintf("started by the %s launcher, pid %d (%s)", style, os.Getppid(), launcherBehaviour[style]))
		}
	}
	gs := p.plan.p.Grandchildren()
	if len(gs) == 0 {
		return
	}
	if isProbe(p.args) {
		for _, g := range gs {
			p.obs.log("fault", "fault", "grandchild", "params", g.Params(), "detail", "not started: this process runs no turn (a --version or --help probe)")
		}
		return
	}
	for _, g := range gs {
		pid, err := startGrandchild(p.cli, g, p.rawStdout, p.stderr)
		if err != nil {
			p.obs.log("fault", "fault", "grandchild", "params", g.Params(), "detail", "not started: "+err.Error())
			continue
		}
		how := "stdout and stderr to /dev/null"
		if g.Stdout {
			how = "stdout and stderr inherited, so they stay open while it lives"
		}
		if g.Ignore {
			how += "; ignores SIGINT, SIGTERM and SIGHUP"
		}
		p.obs.log("fault", "fault", "grandchild", "params", g.Params(),
			"detail", fmt.Sprintf("started pid %d in the CLI's process group (%s); it lives %s unless killed", pid, how, g.Life))
	}
}

// launcherBehaviour says how each launcher handles signals, for the log.
var launcherBehaviour = map[string]string{
	"codex":  "forwards the first SIGINT, SIGTERM or SIGHUP, swallows later ones, ends as its child ended",
	"gemini": "ignores SIGINT, SIGTERM and SIGHUP and forwards none, exits with its child's status",
	"claude": "forwards no signal and dies of SIGINT, SIGTERM or SIGHUP itself",
}

// isProbe reports whether a CLI invocation only prints a version or usage.
func isProbe(args []string) bool {
	for _, a := range args {
		switch a {
		case "--version", "-v", "-V", "--help", "-h":
			return true
		}
	}
	return false
}
