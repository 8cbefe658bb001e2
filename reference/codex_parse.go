package reference

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/reference/unified"
)

// Codex `exec --json` lines (docs/protocols/codex.md#events) are decoded in two steps,
// the type and then the struct of that type.
type codexThread struct {
	ThreadID string `json:"thread_id"`
}

type codexTurnCompleted struct {
	Usage *codexUsage `json:"usage"`
}

type codexTurnFailed struct {
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type codexError struct {
	Message string `json:"message"`
}

type codexItemLine struct {
	Item *codexItem `json:"item"`
}

type codexUsage struct {
	InputTokens           jsonInt  `json:"input_tokens"`
	CachedInputTokens     jsonInt  `json:"cached_input_tokens"`
	CacheWriteInputTokens jsonInt  `json:"cache_write_input_tokens"`
	OutputTokens          jsonInt  `json:"output_tokens"`
	ReasoningOutputTokens *jsonInt `json:"reasoning_output_tokens"`
}

// codexItem is a ThreadItem, every variant's fields flattened. A
// web_search item has a second "id" key; the decoder keeps the last, as
// most parsers do, and started and completed carry the same one.
type codexItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`

	Text string `json:"text"` // agent_message, reasoning

	Command          string   `json:"command"` // command_execution
	AggregatedOutput string   `json:"aggregated_output"`
	ExitCode         *jsonInt `json:"exit_code"`

	Changes []struct { // file_change
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`

	Server    string          `json:"server"` // mcp_tool_call
	Tool      string          `json:"tool"`   // mcp_tool_call, collab_tool_call
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result"`
	Error     json.RawMessage `json:"error"` // {message} or null

	Query  string          `json:"query"` // web_search
	Action json.RawMessage `json:"action"`

	Items json.RawMessage `json:"items"` // todo_list

	SenderThreadID    string          `json:"sender_thread_id"` // collab_tool_call
	ReceiverThreadIDs json.RawMessage `json:"receiver_thread_ids"`
	Prompt            json.RawMessage `json:"prompt"`
	AgentsStates      json.RawMessage `json:"agents_states"`

	Message string `json:"message"` // error
}

// codexParser reads `codex exec --json` output: one process per turn,
// item ids restarting at item_0 in every process, usage cumulative over the
// thread. A process that resumes nothing runs a thread of its own (a new
// thread_id), whose first turn.completed counts that turn alone
// (docs/protocols/codex.md#usage).
type codexParser struct {
	opts    Options
	sid     string
	proc    int               // the turn's process number, from 1
	started map[string]bool   // items started in this process
	output  map[string]string // command output reported so far, by item
	thread  string            // the thread of this process (its thread.started)
	prev    map[string]*usage // per thread: its cumulative usage at its last turn.completed
	term    *terminal
}

func newCodexParser(opts Options) *codexParser { return &codexParser{opts: opts} }

func (p *codexParser) sessionID() string   { return p.sid }
func (p *codexParser) terminal() *terminal { return p.term }

func (p *codexParser) beginTurn(n int, _ string) []fact {
	p.proc, p.term, p.thread = n, nil, ""
	p.started, p.output = map[string]bool{}, map[string]string{}
	return nil
}

// itemID qualifies an item id with the process number from the second
// process on, since every process restarts at item_0.
func (p *codexParser) itemID(id string) string {
	if p.proc <= 1 {
		return id
	}
	return id + "#" + strconv.Itoa(p.proc)
}

func (p *codexParser) line(raw []byte, owned bool) ([]fact, error) {
	h, sc, err := scanHeader(raw, "codex", true)
	if err != nil {
		return nil, err
	}
	if p.started == nil {
		p.beginTurn(max(p.proc, 1), "")
	}
	switch h.Type {
	case "thread.started":
		var l codexThread
		if err := sc.decode(raw, owned, &l, "codex thread.started"); err != nil {
			return nil, err
		}
		p.sid, p.thread = l.ThreadID, l.ThreadID
		return []fact{factSession{id: l.ThreadID, model: p.opts.Model, cwd: p.opts.Cwd, sandboxMode: codexSandbox(p.opts.Sandbox)}}, nil
	case "turn.completed":
		var l codexTurnCompleted
		if err := sc.decode(raw, owned, &l, "codex turn.completed"); err != nil {
			return nil, err
		}
		t := &terminal{}
		if l.Usage != nil {
			cum := codexUsageOf(l.Usage)
			t.usage = cum.sub(p.prev[p.thread])
			if plantedBug {
				t.usage = cum
			}
			if p.prev == nil {
				p.prev = map[string]*usage{}
			}
			p.prev[p.thread] = cum
		}
		p.term = t
	case "turn.failed":
		var l codexTurnFailed
		if err := sc.decode(raw, owned, &l, "codex turn.failed"); err != nil {
			return nil, err
		}
		t := &terminal{failed: true, errText: "turn failed"}
		if l.Error != nil && l.Error.Message != "" {
			t.errText = l.Error.Message
		}
		p.term = t
	case "error":
		var l codexError
		if err := sc.decode(raw, owned, &l, "codex error"); err != nil {
			return nil, err
		}
		return []fact{factText{kind: textNotice, text: l.Message}}, nil
	case "item.started", "item.updated", "item.completed":
		var l codexItemLine
		if err := sc.decode(raw, owned, &l, "codex "+h.Type); err != nil {
			return nil, err
		}
		if l.Item != nil {
			return p.item(h.Type, l.Item, &sc), nil
		}
	}
	return nil, nil
}

