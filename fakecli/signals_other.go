//go:build !unix

package fakecli

import (
	"syscall"
)

// signalsByName are the signals transcripts may name.
var signalsByName = map[string]syscall.Signal{
	"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "SIGHUP": syscall.SIGHUP, "SIGKILL": syscall.SIGKILL,
	"SIGQUIT": syscall.SIGQUIT, "SIGPIPE": syscall.SIGPIPE,
}

// KillSelf cannot raise a signal here; it returns the status a shell
// reports for death by sig.
func KillSelf(sig syscall.Signal) int { return killSelf(sig) }

// killSelf cannot raise a signal here; it returns the status a shell
// reports for death by sig.
func killSelf(sig syscall.Signal) int { return 128 + int(sig) }

// ignoreSIGPIPE has nothing to do without SIGPIPE.
func ignoreSIGPIPE() {}
