package fakecli

import (
	"os"
	"syscall"
)

// watchedSignals are the signals a fake handles itself, during any step.
var watchedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// SignalName names a signal as transcripts and observation logs do
// ("SIGTERM"), or as Go does when it has no such name.
func SignalName(s os.Signal) string { return signalName(s) }

// signalName names a signal as transcripts do ("SIGTERM").
func signalName(s os.Signal) string {
	if sig, ok := s.(syscall.Signal); ok {
		for name, v := range signalsByName {
			if v == sig {
				return name
			}
		}
	}
	return s.String()
}

// signalByName resolves a transcript's signal name.
func signalByName(name string) (syscall.Signal, bool) {
	s, ok := signalsByName[name]
	return s, ok
}
