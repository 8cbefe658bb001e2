//go:build unix

package fakecli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fixtures/acpfixtures"
)

// TestGeminiACPReplaysFixtures: every ACP fixture, driven by a client that
// sends what the recorded client sent, replays every recorded agent line
// byte for byte, in order, on the main path of every process; the
// session/load process finds the session the first one stored.
func TestGeminiACPReplaysFixtures(t *testing.T) {
	for _, name := range acpfixtures.Names() {
		t.Run(name, func(t *testing.T) {
			fx, err := acpfixtures.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			paths, err := acp.Paths(fx)
			if err != nil {
				t.Fatal(err)
			}
			f := fakecli.Start(t, fakecli.Options{Fixture: name, Timing: "0.001"})
			dir := t.TempDir()
			for pi, entries := range paths[0].Processes {
				replayACP(t, f, fx.Header.Argv[1:], dir, fmt.Sprintf("process %d", pi+1), entries)
			}
		})
	}
}

// TestGeminiACPReplaysVariants: started on a scenario's fixture by a
// client that differs from the captured one as a variant's does (no
// --yolo, no fs capability), the fake replays that variant, line for
// line, on its every path.
func TestGeminiACPReplaysVariants(t *testing.T) {
	for _, v := range acpfixtures.Variants() {
		t.Run(v, func(t *testing.T) {
			fx, err := acpfixtures.Load(v)
			if err != nil {
				t.Fatal(err)
			}
			scenario := strings.TrimSuffix(strings.TrimSuffix(v[strings.LastIndexByte(v, '/')+1:], "-ask"), "-nofs")
			paths, err := acp.Paths(fx)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range paths {
				f := fakecli.Start(t, fakecli.Options{Fixture: "gemini/" + scenario, Timing: "0.001"})
				replayACP(t, f, fx.Header.Argv[1:], t.TempDir(), fmt.Sprintf("path %q", p.Name), p.Processes[0])
			}
		})
	}
}

// replayACP starts the fake gemini with args in dir and plays one recorded
// process's entries: it sends what the client sent and wants every agent
// line byte for byte, then exit 0 with nothing more on stdout.
func replayACP(t *testing.T, f *fakecli.Fakes, args []string, dir, what string, entries []acp.Entry) {
	t.Helper()
	l := startFake(t, f, "gemini", args, cmdOpts{dir: dir})
	for _, e := range entries {
		if e.From == acp.Client {
			l.send(string(e.Raw))
			continue
		}
		if got := l.next(lineTimeout); got != string(e.Raw) {
			t.Fatalf("%s, transcript line %d:\n got %s\nwant %s", what, e.Line, got, e.Raw)
		}
	}
	if res, rest := l.wait(); res.code != 0 || len(rest) > 0 {
		t.Errorf("%s: exit %d, more stdout %q, stderr %s", what, res.code, rest, res.stderr)
	}
}

// acpSession starts `gemini --acp` on a fixture and opens a session with
// string ids (the client picks them): it returns the live fake and the
// session id.
func acpSession(t *testing.T, o fakecli.Options, args ...string) (*live, string) {
	t.Helper()
	f := fakecli.Start(t, o)
	l := startFake(t, f, "gemini", append([]string{"--acp"}, args...), cmdOpts{})
	l.send(`{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if r := l.nextEvent(); r["id"] != "init-1" || r["result"] == nil {
		t.Fatalf("initialize answered %v", r)
	}
	l.send(`{"jsonrpc":"2.0","id":"new-1","method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r := l.until("the session/new response", func(m map[string]any) bool { return m["id"] == "new-1" })
	sid, _ := lookup(r, "/result/sessionId").(string)
	if sid == "" {
		t.Fatalf("session/new answered %v", r)
	}
	return l, sid
}

func prompt(l *live, id, sid string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/prompt",
		"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}}})
	l.send(string(b))
}

func isUpdate(kind string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		return m["method"] == "session/update" && lookup(m, "/params/update/sessionUpdate") == kind
	}
}

func isResponse(id string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["id"] == id && m["method"] == nil }
}

