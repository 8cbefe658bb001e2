//go:build unix

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
)

// Findings: how the SDKs behave where the fixtures' happy paths do not
// go (a blank stdout line, a line over 1 MiB, a CLI that goes silent, a CLI
// that ignores SIGTERM, NODE_OPTIONS). Each test pins what the SDK does
// today and logs it as a finding; it fails only when the SDK changes, or
// contradicts what it documents.

// editFixture writes a copy of a fixture with its step lines (decoded,
// after the header) edited, and returns the file and the loaded copy.
func editFixture(t *testing.T, name string, edit func(steps []map[string]any) []map[string]any) (string, *transcript.Transcript) {
	t.Helper()
	raw, err := fs.ReadFile(fixtures.FS(), name+".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	var header string
	var steps []map[string]any
	for sc.Scan() {
		if header == "" {
			header = sc.Text()
			continue
		}
		steps = append(steps, decode(t, sc.Text()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(header + "\n")
	for _, s := range edit(steps) {
		line, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), filepath.Base(name)+".jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := transcript.LoadFile(os.DirFS(filepath.Dir(path)), filepath.Base(path), transcript.Options{})
	if err != nil {
		t.Fatalf("the edited %s does not load: %v", name, err)
	}
	return path, tr
}

// insertBeforeFirstOut puts steps before the first out step.
func insertBeforeFirstOut(extra ...map[string]any) func([]map[string]any) []map[string]any {
	return func(steps []map[string]any) []map[string]any {
		for i, s := range steps {
			if _, ok := s["out"]; ok {
				out := append([]map[string]any{}, steps[:i]...)
				out = append(out, extra...)
				return append(out, steps[i:]...)
			}
		}
		return steps
	}
}

// TestClaudeSDKOddLines: the SDK skips a blank stdout line, a line of
// spaces and a line that is not JSON (a banner), consumes keep_alive, and
// hands on an event of a type it does not know.
func TestClaudeSDKOddLines(t *testing.T) {
	t.Parallel()
	path, tr := editFixture(t, "claude/plain-text", insertBeforeFirstOut(
		map[string]any{"out": ""},
		map[string]any{"out": "   "},
		map[string]any{"out": "Warning: not JSON"},
		map[string]any{"out": `{"type":"keep_alive"}`},
		map[string]any{"out": `{"type":"agentconform_unknown_event","session_id":"c5907e5e-8778-4735-ac77-e85e5e09d2db"}`},
	))
	r := startRun(t, claudeSDK, fakecli.Options{Transcript: path})
	turns, p := claudeSession(t, r, nil, "hello")
	checkTurnEnd(t, turns[0].end, true, tr.Header.SessionID)
	samePath(t, []*cliProcess{p}, []int{0, 0, 2, 3, 4, 5, 6, 7, 8, 9, 0})
	want := wantEventsOf(t, tr, []*cliProcess{p}, []synthetic{{control: "control_response"}, hostState, hostState}, claudeView)
	if len(want) != 4 || want[0].(map[string]any)["type"] != "agentconform_unknown_event" {
		t.Fatalf("the expectation should be the unknown event and the fixture's three: %v", want)
	}
	sameEvents(t, claudeSDK, want, events(turns))
	t.Logf("finding: %s %s skips blank and non-JSON stdout lines (a debug log only), consumes keep_alive, hands on unknown types; the turn completes", claudeSDK.pkg, sdkVersion(claudeSDK))
}

// TestCodexSDKUnknownEventType: the SDK hands on an event type it does not
// know, as it is.
func TestCodexSDKUnknownEventType(t *testing.T) {
	t.Parallel()
	path, tr := editFixture(t, "codex/plain-text", insertBeforeFirstOut(
		map[string]any{"out": `{"type":"agentconform.unknown_event","detail":{"n":1}}`},
	))
	r := startRun(t, codexSDK, fakecli.Options{Transcript: path})
	turns, procs := codexSession(t, r, "Say hello in one short sentence.")
	checkTurnEnd(t, turns[0].end, true, tr.Header.SessionID)
	samePath(t, procs, []int{4, 5, 6, 7, 8})
	sameEvents(t, codexSDK, wantEventsOf(t, tr, procs, nil, codexView), events(turns))
}

// TestCodexSDKBlankLine: one blank stdout line ends the Codex SDK's event
// stream: JSON.parse("") throws, runStreamed fails the turn with "Failed
// to parse item: ", and its cleanup sends codex SIGTERM, although codex
// would go on and succeed. The fake may finish its short turn before the
// SIGTERM lands (exit 0) or not (killed): either way the turn is lost.
func TestCodexSDKBlankLine(t *testing.T) {
	t.Parallel()
	path, _ := editFixture(t, "codex/plain-text", insertBeforeFirstOut(map[string]any{"out": ""}))
	r := startRun(t, codexSDK, fakecli.Options{Transcript: path})
	r.start("codex", "Say hello in one short sentence.", nil)
	te := r.turnEnd()
	r.close()
	turns := r.session(1)
	checkTurnEnd(t, te.obj, false, "")
	if te.obj["error"] != "Failed to parse item: " {
		t.Errorf("turn_end error = %v, want the SDK's parse failure", te.obj["error"])
	}
	if len(turns[0].events) != 0 {
		t.Errorf("the SDK handed on %d events after the blank first line, want none", len(turns[0].events))
	}
	procs := r.exited()
	if len(procs) != 1 {
		t.Fatalf("%d codex processes, want 1", len(procs))
	}
	p := procs[0]
	how := "codex was killed mid-turn by the SDK's cleanup"
	switch got := p.exit(); got {
	case "exit 0":
		how = "codex had written its whole turn and exited 0"
	case "signal SIGTERM":
	default:
		t.Errorf("codex ended with %s, want exit 0 (it finished first) or the SDK's SIGTERM", got)
	}
	t.Logf("finding: %s %s fails the turn on a blank stdout line (%q) and hands on nothing after it; %s (%d stdout lines)",
		codexSDK.pkg, sdkVersion(codexSDK), te.obj["error"], how, len(p.kinds("out")))
}

// ladderCase grows one event of a fixture to a line of exactly 1 MiB + 1
// bytes (the fake's ladder fault, nth=1: the first text-bearing event) and
// checks that the SDK hands it on intact. field locates the grown string
// in an event: the object holding it and its key, or nil.
func ladderCase(t *testing.T, s sdk, fx, agent, prompt string, view sdkView, synth []synthetic, field func(ev map[string]any) (map[string]any, string)) {
	const size = 1<<20 + 1 // one byte over the Python SDK's 1 MiB default
	r := startRun(t, s, fakecli.Options{Fixture: fx, Faults: "ladder:size=1048577,nth=1"})
	r.start(agent, prompt, nil)
	te := r.turnEnd()
	r.close()
	turns := r.session(1)
	if te.obj["ok"] != true {
		t.Fatalf("turn_end = %v, want ok", te.obj)
	}
	procs := processes(r.observations())
	faults := procs[0].kinds("fault")
	if len(faults) != 1 || faults[0].Fault != "ladder" {
		t.Fatalf("the fake applied %v, want the ladder", faults)
	}
	// The grown line's out record: size bytes and the newline.
	grownStep := 0
	for _, o := range procs[0].kinds("out") {
		if o.Bytes == size+1 {
			grownStep = o.Step
		}
	}
	if grownStep == 0 {
		t.Fatalf("no stdout line of %d bytes in the observation log (fault: %s)", size+1, faults[0].Detail)
	}
	want := wantEvents(t, fx, procs, synth, view)
	got := events(turns)
	if len(got) != len(want) {
		sameEvents(t, s, want, got)
		return
	}
	// The ladder appends readable ASCII to the field (nothing JSON
	// escapes), so the field must be the fixture's text followed by exactly
	// as many bytes as the line grew; put back, the event must be the
	// fixture's.
	_, steps := loadFixture(t, fx)
	extra := size - len(steps[grownStep].Text)
	grown := 0
	for i := range want {
		w, _ := want[i].(map[string]any)
		g, _ := got[i].(map[string]any)
		if w == nil || g == nil {
			continue
		}
		wm, wk := field(w)
		gm, gk := field(g)
		if wm == nil || gm == nil || wm[wk] == gm[gk] {
			continue
		}
		ws, _ := wm[wk].(string)
		gs, _ := gm[gk].(string)
		if !strings.HasPrefix(gs, ws) || len(gs) != len(ws)+extra || !strings.HasPrefix(gs[len(ws):], " agentconform ladder padding") {
			t.Errorf("event %d: the grown field is %d bytes, want the fixture's %d and %d of padding", i, len(gs), len(ws), extra)
		}
		gm[gk] = ws
		grown++
	}
	if grown != 1 {
		t.Errorf("%d events carry a grown field, want 1", grown)
	}
	sameEvents(t, s, want, got)
	t.Logf("finding: %s %s hands on a %d-byte stdout line intact (readline without a length cap; the Python SDK's default limit is 1 MiB)", s.pkg, sdkVersion(s), size)
}

func TestClaudeSDKLineOver1MiB(t *testing.T) {
	t.Parallel()
	ladderCase(t, claudeSDK, "claude/plain-text", "claude", "hello", claudeView, []synthetic{{control: "control_response"}, hostState, hostState},
		func(ev map[string]any) (map[string]any, string) {
			if ev["type"] != "assistant" {
				return nil, ""
			}
			msg, _ := ev["message"].(map[string]any)
			blocks, _ := msg["content"].([]any)
			if len(blocks) == 0 {
				return nil, ""
			}
			blk, _ := blocks[0].(map[string]any)
			return blk, "text"
		})
}

func TestCodexSDKLineOver1MiB(t *testing.T) {
	t.Parallel()
	ladderCase(t, codexSDK, "codex/plain-text", "codex", "Say hello in one short sentence.", codexView, nil,
		func(ev map[string]any) (map[string]any, string) {
			item, _ := ev["item"].(map[string]any)
			if ev["type"] != "item.completed" || item["type"] != "agent_message" {
				return nil, ""
			}
			return item, "text"
		})
}

// TestClaudeSDKNoInactivityTimeout: a CLI that goes silent mid-turn (the
// stall fault) keeps the SDK waiting: no timeout, no error. interrupt()
// still works: the CLI ends the turn.
func TestClaudeSDKNoInactivityTimeout(t *testing.T) {
	t.Parallel()
	const quiet = 2 * time.Second
	r := startRun(t, claudeSDK, fakecli.Options{Fixture: "claude/single-tool", Faults: "stall:after=3"})
	r.start("claude", "run echo hi", nil)
	r.until("the tool_use", func(l line) bool { return l.record == "" && hasBlock(l.obj, "tool_use") })
	if got := r.during(quiet); len(got) > 0 {
		t.Fatalf("the stalled CLI wrote nothing, yet the driver wrote %s", clip(got[0].raw))
	}
	r.send(map[string]any{"op": "interrupt"})
	te := r.turnEnd()
	r.close()
	if te.obj["ok"] != false {
		t.Errorf("turn_end = %v, want the interrupted turn to fail", te.obj)
	}
	t.Logf("finding: %s %s waits on a silent CLI without any timeout (%v of silence: nothing); interrupt() then ends the turn: %s",
		claudeSDK.pkg, sdkVersion(claudeSDK), quiet, clip(te.raw))
}

// TestCodexSDKNoInactivityTimeout: likewise for runStreamed; aborting is
// the only way out.
func TestCodexSDKNoInactivityTimeout(t *testing.T) {
	t.Parallel()
	const quiet = 2 * time.Second
	r := startRun(t, codexSDK, fakecli.Options{Fixture: "codex/single-tool", Faults: "stall:after=3"})
	r.start("codex", "Run `echo hi` and tell me what it printed.", nil)
	r.until("item.started", func(l line) bool { return l.obj["type"] == "item.started" })
	if got := r.during(quiet); len(got) > 0 {
		t.Fatalf("the stalled CLI wrote nothing, yet the driver wrote %s", clip(got[0].raw))
	}
	r.send(map[string]any{"op": "interrupt"})
	te := r.turnEnd()
	r.close()
	if te.obj["ok"] != false {
		t.Errorf("turn_end = %v, want the aborted turn to fail", te.obj)
	}
	p := processes(r.observations())[0]
	if got := signals(p); got != "SIGTERM:default" {
		t.Errorf("codex got signals %q, want SIGTERM", got)
	}
	t.Logf("finding: %s %s waits on a silent codex without any timeout (%v of silence: nothing); abort sends %s and codex ends with %s",
		codexSDK.pkg, sdkVersion(codexSDK), quiet, signals(p), p.exit())
}

// signals lists the signals a fake got, as SIGNAME:action.
func signals(p *cliProcess) string {
	var out []string
	for _, o := range p.kinds("signal") {
		out = append(out, o.Signal+":"+o.Action)
	}
	return strings.Join(out, ",")
}

// TestCodexSDKAbortDoesNotEscalate: the SDK's abort is the SIGTERM of
// spawn's AbortSignal and nothing more: a codex that ignores SIGTERM runs
// on, the SDK keeps handing on its events (to turn.completed) until it
// exits by itself, and then still throws the AbortError.
func TestCodexSDKAbortDoesNotEscalate(t *testing.T) {
	t.Parallel()
	const runFor = 3 * time.Second
	path, tr := editFixture(t, "codex/interrupt", func(steps []map[string]any) []map[string]any {
		for _, s := range steps {
			if _, ok := s["on_signal"]; ok {
				s["on_signal"] = map[string]any{"SIGINT": "exit:1", "SIGTERM": "ignore"}
			}
			if _, ok := s["delay_ms"]; ok {
				s["delay_ms"] = runFor.Milliseconds()
			}
		}
		return steps
	})
	r := startRun(t, codexSDK, fakecli.Options{Transcript: path})
	r.start("codex", "Run the end-to-end tests.", nil)
	r.until("item.started", func(l line) bool { return l.obj["type"] == "item.started" })
	sent := time.Now()
	r.send(map[string]any{"op": "interrupt"})
	te := r.turnEnd()
	took := time.Since(sent)
	r.close()
	turns := r.session(1)
	procs := processes(r.observations())
	p := procs[0]
	if got := signals(p); got != "SIGTERM:ignore" {
		t.Errorf("codex got signals %q, want one SIGTERM (ignored): no SIGKILL, no second signal", got)
	}
	if got := p.exit(); got != "exit 0" {
		t.Errorf("codex ended with %s, want exit 0 after its whole turn", got)
	}
	if took < runFor/2 {
		t.Errorf("turn_end came %v after the abort, before codex could have finished its %v command", took, runFor)
	}
	samePath(t, procs, []int{4, 5, 6, 7, 10, 11, 12})
	sameEvents(t, codexSDK, wantEventsOf(t, tr, procs, nil, codexView), events(turns))
	if te.obj["ok"] != false || te.obj["error"] != "interrupted: The operation was aborted" {
		t.Errorf("turn_end = %s, want the AbortError although turn.completed came", clip(te.raw))
	}
	t.Logf("finding: %s %s: abort of a codex that ignores SIGTERM: one SIGTERM, no SIGKILL, no timeout; the SDK handed on the rest of the turn (turn.completed included) for %v, then threw the AbortError",
		codexSDK.pkg, sdkVersion(codexSDK), took.Round(100*time.Millisecond))
}

// TestSDKsCLIDiesMidTurn: a CLI killed mid-turn (the die fault, SIGKILL
// after the first lines): both SDKs end the stream with an error naming
// the signal; nothing is made up.
func TestSDKsCLIDiesMidTurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s             sdk
		fx, agent     string
		prompt, error string
		view          sdkView
		synth         []synthetic
	}{
		{claudeSDK, "claude/single-tool", "claude", "run echo hi", "Claude Code process terminated by signal SIGKILL",
			claudeView, []synthetic{{control: "control_response"}, hostState}},
		{codexSDK, "codex/single-tool", "codex", "Run `echo hi` and tell me what it printed.", "Codex Exec exited with signal SIGKILL: ",
			codexView, nil},
	} {
		t.Run(tc.s.dir, func(t *testing.T) {
			t.Parallel()
			r := startRun(t, tc.s, fakecli.Options{Fixture: tc.fx, Faults: "die:signal=SIGKILL,after=3"})
			r.start(tc.agent, tc.prompt, nil)
			te := r.turnEnd()
			end := r.close()
			turns := r.session(1)
			if te.obj["ok"] != false || !strings.Contains(te.obj["error"].(string), tc.error) {
				t.Errorf("turn_end = %s, want a failure saying %q", clip(te.raw), tc.error)
			}
			procs := processes(r.observations())
			p := procs[0]
			if got := p.exit(); got != "signal SIGKILL" {
				t.Errorf("the CLI ended with %s, want the die fault's SIGKILL", got)
			}
			// Everything written before the death is handed on.
			sameEvents(t, tc.s, wantEvents(t, tc.fx, procs, tc.synth, tc.view), events(turns))
			t.Logf("finding: %s %s, CLI killed after %d stdout lines: %d events handed on, turn_end %s, end %s",
				tc.s.pkg, sdkVersion(tc.s), len(p.kinds("out")), len(turns[0].events), clip(te.raw), clip(end.raw))
		})
	}
}

// TestClaudeSDKCloseWaitsForExit: after the input ends the SDK closes the
// CLI's stdin and waits for it to exit, however long that takes: no
// timeout and no signal (its SIGTERM / SIGKILL escalation belongs to
// Query.close(), which a caller that lets the input end never calls).
func TestClaudeSDKCloseWaitsForExit(t *testing.T) {
	t.Parallel()
	const linger = 3 * time.Second
	path, _ := editFixture(t, "claude/plain-text", func(steps []map[string]any) []map[string]any {
		n := len(steps)
		// before the final exit: stdin_eof, then linger (ignoring SIGTERM)
		return append(steps[:n-1:n-1], map[string]any{"stdin_eof": true},
			map[string]any{"on_signal": map[string]any{"SIGTERM": "ignore"}},
			map[string]any{"delay_ms": linger.Milliseconds()}, steps[n-1])
	})
	r := startRun(t, claudeSDK, fakecli.Options{Transcript: path})
	r.start("claude", "hello", nil)
	r.turnEnd()
	sent := time.Now()
	end := r.close()
	took := time.Since(sent)
	p := processes(r.observations())[0]
	if end.obj["ok"] != true {
		t.Errorf("end = %s, want ok", clip(end.raw))
	}
	if got := signals(p); got != "" {
		t.Errorf("the SDK signalled the lingering CLI: %s", got)
	}
	if took < linger/2 {
		t.Errorf("end came %v after close, before the CLI could exit (%v)", took, linger)
	}
	t.Logf("finding: %s %s closes stdin and waits for the CLI to exit (%v here), without a timeout or signal",
		claudeSDK.pkg, sdkVersion(claudeSDK), took.Round(100*time.Millisecond))
}

// TestSDKsNodeOptions: the Claude SDK removes NODE_OPTIONS from the CLI's
// environment (sdk.mjs: delete env.NODE_OPTIONS); the Codex SDK passes its
// whole environment on.
func TestSDKsNodeOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s          sdk
		fx, agent  string
		prompt     string
		passesItOn bool
	}{
		{claudeSDK, "claude/plain-text", "claude", "hello", false},
		{codexSDK, "codex/plain-text", "codex", "Say hello in one short sentence.", true},
	} {
		t.Run(tc.s.dir, func(t *testing.T) {
			t.Parallel()
			r := startRun(t, tc.s, fakecli.Options{Fixture: tc.fx}, "NODE_OPTIONS=--no-deprecation")
			r.start(tc.agent, tc.prompt, nil)
			r.turnEnd()
			r.close()
			p := processes(r.observations())[0]
			if got := p.hasEnv("NODE_OPTIONS"); got != tc.passesItOn {
				t.Errorf("NODE_OPTIONS reaches the CLI: %v, want %v", got, tc.passesItOn)
			}
			t.Logf("finding: %s %s passes NODE_OPTIONS on to the CLI: %v", tc.s.pkg, sdkVersion(tc.s), tc.passesItOn)
		})
	}
}

