package reference

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/reference/unified"
)

// interruptOnTool interrupts the session once, when the first tool starts.
func interruptOnTool() func(s *Session[unified.Event], ev unified.Event) {
	var once sync.Once
	return func(s *Session[unified.Event], ev unified.Event) {
		if _, ok := ev.(*unified.ToolStarted); ok {
			once.Do(func() {
				if !s.Interrupt() {
					panic("Interrupt found no running turn") // cannot happen while a turn hands out events
				}
			})
		}
	}
}

// TestInterrupt interrupts each CLI while its tool runs (the fixtures'
// 30 s delay): Claude gets a control_request interrupt in the envelope and
// ends the turn with error_during_execution; Codex and Gemini get SIGINT
// and end without a terminal event. The turn is reported interrupted, the
// session continues, and ends cancelled.
func TestInterrupt(t *testing.T) {
	for _, agent := range Agents {
		t.Run(string(agent), func(t *testing.T) {
			fakes := fakecli.Start(t, fakecli.Options{Fixture: string(agent) + "/interrupt"})
			cfg := fakeConfig(t, agent, fakes)
			cfg.Permission = PermissionAllow
			run := runTurns(t, cfg, []string{"Run the end-to-end tests."}, interruptOnTool())
			if run.elapsed > 20*time.Second {
				t.Errorf("took %s: the interrupt did not cut the 30 s tool short", run.elapsed)
			}
			res := run.results[0]
			if res.OK || !res.Interrupted || res.SessionEnded {
				t.Errorf("turn: %+v, want interrupted, the session still open", res)
			}
			if run.closeErr != nil {
				t.Errorf("Close: %v", run.closeErr)
			}
			checkStream(t, "interrupt", ProfileUnified, encode(t, run.events))
			done := ofType[*unified.ToolCompleted](run.events)
			if len(done) != 1 || done[0].Success {
				t.Errorf("toolCompleted: %+v, want one, failed", done)
			}
			ended := ofType[*unified.SessionEnded](run.events)
			if len(ended) != 1 || ended[0].Reason != unified.ReasonCancelled {
				t.Errorf("sessionEnded: %+v, want cancelled", ended)
			}
			obs := observations(t, fakes)
			switch agent {
			case Claude:
				var sent bool
				for _, m := range stdinObjects(t, obs) {
					if m["type"] == "control_request" {
						if r, _ := m["request"].(map[string]any); r["subtype"] == "interrupt" {
							sent = true
						}
					}
				}
				if !sent {
					t.Error("no control_request interrupt on stdin")
				}
				if sig := obsOf(obs, "signal"); len(sig) > 0 {
					t.Errorf("claude got signals %+v; it should be interrupted in-band", sig)
				}
			default:
				sig := obsOf(obs, "signal")
				if len(sig) == 0 || sig[0].Signal != "SIGINT" {
					t.Errorf("signals %+v, want SIGINT first", sig)
				}
			}
		})
	}
}

// TestInterruptThenNextTurn: after an interrupted Codex turn the session
// goes on with the next turn, resumed. (The thread id is a UUID: Codex
// takes any other word after resume for a thread's name.)
func TestInterruptThenNextTurn(t *testing.T) {
	tr := writeTranscript(t, "codex",
		`{"on_signal":{"SIGINT":"exit:1"}}`,
		`{"stdin_eof":true}`,
		out(`{"type":"thread.started","thread_id":"0199c0de-0000-7000-8000-000000000001"}`),
		out(`{"type":"turn.started"}`),
		out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"sleep 100","aggregated_output":"","exit_code":null,"status":"in_progress"}}`),
		`{"delay_ms":60000}`,
		`{"exit":0}`,
		`{"next_process":true}`,
		`{"stdin_eof":true}`,
		out(`{"type":"thread.started","thread_id":"0199c0de-0000-7000-8000-000000000001"}`),
		out(`{"type":"turn.started"}`),
		out(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Stopped; what next?"}}`),
		out(`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":2,"reasoning_output_tokens":0}}`),
		`{"exit":0}`,
	)
	fakes := fakecli.Start(t, fakecli.Options{Transcript: tr})
	run := runTurns(t, fakeConfig(t, Codex, fakes), []string{"sleep", "next"}, interruptOnTool())
	if r := run.results; !r[0].Interrupted || !r[1].OK {
		t.Fatalf("turns: %+v", r)
	}
	checkStream(t, "interrupt-then-turn", ProfileUnified, encode(t, run.events))
	ended := ofType[*unified.SessionEnded](run.events)
	if len(ended) != 1 || ended[0].Reason != unified.ReasonCompleted {
		t.Errorf("sessionEnded: %+v, want completed (the last turn completed)", ended)
	}
	if ids := ofType[*unified.ToolStarted](run.events); len(ids) != 1 || ids[0].ToolID != "item_0" {
		t.Errorf("toolStarted: %+v", ids)
	}
}

