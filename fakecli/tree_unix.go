//go:build unix

package fakecli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// treeSupported: process faults run here.
const treeSupported = true

// runLauncher is the launcher fault: it starts this executable again as
// the CLI (envRole launched), in its own process group and with its own
// stdin, stdout and stderr, and handles signals as the real launcher of
// style does (faults' launcher fault; every: codex.js passes every signal
// on, not only the first). It returns the launcher's status.
func runLauncher(style string, every bool, name string, args []string, stdin, stdout, stderr *os.File, errw io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(errw, "agentconform fake %s launcher: %v\n", name, err)
		return exitHarness
	}
	argv0 := os.Args[0]
	if n, ok := IsFake(argv0); !ok || n != name {
		argv0 = name
	}
	cmd := &exec.Cmd{Path: exe, Args: append([]string{argv0}, args...), Env: append(os.Environ(), envRole+"="+roleLaunched),
		Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var sigs chan os.Signal
	switch style {
	case "codex", "gemini":
		// Both install handlers (so neither dies of these signals); only
		// codex.js passes them on: 0.169.0's only while child.killed is
		// false, which the first kill that succeeds sets; 0.171.0's every
		// one, until the child exits.
		sigs = make(chan os.Signal, 8)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	}
	// claude: cli-wrapper.cjs blocks in spawnSync with no handler, so these
	// signals end the launcher by their default action.
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(errw, "agentconform fake %s launcher: starting the CLI: %v\n", name, err)
		return 1
	}
	if sigs != nil {
		go func() {
			forwarded := false
			for s := range sigs {
				if style == "codex" && (every || !forwarded) {
					forwarded = cmd.Process.Signal(s) == nil || forwarded
				}
			}
		}()
	}
	werr := cmd.Wait()
	if sigs != nil {
		signal.Stop(sigs)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		if werr != nil && !errors.As(werr, new(*exec.ExitError)) {
			return 1
		}
		return cmd.ProcessState.ExitCode()
	}
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	switch style {
	case "codex":
		// process.kill(process.pid, signal), with 128+N as the fallback.
		return killSelf(ws.Signal())
	case "gemini":
		return 1 // code ?? 1: a child killed by a signal has no code
	}
	return 128 + int(ws.Signal())
}
