package reference

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/reference/unified"
)

// summary is what a caller can see in a unified stream, condensed: the
// answer text, the other texts, every tool call, file changes, usage.
type summary struct {
	SessionID string
	Answer    string   // the assistant's text, concatenated
	User      []string // user-role texts
	Other     []string // role-null texts (reasoning, notices, errors)
	Tools     []toolSummary
	Files     []string // "<changeType> <path>"
	Turns     []unified.TokenUsage
	Final     *unified.TokenUsage
	Reason    unified.Reason
	Error     string
}

type toolSummary struct {
	ID, Name, Args string // Args: compact JSON
	Progress       []string
	Success        bool
	Result, Error  string // Result: compact JSON
}

func summarize(t *testing.T, evs []unified.Event) summary {
	t.Helper()
	var s summary
	tools := map[string]*toolSummary{}
	for _, ev := range evs {
		switch e := ev.(type) {
		case *unified.SessionStarted:
			s.SessionID = e.SessionID
		case *unified.TextChunk:
			switch {
			case e.Role == nil:
				s.Other = append(s.Other, e.Content)
			case *e.Role == unified.RoleUser:
				s.User = append(s.User, e.Content)
			default:
				s.Answer += e.Content
			}
		case *unified.ToolStarted:
			s.Tools = append(s.Tools, toolSummary{ID: e.ToolID, Name: e.ToolName, Args: string(compact(e.Arguments))})
			tools[e.ToolID] = &s.Tools[len(s.Tools)-1]
			// Pointers into a growing slice go stale: re-point them all.
			for i := range s.Tools {
				tools[s.Tools[i].ID] = &s.Tools[i]
			}
		case *unified.ToolProgress:
			tools[e.ToolID].Progress = append(tools[e.ToolID].Progress, e.Output)
		case *unified.ToolCompleted:
			tc := tools[e.ToolID]
			tc.Success, tc.Result, tc.Error = e.Success, string(compact(e.Result)), e.Error
		case *unified.FileChanged:
			s.Files = append(s.Files, string(e.ChangeType)+" "+e.FilePath)
		case *unified.TurnCompleted:
			if e.Usage != nil {
				s.Turns = append(s.Turns, *e.Usage)
			}
		case *unified.SessionEnded:
			s.Final, s.Reason, s.Error = e.FinalUsage, e.Reason, e.Error
		}
	}
	return s
}

func usageOf(in, out, cached, total int64, reasoning ...int64) unified.TokenUsage {
	u := unified.TokenUsage{InputTokens: in, OutputTokens: out, CachedTokens: &cached, TotalTokens: total}
	if len(reasoning) > 0 {
		u.ReasoningTokens = &reasoning[0]
	}
	return u
}

