//go:build unix

package fakecli_test

import (
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// TestClaudeInterruptQueuedBehindPrompt: Claude Code reads stdin in order
// (2.1.331 against the mock model API, initialize, user and interrupt sent
// at once while it loaded): an interrupt that comes after the user message
// ends the turn that message starts, even when both were waiting before
// the turn began; one that comes before the user message is answered with
// the receipt alone and the turn runs.
func TestClaudeInterruptQueuedBehindPrompt(t *testing.T) {
	const (
		initialize = `{"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}`
		interrupt  = `{"type":"control_request","request_id":"r2","request":{"subtype":"interrupt"}}`
	)
	prompt := user("hi")
	for _, fx := range []string{"claude/interrupt", "claude/single-tool", "claude/multi-turn"} {
		for _, tc := range []struct {
			name      string
			stdin     []string
			cancelled bool
		}{
			{"after the prompt", []string{initialize, prompt, interrupt}, true},
			{"before the prompt", []string{initialize, interrupt, prompt}, false},
		} {
			t.Run(fx+"/"+tc.name, func(t *testing.T) {
				f := fakecli.Start(t, fakecli.Options{Fixture: fx, Timing: "0.001"})
				r := runFake(t, f, "claude", claudeStream, cmdOpts{stdin: strings.Join(tc.stdin, "\n") + "\n"})
				var kinds []string
				for _, l := range lines(r.stdout) {
					kinds = append(kinds, kindOf(l))
				}
				results := 0
				for _, l := range lines(r.stdout) {
					if kindOf(l) == "result/error_during_execution" {
						results++
					}
				}
				if cancelled := results > 0; cancelled != tc.cancelled {
					t.Errorf("turn cancelled: %v, want %v; lines %v", cancelled, tc.cancelled, kinds)
				}
				ls := lines(r.stdout)
				// (Before the prompt, a fixture that scripts the initialize
				// answer may write the interrupt's receipt first.)
				if tc.cancelled && (len(ls) < 2 || !strings.Contains(ls[0], `"request_id":"r1"`) || !strings.Contains(ls[1], `"request_id":"r2"`)) {
					t.Errorf("the receipts are not first, in order: %v", kinds)
				}
			})
		}
	}
}
