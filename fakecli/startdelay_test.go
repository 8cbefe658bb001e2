//go:build unix

package fakecli_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// TestStartDelay: with start_delay a fake logs its start, then stays
// silent (Claude does not answer initialize) until the time has passed;
// a signal in that time kills it by that signal.
func TestStartDelay(t *testing.T) {
	const delay = 600 * time.Millisecond
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text", Faults: "start_delay:ms=600"})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	begin := time.Now()
	l.send(`{"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}`)
	l.until("the initialize response", typeIs("control_response"))
	if waited := time.Since(begin); waited < delay-50*time.Millisecond {
		t.Errorf("initialize answered after %v, within the %v start delay", waited, delay)
	}
	l.stdin.Close()
	l.wait()

	g := fakecli.Start(t, fakecli.Options{Fixture: "codex/plain-text", Faults: "start_delay:ms=60000"})
	l = startFake(t, g, "codex", []string{"exec", "--json", "--skip-git-repo-check", "hi"}, cmdOpts{})
	for {
		log, _ := g.Observations()
		if len(log) > 0 && log[0].Kind == "start" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	l.signal(syscall.SIGINT)
	r, rest := l.wait()
	if !r.signaled || r.code != 128+int(syscall.SIGINT) || len(rest) > 0 {
		t.Errorf("SIGINT while loading: status %d (signaled %v), stdout %q; want death by SIGINT and nothing written", r.code, r.signaled, rest)
	}
	log, _ := g.Observations()
	var kinds []string
	for _, rec := range log {
		kinds = append(kinds, rec.Kind)
	}
	if len(log) < 3 || log[len(log)-1].Kind != "exit" || log[len(log)-1].Signal != "SIGINT" || !contains(kinds, "signal") {
		t.Errorf("log kinds %v; want start, signal, fault, exit by SIGINT", kinds)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