// TestLosslessCaptures compares what the translator makes of real captures
// with hand-written expectations: the text, every tool's id, name, input
// and result, file changes and the usage numbers.
func TestLosslessCaptures(t *testing.T) {
	cases := []struct {
		agent Agent
		name  string
		want  summary
	}{
		{Claude, "b_tool_bash", summary{
			SessionID: "08fc0ecf-5fa8-47e8-98fc-00b77f2c5052",
			Answer:    "I'll run a command.The command printed: hi",
			Tools: []toolSummary{{ID: "toolu_mock_2ce0a08a04ad44adbeb3", Name: "Bash",
				Args: `{"command":"echo hi","description":"Print hi"}`, Success: true, Result: `"hi"`}},
			// input 362 + cache writes 0 + cache reads 0; output 58.
			Turns:  []unified.TokenUsage{usageOf(362, 58, 0, 420)},
			Final:  ptr(usageOf(362, 58, 0, 420)),
			Reason: unified.ReasonCompleted,
		}},
		{Claude, "f_bidi_multiturn", summary{
			SessionID: "ccea668f-f5ba-40b0-908c-ab8cb3a065e8",
			Answer:    "Hello! I am a mock model. How can I help you today?Turn 2: you said 'and this is turn two'.",
			Turns:     []unified.TokenUsage{usageOf(177, 19, 0, 196), usageOf(182, 17, 0, 199)},
			Final:     ptr(usageOf(359, 36, 0, 395)),
			Reason:    unified.ReasonCompleted,
		}},
		{Claude, "f_bidi_permission_allow", summary{
			SessionID: "a6b7b702-077e-4d3a-948f-a3cfe6728585",
			Answer:    "I need to create a file.Tool outcome: created",
			Tools: []toolSummary{{ID: "toolu_mock_6014253244ca423e9a8b", Name: "Bash",
				Args: `{"command":"touch created-by-tool.txt && echo created","description":"Create a file"}`, Success: true, Result: `"created"`}},
			Turns:  []unified.TokenUsage{usageOf(364, 69, 0, 433)},
			Final:  ptr(usageOf(364, 69, 0, 433)),
			Reason: unified.ReasonCompleted,
		}},
		{Codex, "c_mixed_items", summary{
			SessionID: "01a1fb3a-8fea-79a2-a987-8234e7bae35c",
			Answer:    "I'll inspect the repository first.Now I'll patch the files.Done: `greet()` now appends `!`, `NOTES.md` documents it, and `OLD.txt` is gone.",
			Other: []string{
				"**Inspecting the repository**\n\nI should list files first.\n**Reading greet.py**\n\nThen read the function before editing.",
				"**Editing**\n\nUpdate greet(), add notes, delete the obsolete file.",
				"**Wrapping up**\n\nAll edits are in place.",
			},
			Tools: []toolSummary{
				{ID: "item_2", Name: "shell", Args: `{"command":"/bin/bash -lc 'cat src/greet.py'"}`, Success: true, Result: `"def greet(name):\n    return 'Hello ' + name\n"`},
				{ID: "item_3", Name: "shell", Args: `{"command":"/bin/bash -lc ls"}`, Success: true, Result: `"OLD.txt\nREADME.md\nsrc\n"`},
				{ID: "item_6", Name: "file_change", Args: `{"changes":[{"path":"/home/user/project/NOTES.md","kind":"add"},{"path":"/home/user/project/OLD.txt","kind":"delete"},{"path":"/home/user/project/src/greet.py","kind":"update"}]}`, Success: true},
				{ID: "item_7", Name: "shell", Args: `{"command":"/bin/bash -lc 'git status --short && git diff --stat'"}`, Success: true,
					Result: `" D OLD.txt\n M src/greet.py\n?? NOTES.md\n OLD.txt      | 1 -\n src/greet.py | 2 +-\n 2 files changed, 1 insertion(+), 2 deletions(-)\n"`},
			},
			Files:  []string{"created /home/user/project/NOTES.md", "deleted /home/user/project/OLD.txt", "modified /home/user/project/src/greet.py"},
			Turns:  []unified.TokenUsage{usageOf(4800, 120, 4096, 4920, 48)},
			Final:  ptr(usageOf(4800, 120, 4096, 4920, 48)),
			Reason: unified.ReasonCompleted,
		}},
		{Gemini, "tool_multi", summary{
			SessionID: "3e53754b-701f-4132-9b88-7c20b80f4845",
			Answer:    "I'll look at the workspace first.Done: read notes.txt, listed files, created out.txt and replaced 'world' with 'gemini'.",
			User:      []string{"Inspect notes.txt, list files, create out.txt and then edit it."},
			Tools: []toolSummary{
				{ID: "read_file__read_file_1795216374284_0", Name: "read_file", Args: `{"file_path":"notes.txt"}`, Success: true, Result: `""`},
				{ID: "run_shell_command__run_shell_command_1795216374373_1", Name: "run_shell_command", Args: `{"command":"ls -1","description":"List files"}`, Success: true, Result: `"notes.txt"`},
				{ID: "write_file__write_file_1795216374588_0", Name: "write_file", Args: `{"file_path":"out.txt","content":"hello\nworld\n"}`, Success: true},
				{ID: "replace__replace_1795216374639_0", Name: "replace", Args: `{"file_path":"out.txt","instruction":"Replace world with gemini.","old_string":"world","new_string":"gemini"}`, Success: true},
			},
			Turns:  []unified.TokenUsage{usageOf(1736, 181, 0, 1917)},
			Final:  ptr(usageOf(1736, 181, 0, 1917)),
			Reason: unified.ReasonCompleted,
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.agent)+"/"+tc.name, func(t *testing.T) {
			evs, _ := unifiedOf(t, tc.agent, captureTurns(t, tc.agent, tc.name))
			if diff := cmp.Diff(tc.want, summarize(t, evs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLosslessEverywhere checks, on every capture and fixture branch, the
// lossless properties against an independent reading of the raw stream:
// the assistant text, every tool id (unique ids may carry a "#n" suffix)
// with its name and input, every tool result, and the output token total.
func TestLosslessEverywhere(t *testing.T) {
	type input struct {
		name  string
		agent Agent
		turns []turnLines
	}
	var inputs []input
	for _, agent := range Agents {
		for _, name := range captureNames(t, agent) {
			inputs = append(inputs, input{string(agent) + "/" + name, agent, captureTurns(t, agent, name)})
		}
	}
	all, err := fixtures.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range all {
		for _, br := range fixtureBranches(fx.Name) {
			agent, turns := fixtureTurns(t, fx.Name, br)
			inputs = append(inputs, input{fx.Name + "/" + br, agent, turns})
		}
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			evs, _ := unifiedOf(t, in.agent, in.turns)
			got := summarize(t, evs)
			want := rawReading(t, in.agent, in.turns)
			if got.Answer != want.answer {
				t.Errorf("answer text:\n got %q\nwant %q", got.Answer, want.answer)
			}
			byID := map[string]toolSummary{}
			for _, tl := range got.Tools {
				byID[strings.SplitN(tl.ID, "#", 2)[0]+"@"+tl.Name] = tl
			}
			for _, call := range want.calls {
				tl, ok := byID[call.id+"@"+call.name]
				if !ok {
					t.Errorf("tool %s (%s) is missing", call.id, call.name)
					continue
				}
				if call.args != "" && !sameJSON(tl.Args, call.args) {
					t.Errorf("tool %s input %s, want %s", call.id, tl.Args, call.args)
				}
				if call.result != "" && !sameJSON(tl.Result, call.result) {
					t.Errorf("tool %s result %s, want %s", call.id, tl.Result, call.result)
				}
				if call.ok != nil && tl.Success != *call.ok {
					t.Errorf("tool %s success %v, want %v", call.id, tl.Success, *call.ok)
				}
			}
			var out int64
			for _, u := range got.Turns {
				out += u.OutputTokens
			}
			if out != want.output {
				t.Errorf("output tokens %d, want %d", out, want.output)
			}
			if got.Final != nil && got.Final.OutputTokens != want.output {
				t.Errorf("final output tokens %d, want %d", got.Final.OutputTokens, want.output)
			}
		})
	}
}

// rawCall is a tool call read straight from a CLI's stream.
type rawCall struct {
	id, name, args, result string
	ok                     *bool // nil when the stream never says
}

type rawSummary struct {
	answer string
	calls  []rawCall
	output int64
}

// rawReading reads a CLI's stream with plain maps, independently of the
// translators: the assistant text, the tool calls, the output tokens.
func rawReading(t *testing.T, agent Agent, turns []turnLines) rawSummary {
	t.Helper()
	var s rawSummary
	results := map[string]string{}
	oks := map[string]bool{}
	var lastCodexOut int64
	for _, turn := range turns {
		for _, line := range turn.lines {
			var m map[string]any
			if json.Unmarshal(line, &m) != nil {
				continue
			}
			switch agent {
			case Claude:
				msg, _ := m["message"].(map[string]any)
				blocks, _ := msg["content"].([]any)
				for _, b := range blocks {
					blk, _ := b.(map[string]any)
					switch {
					case m["type"] == "assistant" && blk["type"] == "text":
						s.answer += blk["text"].(string)
					case m["type"] == "assistant" && blk["type"] == "tool_use":
						s.calls = append(s.calls, rawCall{id: blk["id"].(string), name: blk["name"].(string), args: js(blk["input"])})
					case blk["type"] == "tool_result":
						results[blk["tool_use_id"].(string)] = js(blk["content"])
						oks[blk["tool_use_id"].(string)] = blk["is_error"] != true
					}
				}
				if m["type"] == "result" {
					u, _ := m["usage"].(map[string]any)
					s.output += num(u["output_tokens"])
				}
			case Codex:
				item, _ := m["item"].(map[string]any)
				switch {
				case m["type"] == "item.completed" && item["type"] == "agent_message":
					s.answer += item["text"].(string)
				case m["type"] == "item.completed" && item["type"] == "command_execution":
					ok := item["status"] == "completed" && num(item["exit_code"]) == 0
					s.calls = append(s.calls, rawCall{id: item["id"].(string), name: "shell", result: js(item["aggregated_output"]), ok: &ok})
				case m["type"] == "turn.completed":
					u, _ := m["usage"].(map[string]any)
					lastCodexOut = num(u["output_tokens"]) // cumulative
				}
			case Gemini:
				switch m["type"] {
				case "message":
					if m["role"] == "assistant" {
						s.answer += m["content"].(string)
					}
				case "tool_use":
					s.calls = append(s.calls, rawCall{id: m["tool_id"].(string), name: m["tool_name"].(string), args: js(m["parameters"])})
				case "tool_result":
					if o, ok := m["output"]; ok {
						results[m["tool_id"].(string)] = js(o)
					}
					oks[m["tool_id"].(string)] = m["status"] == "success"
				case "result":
					st, _ := m["stats"].(map[string]any)
					s.output += num(st["output_tokens"])
				}
			}
		}
	}
	if agent == Codex {
		s.output = lastCodexOut
	}
	for i, c := range s.calls {
		if r, ok := results[c.id]; ok {
			s.calls[i].result = r
		}
		if ok, seen := oks[c.id]; seen {
			s.calls[i].ok = &ok
		}
	}
	return s
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return cmp.Equal(x, y)
}

// TestShimLossless checks the shim output of the same captures: the text
// lines concatenate to the answer, and every tool call and result is there.
func TestShimLossless(t *testing.T) {
	for _, agent := range Agents {
		for _, name := range captureNames(t, agent) {
			t.Run(string(agent)+"/"+name, func(t *testing.T) {
				turns := captureTurns(t, agent, name)
				evs, _ := shimOf(t, agent, turns)
				want := rawReading(t, agent, turns)
				var text string
				uses := map[string]bool{}
				for _, ev := range evs {
					switch e := ev.(type) {
					case *ShimText:
						text += e.Content
					case *ShimToolUse:
						uses[e.ID] = true
					}
				}
				if text != want.answer {
					t.Errorf("text %q, want %q", text, want.answer)
				}
				for _, c := range want.calls {
					if !uses[c.id] {
						t.Errorf("tool_use %s missing", c.id)
					}
				}
				if !bytes.Contains(encode(t, evs), []byte(`"type":"usage"`)) {
					t.Error("no usage line")
				}
			})
		}
	}
}
