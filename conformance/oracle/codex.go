package oracle

import (
	"strconv"
	"strings"
)

// codexReader reads `codex exec --json` output: one process per turn, item
// ids restarting at item_0 in every process, usage the thread's running
// total (docs/protocols/codex.md#events, #item-ids, #usage).
type codexReader struct {
	proc    int               // the turn's process, from 1
	started map[string]bool   // items started in this process
	output  map[string]string // a command's output reported so far, by item
	thread  string            // this process's thread (thread.started)
	prev    map[string]*Usage // per thread: its total at its last turn.completed
}

func (c *codexReader) begin(*reader) {
	c.proc++
	c.started, c.output, c.thread = map[string]bool{}, map[string]string{}, ""
}

func (c *codexReader) line(r *reader, l map[string]any) {
	switch getStr(l, "type") {
	case "thread.started":
		c.thread = getStr(l, "thread_id")
	case "turn.completed":
		e := &End{}
		if u := getObj(l, "usage"); u != nil {
			e.Usage = codexUsage(u)
			e.TurnUsage = e.Usage.since(c.prev[c.thread])
			if c.prev == nil {
				c.prev = map[string]*Usage{}
			}
			c.prev[c.thread] = e.Usage
		}
		r.turn.End = e
	case "turn.failed":
		// turn.failed's message is the turn's error
		// (docs/protocols/codex.md#errors).
		e := &End{Failed: true, Message: getStr(getObj(l, "error"), "message")}
		if e.Message == "" {
			e.Message = "turn failed"
		}
		r.turn.End = e
	case "error":
		// A notice, not the end (docs/protocols/codex.md#errors).
		r.text(Notice, getStr(l, "message"), false)
	case "item.started", "item.updated", "item.completed":
		if it := getObj(l, "item"); it != nil {
			c.item(r, getStr(l, "type"), it)
		}
	}
}

// codexUsage reads a usage object: input_tokens counts every prompt
// token, cached_input_tokens and cache_write_input_tokens among them.
func codexUsage(u map[string]any) *Usage {
	in, cached, write := getInt(u, "input_tokens"), getInt(u, "cached_input_tokens"), getInt(u, "cache_write_input_tokens")
	return &Usage{
		InputTokens: in,
		Uncached:    clampSub(in, cached+write),
		CacheRead:   cached,
		CacheWrite:  write,
		Output:      getInt(u, "output_tokens"),
		Reasoning:   getIntPtr(u, "reasoning_output_tokens"),
	}
}

// since is u less the thread's previous total prev (nil: none), field by
// field, a counter that went backwards counting 0.
func (u *Usage) since(prev *Usage) *Usage {
	if prev == nil {
		d := *u
		return &d
	}
	d := &Usage{
		Uncached:   clampSub(u.Uncached, prev.Uncached),
		CacheRead:  clampSub(u.CacheRead, prev.CacheRead),
		CacheWrite: clampSub(u.CacheWrite, prev.CacheWrite),
		Output:     clampSub(u.Output, prev.Output),
	}
	if u.Reasoning != nil {
		var p int64
		if prev.Reasoning != nil {
			p = *prev.Reasoning
		}
		n := clampSub(*u.Reasoning, p)
		d.Reasoning = &n
	}
	return d
}

// item reads item.started, item.updated and item.completed
// (docs/protocols/codex.md#items): messages, reasoning and warnings come
// completed only; every other known item is a tool call, started once
// (an item that completes unstarted starts then).
func (c *codexReader) item(r *reader, ev string, it map[string]any) {
	id := getStr(it, "id")
	typ := getStr(it, "type")
	switch typ {
	case "agent_message":
		if ev == "item.completed" {
			r.text(Answer, getStr(it, "text"), false)
		}
		return
	case "reasoning":
		// Not written when blank.
		if text := getStr(it, "text"); ev == "item.completed" && strings.TrimSpace(text) != "" {
			r.text(Thinking, text, false)
		}
		return
	case "error":
		if ev == "item.completed" {
			r.text(Notice, getStr(it, "message"), false)
		}
		return
	}
	name, input, ok := codexToolStart(it)
	if !ok {
		return // an item type the model does not know
	}
	key := id
	if c.proc > 1 {
		key = id + "#" + strconv.Itoa(c.proc)
	}
	if !c.started[key] {
		c.started[key] = true
		t := r.start(key, id, name, input)
		if typ == "todo_list" {
			t.States = append(t.States, input)
		}
	}
	t := r.running(key)
	if t == nil {
		return
	}
	switch ev {
	case "item.updated":
		c.progress(r, t, key, it)
	case "item.completed":
		codexToolEnd(r, key, it)
	}
}

