//go:build unix

package fakecli_test

import (
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// TestTiming: "recorded" replays at the recorded pace, a factor scales
// it, and "fast" does not wait. Times count from stdin EOF (the last input),
// as the real CLI starts its work then.
func TestTiming(t *testing.T) {
	fx, err := loadFixture("codex/plain-text")
	if err != nil {
		t.Fatal(err)
	}
	steps := fx.Processes()[0]
	var first, last int64
	for _, st := range steps {
		if st.T != nil {
			if first == 0 {
				first = *st.T
			}
			last = *st.T
		}
	}
	span := time.Duration(last-first) * time.Millisecond
	if span < 100*time.Millisecond {
		t.Skipf("codex/plain-text spans only %v", span)
	}
	for _, tc := range []struct {
		timing   string
		min, max time.Duration
	}{
		{"fast", 0, span / 2},
		{"recorded", span * 9 / 10, span*2 + time.Second},
		{"0.5", span * 9 / 20, span + time.Second},
	} {
		t.Run(tc.timing, func(t *testing.T) {
			f := fakecli.Start(t, fakecli.Options{Fixture: "codex/plain-text", Timing: tc.timing})
			t0 := time.Now()
			r := runFake(t, f, "codex", append(codexExec, "hi"), cmdOpts{})
			d := time.Since(t0)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if d < tc.min || d > tc.max {
				t.Errorf("took %v, want %v to %v", d, tc.min, tc.max)
			}
		})
	}
}
