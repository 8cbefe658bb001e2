//go:build unix

package fakecli

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalsByName are the signals transcripts may name.
var signalsByName = map[string]syscall.Signal{
	"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "SIGHUP": syscall.SIGHUP, "SIGKILL": syscall.SIGKILL,
	"SIGQUIT": syscall.SIGQUIT, "SIGPIPE": syscall.SIGPIPE, "SIGUSR1": syscall.SIGUSR1, "SIGUSR2": syscall.SIGUSR2,
}

// KillSelf ends the process by sig with the default disposition, so the
// parent sees death by that signal (what a CLI killed by it looks like).
// It returns 128+sig only if the process survived.
func KillSelf(sig syscall.Signal) int { return killSelf(sig) }

func killSelf(sig syscall.Signal) int {
	signal.Reset(sig)
	if sig == syscall.SIGPIPE {
		// Undo ignoreSIGPIPE: Reset restores the default action.
		signal.Reset(syscall.SIGPIPE)
	}
	_ = syscall.Kill(os.Getpid(), sig)
	// Delivery is asynchronous; give it a moment.
	for i := 0; i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return 128 + int(sig)
}

// ignoreSIGPIPE makes a write to a closed stdout return EPIPE instead of
// killing the process, so each personality can end as its CLI does.
func ignoreSIGPIPE() { signal.Ignore(syscall.SIGPIPE) }
