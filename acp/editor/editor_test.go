//go:build unix

package editor

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/acp/acpschema"
	"github.com/agentconform/agentconform/fakecli"
)

// TestMain lets the test binary act as the fake CLIs: the agent the
// editor drives here is the fake gemini in its ACP mode.
func TestMain(m *testing.M) { fakecli.Main(m) }

type harness struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan map[string]any
	done  chan int
}

// startEditor runs the editor on the fake gemini --acp --yolo (as the
// fixtures captured with --yolo were) replaying fixture.
func startEditor(t *testing.T, fixture string) (*harness, string) {
	t.Helper()
	f := fakecli.Start(t, fakecli.Options{Fixture: fixture})
	for _, kv := range f.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	wire := filepath.Join(t.TempDir(), WireLogName)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harness{t: t, in: inW, lines: make(chan map[string]any, 256), done: make(chan int, 1)}
	go func() {
		h.done <- Run(context.Background(), Config{Agent: f.Path("gemini") + " --acp --yolo", Agents: []string{"gemini"}, WireLog: wire, Version: "test"}, inR, outW, io.Discard)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				h.lines <- m
			}
		}
		close(h.lines)
	}()
	return h, wire
}

func (h *harness) send(v map[string]any) {
	b, _ := json.Marshal(v)
	h.in.Write(append(b, '\n'))
}

// until reads harness lines until pred accepts one.
func (h *harness) until(what string, pred func(map[string]any) bool) map[string]any {
	h.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("the editor's output ended before %s", what)
			}
			if pred(m) {
				return m
			}
		case <-deadline:
			h.t.Fatalf("no %s", what)
		}
	}
}

func record(kind string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["agentconform"] == kind }
}

// TestEditorTurns: start, interrupt (session/cancel: the turn ends
// cancelled), send, close; the events are the session/update params and
// the prompt results; the wire log holds both directions as a valid ACP
// session.
func TestEditorTurns(t *testing.T) {
	h, wire := startEditor(t, "gemini/cancel")
	hello := h.until("hello", record("hello"))
	if hello["protocol"] != Protocol || hello["profile"] != "native" {
		t.Errorf("hello %v", hello)
	}
	h.send(map[string]any{"op": "start", "agent": "gemini", "prompt": "Run the tests.", "cwd": t.TempDir(), "permission": "allow"})
	h.until("the tool call", func(m map[string]any) bool {
		u, _ := m["update"].(map[string]any)
		return u["sessionUpdate"] == "tool_call"
	})
	h.send(map[string]any{"op": "interrupt"})
	end := h.until("the first turn_end", record("turn_end"))
	if end["ok"] != false || end["reason"] != "cancelled" || end["session_id"] == "" {
		t.Errorf("cancelled turn: %v", end)
	}
	h.send(map[string]any{"op": "send", "prompt": "Hello."})
	res := h.until("the second result", func(m map[string]any) bool { return m["stopReason"] != nil })
	if res["stopReason"] != "end_turn" {
		t.Errorf("second result %v", res)
	}
	if end := h.until("the second turn_end", record("turn_end")); end["ok"] != true || end["reason"] != "completed" {
		t.Errorf("second turn: %v", end)
	}
	h.send(map[string]any{"op": "close"})
	if end := h.until("end", record("end")); end["ok"] != true {
		t.Errorf("end %v", end)
	}
	if code := <-h.done; code != 0 {
		t.Errorf("exit %d", code)
	}

	b, err := os.ReadFile(wire)
	if err != nil {
		t.Fatal(err)
	}
	var entries []acp.Entry
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct{ Dir, Line string }
		json.Unmarshal([]byte(l), &rec)
		switch rec.Dir {
		case "in":
			entries = append(entries, acp.NewEntry(acp.Client, []byte(rec.Line)))
		case "out":
			entries = append(entries, acp.NewEntry(acp.Agent, []byte(rec.Line)))
		}
	}
	tr := acp.NewTrace(entries)
	if len(tr.Prompts) != 2 || tr.Prompts[0].StopReason != "cancelled" || !tr.Prompts[0].Cancelled() {
		t.Errorf("wire log: %d prompts", len(tr.Prompts))
	}
	sv, _ := acpschema.Schema()
	for _, f := range acp.Check(tr, wire, acp.CheckOptions{Schema: sv}) {
		t.Errorf("wire log: %s", f)
	}
}

// TestEditorPermissionAndErrors: the policy answers the permission
// request (deny picks the reject option), and a prompt's error ends the
// turn failed with its message.
func TestEditorPermissionAndErrors(t *testing.T) {
	h, _ := startEditor(t, "gemini/permission")
	h.until("hello", record("hello"))
	h.send(map[string]any{"op": "start", "agent": "gemini", "prompt": "Create it.", "cwd": t.TempDir(), "permission": "deny"})
	h.until("the answer after the rejection", func(m map[string]any) bool {
		u, _ := m["update"].(map[string]any)
		c, _ := u["content"].(map[string]any)
		return c["text"] == "Understood, I won't create it."
	})
	h.until("turn_end", record("turn_end"))
	h.send(map[string]any{"op": "close"})
	h.until("end", record("end"))

	h, _ = startEditor(t, "gemini/api-error-429")
	h.until("hello", record("hello"))
	h.send(map[string]any{"op": "start", "agent": "gemini", "prompt": "Hi.", "cwd": t.TempDir()})
	end := h.until("turn_end", record("turn_end"))
	if end["ok"] != false || end["reason"] != "failed" || !strings.Contains(end["error"].(string), "rate limit exceeded") {
		t.Errorf("failed turn: %v", end)
	}
	h.send(map[string]any{"op": "close"})
	h.until("end", record("end"))
}

func TestAgentsOf(t *testing.T) {
	for cmd, want := range map[string]string{
		"npx @zed-industries/claude-agent-acp": "claude",
		"gemini --acp":                         "gemini",
		"codex-acp":                            "codex",
		"my-agent":                             "claude codex gemini",
	} {
		if got := strings.Join(AgentsOf(cmd), " "); got != want {
			t.Errorf("AgentsOf(%q) = %s, want %s", cmd, got, want)
		}
	}
}
