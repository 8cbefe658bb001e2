//go:build unix

package fakecli_test

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

// TestClaudeSIGINTBeforeInitCaptured: a SIGINT that comes while the CLI
// is still starting its turn is held until the turn begins, then the
// turn is interrupted: system/init, "[Request interrupted by user]", an
// error result (aborted_streaming), exit 0 (capture
// 2.1.331/sigint-during-startup: the signal came 700 ms after the start,
// system/init later). A CLI stuck before its system/init never acts on
// it: SIGTERM ends it.
func TestClaudeSIGINTBeforeInitCaptured(t *testing.T) {
	capt := loadClaudeCapture(t, "2.1.331", "sigint-during-startup")
	var want []string
	code := -1
	for _, s := range capt.Steps {
		switch s.Op {
		case transcript.OpOut:
			want = append(want, kindOf(s.Text))
			if kindOf(s.Text) == "system/init" && (s.T == nil || *s.T <= 700) {
				t.Fatalf("capture: system/init at %v ms, not after the signal at 700 ms", s.T)
			}
		case transcript.OpExit:
			code = s.Code
		}
	}
	if strings.Join(want, ",") != "system/init,user,result/error_during_execution" || code != 0 {
		t.Fatalf("capture: %v, exit %d", want, code)
	}

	// The plain-text capture, its system/init 1.5 s after the start.
	tr := loadClaudeCapture(t, "2.1.331", "plain-text")
	var steps []transcript.Step
	for _, s := range tr.Steps {
		if s.Op == transcript.OpOut && kindOf(s.Text) == "system/init" {
			steps = append(steps, transcript.Step{Op: transcript.OpDelay, DelayMS: 1500})
		}
		steps = append(steps, s)
	}
	tr.Steps = steps
	f := fakecli.Start(t, fakecli.Options{Transcript: saveTranscript(t, tr)})
	l := startFake(t, f, "claude", []string{"-p", "hello", "--output-format", "stream-json", "--verbose"}, cmdOpts{})
	afterStart(t, f, 300*time.Millisecond)
	l.signal(syscall.SIGINT)
	r, rest := l.wait()
	var got []string
	for _, line := range rest {
		got = append(got, kindOf(line))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || r.code != 0 || !strings.Contains(r.stdout, `"terminal_reason":"aborted_streaming"`) {
		t.Errorf("SIGINT before system/init: %v, exit %d; the real CLI: %v, exit 0\n%s", got, r.code, want, r.stdout)
	}

	// Stuck before system/init: SIGINT is held, SIGTERM ends it.
	f = fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text", Faults: "stall:after=0"})
	l = startFake(t, f, "claude", []string{"-p", "hello", "--output-format", "stream-json", "--verbose"}, cmdOpts{})
	afterStart(t, f, 300*time.Millisecond)
	l.signal(syscall.SIGINT)
	l.quiet(500 * time.Millisecond)
	l.signal(syscall.SIGTERM)
	if r, rest := l.wait(); r.code != 143 || len(rest) != 0 {
		t.Errorf("stuck before system/init, SIGINT then SIGTERM: exit %d, %v; want 143 and nothing", r.code, rest)
	}
}

// afterStart waits until the fake has logged its start record (its
// signal handlers are installed by then), then d more of the fake's own
// time: a fixed sleep from the test's side is too short when a loaded
// machine is slow to start the process.
func afterStart(t *testing.T, f *fakecli.Fakes, d time.Duration) {
	t.Helper()
	awaitRecord(t, f, "start")
	time.Sleep(d)
}

// awaitRecord waits until the fake's observation log holds a record of
// kind: that the fake has got so far, say, before the test closes its
// stdin (a signal and an EOF sent together reach it in either order).
func awaitRecord(t *testing.T, f *fakecli.Fakes, kind string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if fh, err := os.Open(f.ObserveLog); err == nil {
			obs, _ := fakecli.ReadObservations(fh)
			fh.Close()
			for _, o := range obs {
				if o.Kind == kind {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the fake logged no %s record within a minute", kind)
}
