package faults

import (
	"fmt"
	"strings"
	"time"
)

// Process faults change which processes make up the CLI, not what it
// writes: Steps and Stdout leave them alone, and the fake reads them with
// Launcher and Grandchildren, then runs them itself (fakecli's process
// tree). They are the shapes a real CLI takes on a machine: the npm
// launcher of a native binary in front of it, and processes a tool leaves
// behind.
var processDefs = []*faultDef{
	{name: "launcher", kind: "process",
		desc: "Runs the CLI behind its npm launcher: the process the adapter starts is a launcher that starts the fake as its child (same process group, stdin, stdout and stderr inherited) and handles signals as the real launcher does. style=codex: codex.js where Node has no process.execve (before 22.15), which forwards the first SIGINT, SIGTERM or SIGHUP to the child and swallows later ones, and ends as the child ended (its exit status, or the same signal). style=gemini: Gemini CLI's launcher, which ignores SIGINT, SIGTERM and SIGHUP and forwards none, and exits with the child's status (1 for a child killed by a signal). style=claude: Claude Code's fallback launcher cli-wrapper.cjs (spawnSync), which forwards nothing and dies of SIGINT, SIGTERM or SIGHUP itself, leaving the child running. Catches adapters that signal or kill only the process they started: the CLI never sees the signal, or is left running, holding stdout, after its launcher is gone.",
		params: []paramDef{
			{name: "style", kind: kindWord, dflt: "codex", fixed: true, words: launcherStyles,
				meaning: "whose launcher: " + strings.Join(launcherStyles, ", ")},
		}},
	{name: "grandchild", kind: "process",
		desc: "When the CLI process starts a turn (not a --version or --help probe), it starts one more process in its process group that outlives it: a tool's background process (a dev server, a watcher) that the CLI never stops. stdout=1: with the CLI's stdout and stderr inherited, so the pipes stay open after the CLI exits. ignore=1: it ignores SIGINT, SIGTERM and SIGHUP, so only SIGKILL stops it. Catches adapters that stop only the CLI process and not its process group, and adapters that wait for the end of stdout after the CLI has exited.",
		params: []paramDef{
			intParam("stdout", 0, 1, "0", true, "1: inherit the CLI's stdout and stderr (else /dev/null)"),
			intParam("ignore", 0, 1, "0", true, "1: ignore SIGINT, SIGTERM and SIGHUP"),
			intParam("ms", 1, maxMS, "120000", true, "how long it lives unless killed, in milliseconds"),
		}},
}

// launcherStyles are the launchers the launcher fault imitates.
var launcherStyles = []string{"claude", "codex", "gemini"}

func init() { defs = append(defs, processDefs...) }

// Launcher and Grandchildren are read by the fake, which logs what it
// does with them itself (a grandchild's pid is known only once it runs).

// Launcher returns the style of the plan's launcher fault (claude, codex
// or gemini), "" when it has none. With several, the first counts.
func (p *Plan) Launcher() string {
	if p == nil {
		return ""
	}
	for _, f := range p.faults {
		if f.def.name == "launcher" {
			return f.strs["style"]
		}
	}
	return ""
}

// Grandchild is one grandchild fault: the process the CLI leaves behind.
type Grandchild struct {
	// Stdout: the process inherits the CLI's stdout and stderr.
	Stdout bool
	// Ignore: it ignores SIGINT, SIGTERM and SIGHUP.
	Ignore bool
	// Life is how long it lives unless killed.
	Life time.Duration
}

// Grandchildren returns the plan's grandchild faults, in spec order.
func (p *Plan) Grandchildren() []Grandchild {
	if p == nil {
		return nil
	}
	var out []Grandchild
	for _, f := range p.faults {
		if f.def.name == "grandchild" {
			out = append(out, Grandchild{Stdout: f.ints["stdout"] == 1, Ignore: f.ints["ignore"] == 1,
				Life: time.Duration(f.ints["ms"]) * time.Millisecond})
		}
	}
	return out
}

// Spec renders the grandchild as the parameters of its fault, for the
// process that plays it.
func (g Grandchild) Spec() string {
	return fmt.Sprintf("stdout=%d,ignore=%d,ms=%d", b2i(g.Stdout), b2i(g.Ignore), g.Life.Milliseconds())
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ParseGrandchild reads a Spec back (the parameters of a grandchild fault).
func ParseGrandchild(spec string) (Grandchild, error) {
	p, err := Parse("grandchild:"+spec, 0)
	if err != nil {
		return Grandchild{}, err
	}
	gs := p.Grandchildren()
	if len(gs) != 1 {
		return Grandchild{}, fmt.Errorf("faults: %q is not one grandchild", spec)
	}
	return gs[0], nil
}

// Params are the grandchild's parameters, as the observation log shows
// a fault's.
func (g Grandchild) Params() map[string]string {
	return map[string]string{"stdout": fmt.Sprint(b2i(g.Stdout)), "ignore": fmt.Sprint(b2i(g.Ignore)), "ms": fmt.Sprint(g.Life.Milliseconds())}
}