// TestClaudeSDKInterruptedThenExit1: after an interrupted turn the real CLI
// exits 1 when stdin closes (docs/protocols/claude.md#exit-codes). The fake exits 0 there
// (reported as a fake bug), so this copy of claude/interrupt ends with
// exit 1 instead, and pins what the SDK makes of it.
func TestClaudeSDKInterruptedThenExit1(t *testing.T) {
	t.Parallel()
	path, tr := editFixture(t, "claude/interrupt", func(steps []map[string]any) []map[string]any {
		// The first exit is the one after stdin_eof on the normal path,
		// where the fake goes after an interrupt request.
		for _, s := range steps {
			if _, ok := s["exit"]; ok {
				s["exit"] = 1
				break
			}
		}
		return steps
	})
	r := startRun(t, claudeSDK, fakecli.Options{Transcript: path})
	r.start("claude", "Run the end-to-end tests.", nil)
	r.until("the Bash tool_use", func(l line) bool { return l.record == "" && hasBlock(l.obj, "tool_use") })
	r.send(map[string]any{"op": "interrupt"})
	te := r.turnEnd()
	end := r.close()
	p := processes(r.observations())[0]
	if got := p.exit(); got != "exit 1" {
		t.Fatalf("claude ended with %s, want the edited exit 1", got)
	}
	checkTurnEnd(t, te.obj, false, tr.Header.SessionID)
	const want = "Claude Code returned an error result: [ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"
	if end.obj["ok"] != false || end.obj["error"] != want {
		t.Errorf("end = %s, want the SDK's error %q", clip(end.raw), want)
	}
	t.Logf("finding: %s %s: when the CLI exits 1 after an interrupted turn (what the real CLI does at stdin EOF), the message stream throws %q at close: an interrupt followed by a clean close surfaces as an error",
		claudeSDK.pkg, sdkVersion(claudeSDK), end.obj["error"])
}