// TestGeminiACPIDs: responses carry the client's ids, numbers and
// strings alike; an unknown method is "Method not found" as the SDK says
// it.
func TestGeminiACPIDs(t *testing.T) {
	l, sid := acpSession(t, fakecli.Options{Fixture: "gemini/plain-text"})
	prompt(l, "p-1", sid)
	r := l.until("the prompt response", isResponse("p-1"))
	if lookup(r, "/result/stopReason") != "end_turn" {
		t.Errorf("prompt answered %v", r)
	}
	l.send(`{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}`)
	r = l.nextEvent()
	if r["id"] != float64(7) || lookup(r, "/error/code") != float64(-32601) || lookup(r, "/error/message") != `"Method not found": session/list` {
		t.Errorf("unknown method answered %v", r)
	}
	l.send(`{"jsonrpc":"2.0","id":8,"method":"session/set_mode","params":{"sessionId":"` + sid + `","modeId":"yolo"}}`)
	if r := l.nextEvent(); r["id"] != float64(8) || r["result"] == nil {
		t.Errorf("session/set_mode answered %v", r)
	}
	if res, _ := l.wait(); res.code != 0 {
		t.Errorf("exit %d", res.code)
	}
}

// TestGeminiACPCancel: session/cancel during the cancel fixture's tool
// plays what the real CLI did (the tool's last update, stopReason
// cancelled); during another fixture's turn the fake cancels the prompt
// itself.
func TestGeminiACPCancel(t *testing.T) {
	t.Run("recorded", func(t *testing.T) {
		l, sid := acpSession(t, fakecli.Options{Fixture: "gemini/cancel"}, "--yolo") // as captured
		prompt(l, "p-1", sid)
		l.until("the tool call", isUpdate("tool_call"))
		l.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + sid + `"}}`)
		l.until("the tool call's update", isUpdate("tool_call_update"))
		if r := l.nextEvent(); r["id"] != "p-1" || lookup(r, "/result/stopReason") != "cancelled" {
			t.Errorf("after session/cancel: %v", r)
		}
		prompt(l, "p-2", sid)
		if r := l.until("the second response", isResponse("p-2")); lookup(r, "/result/stopReason") != "end_turn" {
			t.Errorf("second prompt: %v", r)
		}
	})
	t.Run("asked", func(t *testing.T) {
		// Without --yolo Gemini asks for the command (acp-cancel-ask):
		// allowed, it runs until the cancel.
		l, sid := acpSession(t, fakecli.Options{Fixture: "gemini/cancel"})
		prompt(l, "p-1", sid)
		r := l.until("the permission request", func(m map[string]any) bool { return m["method"] == "session/request_permission" })
		if lookup(r, "/params/toolCall/title") != "sleep 6" {
			t.Fatalf("request %v", r)
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "proceed_once"}}})
		l.send(string(b))
		l.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + sid + `"}}`)
		l.until("the tool call's update", isUpdate("tool_call_update"))
		if r := l.nextEvent(); r["id"] != "p-1" || lookup(r, "/result/stopReason") != "cancelled" {
			t.Errorf("after session/cancel: %v", r)
		}
	})
	t.Run("builtin", func(t *testing.T) {
		l, sid := acpSession(t, fakecli.Options{Fixture: "gemini/single-tool", Faults: "stall:after=4"})
		prompt(l, "p-1", sid)
		l.until("the tool call", isUpdate("tool_call"))
		l.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + sid + `"}}`)
		if r := l.until("the response", isResponse("p-1")); lookup(r, "/result/stopReason") != "cancelled" || r["error"] != nil {
			t.Errorf("after session/cancel: %v", r)
		}
	})
}