// codexToolStart is a tool-like item's name and input.
func codexToolStart(it map[string]any) (name string, input any, ok bool) {
	switch getStr(it, "type") {
	case "command_execution":
		return "shell", map[string]any{"command": getStr(it, "command")}, true
	case "file_change":
		return "file_change", map[string]any{"changes": codexChanges(it)}, true
	case "mcp_tool_call":
		return getStr(it, "server") + "/" + getStr(it, "tool"), it["arguments"], true
	case "web_search":
		return "web_search", nonNull("query", it["query"], "action", it["action"]), true
	case "todo_list":
		return "todo_list", nonNull("items", it["items"]), true
	case "collab_tool_call":
		return "collab/" + getStr(it, "tool"), nonNull("sender_thread_id", it["sender_thread_id"], "receiver_thread_ids", it["receiver_thread_ids"], "prompt", it["prompt"]), true
	}
	return "", nil, false
}

// nonNull makes an object of the pairs whose value is not null.
func nonNull(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != nil {
			m[kv[i].(string)] = kv[i+1]
		}
	}
	return m
}

// codexChanges are a file change's changes, each its path and kind.
func codexChanges(it map[string]any) []any {
	var out []any
	chs, _ := it["changes"].([]any)
	for _, c := range chs {
		if m, ok := c.(map[string]any); ok {
			out = append(out, map[string]any{"path": getStr(m, "path"), "kind": getStr(m, "kind")})
		}
	}
	return out
}

// progress reads an item.updated of a running call: a command's output
// grown (its growth is the progress), a plan's new state.
func (c *codexReader) progress(r *reader, t *Tool, key string, it map[string]any) {
	switch getStr(it, "type") {
	case "command_execution":
		prev, cur := c.output[key], getStr(it, "aggregated_output")
		c.output[key] = cur
		if cur == prev || cur == "" {
			return
		}
		r.progress(t, strings.TrimPrefix(cur, prev), nil)
	case "todo_list":
		if items := it["items"]; items != nil {
			state := map[string]any{"items": items}
			t.States = append(t.States, state)
			r.progress(t, "", state)
		}
	}
}

// codexToolEnd ends a call with its item.completed: a command succeeded
// when it completed with exit code 0 (a failed one is status failed with
// its exit code, declined when refused), a file change when completed (and
// then each of its changes is a file changed), an MCP call when it has no
// error, a collaboration call when completed.
func codexToolEnd(r *reader, key string, it map[string]any) {
	status := getStr(it, "status")
	switch getStr(it, "type") {
	case "command_execution":
		r.end(key, status == "completed" && getInt(it, "exit_code") == 0, getStr(it, "aggregated_output"), "")
	case "file_change":
		if status != "completed" {
			r.end(key, false, nil, "")
			return
		}
		for _, ch := range codexChanges(it) {
			m := ch.(map[string]any)
			r.add(Item{Kind: FileChange, File: File{Path: m["path"].(string), Change: codexChange(m["kind"].(string))}})
		}
		r.end(key, true, nil, "")
	case "mcp_tool_call":
		ok, msg := true, ""
		if e := it["error"]; e != nil {
			ok = false
			if msg = getStr(getObj(it, "error"), "message"); msg == "" {
				msg = jsonText(e)
			}
		}
		if status != "" && status != "completed" {
			ok = false
		}
		r.end(key, ok, it["result"], msg)
	case "web_search":
		r.end(key, true, it["action"], "")
	case "todo_list":
		t := r.running(key)
		state := nonNull("items", it["items"])
		t.States = append(t.States, state)
		r.end(key, true, state, "")
	case "collab_tool_call":
		r.end(key, status == "" || status == "completed", nonNull("agents_states", it["agents_states"]), "")
	}
}

// codexChange names a file change's kind: add, delete or update.
func codexChange(kind string) string {
	switch kind {
	case "add":
		return "created"
	case "delete":
		return "deleted"
	}
	return "modified"
}
