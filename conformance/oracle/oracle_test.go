package oracle

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
)

// fixtureOutputs reads a fixture's stdout as the turns a CLI wrote them
// in: Codex and Gemini a process per turn, Claude cut after each result.
func fixtureOutputs(t *testing.T, name string) (string, []Output) {
	t.Helper()
	tr, err := fixtures.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	var outs []Output
	for _, proc := range tr.Processes() {
		var cur []map[string]any
		for _, s := range proc {
			if s.Op != transcript.OpOut {
				continue
			}
			var m map[string]any
			if json.Unmarshal([]byte(s.Text), &m) != nil {
				m = nil
			}
			cur = append(cur, m)
			if tr.Header.CLI == "claude" && m != nil && m["type"] == "result" {
				outs = append(outs, Output{Format: Stream, Lines: cur})
				cur = nil
			}
		}
		if len(cur) > 0 {
			outs = append(outs, Output{Format: Stream, Lines: cur})
		}
	}
	return tr.Header.CLI, outs
}

func readFixture(t *testing.T, name string) *Session {
	t.Helper()
	agent, outs := fixtureOutputs(t, name)
	s, err := Read(agent, outs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// texts joins the texts of kind over the session.
func texts(s *Session, kind ItemKind) string {
	var b strings.Builder
	for _, t := range s.Turns {
		for _, it := range t.Items {
			if it.Kind == kind {
				b.WriteString(it.Text)
			}
		}
	}
	return b.String()
}

type toolSummary struct {
	Name    string
	Ended   bool
	Success bool
	Result  any
	Error   string
}

func toolsOf(s *Session) []toolSummary {
	var out []toolSummary
	for _, t := range s.Tools {
		out = append(out, toolSummary{t.Name, t.Ended, t.Success, t.Result, t.Error})
	}
	return out
}

func usages(s *Session) [][2]int64 {
	var out [][2]int64
	for _, t := range s.Turns {
		if t.End != nil && t.End.TurnUsage != nil {
			out = append(out, [2]int64{t.End.TurnUsage.Input(), t.End.TurnUsage.Output})
		}
	}
	return out
}

// TestPartialMessagesSayTextOnce: the deltas and the whole block of
// --include-partial-messages are one text, said once
// (docs/protocols/claude.md#partial-messages).
func TestPartialMessagesSayTextOnce(t *testing.T) {
	s := readFixture(t, "claude/partial-messages")
	if got, want := texts(s, Answer), "I'll run the command.It printed `hi`."; got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
}

// TestClaudeThinkingIsNotTheAnswer (docs/protocols/claude.md#thinking).
func TestClaudeThinkingIsNotTheAnswer(t *testing.T) {
	s := readFixture(t, "claude/thinking")
	if got, want := texts(s, Answer), "I'll run the command.It printed `hi`."; got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
	if got := texts(s, Thinking); !strings.Contains(got, "The user wants to see what echo prints.") || !strings.Contains(got, "The command printed hi.") {
		t.Errorf("thinking %q lacks the two thinking blocks", got)
	}
	if d := cmp.Diff([]toolSummary{{"Bash", true, true, "hi", ""}}, toolsOf(s)); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
}

// TestCodexUsageIsTheTurns: Codex reports the thread's running total; a
// turn's usage is the difference (docs/protocols/codex.md#usage), and a
// failed turn in between reports none. Gemini's stats are the process's
// (docs/protocols/gemini.md#stats).
func TestCodexUsageIsTheTurns(t *testing.T) {
	for name, want := range map[string][][2]int64{
		"codex/multi-turn":           {{400, 46}, {400, 45}},
		"codex/api-error-then-turn":  {{400, 46}, {400, 45}},
		"codex/plain-text":           {{200, 18}},
		"gemini/multi-turn":          {{600, 74}, {600, 75}},
		"gemini/api-error-then-turn": {{600, 74}, {200, 26}, {600, 75}}, // an error result has stats too
	} {
		if d := cmp.Diff(want, usages(readFixture(t, name))); d != "" {
			t.Errorf("%s: turn usage (-want +got):\n%s", name, d)
		}
	}
	s := readFixture(t, "codex/api-error-then-turn")
	if e := s.Turns[1].End; e == nil || !e.Failed || !strings.Contains(e.Message, "invalid request") || e.TurnUsage != nil {
		t.Errorf("the failed turn's end: %+v", e)
	}
}

// TestCodexLeftOpen: a command left running in the background has no
// outcome (docs/protocols/codex.md#items-at-turn-end).
func TestCodexLeftOpen(t *testing.T) {
	s := readFixture(t, "codex/background-command")
	if d := cmp.Diff([]toolSummary{{"shell", false, false, nil, ""}}, toolsOf(s)); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if got, want := texts(s, Answer), "Starting the server.The server is starting in the background."; got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
}

// TestCodexItems: item ids restart in every process, file changes are
// read from a completed file_change, a plan's states are kept.
func TestCodexItems(t *testing.T) {
	s := readFixture(t, "codex/multi-turn")
	if len(s.Tools) != 2 || s.Tools[0].ID != "item_0" || s.Tools[1].ID != "item_0" || s.Tools[1].Turn != 1 || !s.Tools[1].Ended {
		t.Errorf("the two item_0 of two processes are two calls: %+v", toolsOf(s))
	}
	var files []File
	for _, it := range s.Turns[1].Items {
		if it.Kind == FileChange {
			files = append(files, it.File)
		}
	}
	if d := cmp.Diff([]File{{Path: "/home/user/project/greet.go", Change: "modified"}}, files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	plan := readFixture(t, "codex/todo-list").Tools[0]
	if plan.Name != "todo_list" || len(plan.States) != 5 {
		t.Errorf("the plan %q has %d states, want 5 (start, three updates, completion)", plan.Name, len(plan.States))
	}
}

// TestGeminiToolError: a failed tool's error message is read besides its
// output (docs/protocols/gemini.md#tool-errors).
func TestGeminiToolError(t *testing.T) {
	s := readFixture(t, "gemini/tool-error")
	if len(s.Tools) == 0 {
		t.Fatal("no tool call")
	}
	tool := s.Tools[0]
	if tool.Success || tool.Result != "File not found." || tool.Error != "File not found: /home/user/project/notes/missing.md" {
		t.Errorf("the failed read: %+v", tool)
	}
	if got, want := texts(s, Echo), "Show me the contents of the missing file."; got != want {
		t.Errorf("the echoed prompt %q, want %q", got, want)
	}
	if got := texts(s, Answer); strings.Contains(got, "Show me") {
		t.Errorf("the prompt's echo in the answer %q", got)
	}
}

// TestClaudeFailedResult: is_error fails the turn with the errors list.
func TestClaudeFailedResult(t *testing.T) {
	s := readFixture(t, "claude/max-turns")
	e := s.Turns[len(s.Turns)-1].End
	if e == nil || !e.Failed || !e.MaxTurns {
		t.Fatalf("max-turns result: %+v", e)
	}
}

// TestReadSkipsWhatItCannotRead: lines that are no JSON object, unknown
// types and fields, a tool result for no call, carry nothing.
func TestReadSkipsWhatItCannotRead(t *testing.T) {
	lines := []map[string]any{
		nil,
		{"type": "brand_new", "text": "x"},
		{"type": "user", "message": map[string]any{"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "nobody", "content": "stray"}}}},
		{"type": "assistant", "message": map[string]any{"id": "m", "content": []any{map[string]any{"type": "text", "text": "hi", "new_field": 1}}}},
		{"type": "result", "is_error": false, "usage": map[string]any{"input_tokens": 3.0, "output_tokens": 2.0, "cache_read_input_tokens": 4.0}},
	}
	s, err := Read("claude", []Output{{Format: Stream, Lines: lines}, {Format: Text, Answer: "plain"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 0 || texts(s, Answer) != "hi" || s.Turns[1].Answer != "plain" {
		t.Errorf("model: tools %v, answer %q, text turn %q", toolsOf(s), texts(s, Answer), s.Turns[1].Answer)
	}
	if u := s.Turns[0].End.TurnUsage; u.Input() != 7 || u.InputTokens != 3 || u.TotalTokens() != 9 {
		t.Errorf("usage %+v: input 7 (3 uncached + 4 cached), total 9", u)
	}
	if _, err := Read("aider", nil); err == nil {
		t.Error("an unknown agent is no error")
	}
}