// TestInterruptEscalation: a CLI that ignores SIGINT and SIGTERM is killed
// after the grace periods, and the turn still ends (interrupted) in
// bounded time.
func TestInterruptEscalation(t *testing.T) {
	tr := writeTranscript(t, "gemini",
		`{"on_signal":{"SIGINT":"ignore","SIGTERM":"ignore"}}`,
		out(`{"type":"init","timestamp":"2026-11-21T00:00:00Z","session_id":"g-1","model":"auto"}`),
		out(`{"type":"tool_use","timestamp":"2026-11-21T00:00:00Z","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"sleep 100"}}`),
		`{"delay_ms":60000}`,
		`{"exit":0}`,
	)
	fakes := fakecli.Start(t, fakecli.Options{Transcript: tr})
	cfg := fakeConfig(t, Gemini, fakes)
	cfg.InterruptGrace, cfg.StopGrace = 300*time.Millisecond, 300*time.Millisecond
	run := runTurns(t, cfg, []string{"sleep"}, interruptOnTool())
	if run.elapsed > 10*time.Second {
		t.Errorf("took %s", run.elapsed)
	}
	if res := run.results[0]; !res.Interrupted || res.OK {
		t.Errorf("turn: %+v, want interrupted", res)
	}
	// The CLI survived SIGINT and SIGTERM (it ignores them) for both grace
	// periods, and did not exit by itself: SIGKILL, which no one can
	// record, ended it.
	if min := cfg.InterruptGrace + cfg.StopGrace; run.elapsed < min {
		t.Errorf("took %s, less than the %s of the two grace periods", run.elapsed, min)
	}
	obs := observations(t, fakes)
	if ex := obsOf(obs, "exit"); len(ex) > 0 {
		t.Errorf("the fake exited by itself: %+v", ex)
	}
	// The fake may log the signals it ignored; if it does, they are
	// SIGINT then SIGTERM.
	var sigs []string
	for _, o := range obsOf(obs, "signal") {
		sigs = append(sigs, o.Signal)
	}
	if len(sigs) > 0 && strings.Join(sigs, ",") != "SIGINT,SIGTERM" {
		t.Errorf("signals %v, want SIGINT then SIGTERM", sigs)
	}
	checkStream(t, "escalation", ProfileUnified, encode(t, run.events))
}

// TestCloseEscalation: a Claude that neither exits at stdin EOF nor on
// SIGTERM is killed; Close says so, in bounded time.
func TestCloseEscalation(t *testing.T) {
	tr := writeTranscript(t, "claude",
		`{"on_signal":{"SIGINT":"ignore","SIGTERM":"ignore"}}`,
		`{"in":{"type":"user"}}`,
		out(`{"type":"system","subtype":"init","session_id":"c-1","model":"m","cwd":"/x","tools":[],"permissionMode":"default"}`),
		out(`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"}]},"session_id":"c-1"}`),
		out(`{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"num_turns":1,"result":"hi","session_id":"c-1","usage":{"input_tokens":1,"output_tokens":1}}`),
		`{"delay_ms":60000}`,
		`{"exit":0}`,
	)
	fakes := fakecli.Start(t, fakecli.Options{Transcript: tr})
	cfg := fakeConfig(t, Claude, fakes)
	cfg.StopGrace = 300 * time.Millisecond
	run := runTurns(t, cfg, []string{"hi"}, nil)
	if !run.results[0].OK {
		t.Fatalf("turn: %+v", run.results[0])
	}
	if run.closeErr == nil || !strings.Contains(run.closeErr.Error(), "did not exit") {
		t.Errorf("Close: %v, want the CLI reported as stopped", run.closeErr)
	}
	if run.elapsed > 10*time.Second {
		t.Errorf("took %s", run.elapsed)
	}
	ended := ofType[*unified.SessionEnded](run.events)
	if len(ended) != 1 || ended[0].Reason != unified.ReasonFailed {
		t.Errorf("sessionEnded: %+v, want failed", ended)
	}
}