// TestCodexSDKDuplicateKey: codex 0.169.0 writes web_search items with two
// "id" keys (item_1, then the raw ws_... id; docs/protocols/codex.md#items). The SDK's
// JSON.parse keeps the last, so its caller never sees item_1.
func TestCodexSDKDuplicateKey(t *testing.T) {
	t.Parallel()
	const fx = "codex/web-search"
	r := startRun(t, codexSDK, fakecli.Options{Fixture: fx})
	turns, procs := codexSession(t, r, "What is the latest stable Go release?")
	samePath(t, procs, []int{3, 4, 5, 6, 7, 8, 9})
	// Go's decoder keeps the last duplicate too, so the fixture's lines
	// decode to what JSON.parse makes of them.
	sameEvents(t, codexSDK, wantEvents(t, fx, procs, nil, codexView), events(turns))
	var ids []string
	for _, ev := range turns[0].events {
		m := ev.(map[string]any)
		if item, ok := m["item"].(map[string]any); ok && item["type"] == "web_search" {
			ids = append(ids, item["id"].(string))
		}
	}
	for _, id := range ids {
		if !strings.HasPrefix(id, "ws_") {
			t.Errorf("web_search item id %q: want the last duplicate, the raw ws_ id", id)
		}
	}
	t.Logf("finding: %s %s hands on web_search items with the last of their duplicate \"id\" keys: %v", codexSDK.pkg, sdkVersion(codexSDK), ids)
}
