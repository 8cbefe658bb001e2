package capture

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/transcript"
)

func rpcOut(text string) transcript.Step { return transcript.Step{Op: transcript.OpOut, Text: text} }
func rpcIn(text string) transcript.Step  { return transcript.Step{Op: transcript.OpIn, Text: text} }

// TestRPCSteps: the client's recorded lines become matches by method
// (requests, notifications) or id (answers to the agent), with the line
// kept; the responses echo the captured ids as templates, whatever type
// the client gave them.
func TestRPCSteps(t *testing.T) {
	steps := rpcSteps([]transcript.Step{
		rpcIn(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`),
		rpcOut(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`),
		rpcIn(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"s"}}`),
		rpcOut(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s"}}`),
		rpcIn(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}`),
		rpcIn(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`),
		rpcOut(`{"jsonrpc":"2.0","id":"p","result":{"stopReason":"cancelled","note":"\"id\":\"p\""}}`),
	})
	want := []string{
		`{"capture":{"rpc1":"/id"},"in":{"method":"initialize"},"recorded":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}"}`,
		`{"out":"{\"jsonrpc\":\"2.0\",\"id\":{{json:rpc1}},\"result\":{\"protocolVersion\":1}}"}`,
		`{"capture":{"rpc2":"/id"},"in":{"method":"session/prompt"},"recorded":"{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s\"}}"}`,
		`{"out":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"session/request_permission\",\"params\":{\"sessionId\":\"s\"}}"}`,
		`{"in":{"id":0},"recorded":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"outcome\":{\"outcome\":\"cancelled\"}}}"}`,
		`{"in":{"method":"session/cancel"},"recorded":"{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}"}`,
		`{"out":"{\"jsonrpc\":\"2.0\",\"id\":{{json:rpc2}},\"result\":{\"stopReason\":\"cancelled\",\"note\":\"\\\"id\\\":\\\"p\\\"\"}}"}`,
	}
	for i, st := range steps {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want[i] {
			t.Errorf("step %d:\n got %s\nwant %s", i+1, b, want[i])
		}
	}
	vars := transcript.Vars{"rpc1": "zero", "rpc2": json.Number("7")}
	if got := vars.Fill(steps[1].Text); got != `{"jsonrpc":"2.0","id":"zero","result":{"protocolVersion":1}}` {
		t.Errorf("a string id: %s", got)
	}
	if got := vars.Fill(steps[6].Text); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":7,"result"`) {
		t.Errorf("a number id: %s", got)
	}
}

