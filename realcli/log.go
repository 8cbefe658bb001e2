package realcli

import (
	"fmt"
	"os"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// obsLog is the observation log as the wrapper and the relay write it:
// fakecli's writer, or nothing when the runner gave no log.
type obsLog struct {
	w    *fakecli.ObservationWriter
	path string
	pid  int
}

// openLog opens the log the runner named (fakecli.EnvObserve) for the
// CLI known to the adapter as pid, started at start.
func openLog(pid int, start time.Time) *obsLog {
	path := os.Getenv(fakecli.EnvObserve)
	if path == "" {
		return &obsLog{}
	}
	w, err := fakecli.OpenObservationLog(path, pid, start)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentconform real: %v\n", err)
		return &obsLog{}
	}
	return &obsLog{w: w, path: path, pid: pid}
}

// signalledSince reports whether the log holds a signal to this CLI that
// arrived at t or later (since the wrapper's start): the wrapper logs
// each as it comes, the relay reads it here.
func (l *obsLog) signalledSince(t time.Duration) bool {
	if l.path == "" {
		return false
	}
	f, err := os.Open(l.path)
	if err != nil {
		return false
	}
	defer f.Close()
	obs, _ := fakecli.ReadObservations(f) // what parsed: the records before any torn one
	for _, o := range obs {
		if o.PID == l.pid && o.Kind == "signal" && o.TMS >= t.Milliseconds() {
			return true
		}
	}
	return false
}

func (l *obsLog) log(kind string, kv ...any) {
	if l.w != nil {
		l.w.Log(kind, kv...)
	}
}

func (l *obsLog) logAt(at time.Duration, kind string, kv ...any) {
	if l.w != nil {
		l.w.LogAt(at, kind, kv...)
	}
}

func (l *obsLog) flush() {
	if l.w != nil {
		l.w.Flush()
	}
}

func (l *obsLog) close() {
	if l.w != nil {
		l.w.Close()
		l.w = nil
	}
}

// exit logs how the CLI ended: its status, or the signal that killed it.
func (l *obsLog) exit(code int, signal string) {
	if signal != "" {
		l.log("exit", "signal", signal)
	} else {
		l.log("exit", "code", code)
	}
	l.flush()
}

// harness reports a wrapper that cannot run as the runner set it up (on
// stderr and in the log) and returns exitHarness.
func (l *obsLog) harness(format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(os.Stderr, "agentconform real: %s\n", msg)
	l.log("note", "message", "the wrapper could not run: "+msg)
	l.exit(exitHarness, "")
	return exitHarness
}

// envMarks are the variables of fakecli.AdapterEnv set in this process's
// environment (names only), as a fake's start record lists them.
func envMarks() []string {
	var out []string
	for _, k := range fakecli.AdapterEnv() {
		if os.Getenv(k) != "" {
			out = append(out, k)
		}
	}
	return out
}
