//go:build unix

package fakecli_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
)

// sdkArgs is how the official Claude Agent SDK starts the CLI (with a
// canUseTool callback, hence the stdio permission prompt tool).
var sdkArgs = append(append([]string(nil), claudeStream...), "--permission-prompt-tool", "stdio")

// sdkClient drives a Claude fake as the official Claude Agent SDK does: it
// sends initialize and waits for the answer before it sends the first user
// message, answers can_use_tool with allow, never interrupts, sends the
// next of turns user messages after each result, closes stdin after the
// last result and waits for the exit. It returns the exit status and the
// results' subtypes, or an error saying where it waited in vain for
// stuck.
func sdkClient(t *testing.T, f *fakecli.Fakes, turns int, stuck time.Duration) (int, []string, error) {
	t.Helper()
	l := startFake(t, f, "claude", sdkArgs, cmdOpts{})
	var seen []string
	read := func(what string) (map[string]any, error) {
		select {
		case s, ok := <-l.lines:
			if !ok {
				return nil, fmt.Errorf("stdout closed while waiting for %s; so far:\n%s", what, strings.Join(seen, "\n"))
			}
			seen = append(seen, s)
			var m map[string]any
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				return nil, fmt.Errorf("stdout line is not JSON: %v: %s", err, s)
			}
			return m, nil
		case <-time.After(stuck):
			return nil, fmt.Errorf("no stdout line within %v while waiting for %s; so far:\n%s", stuck, what, strings.Join(seen, "\n"))
		}
	}
	l.send(`{"type":"control_request","request_id":"req_1_sdk","request":{"subtype":"initialize","hooks":null}}`)
	for {
		ev, err := read("the answer to initialize")
		if err != nil {
			return 0, nil, err
		}
		if ev["type"] == "control_response" && lookup(ev, "/response/request_id") == "req_1_sdk" {
			break
		}
	}
	var results []string
	for turn := 1; turn <= turns; turn++ {
		l.send(user(fmt.Sprintf("turn %d", turn)))
		for {
			ev, err := read(fmt.Sprintf("the result of turn %d", turn))
			if err != nil {
				return 0, results, err
			}
			if ev["type"] == "control_request" && lookup(ev, "/request/subtype") == "can_use_tool" {
				input, _ := json.Marshal(lookup(ev, "/request/input"))
				l.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"behavior":"allow","updatedInput":%s}}}`,
					lookup(ev, "/request_id"), input))
			}
			if ev["type"] == "result" {
				sub, _ := ev["subtype"].(string)
				results = append(results, sub)
				break
			}
		}
	}
	r, _ := l.wait()
	return r.code, results, nil
}

// mainPath is what a fixture does for a client that answers allow and
// never interrupts: its user turns and the status it exits with then.
func mainPath(tr *transcript.Transcript) (turns, exit int) {
	labels := transcript.Labels(tr.Steps)
	for i, n := 0, 0; i < len(tr.Steps) && n < 10000; n++ {
		s := tr.Steps[i]
		switch s.Op {
		case transcript.OpIn:
			if s.Match["type"] == "user" {
				turns++
			}
			if j := slices.IndexFunc(s.Cases, func(c transcript.Case) bool { return c.Goto == "allow" }); j >= 0 {
				i = labels[s.Cases[j].Goto]
				continue
			}
		case transcript.OpGoto:
			i = labels[s.Label]
			continue
		case transcript.OpExit:
			return max(turns, 1), s.Code
		}
		i++
	}
	return max(turns, 1), -1
}

// TestVersionedFixturesSDKClient: a client that waits for the answer to
// initialize before it sends a user message, and never interrupts (the
// official Claude Agent SDK, conformance/drivers/claude-agent-sdk), runs
// every Claude fixture of every version, the default set's too, to its
// end: each turn's result, then the exit the fixture records. The same
// client hangs on the fixtures as the versioned sets had them: the
// initialize answer after the first user message, and an interrupt
// fixture that waits for the interrupt.
func TestVersionedFixturesSDKClient(t *testing.T) {
	t.Parallel()
	vs, err := fixtures.Versions("claude")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	all, err := fixtures.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range all {
		if strings.HasPrefix(fx.Name, "claude/") {
			names = append(names, fx.Name)
		}
	}
	for _, v := range vs {
		set, err := fixtures.AllVersion("claude", v)
		if err != nil {
			t.Fatal(err)
		}
		for _, fx := range set {
			names = append(names, fx.Name)
		}
	}
	for _, must := range []string{"claude/2.1.329/interrupt", "claude/2.1.329/permission-deny", "claude/2.1.329/multi-turn", "claude/2.1.197/permission-allow"} {
		if !slices.Contains(names, must) {
			t.Fatalf("no fixture %s", must)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr, err := fixtures.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			turns, exit := mainPath(tr)
			f := fakecli.Start(t, fakecli.Options{Fixture: name, Timing: "0.01"})
			code, results, err := sdkClient(t, f, turns, lineTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if code != exit || len(results) != turns {
				t.Errorf("exit %d after results %v; want exit %d after %d results", code, results, exit, turns)
			}
		})
	}

	// As the versioned sets were: the answer to initialize after the
	// first user message ...
	t.Run("broken/answer-after-user", func(t *testing.T) {
		t.Parallel()
		tr, err := fixtures.Load("claude/2.1.329/multi-turn")
		if err != nil {
			t.Fatal(err)
		}
		if tr.Steps[1].Op != transcript.OpOut || tr.Steps[2].Match["type"] != "user" {
			t.Fatalf("claude/2.1.329/multi-turn does not begin initialize, answer, user")
		}
		tr.Steps[1], tr.Steps[2] = tr.Steps[2], tr.Steps[1]
		f := fakecli.Start(t, fakecli.Options{Transcript: saveTranscript(t, tr), Timing: "0.01"})
		if _, _, err := sdkClient(t, f, 2, 2*time.Second); err == nil || !strings.Contains(err.Error(), "waiting for the answer to initialize") {
			t.Errorf("the answer after the user message: %v; want the client stuck at initialize", err)
		}
	})
	// ... and an interrupt fixture that waits for the interrupt.
	t.Run("broken/waits-for-interrupt", func(t *testing.T) {
		t.Parallel()
		tr, err := fixtures.Load("claude/2.1.329/interrupt")
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(tr.Steps, func(s transcript.Step) bool { return s.Op == transcript.OpDelay && len(s.Cases) > 0 })
		if i < 0 {
			t.Fatal("claude/2.1.329/interrupt has no window")
		}
		w := tr.Steps[i]
		tr.Steps[i] = transcript.Step{Op: transcript.OpIn, T: w.T, Match: w.Cases[0].Match, Capture: w.Capture}
		tr.Steps = slices.Insert(tr.Steps, i+1, transcript.Step{Op: transcript.OpGoto, Label: w.Cases[0].Goto})
		f := fakecli.Start(t, fakecli.Options{Transcript: saveTranscript(t, tr), Timing: "0.01"})
		if _, _, err := sdkClient(t, f, 1, 2*time.Second); err == nil || !strings.Contains(err.Error(), "waiting for the result of turn 1") {
			t.Errorf("an in step for the interrupt: %v; want the client stuck before the result", err)
		}
	})
}