// TestTurnTimeout: a stalled CLI is stopped at the turn's deadline; the
// session stays open for the caller's next turn, and ends (at Close) with
// reason timeout.
func TestTurnTimeout(t *testing.T) {
	fakes := fakecli.Start(t, fakecli.Options{Fixture: "codex/single-tool", Faults: "stall:after=3"})
	cfg := fakeConfig(t, Codex, fakes)
	cfg.TurnTimeout, cfg.StopGrace = 500*time.Millisecond, 300*time.Millisecond
	run := runTurns(t, cfg, []string{"hi"}, nil)
	res := run.results[0]
	if res.OK || !res.TimedOut || res.SessionEnded {
		t.Errorf("turn: %+v, want timed out, the session left open", res)
	}
	ended := ofType[*unified.SessionEnded](run.events)
	if len(ended) != 1 || ended[0].Reason != unified.ReasonTimeout {
		t.Errorf("sessionEnded: %+v, want timeout", ended)
	}
	checkStream(t, "timeout", ProfileUnified, encode(t, run.events))
}

// TestPermission answers Claude's can_use_tool with each policy: exactly
// once, allow with the original input as updatedInput, deny with a
// message; the fake takes the matching branch.
func TestPermission(t *testing.T) {
	for _, perm := range []Permission{PermissionAllow, PermissionDeny} {
		t.Run(string(perm), func(t *testing.T) {
			fakes := fakecli.Start(t, fakecli.Options{Fixture: "claude/permission-" + string(perm)})
			cfg := fakeConfig(t, Claude, fakes)
			cfg.Permission = perm
			run := runTurns(t, cfg, []string{"please create a file"}, nil)
			if !run.results[0].OK {
				t.Fatalf("turn: %+v", run.results[0])
			}
			want := lines(t, oracle(t, "claude/permission-"+string(perm), string(perm), cfg))
			if perm == PermissionDeny {
				// A deny's tool_result carries the client's own message
				// (docs/protocols/claude.md#permission-answers), not the
				// one the capture's client sent.
				for i := range want {
					want[i] = strings.ReplaceAll(want[i], "denied by agentconform capture", denyMessage)
				}
			}
			if diff := cmp.Diff(want, lines(t, run.events)); diff != "" {
				t.Errorf("events differ from the oracle (-want +got):\n%s", diff)
			}
			var answers []map[string]any
			for _, m := range stdinObjects(t, observations(t, fakes)) {
				if m["type"] == "control_response" {
					answers = append(answers, m)
				}
			}
			if len(answers) != 1 {
				t.Fatalf("%d control_responses, want 1: %v", len(answers), answers)
			}
			resp := answers[0]["response"].(map[string]any)
			payload := resp["response"].(map[string]any)
			if resp["subtype"] != "success" || payload["behavior"] != string(perm) {
				t.Errorf("answer %v", answers[0])
			}
			switch perm {
			case PermissionAllow:
				in, _ := json.Marshal(payload["updatedInput"])
				if !strings.Contains(string(in), `"command":"touch created.txt"`) {
					t.Errorf("updatedInput %s is not the original input", in)
				}
			case PermissionDeny:
				if msg, _ := payload["message"].(string); msg == "" {
					t.Error("deny without a message")
				}
			}
			done := ofType[*unified.ToolCompleted](run.events)
			if len(done) != 1 || done[0].Success != (perm == PermissionAllow) {
				t.Errorf("toolCompleted %+v", done)
			}
		})
	}
}

// TestPermissionCancelled: a request the CLI withdraws (an interrupt
// while the decision is pending) is never answered, even when the
// decision comes later.
func TestPermissionCancelled(t *testing.T) {
	fakes := fakecli.Start(t, fakecli.Options{Fixture: "claude/permission-allow"})
	cfg := fakeConfig(t, Claude, fakes)
	asked := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	cfg.CanUseTool = func(ctx context.Context, req PermissionRequest) PermissionDecision {
		once.Do(func() { close(asked) })
		<-release
		return PermissionDecision{Allow: true}
	}
	ctx, cancel := context.WithTimeout(t.Context(), testDeadline)
	defer cancel()
	c := &collector{}
	s, err := StartUnified(ctx, cfg, c.add)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Send(ctx, "please create a file")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the permission callback was never called")
	}
	s.Interrupt()
	res := turn.Wait()
	close(release)
	time.Sleep(200 * time.Millisecond) // room for a wrong late answer to be written
	if err := s.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if !res.Interrupted {
		t.Errorf("turn: %+v, want interrupted", res)
	}
	obs := observations(t, fakes)
	var cancelled bool
	for _, m := range stdinObjects(t, obs) {
		if m["type"] == "control_response" {
			t.Errorf("answered a withdrawn request: %v", m)
		}
	}
	for _, ev := range c.all() {
		if tc, ok := ev.(*unified.ToolCompleted); ok && !tc.Success {
			cancelled = true
		}
	}
	if !cancelled {
		t.Errorf("no failed toolCompleted for the withdrawn call: %s", encode(t, c.all()))
	}
}