// TestGeminiACPPermission: the permission fixture follows the client's
// answer: allow runs the tool, a reject option, the cancelled outcome and
// an error take the recorded rejection.
func TestGeminiACPPermission(t *testing.T) {
	for _, tc := range []struct {
		name, answer, text string
	}{
		{"allow", `"result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}`, "Created created.txt."},
		{"always", `"result":{"outcome":{"outcome":"selected","optionId":"proceed_always"}}`, "Created created.txt."},
		{"reject", `"result":{"outcome":{"outcome":"selected","optionId":"cancel"}}`, "Understood, I won't create it."},
		{"cancelled", `"result":{"outcome":{"outcome":"cancelled"}}`, "Understood, I won't create it."},
		{"error", `"error":{"code":-32603,"message":"the editor broke"}`, "Understood, I won't create it."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, sid := acpSession(t, fakecli.Options{Fixture: "gemini/permission"})
			prompt(l, "p-1", sid)
			req := l.until("the permission request", func(m map[string]any) bool { return m["method"] == "session/request_permission" })
			id, _ := json.Marshal(req["id"])
			l.send(`{"jsonrpc":"2.0","id":` + string(id) + `,` + tc.answer + `}`)
			chunk := l.until("the answer", isUpdate("agent_message_chunk"))
			if got := lookup(chunk, "/params/update/content/text"); got != tc.text {
				t.Errorf("text %q, want %q", got, tc.text)
			}
			if got := lookup(chunk, "/params/sessionId"); got != sid {
				t.Errorf("session %v, want %s", got, sid)
			}
		})
	}
}