// TestMergeCancelled: the run left alone is the main path; the cancelled
// run's lines after its cancel are the branch a session/cancel takes from
// the window after the tool started, with the main run's session and tool
// ids; the cancel line is kept on the window.
func TestMergeCancelled(t *testing.T) {
	tool := func(sid, id, status string) transcript.Step {
		kind := "tool_call"
		if status != "in_progress" {
			kind = "tool_call_update"
		}
		return rpcOut(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"` + kind + `","toolCallId":"` + id + `","status":"` + status + `"}}}`)
	}
	prompt := transcript.Step{Op: transcript.OpIn, Match: map[string]any{"method": "session/prompt"}}
	end := func(reason string) transcript.Step {
		return rpcOut(`{"jsonrpc":"2.0","id":{{json:rpc3}},"result":{"stopReason":"` + reason + `"}}`)
	}
	main := &oneRun{procs: []Process{{SessionID: "3f0c-main"}}, steps: []transcript.Step{prompt, tool("3f0c-main", "t-main", "in_progress"), tool("3f0c-main", "t-main", "completed"), end("end_turn"), {Op: transcript.OpExit}}}
	cancel := transcript.Step{Op: transcript.OpIn, Match: map[string]any{"method": "session/cancel"}, Recorded: `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"9a1d-cut"}}`}
	cut := &oneRun{procs: []Process{{SessionID: "9a1d-cut"}}, steps: []transcript.Step{prompt, tool("9a1d-cut", "t-cut", "in_progress"), cancel, tool("9a1d-cut", "t-cut", "completed"), end("cancelled"), {Op: transcript.OpExit}}}
	got := mergeCancelled(main, cut, 1500*1e6)
	var ops []string
	for _, s := range got.steps {
		ops = append(ops, string(s.Op))
	}
	if strings.Join(ops, " ") != "in out delay_ms out out exit label out out exit" {
		t.Fatalf("steps %v", ops)
	}
	w := got.steps[2]
	if w.DelayMS != 1500 || len(w.Cases) != 1 || w.Cases[0].Goto != "cancelled" || !strings.Contains(w.Recorded, `"sessionId":"3f0c-main"`) {
		t.Errorf("window %+v", w)
	}
	if b := got.steps[7].Text; !strings.Contains(b, `"sessionId":"3f0c-main"`) || !strings.Contains(b, `"toolCallId":"t-main"`) {
		t.Errorf("branch line %s", b)
	}
	tr := &transcript.Transcript{Header: transcript.Header{Argv: []string{"gemini", "--acp"}}, Steps: got.steps}
	paths, err := acp.Paths(tr)
	if err != nil || len(paths) != 2 {
		t.Fatalf("paths %d %v", len(paths), err)
	}
}

func TestPermissionAnswer(t *testing.T) {
	params := json.RawMessage(`{"options":[{"optionId":"a","kind":"allow_always"},{"optionId":"o","kind":"allow_once"},{"optionId":"r","kind":"reject_once"}]}`)
	for policy, want := range map[string]string{"allow": `"optionId":"o"`, "deny": `"optionId":"r"`} {
		b, _ := json.Marshal(permissionAnswer(policy, params))
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: %s", policy, b)
		}
	}
	b, _ := json.Marshal(permissionAnswer("deny", json.RawMessage(`{"options":[{"optionId":"a","kind":"allow_once"}]}`)))
	if string(b) != `{"outcome":{"outcome":"cancelled"}}` {
		t.Errorf("no reject option: %s", b)
	}
}

// TestACPFS: the driver's file system serves the project, by line and
// limit, says a missing file is missing, and nothing outside.
func TestACPFS(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := acpFS(dir, "fs/read_text_file", json.RawMessage(`{"path":"`+filepath.Join(dir, "a.txt")+`","line":2,"limit":1}`))
	if b, _ := json.Marshal(got); err != nil || string(b) != `{"content":"two\n"}` {
		t.Errorf("read: %s %v", b, err)
	}
	var nf *notFound
	if _, err := acpFS(dir, "fs/read_text_file", json.RawMessage(`{"path":"b.txt"}`)); !errors.As(err, &nf) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := acpFS(dir, "fs/read_text_file", json.RawMessage(`{"path":"/etc/passwd"}`)); err == nil {
		t.Error("a file outside the project was served")
	}
	if _, err := acpFS(dir, "fs/write_text_file", json.RawMessage(`{"path":"c.txt","content":"x"}`)); err != nil {
		t.Error(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "c.txt")); string(b) != "x" {
		t.Errorf("written %q", b)
	}
}

// TestAgeGeminiSession: the session's file is renamed an hour earlier, in
// its directory; another session whose id starts alike is left alone.
func TestAgeGeminiSession(t *testing.T) {
	home := t.TempDir()
	chats := filepath.Join(home, ".gemini", "tmp", "work", "chats")
	if err := os.MkdirAll(chats, 0o755); err != nil {
		t.Fatal(err)
	}
	id := "4d8d1674-2ae9-4d1a-88a6-c7ccb2617f05"
	mine := filepath.Join(chats, "session-2026-11-29T00-05-4d8d1674.jsonl")
	other := filepath.Join(chats, "session-2026-11-29T00-05-4d8d1674.json")
	os.WriteFile(mine, []byte(`{"sessionId":"`+id+`","projectHash":"h"}`+"\n"), 0o644)
	os.WriteFile(other, []byte(`{"sessionId":"4d8d1674-0000-4000-8000-000000000000","projectHash":"h"}`+"\n"), 0o644)
	if err := ageGeminiSession(home, id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(chats, "session-2026-11-28T23-05-4d8d1674.jsonl")); err != nil {
		t.Errorf("the session's file not renamed an hour earlier: %v", err)
	}
	if _, err := os.Stat(mine); err == nil {
		t.Error("the session's file is still under its own minute")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another session's file was moved: %v", err)
	}
	if err := ageGeminiSession(home, "00000000-0000-4000-8000-000000000000"); err == nil {
		t.Error("no error for a session with no file")
	}
}
