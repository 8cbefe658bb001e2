package oracle

import "strings"

// claudeReader reads Claude Code's stdout (--output-format stream-json
// --verbose, with or without --include-partial-messages; one process for
// the whole session, a turn closed by its result:
// docs/protocols/claude.md#stdout). System lines, the control protocol and
// unknown types carry nothing the model holds.
type claudeReader struct {
	deltas claudeDeltas
}

func (c *claudeReader) begin(*reader) { c.deltas = claudeDeltas{} }

func (c *claudeReader) line(r *reader, l map[string]any) {
	switch getStr(l, "type") {
	case "assistant":
		c.assistant(r, l)
	case "user":
		c.user(r, l)
	case "stream_event":
		c.deltas.event(r, getObj(l, "event"))
	case "tool_progress":
		if id := getStr(l, "tool_use_id"); id != "" {
			if t := r.running(id); t != nil {
				r.progress(t, "", nil)
			}
		}
	case "result":
		r.turn.End = claudeEnd(l)
		c.deltas = claudeDeltas{}
	}
}

// blocksOf returns a message's content blocks: an array of blocks, or a
// string as one text block.
func blocksOf(l map[string]any) (msgID string, blocks []map[string]any) {
	m := getObj(l, "message")
	if m == nil {
		return "", nil
	}
	switch c := m["content"].(type) {
	case string:
		return getStr(m, "id"), []map[string]any{{"type": "text", "text": c}}
	case []any:
		for _, b := range c {
			if bm, ok := b.(map[string]any); ok {
				blocks = append(blocks, bm)
			}
		}
	}
	return getStr(m, "id"), blocks
}

// assistant reads an assistant line: one content block of the model's
// response (text, thinking, a tool call, a server tool's result), the
// blocks of one response sharing message.id
// (docs/protocols/claude.md#stdout, #thinking, #tool-pairing).
func (c *claudeReader) assistant(r *reader, l map[string]any) {
	msgID, blocks := blocksOf(l)
	for _, b := range blocks {
		switch typ := getStr(b, "type"); {
		case typ == "text":
			c.deltas.whole(r, msgID, Answer, getStr(b, "text"))
		case typ == "thinking":
			c.deltas.whole(r, msgID, Thinking, getStr(b, "thinking"))
		case typ == "tool_use" || typ == "server_tool_use" || typ == "mcp_tool_use":
			id := getStr(b, "id")
			r.start(id, id, getStr(b, "name"), b["input"])
		case strings.HasSuffix(typ, "_tool_result"):
			claudeToolResult(r, b)
		}
	}
}

// user reads a user line: tool results, and text the CLI writes in the
// user's name (a replayed prompt, an interrupt note).
func (c *claudeReader) user(r *reader, l map[string]any) {
	_, blocks := blocksOf(l)
	for _, b := range blocks {
		switch typ := getStr(b, "type"); {
		case typ == "text":
			r.text(Echo, getStr(b, "text"), false)
		case strings.HasSuffix(typ, "tool_result"):
			claudeToolResult(r, b)
		}
	}
}

// claudeToolResult ends the call a tool_result block answers: is_error
// says it failed, and its content (a string or content blocks) is the
// result, of a failure too (docs/protocols/claude.md#tool-pairing).
func claudeToolResult(r *reader, b map[string]any) {
	r.end(getStr(b, "tool_use_id"), !getBool(b, "is_error"), b["content"], "")
}

