// Package fakecli holds fake `claude`, `codex` and `gemini` executables: one
// entry point that acts as whichever CLI it was started as, parses that
// CLI's real flag surface, replays a transcript (package transcript) in both
// directions, keeps sessions for resume, answers signals as the real CLI
// does, and injects faults (package fakecli/faults). An adapter under test
// must not be able to tell a fake from the real CLI, except that the fake is
// instant, free, deterministic, and misbehaves when asked to.
//
// The behaviour contract is fakecli/README.md; the facts about the real
// CLIs it imitates are in docs/protocols.
//
// Three ways to get a fake:
//   - `agentconform fake install DIR` writes claude, codex and gemini into
//     DIR as links to the agentconform binary, whose main calls Run when
//     IsFake says it was started under one of those names;
//   - Go tests call Main from TestMain, so the test binary itself acts as
//     the fakes, and Start hands a test a directory to put first on PATH;
//   - any program may call Run.
package fakecli

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
)

// The environment variables that steer a fake (fakecli/README.md,
// "Environment").
const (
	// EnvTranscript names a transcript file to replay (any form
	// transcript.Load reads).
	EnvTranscript = "AGENTCONFORM_TRANSCRIPT"
	// EnvFixture names an embedded fixture to replay, e.g. "codex/single-tool".
	EnvFixture = "AGENTCONFORM_FIXTURE"
	// EnvTiming is "fast" (the default), "recorded", or a scale factor.
	EnvTiming = "AGENTCONFORM_TIMING"
	// EnvSessions is the directory of the session store used for resume.
	EnvSessions = "AGENTCONFORM_SESSIONS"
	// EnvObserve is the file the observation log is appended to.
	EnvObserve = "AGENTCONFORM_OBSERVE"
	// EnvWire is a directory where each fake process copies every byte it
	// writes to stdout into <pid>.out: exactly what the adapter received,
	// faults included. The conformance runner's lossless checks read it.
	EnvWire = "AGENTCONFORM_WIRE"
	// EnvFaults is the fault spec (package fakecli/faults).
	EnvFaults = "AGENTCONFORM_FAULTS"
	// EnvSeed seeds everything a fake chooses at random (default 1).
	EnvSeed = "AGENTCONFORM_SEED"
	// EnvFaultsScope is "first" to apply EnvFaults only in the first fake
	// process of a session store that runs a turn (not a --version or
	// --help probe): a stall meant for the first turn must not stall the
	// process an adapter starts to resume the session. "later" applies
	// them in every such process but the first: a later turn's process
	// that is slow to start.
	EnvFaultsScope = "AGENTCONFORM_FAULTS_SCOPE"
)

// Names are the CLI names a fake answers to, in a stable order.
var Names = []string{"claude", "codex", "gemini"}

// IsFake reports whether a program started as argv0 (a path or a bare
// name) should act as a fake CLI, and which: the base name, without a
// ".exe" suffix, must be "claude", "codex" or "gemini".
func IsFake(argv0 string) (string, bool) {
	base := filepath.Base(argv0)
	base = strings.TrimSuffix(base, ".exe")
	for _, n := range Names {
		if base == n {
			return n, true
		}
	}
	return "", false
}

// mainCalled records that Main ran in this process, so Start can refuse to
// hand out links to a test binary that would not act as a fake (it would
// run its tests again, recursively).
var mainCalled atomic.Bool

// Main is the TestMain hook that lets a Go test binary act as the fakes
// (the testscript RunMain pattern): when the binary was started as claude,
// codex or gemini it runs that fake and exits with its status; otherwise it
// runs the tests (m.Run()) and exits with their status. Call it as
//
//	func TestMain(m *testing.M) { fakecli.Main(m) }
func Main(m interface{ Run() int }) {
	if name, ok := IsFake(os.Args[0]); ok {
		os.Exit(RunProcess(name))
	}
	mainCalled.Store(true)
	os.Exit(m.Run())
}

// RunProcess is Run for a whole process started as name: the process's
// arguments, standard streams and environment, and a Go collector that
// stays out of the way. A fake holds nearly everything it allocates until
// it exits (the transcript, the lines it writes), so a collection frees
// little; during a 64 MiB line it cost more than the line, its stack scans
// interrupting the copies with thousands of signals. It collects only near
// fakeMemoryLimit, which a long session may reach.
func RunProcess(name string) int {
	debug.SetGCPercent(-1)
	if debug.SetMemoryLimit(-1) == math.MaxInt64 { // GOMEMLIMIT not set
		debug.SetMemoryLimit(fakeMemoryLimit)
	}
	return Run(name, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
}

// fakeMemoryLimit is the heap a fake process grows to before it collects:
// four times the largest line it replays (the 64 MiB ladder line), which
// it holds about twice while it writes it.
const fakeMemoryLimit = 256 << 20

// Run acts as the CLI name ("claude", "codex" or "gemini") invoked with
// args (without argv[0]), and returns the process exit status. env looks
// up environment variables (os.Getenv in a real process).
//
// Run owns the process while it runs: it handles SIGINT, SIGTERM and
// SIGHUP, ignores SIGPIPE, and a transcript's exit_signal (or a die
// action) makes the process kill itself with that signal, so that its
// parent sees death by signal. Run returns 128+N only if that kill did not
// end the process.
func Run(name string, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) int {
	if env == nil {
		env = func(string) string { return "" }
	}
	if code, handled := runTree(name, args, stdin, stdout, stderr, env); handled {
		return code // the launcher in front of the CLI (process faults)
	}
	p, err := newProc(name, args, stdin, stdout, stderr, env)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform fake %s: %v\n", name, err)
		return exitHarness
	}
	defer p.close()
	p.startTree()
	var code int
	switch name {
	case "claude":
		code = runClaude(p)
	case "codex":
		code = runCodex(p)
	case "gemini":
		code = runGemini(p)
	default:
		fmt.Fprintf(stderr, "agentconform fake: %q is not claude, codex or gemini\n", name)
		return exitHarness
	}
	return p.finish(code)
}

// exitHarness is the status of a fake that cannot run because the harness
// set it up wrongly (a bad transcript, a CLI mismatch, a bad fault spec):
// not a status any real CLI gives for that reason, so it stands out.
const exitHarness = 2
