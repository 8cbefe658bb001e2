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
	took := func(timing string) time.Duration {
		f := fakecli.Start(t, fakecli.Options{Fixture: "codex/plain-text", Timing: timing})
		t0 := time.Now()
		r := runFake(t, f, "codex", append(codexExec, "hi"), cmdOpts{})
		d := time.Since(t0)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", timing, r.code, r.stderr)
		}
		return d
	}
	// Only lower bounds and an order: a loaded machine is slow, never fast.
	fast, recorded, half := took("fast"), took("recorded"), took("0.5")
	if recorded < span*9/10 {
		t.Errorf("recorded took %v, want at least %v", recorded, span*9/10)
	}
	if half < span*9/20 {
		t.Errorf("0.5 took %v, want at least %v", half, span*9/20)
	}
	if fast >= recorded {
		t.Errorf("fast %v, recorded %v: want fast < recorded", fast, recorded)
	}
}
