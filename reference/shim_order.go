package reference

// shimOrder enforces the shim's ordering rules
// (docs/protocols/shim.md#order): tool calls one at a time, each tool_use
// followed by its tool_result before any further text or tool_use. CLIs
// that run tools in parallel (Gemini: tool_use A, tool_use B, tool_result A,
// tool_result B) or stream text while a tool runs are reordered: lines that
// may not come yet wait in a queue, results of queued calls wait until
// their tool_use is out.
type shimOrder struct {
	pending string               // the tool_use out and awaiting its result
	queue   []ShimEvent          // lines held back, in arrival order
	early   map[string]ShimEvent // results of tool_uses still queued
}

// push takes one line and returns the lines that may go out now.
func (o *shimOrder) push(ev ShimEvent) []ShimEvent {
	if r, ok := ev.(*ShimToolResult); ok {
		switch {
		case o.pending != "" && r.ToolUseID == o.pending:
			o.pending = ""
			return append([]ShimEvent{r}, o.drain()...)
		case o.queued(r.ToolUseID):
			if o.early == nil {
				o.early = map[string]ShimEvent{}
			}
			o.early[r.ToolUseID] = r
			return nil
		}
	}
	if o.pending != "" || len(o.queue) > 0 {
		o.queue = append(o.queue, ev)
		return nil
	}
	if u, ok := ev.(*ShimToolUse); ok {
		o.pending = u.ID
	}
	return []ShimEvent{ev}
}

// queued reports whether the tool_use with this id is held back.
func (o *shimOrder) queued(id string) bool {
	for _, ev := range o.queue {
		if u, ok := ev.(*ShimToolUse); ok && u.ID == id {
			return true
		}
	}
	return false
}

// drain lets held-back lines out until a tool_use awaits its result.
func (o *shimOrder) drain() []ShimEvent {
	var out []ShimEvent
	for len(o.queue) > 0 && o.pending == "" {
		ev := o.queue[0]
		o.queue = o.queue[1:]
		out = append(out, ev)
		if u, ok := ev.(*ShimToolUse); ok {
			if r, ok := o.early[u.ID]; ok {
				delete(o.early, u.ID)
				out = append(out, r)
			} else {
				o.pending = u.ID
			}
		}
	}
	return out
}

// flush lets everything out at the end of a turn, each early result right
// after its tool_use.
func (o *shimOrder) flush() []ShimEvent {
	var out []ShimEvent
	for len(o.queue) > 0 {
		o.pending = ""
		out = append(out, o.drain()...)
	}
	o.pending, o.early = "", nil
	return out
}
