package capture

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fixtures/acpfixtures"
	asfixtures "github.com/agentconform/agentconform/fixtures/appserver"
	"github.com/agentconform/agentconform/transcript"
)

// rpcCaptures are the committed captures of the JSON-RPC surfaces.
func rpcCaptures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, g := range []string{"gemini/*/acp-*.jsonl", "codex/*/app-server-*.jsonl"} {
		files, err := filepath.Glob(filepath.Join("..", "testdata", "captures", g))
		if err != nil || len(files) < 10 {
			t.Fatalf("captures %s: %v %v", g, files, err)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(filepath.Join("..", "testdata", "captures"), f)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// TestRPCCapturesAgainstFixtures: today's ACP and app-server captures,
// compared with today's fixtures, do not drift, and are compared: every
// one but the load of an unknown session and those of a client that set a
// mode first (no fixture: the fake answers them) has its fixture (a variant's captures, their variant), and each path of the capture is compared in both
// directions, with what the agent or server wrote, its exit and its
// terminal response.
func TestRPCCapturesAgainstFixtures(t *testing.T) {
	for _, rel := range rpcCaptures(t) {
		capt := committed(t, rel)
		r, err := CompareCapture(context.Background(), capt, Baseline{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(rel, "acp-load-unknown.jsonl") || strings.Contains(rel, "-mode-") {
			// No fixture: the fake answers an unknown session itself, and
			// a session/set_mode by switching to another fixture.
			if r.Baseline != "" {
				t.Errorf("%s: compared with %q", rel, r.Baseline)
			}
			continue
		}
		if r.Baseline == "" || r.Drifted() || len(r.NotCompared) > 0 {
			t.Errorf("%s: baseline %q, changes:\n%s\nschema %v, violations %v, not compared %v", rel, r.Baseline, changeStrings(r.Changes), r.Schema, r.Violations, r.NotCompared)
		}
		base, err := (Baseline{}).LoadFor(capt)
		if err != nil {
			t.Fatal(err)
		}
		bs, cs := AlongRPC(base, capt)
		paths := 0
		for _, steps := range capt.Processes() {
			paths += len(rpcCapturePaths(rpcProtoOf(capt), 0, steps))
		}
		if len(cs.Paths) != 2*paths || len(bs.Paths) != 2*paths {
			t.Fatalf("%s: %d and %d sequences compared, want %d", rel, len(bs.Paths), len(cs.Paths), 2*paths)
		}
		for _, p := range bs.Paths {
			if len(p.Order) == 0 {
				t.Errorf("%s: %s is empty", rel, p.Name)
			}
			if strings.HasSuffix(p.Name, "'s messages") && !strings.HasSuffix(p.Name, "client's messages") && (p.Exit == "" || p.Terminal == "") {
				t.Errorf("%s: %s has no exit or terminal response: %+v", rel, p.Name, p)
			}
		}
	}
}

// TestRPCBranchesFollowed: the capture paths that take a branch (ACP's
// cancel, the app-server's interrupt, the deny answer to a permission
// request) are walked through the fixture's branch, not its main path.
func TestRPCBranchesFollowed(t *testing.T) {
	for _, tc := range []struct {
		rel, path, terminal string
	}{
		{"gemini/0.61.0/acp-cancel.jsonl", "process 1 via cancelled", "agent result of session/prompt (end_turn)"},
		{"gemini/0.61.0/acp-permission-deny.jsonl", "process 1", "agent result of session/prompt (end_turn)"},
		{"codex/0.169.0/app-server-interrupt.jsonl", "process 1 via interrupted", "server notification turn/completed (interrupted)"},
		{"codex/0.169.0/app-server-approval-decline.jsonl", "process 1", "server notification turn/completed (completed)"},
	} {
		capt := committed(t, tc.rel)
		base, err := (Baseline{}).LoadFor(capt)
		if err != nil || base == nil {
			t.Fatalf("%s: %v", tc.rel, err)
		}
		bs, cs := AlongRPC(base, capt)
		if ch := Compare(bs, cs); len(ch) > 0 {
			t.Errorf("%s: %s", tc.rel, changeStrings(ch))
		}
		found := false
		for _, p := range bs.Paths {
			if strings.HasPrefix(p.Name, tc.path) && p.Terminal != "" {
				found = true
				if p.Terminal != tc.terminal {
					t.Errorf("%s, %s: terminal %q, want %q", tc.rel, p.Name, p.Terminal, tc.terminal)
				}
			}
		}
		if !found {
			t.Errorf("%s: no path %q among %+v", tc.rel, tc.path, bs.Paths)
		}
	}
	// The deny capture's answer takes the fixture's "rejected" branch:
	// the agent then writes no tool_call_update, which the allow branch
	// has.
	capt := committed(t, "gemini/0.61.0/acp-permission-deny.jsonl")
	base, _ := (Baseline{}).LoadFor(capt)
	bs, _ := AlongRPC(base, capt)
	p, _ := pathOf(bs, "process 1, agent's messages")
	if strings.Contains(strings.Join(p.Order, ","), "tool_call_update") {
		t.Errorf("the deny answer followed the allow branch: %v", p.Order)
	}
	c, _ := pathOf(bs, "process 1, client's messages")
	if !strings.Contains(strings.Join(c.Order, ","), "client result of session/request_permission (selected reject_once)") {
		t.Errorf("the client's answer: %v", c.Order)
	}
}

// TestRPCDriftSeesEdits: captures edited as a new CLI release might
// change them drift from today's fixtures, each with the changes that
// say what changed; edits of what drift ignores (ids, times, texts) do
// not.
func TestRPCDriftSeesEdits(t *testing.T) {
	replace := func(from, to string, n int) func([]string) []string {
		return func(lines []string) []string {
			done := 0
			for i, l := range lines {
				if done != n && strings.Contains(l, from) {
					lines[i] = strings.ReplaceAll(l, from, to)
					done++
				}
			}
			if done == 0 {
				t.Fatalf("no line holds %s", from)
			}
			return lines
		}
	}
	drop := func(has string) func([]string) []string {
		return func(lines []string) []string {
			for i, l := range lines {
				if strings.Contains(l, has) {
					return append(lines[:i:i], lines[i+1:]...)
				}
			}
			t.Fatalf("no line holds %s", has)
			return nil
		}
	}
	reIDs := regexp.MustCompile(`\\"id\\":\d+`)
	reTimes := regexp.MustCompile(`Ms\\":\d+`)
	for _, tc := range []struct {
		name, rel string
		edit      func([]string) []string
		want      []string // substrings of the changes, each needed
	}{
		{"ACP: a notification renamed", "gemini/0.61.0/acp-single-tool.jsonl",
			replace(`\"method\":\"session/update\",\"params\":{\"sessionId\":\"f23d4c85-3e0f-4031-8cc4-5adf98a125e0\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\"`, `\"method\":\"session/updated\",\"params\":{\"sessionId\":\"f23d4c85-3e0f-4031-8cc4-5adf98a125e0\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\"`, -1),
			[]string{"+ new event kind agent notification session/updated", "- vanished event kind agent notification session/update:agent_message_chunk", "~ changed order of process 1, agent's messages"}},
		{"ACP: the prompt's response dropped", "gemini/0.61.0/acp-plain-text.jsonl",
			drop(`\"stopReason\":\"end_turn\"`),
			[]string{"- vanished event kind agent result of session/prompt (end_turn)", "~ changed order of process 1, agent's messages",
				"~ changed requests left unanswered on process 1, agent's messages: (nothing) -> client request session/prompt",
				"~ changed terminal response of process 1, agent's messages: agent result of session/prompt (end_turn) -> (none)"}},
		{"ACP: a stopReason changed", "gemini/0.61.0/acp-plain-text.jsonl",
			replace(`\"stopReason\":\"end_turn\"`, `\"stopReason\":\"max_tokens\"`, 1),
			[]string{"+ new event kind agent result of session/prompt (max_tokens)",
				"~ changed terminal response of process 1, agent's messages: agent result of session/prompt (end_turn) -> agent result of session/prompt (max_tokens)"}},
		{"ACP: a field added", "gemini/0.61.0/acp-plain-text.jsonl",
			replace(`\"stopReason\":\"end_turn\"`, `\"stopReason\":\"end_turn\",\"usage\":{\"totalTokens\":3}`, 1),
			[]string{"+ new field /result/usage in agent result of session/prompt (end_turn) (and 1 fields inside it)"}},
		{"ACP: the cancelled turn answered end_turn", "gemini/0.61.0/acp-cancel.jsonl",
			replace(`\"stopReason\":\"cancelled\"`, `\"stopReason\":\"end_turn\"`, 1),
			[]string{"- vanished event kind agent result of session/prompt (cancelled)", "~ changed order of process 1 via cancelled"}},
		{"ACP: the load's second process exits 1", "gemini/0.61.0/acp-load.jsonl",
			replace(`{"exit":0,"t":8647}`, `{"exit":1,"t":8647}`, 1),
			[]string{"~ changed exit of process 2, agent's messages: 0 -> 1"}},
		{"ACP: the baseline cannot follow a client that skips session/new", "gemini/0.61.0/acp-plain-text.jsonl",
			drop(`"in":{"method":"session/new"}`),
			[]string{"~ changed path of process 1: the baseline expects session/new at line 4; the client sent session/prompt"}},
		{"app-server: a notification renamed", "codex/0.169.0/app-server-plain-text.jsonl",
			replace(`\"method\":\"item/agentMessage/delta\"`, `\"method\":\"item/agentMessage/textDelta\"`, -1),
			[]string{"+ new event kind server notification item/agentMessage/textDelta", "- vanished event kind server notification item/agentMessage/delta"}},
		{"app-server: turn/start's response dropped", "codex/0.169.0/app-server-plain-text.jsonl",
			drop(`{"out":"{\"id\":{{json:id3}}`),
			[]string{"- vanished event kind server result of turn/start", "~ changed requests left unanswered on process 1, server's messages: (nothing) -> client request turn/start"}},
		{"app-server: the turn fails", "codex/0.169.0/app-server-plain-text.jsonl",
			replace(`\"status\":\"completed\",\"error\":null`, `\"status\":\"failed\",\"error\":null`, 1),
			[]string{"~ changed terminal response of process 1, server's messages: server notification turn/completed (completed) -> server notification turn/completed (failed)"}},
		{"app-server: the interrupted turn completes", "codex/0.169.0/app-server-interrupt.jsonl",
			replace(`\"status\":\"interrupted\"`, `\"status\":\"completed\"`, 1),
			[]string{"~ changed terminal response of process 1 via interrupted"}},
		{"app-server: the approval is answered decline, the server goes on as accepted", "codex/0.169.0/app-server-approval-accept.jsonl",
			replace(`"result":{"decision":"accept"}`, `"result":{"decision":"decline"}`, 1),
			[]string{"~ changed order of process 1, server's messages"}},
		{"app-server: the server exits 1", "codex/0.169.0/app-server-single-tool.jsonl",
			func(lines []string) []string {
				for i := len(lines) - 1; i >= 0; i-- {
					if strings.HasPrefix(lines[i], `{"exit":0`) {
						lines[i] = strings.Replace(lines[i], `{"exit":0`, `{"exit":1`, 1)
						return lines
					}
				}
				t.Fatal("no exit")
				return nil
			},
			[]string{"~ changed exit of process 1, server's messages: 0 -> 1"}},
		{"ignored: the server's own request ids and the times", "codex/0.169.0/app-server-approval-accept.jsonl",
			func(lines []string) []string {
				for i, l := range lines {
					l = reIDs.ReplaceAllString(l, `\"id\":7`)
					l = strings.Replace(l, `"in":{"id":0`, `"in":{"id":7`, 1)
					lines[i] = reTimes.ReplaceAllString(l, `Ms\":1`)
				}
				return lines
			}, nil},
		{"ignored: the text", "gemini/0.61.0/acp-plain-text.jsonl",
			replace(`\"type\":\"text\",\"text\":\"`, `\"type\":\"text\",\"text\":\"Other words. `, -1), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			capt := edited(t, tc.rel, tc.edit)
			r, err := CompareCapture(context.Background(), capt, Baseline{})
			if err != nil {
				t.Fatal(err)
			}
			got := changeStrings(r.Changes)
			if tc.want == nil {
				if len(r.Changes) > 0 {
					t.Errorf("drift from an edit drift ignores:\n%s", got)
				}
				return
			}
			if !r.Drifted() {
				t.Fatalf("no drift")
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
		})
	}
}

// TestRPCBaselineDirectory: --baseline compares with an earlier capture
// of the same scenario (here: the same capture, in a version directory of
// its own), and with a fixtures directory, where the ACP permission
// captures find the fixture that joins them.
func TestRPCBaselineDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, rel := range []string{"gemini/0.61.0/acp-single-tool.jsonl", "codex/0.169.0/app-server-single-tool.jsonl"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "captures", rel))
		if err != nil {
			t.Fatal(err)
		}
		old := filepath.Join(dir, strings.Replace(filepath.FromSlash(rel), "0.", "0.0.", 1))
		os.MkdirAll(filepath.Dir(old), 0o755)
		if err := os.WriteFile(old, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := CompareCapture(context.Background(), committed(t, rel), Baseline{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if r.Baseline != old || r.Drifted() {
			t.Errorf("%s: baseline %q, changes %s", rel, r.Baseline, changeStrings(r.Changes))
		}
		capt := edited(t, rel, func(lines []string) []string {
			for i, l := range lines {
				lines[i] = strings.ReplaceAll(l, `\"status\":\"completed\"`, `\"status\":\"done\"`)
			}
			return lines
		})
		if r, err := CompareCapture(context.Background(), capt, Baseline{Dir: dir}); err != nil || !r.Drifted() {
			t.Errorf("%s edited: %v, no drift", rel, err)
		}
	}
	fx := t.TempDir()
	os.MkdirAll(filepath.Join(fx, "gemini"), 0o755)
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "acpfixtures", "gemini", "permission.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(fx, "gemini", "permission.jsonl"), b, 0o644)
	for _, answer := range []string{"allow", "deny"} {
		r, err := CompareCapture(context.Background(), committed(t, "gemini/0.61.0/acp-permission-"+answer+".jsonl"), Baseline{Dir: fx})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(r.Baseline, filepath.Join("gemini", "permission.jsonl")) || r.Drifted() {
			t.Errorf("%s: baseline %q, changes %s", answer, r.Baseline, changeStrings(r.Changes))
		}
	}
}

// TestEveryRPCFixtureFollowsItself: each ACP and app-server fixture, as a
// capture of itself, is walked along its own paths (every branch)
// without a difference or a problem.
func TestEveryRPCFixtureFollowsItself(t *testing.T) {
	var all []*transcript.Transcript
	for _, n := range acpfixtures.Names() {
		f, err := acpfixtures.Load(n)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, f)
	}
	names, err := asfixtures.Names()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		f, err := asfixtures.Load(n)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, f)
	}
	for _, f := range all {
		bs, cs := AlongRPC(f, f)
		if ch := Compare(bs, cs); len(ch) != 0 || len(cs.Paths) == 0 {
			t.Errorf("%s: changes %s, paths %+v", f.Name, changeStrings(ch), cs.Paths)
		}
	}
}

// TestAlongRPCWithoutBaseline: a capture with no fixture to follow (a nil
// base) is walked, its paths ones the base cannot take; a nil capture
// took none. Neither panics.
func TestAlongRPCWithoutBaseline(t *testing.T) {
	capt := committed(t, "gemini/0.61.0/acp-multi-tool-ask.jsonl")
	b, _ := AlongRPC(nil, capt)
	if len(b.Problems) == 0 {
		t.Error("nil base: no path said it cannot be followed")
	}
	for _, p := range b.Problems {
		if p.What != "path" {
			t.Errorf("nil base: %+v, want a path problem", p)
		}
	}
	if b, c := AlongRPC(capt, nil); len(b.Paths)+len(c.Paths) != 0 {
		t.Errorf("nil capture: %d and %d paths, want none", len(b.Paths), len(c.Paths))
	}
}
