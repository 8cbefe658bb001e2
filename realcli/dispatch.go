package realcli

import (
	"fmt"
	"os"

	"github.com/agentconform/agentconform/fakecli"
)

// Dispatch runs this process as the wrapper, or as one of its helper
// processes, when its environment says so, and returns the exit status;
// ok is false for any other process, which goes on as it would (a fake,
// the agentconform command). The executables that act as the fakes call
// it first, so that one installed set of claude, codex and gemini serves
// both kinds of run.
func Dispatch(argv0 string) (code int, ok bool) {
	switch os.Getenv(envRole) {
	case roleRelay:
		return runRelay(), true
	case roleCanaryArm:
		return armCanary(), true
	}
	path := os.Getenv(EnvConfig)
	if path == "" {
		return 0, false
	}
	name, isCLI := fakecli.IsFake(argv0)
	if !isCLI {
		return 0, false
	}
	cfg, err := ReadConfig(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentconform real %s: %v\n", name, err)
		return exitHarness, true
	}
	if cfg.CLI != name {
		fmt.Fprintf(os.Stderr, "agentconform real %s: the configuration is for %s\n", name, cfg.CLI)
		return exitHarness, true
	}
	return wrap(cfg, os.Args[1:]), true
}

// Main is the TestMain hook for a test binary that acts as the fakes and
// as the wrapper (fakecli.Main, with Dispatch first):
//
//	func TestMain(m *testing.M) { realcli.Main(m) }
func Main(m interface{ Run() int }) {
	if code, ok := Dispatch(os.Args[0]); ok {
		os.Exit(code)
	}
	fakecli.Main(m)
}

// exitHarness is the status of a wrapper that cannot run because the
// runner set it up wrongly, as a fake's is (fakecli's exitHarness).
const exitHarness = 2