func codexUsageOf(u *codexUsage) *usage {
	in, cached, write := int64(u.InputTokens), int64(u.CachedInputTokens), int64(u.CacheWriteInputTokens)
	out := &usage{
		uncached:   clamp(in - cached - write),
		cacheRead:  cached,
		cacheWrite: write,
		output:     int64(u.OutputTokens),
	}
	if u.ReasoningOutputTokens != nil {
		out.reasoning = ptr(int64(*u.ReasoningOutputTokens))
	}
	return out
}

// codexSandbox maps a --sandbox value to a unified sandboxMode.
func codexSandbox(s string) string {
	switch s {
	case "read-only":
		return "readOnly"
	case "workspace-write":
		return "workspaceWrite"
	case "danger-full-access":
		return "fullAccess"
	}
	return ""
}

// item handles item.started, item.updated and item.completed; sc is the
// scan of the line.
func (p *codexParser) item(ev string, it *codexItem, sc *lineScan) []fact {
	id := p.itemID(it.ID)
	switch it.Type {
	case "agent_message":
		if ev == "item.completed" {
			return []fact{factText{kind: textAnswer, text: it.Text}}
		}
		return nil
	case "reasoning":
		if ev == "item.completed" && strings.TrimSpace(it.Text) != "" {
			return []fact{factText{kind: textReasoning, text: it.Text}}
		}
		return nil
	case "error":
		if ev == "item.completed" {
			return []fact{factText{kind: textNotice, text: it.Message}}
		}
		return nil
	}
	start, ok := codexToolStart(id, it)
	if !ok {
		return nil // an item type this translator does not know
	}
	var out []fact
	if !p.started[id] {
		p.started[id] = true
		out = append(out, start)
	}
	switch ev {
	case "item.updated":
		out = append(out, p.progress(id, it)...)
	case "item.completed":
		out = append(out, codexToolEnd(id, it, sc)...)
	}
	return out
}

// codexToolStart is the start of a tool-like item.
func codexToolStart(id string, it *codexItem) (factToolStart, bool) {
	f := factToolStart{id: id}
	switch it.Type {
	case "command_execution":
		f.name, f.input = "shell", object("command", it.Command)
	case "file_change":
		f.name, f.input = "file_change", object("changes", it.Changes)
	case "mcp_tool_call":
		f.name, f.input = it.Server+"/"+it.Tool, toolInput(it.Arguments)
		f.shimName = "mcp__" + it.Server + "__" + it.Tool
	case "web_search":
		f.name, f.input = "web_search", object("query", it.Query, "action", it.Action)
	case "todo_list":
		f.name, f.input, f.snapshot = "todo_list", object("items", it.Items), true
	case "collab_tool_call":
		f.name = "collab/" + it.Tool
		f.input = object("sender_thread_id", it.SenderThreadID, "receiver_thread_ids", it.ReceiverThreadIDs, "prompt", it.Prompt)
	default:
		return f, false
	}
	if f.shimName == "" {
		f.shimName = f.name
	}
	return f, true
}

// progress reports what an item.updated added while the item ran: new
// command output (aggregated_output grows; only the growth is reported),
// or the new state of a todo list.
func (p *codexParser) progress(id string, it *codexItem) []fact {
	switch it.Type {
	case "command_execution":
		prev, cur := p.output[id], it.AggregatedOutput
		p.output[id] = cur
		if cur == prev || cur == "" {
			return nil
		}
		if strings.HasPrefix(cur, prev) {
			cur = cur[len(prev):]
		}
		return []fact{factToolProgress{id: id, output: cur}}
	case "todo_list":
		if !isNull(it.Items) {
			return []fact{factToolProgress{id: id, output: string(compact(it.Items))}}
		}
	}
	return nil
}

// codexToolEnd is the end of a tool-like item: its result, and for a
// completed file change, one file fact per changed file.
func codexToolEnd(id string, it *codexItem, sc *lineScan) []fact {
	end := factToolEnd{id: id, ok: true}
	switch it.Type {
	case "command_execution":
		end.result, end.text, end.isText = sc.jsonString(it.AggregatedOutput), it.AggregatedOutput, true
		code := int64(0)
		if it.ExitCode != nil {
			code = int64(*it.ExitCode)
		}
		end.ok = it.Status == "completed" && code == 0
		if !end.ok {
			switch {
			case it.Status == "declined":
				end.errText = "declined"
			case code != 0:
				end.errText = "exit code " + strconv.FormatInt(code, 10)
			default:
				end.errText = "command " + it.Status
			}
		}
	case "file_change":
		end.ok = it.Status == "completed"
		if !end.ok {
			end.errText = "file change " + it.Status
			return []fact{end}
		}
		var out []fact
		for _, c := range it.Changes {
			out = append(out, factFile{path: c.Path, change: codexChange(c.Kind)})
		}
		return append(out, end)
	case "mcp_tool_call":
		end.result = compact(it.Result)
		var e struct {
			Message string `json:"message"`
		}
		if !isNull(it.Error) {
			_ = json.Unmarshal(it.Error, &e)
			end.ok, end.errText = false, e.Message
			if end.errText == "" {
				end.errText = string(compact(it.Error))
			}
		}
		if it.Status != "" && it.Status != "completed" {
			end.ok = false
			if end.errText == "" {
				end.errText = "mcp tool call " + it.Status
			}
		}
	case "web_search":
		end.result = compact(it.Action)
	case "todo_list":
		end.result = object("items", it.Items)
	case "collab_tool_call":
		end.result = object("agents_states", it.AgentsStates)
		end.ok = it.Status == "" || it.Status == "completed"
		if !end.ok {
			end.errText = "collab tool call " + it.Status
		}
	}
	return []fact{end}
}

// codexChange maps a file change kind to a unified change type.
func codexChange(kind string) unified.ChangeType {
	switch kind {
	case "add":
		return unified.ChangeCreated
	case "delete":
		return unified.ChangeDeleted
	}
	return unified.ChangeModified
}