// claudeEnd reads a result (docs/protocols/claude.md#result): is_error
// fails the turn, with the errors list, else the result text, as its
// message; usage is the turn's, total_cost_usd the process's.
func claudeEnd(l map[string]any) *End {
	e := &End{Failed: getBool(l, "is_error"), CostUSD: getFloatPtr(l, "total_cost_usd"), DurationMs: getIntPtr(l, "duration_ms")}
	reason, subtype := getStr(l, "terminal_reason"), getStr(l, "subtype")
	if e.Failed {
		e.Aborted = strings.HasPrefix(reason, "aborted")
		e.MaxTurns = subtype == "error_max_turns" || reason == "max_turns"
		if errs, ok := l["errors"].([]any); ok {
			for _, v := range errs {
				switch s := v.(type) {
				case nil:
				case string:
					e.Errors = append(e.Errors, s)
				default:
					e.Errors = append(e.Errors, jsonText(s))
				}
			}
		}
		switch {
		case len(e.Errors) > 0:
			e.Message = strings.Join(e.Errors, "; ")
		case getStr(l, "result") != "":
			e.Message = getStr(l, "result")
		default:
			e.Message = "result " + subtype + " with is_error true"
		}
	}
	if u := getObj(l, "usage"); u != nil {
		e.Usage = &Usage{
			InputTokens: getInt(u, "input_tokens"),
			Uncached:    getInt(u, "input_tokens"),
			CacheRead:   getInt(u, "cache_read_input_tokens"),
			CacheWrite:  getInt(u, "cache_creation_input_tokens"),
			Output:      getInt(u, "output_tokens"),
		}
		e.TurnUsage = e.Usage
	}
	return e
}

// claudeDeltas joins the two forms a text block takes under
// --include-partial-messages: stream_event deltas as the model writes
// it, then the assistant line with the whole block
// (docs/protocols/claude.md#partial-messages). The deltas are the text as
// it came; the whole block adds only what they did not deliver, so that
// the block's text is said once. A block whose deltas disagree with it
// (they are no prefix of it) is said whole besides.
type claudeDeltas struct {
	msgID   string            // the message streaming (message_start)
	open    map[int]*streamed // its blocks by index
	pending []*streamed       // streamed blocks no whole block has matched
}

// streamed is one block's deltas.
type streamed struct {
	msgID   string
	kind    ItemKind
	parts   []string
	n       int
	matched bool
}

// event reads a stream_event's event.
func (d *claudeDeltas) event(r *reader, ev map[string]any) {
	if ev == nil {
		return
	}
	index := int(getInt(ev, "index"))
	switch getStr(ev, "type") {
	case "message_start":
		if m := getObj(ev, "message"); m != nil {
			d.msgID, d.open = getStr(m, "id"), map[int]*streamed{}
		}
	case "content_block_start":
		switch getStr(getObj(ev, "content_block"), "type") {
		case "text":
			d.start(index, Answer)
		case "thinking":
			d.start(index, Thinking)
		}
	case "content_block_delta":
		delta := getObj(ev, "delta")
		switch getStr(delta, "type") {
		case "text_delta":
			d.delta(r, index, Answer, getStr(delta, "text"))
		case "thinking_delta":
			d.delta(r, index, Thinking, getStr(delta, "thinking"))
		}
	}
}

func (d *claudeDeltas) start(index int, kind ItemKind) *streamed {
	if d.open == nil {
		d.open = map[int]*streamed{}
	}
	b := &streamed{msgID: d.msgID, kind: kind}
	d.open[index] = b
	d.pending = append(d.pending, b)
	return b
}

// delta adds a piece of a block; one without its block's start starts it.
func (d *claudeDeltas) delta(r *reader, index int, kind ItemKind, text string) {
	b := d.open[index]
	if b == nil || b.kind != kind {
		b = d.start(index, kind)
	}
	if text == "" {
		return
	}
	b.parts = append(b.parts, text)
	b.n += len(text)
	r.text(kind, text, true)
}

// whole reads a whole text or thinking block of message msgID: the first
// streamed block of that message and kind no whole block has matched yet
// delivered its start, or all of it, or nothing of it.
func (d *claudeDeltas) whole(r *reader, msgID string, kind ItemKind, text string) {
	for _, b := range d.pending {
		if b.matched || b.msgID != msgID || b.kind != kind {
			continue
		}
		b.matched = true
		if b.prefixOf(text) {
			r.text(kind, text[b.n:], false)
			return
		}
		break
	}
	r.text(kind, text, false)
}

// prefixOf reports whether the block's deltas are a prefix of text.
func (b *streamed) prefixOf(text string) bool {
	if b.n > len(text) {
		return false
	}
	at := 0
	for _, p := range b.parts {
		if text[at:at+len(p)] != p {
			return false
		}
		at += len(p)
	}
	return true
}
