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
	"time"

	"github.com/agentconform/agentconform/fakecli/faults"
)

// treeSupported: process faults run here.
const treeSupported = true

// runLauncher is the launcher fault: it starts this executable again as
// the CLI (envRole launched), in its own process group and with its own
// stdin, stdout and stderr, and handles signals as the real launcher of
// style does (faults' launcher fault). It returns the launcher's status.
func runLauncher(style, name string, args []string, stdin, stdout, stderr *os.File, errw io.Writer) int {
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
		// codex.js passes one on, and only while child.killed is false,
		// which the first kill that succeeds sets.
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
				if style == "codex" && !forwarded {
					forwarded = cmd.Process.Signal(s) == nil
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

// startGrandchild starts the process a grandchild fault leaves behind:
// this executable again as name (envRole grandchild), in the CLI's process
// group, its stdout and stderr the CLI's when g.Stdout says so (and they
// are files), else /dev/null. It returns the new process's pid.
func startGrandchild(name string, g faults.Grandchild, stdout, stderr io.Writer) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := &exec.Cmd{Path: exe, Args: []string{name, grandchildArg}, Env: append(os.Environ(), envRole+"="+rolePrefixGrandchild+g.Spec())}
	if g.Stdout {
		out, okOut := stdout.(*os.File)
		errf, okErr := stderr.(*os.File)
		if !okOut || !okErr {
			return 0, errors.New("stdout or stderr is not a file this process can hand on")
		}
		cmd.Stdout, cmd.Stderr = out, errf
	}
	// The grandchild closes its end of this pipe once it has set up its
	// signals, so that a signal sent right after the CLI goes on finds it
	// as it is meant to be.
	ready, readyW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer ready.Close()
	cmd.ExtraFiles = []*os.File{readyW}
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		return 0, err
	}
	go cmd.Wait() // reap it if it ends while the CLI still runs
	ready.SetReadDeadline(time.Now().Add(grandchildReady))
	io.Copy(io.Discard, ready)
	return cmd.Process.Pid, nil
}

// grandchildReady bounds the wait for a grandchild to be ready.
const grandchildReady = 10 * time.Second

// readyFD is the grandchild's end of the readiness pipe (ExtraFiles[0]).
const readyFD = 3

// runGrandchild plays a grandchild: it ignores the signals it is asked to
// ignore, and lives its time (or until killed).
func runGrandchild(g faults.Grandchild) int {
	if g.Ignore {
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	}
	os.NewFile(readyFD, "ready").Close() // set up: the CLI may go on
	time.Sleep(g.Life)
	return 0
}