// TestGeminiACPLoad: session/load of an unknown session is Gemini CLI's
// error; of the session a first process opened, the load fixture's second
// process.
func TestGeminiACPLoad(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "gemini/load"})
	dir := t.TempDir()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(f.ObserveLog)
			t.Logf("observation log:\n%s", b)
		}
	})
	load := func(l *live, id, sid string) map[string]any {
		l.send(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
		l.until("initialize", isResponse("i"))
		l.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"session/load","params":{"sessionId":"` + sid + `","cwd":"/tmp","mcpServers":[]}}`)
		return l.until("the load response", isResponse(id))
	}
	l := startFake(t, f, "gemini", []string{"--acp"}, cmdOpts{dir: dir})
	r := load(l, "l-1", "0f5e4d3c-2b1a-4f9e-8d7c-6b5a4f3e2d1c")
	if lookup(r, "/error/data/details") != "No previous sessions found for this project." {
		t.Errorf("unknown session, no sessions: %v", r)
	}
	l.wait()

	l = startFake(t, f, "gemini", []string{"--acp"}, cmdOpts{dir: dir})
	l.send(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	l.until("initialize", isResponse("i"))
	l.send(`{"jsonrpc":"2.0","id":"n","method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	sid, _ := lookup(l.until("session/new", isResponse("n")), "/result/sessionId").(string)
	prompt(l, "p", sid)
	l.until("the first prompt's response", isResponse("p"))
	l.wait()

	l = startFake(t, f, "gemini", []string{"--acp"}, cmdOpts{dir: dir})
	r = load(l, "l-2", sid)
	if r["error"] != nil || r["result"] == nil {
		t.Fatalf("load of the stored session: %v", r)
	}
	// Gemini CLI streams the history without waiting for it
	// (acp-load.jsonl): its updates may come after the load's response.
	prompt(l, "p-2", sid)
	var texts []string
	l.until("the answer", func(m map[string]any) bool {
		if t, ok := lookup(m, "/params/update/content/text").(string); ok && isUpdate("agent_message_chunk")(m) {
			texts = append(texts, t)
		}
		return isResponse("p-2")(m)
	})
	if !strings.Contains(strings.Join(texts, "|"), "We ran `echo first-turn` |before.") {
		t.Errorf("loaded session's text %q", texts)
	}
	l.wait()

	l = startFake(t, f, "gemini", []string{"--acp"}, cmdOpts{dir: dir})
	r = load(l, "l-3", "not-a-session")
	if d, _ := lookup(r, "/error/data/details").(string); !strings.HasPrefix(d, `Invalid session identifier "not-a-session".`) {
		t.Errorf("unknown session among others: %v", r)
	}
}

// TestGeminiACPFaults: the ACP faults do what they say.
func TestGeminiACPFaults(t *testing.T) {
	t.Run("answer twice", func(t *testing.T) {
		l, sid := acpSession(t, fakecli.Options{Fixture: "gemini/plain-text", Faults: "acp_answer_twice:nth=1"})
		prompt(l, "p-1", sid)
		l.until("the response", isResponse("p-1"))
		l.until("the response again", isResponse("p-1"))
	})
	t.Run("no response", func(t *testing.T) {
		l, sid := acpSession(t, fakecli.Options{Fixture: "gemini/plain-text", Faults: "acp_no_response:nth=1"})
		prompt(l, "p-1", sid)
		l.until("the last chunk", func(m map[string]any) bool {
			return lookup(m, "/params/update/content/text") == "How can I help you today?"
		})
		l.quiet(300 * time.Millisecond)
	})
	t.Run("unknown request", func(t *testing.T) {
		l, sid := acpSession(t, fakecli.Options{Fixture: "gemini/plain-text", Faults: "acp_unknown_request:after=3"})
		prompt(l, "p-1", sid)
		req := l.until("the unknown request", func(m map[string]any) bool { return m["method"] == "agentconform/unknown_request" })
		l.quiet(200 * time.Millisecond) // it waits for the answer
		l.send(`{"jsonrpc":"2.0","id":"` + req["id"].(string) + `","error":{"code":-32601,"message":"Method not found"}}`)
		l.until("the response", isResponse("p-1"))
	})
	t.Run("unknown update and field", func(t *testing.T) {
		l, sid := acpSession(t, fakecli.Options{Fixture: "gemini/plain-text", Faults: "acp_unknown_update:nth=2;acp_unknown_field:nth=3"})
		prompt(l, "p-1", sid)
		l.until("the unknown update", isUpdate("agentconform_unknown_update"))
		l.until("the unknown field", func(m map[string]any) bool {
			return lookup(m, "/params/update/agentconform_unknown_field") != nil
		})
	})
}

// TestGeminiACPFlags: --experimental-acp is --acp; --version still wins.
func TestGeminiACPFlags(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{})
	if r := runFake(t, f, "gemini", []string{"--acp", "--version"}, cmdOpts{}); r.code != 0 || strings.TrimSpace(r.stdout) != "0.61.0" {
		t.Errorf("--acp --version: %d %q", r.code, r.stdout)
	}
	r := runFake(t, f, "gemini", []string{"--experimental-acp"}, cmdOpts{stdin: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n"})
	if r.code != 0 || !strings.Contains(r.stdout, `"id":1,"result":{"protocolVersion":1`) {
		t.Errorf("--experimental-acp: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestGeminiACPSetModeBeforePrompt: a client that did not start Gemini
// with --yolo and sets a mode before its first prompt is asked what that
// mode asks, as the real Gemini CLI 0.61.0 asked (docs/protocols/acp.md#permission):
// nothing under "yolo", nothing under "autoEdit" for a turn of edits, its
// sleep command under "autoEdit", every edit under "default"; the
// session id it was given stays the one the turn carries.
func TestGeminiACPSetModeBeforePrompt(t *testing.T) {
	for _, c := range []struct {
		fixture, mode string
		asks          bool
	}{
		{"gemini/multi-tool", "yolo", false},
		{"gemini/multi-tool", "autoEdit", false},
		{"gemini/multi-tool", "default", true},
		{"gemini/cancel", "autoEdit", true},
		{"gemini/cancel", "yolo", false},
	} {
		t.Run(c.fixture+"/"+c.mode, func(t *testing.T) {
			l, sid := acpSession(t, fakecli.Options{Fixture: c.fixture})
			l.send(`{"jsonrpc":"2.0","id":"mode-1","method":"session/set_mode","params":{"sessionId":"` + sid + `","modeId":"` + c.mode + `"}}`)
			l.until("the set_mode response", isResponse("mode-1"))
			prompt(l, "p-1", sid)
			asked := false
			for {
				m := l.nextEvent()
				if m["method"] == "session/request_permission" {
					asked = true
					if got := lookup(m, "/params/sessionId"); got != sid {
						t.Errorf("the request names session %v, want %s", got, sid)
					}
					if c.fixture == "gemini/cancel" {
						break // its one command, asked for: the turn then waits for a cancel
					}
					b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "proceed_once"}}})
					l.send(string(b))
					continue
				}
				if m["method"] == "session/update" && lookup(m, "/params/sessionId") != sid {
					t.Fatalf("an update of session %v, want %s", lookup(m, "/params/sessionId"), sid)
				}
				if isResponse("p-1")(m) {
					break
				}
				if c.fixture == "gemini/cancel" && isUpdate("tool_call")(m) {
					break // its one command, run unasked: the turn then waits for a cancel
				}
			}
			if asked != c.asks {
				t.Errorf("asked for permission: %v, want %v", asked, c.asks)
			}
		})
	}
}
