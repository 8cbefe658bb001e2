package faults

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

func stepsDrop(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx, _ := eventSteps(c, steps)
	k, ok := c.choose("nth", len(idx), eventsWhat(c))
	if !ok {
		return steps
	}
	i := idx[k]
	c.record("dropped "+where(steps, i), "nth", strconv.Itoa(k+1))
	return append(steps[:i:i], steps[i+1:]...)
}

func stepsDuplicate(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx, _ := eventSteps(c, steps)
	k, ok := c.choose("nth", len(idx), eventsWhat(c))
	if !ok {
		return steps
	}
	i := idx[k]
	c.record("wrote "+where(steps, i)+" twice", "nth", strconv.Itoa(k+1))
	dup := steps[i]
	dup.T = nil
	return insert(steps, i+1, dup)
}

func stepsReorder(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx, _ := eventSteps(c, steps)
	o := outs(steps)
	next := map[int]int{}
	for j := 0; j+1 < len(o); j++ {
		next[o[j]] = o[j+1]
	}
	var cands []int
	for _, i := range idx {
		if _, ok := next[i]; ok {
			cands = append(cands, i)
		}
	}
	k, ok := c.choose("nth", len(cands), eventsWhat(c)+" followed by another stdout line")
	if !ok {
		return steps
	}
	i, j := cands[k], next[cands[k]]
	c.record("swapped "+where(steps, i)+" with "+where(steps, j), "nth", strconv.Itoa(k+1))
	a, b := steps[i], steps[j]
	steps[i].Text, steps[i].NoNewline, steps[i].Line, steps[i].Offset = b.Text, b.NoNewline, b.Line, b.Offset
	steps[j].Text, steps[j].NoNewline, steps[j].Line, steps[j].Offset = a.Text, a.NoNewline, a.Line, a.Offset
	return steps
}

// eventSteps are the out steps drop, duplicate and reorder may touch: any
// stdout line, or with type=T the JSON events of that type.
func eventSteps(c *stepCtx, steps []transcript.Step) ([]int, []*doc) {
	if c.f.has("type") {
		return eligibleDocs(c, steps)
	}
	return outs(steps), nil
}

// unknownEventType is the type unknown_type inserts.
const unknownEventType = "agentconform_unknown_event"

func stepsUnknownType(c *stepCtx, steps []transcript.Step) []transcript.Step {
	o := outs(steps)
	after, note := c.chooseAfter("after", len(o))
	sid := sessionID(steps)
	if sid == "" {
		sid = uuid(c)
	}
	var line string
	switch c.cli {
	case "claude":
		line = object("type", quote(unknownEventType), "subtype", quote("agentconform_probe"),
			"uuid", quote(uuid(c)), "session_id", quote(sid))
	case "codex":
		line = object("type", quote(unknownEventType), "thread_id", quote(sid))
	case "gemini":
		line = object("type", quote(unknownEventType), "timestamp", quote(timestampNear(steps, o, after)), "session_id", quote(sid))
	default:
		line = object("type", quote(unknownEventType), "session_id", quote(sid))
	}
	c.record("inserted "+line+" "+afterWhat(steps, o, after)+note, "after", strconv.Itoa(after))
	return insert(steps, afterOut(o, after), transcript.Step{Op: transcript.OpOut, Text: line})
}

// sessionID is the first session_id (Claude, Gemini) or thread_id (Codex)
// on stdout.
func sessionID(steps []transcript.Step) string {
	for _, i := range outs(steps) {
		if d := parseDoc(steps[i].Text); d != nil {
			for _, k := range []string{"session_id", "thread_id"} {
				if s, ok := d.str(k); ok && s != "" {
					return s
				}
			}
		}
	}
	return ""
}

// timestampNear is the timestamp of the last stdout line before the
// insertion point that has one (Gemini requires one on every event).
func timestampNear(steps []transcript.Step, o []int, after int) string {
	for k := min(after, len(o)); k >= 1; k-- {
		if d := parseDoc(steps[o[k-1]].Text); d != nil {
			if ts, ok := d.str("timestamp"); ok {
				return ts
			}
		}
	}
	return "2026-01-01T00:00:00.000Z"
}

// uuid is a version-4 UUID from the fault's random stream.
func uuid(c *stepCtx) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(c.rng().Intn(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// unknownField is the member unknown_field adds.
const unknownField = `"agentconform_unknown_field":{"added_by":"agentconform","values":[1,"two",true,null]}`

func stepsUnknownField(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx, docs := eligibleDocs(c, steps)
	k, ok := c.choose("nth", len(idx), eventsWhat(c))
	if !ok {
		return steps
	}
	d := docs[k]
	root := d.nodes[0]
	member := "," + unknownField
	if len(d.nodes) == 1 { // an empty object
		member = unknownField
	}
	closing := strings.LastIndexByte(d.text[:root.end], '}')
	steps[idx[k]].Text = applyEdits(d.text, []edit{{closing, closing, member}})
	c.record("added "+unknownField+" to "+where(steps, idx[k]), "nth", strconv.Itoa(k+1))
	return steps
}

func stepsCorruptType(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx, docs := eligibleDocs(c, steps)
	field := c.f.strs["field"]
	var lines []int
	var fields [][]int
	for j, d := range docs {
		var nodes []int
		for n, nd := range d.nodes {
			if !nd.member || (nd.kind != '"' && nd.kind != '0') {
				continue
			}
			name := last(nd.path)
			if (field != "" && name != field) || (field == "" && name == "type") {
				continue
			}
			nodes = append(nodes, n)
		}
		if len(nodes) > 0 {
			lines = append(lines, j)
			fields = append(fields, nodes)
		}
	}
	what := eventsWhat(c) + " with a string or number field"
	if field != "" {
		what = eventsWhat(c) + " with a string or number field " + strconv.Quote(field)
	}
	k, ok := c.choose("nth", len(lines), what)
	if !ok {
		return steps
	}
	d := docs[lines[k]]
	n := d.nodes[fields[k][c.rng().Intn(len(fields[k]))]]
	old := d.raw(&n)
	repl := "12345"
	if n.kind == '0' {
		repl = quote(old)
	}
	i := idx[lines[k]]
	steps[i].Text = applyEdits(d.text, []edit{{n.start, n.end, repl}})
	c.record(fmt.Sprintf("%s: %s became %s in %s", pointer(n.path), clip(old), repl, where(steps, i)),
		"nth", strconv.Itoa(k+1), "field", last(n.path))
	return steps
}

// clip shortens a value for a detail.
func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// ref is one tool-call id or result reference on stdout.
type ref struct {
	step int   // index of the out step
	doc  *doc  // its parsed line
	node *node // the id string
	id   string
}

// toolRefs finds the tool calls and the results that name them, by the
// shapes of the CLI's events.
func toolRefs(cli string, steps []transcript.Step) (calls, results []ref) {
	started := map[string]bool{}
	for _, i := range outs(steps) {
		d := parseDoc(steps[i].Text)
		if d == nil {
			continue
		}
		add := func(list *[]ref, n *node) {
			if n != nil && n.kind == '"' {
				*list = append(*list, ref{step: i, doc: d, node: n, id: decodeString(d.raw(n))})
			}
		}
		switch cli {
		case "claude":
			role := map[string]string{"assistant": "tool_use", "user": "tool_result"}[d.typ()]
			if role == "" {
				continue
			}
			for j := range d.nodes {
				n := &d.nodes[j]
				if !pathIs(n.path, []string{"message", "content", "*", "type"}) || decodeString(d.raw(n)) != role {
					continue
				}
				if role == "tool_use" {
					add(&calls, d.get(sibling(n.path, "id")...))
				} else {
					add(&results, d.get(sibling(n.path, "tool_use_id")...))
				}
			}
		case "gemini":
			switch d.typ() {
			case "tool_use":
				add(&calls, d.get("tool_id"))
			case "tool_result":
				add(&results, d.get("tool_id"))
			}
		case "codex":
			n := d.get("item", "id")
			if n == nil || n.kind != '"' {
				continue
			}
			id := decodeString(d.raw(n))
			switch d.typ() {
			case "item.started":
				if !started[id] {
					add(&calls, n)
				}
				started[id] = true
			case "item.completed":
				if started[id] {
					add(&results, n)
				}
			}
		}
	}
	return calls, results
}

func stepsBreakPair(c *stepCtx, steps []transcript.Step) []transcript.Step {
	calls, results := toolRefs(c.cli, steps)
	k, ok := c.choose("nth", len(results), c.cli+" tool result that names a call")
	if !ok {
		return steps
	}
	r := results[k]
	taken := map[string]bool{}
	for _, cl := range calls {
		taken[cl.id] = true
	}
	newID := "agentconform_unpaired_" + r.id
	for taken[newID] {
		newID += "_"
	}
	steps[r.step].Text = applyEdits(r.doc.text, []edit{{r.node.start, r.node.end, quote(newID)}})
	c.record(fmt.Sprintf("%s: %q became %q (no call has it) in %s", pointer(r.node.path), r.id, newID, where(steps, r.step)),
		"nth", strconv.Itoa(k+1))
	return steps
}

func stepsRepeatID(c *stepCtx, steps []transcript.Step) []transcript.Step {
	calls, _ := toolRefs(c.cli, steps)
	var distinct []ref
	seen := map[string]bool{}
	for _, cl := range calls {
		if !seen[cl.id] {
			seen[cl.id] = true
			distinct = append(distinct, cl)
		}
	}
	if len(distinct) < 2 {
		c.record(fmt.Sprintf("no eligible event: %d %s tool call(s) with distinct ids, need 2; nothing changed", len(distinct), c.cli))
		return steps
	}
	// k indexes distinct[1:]: the second call is nth=2.
	var k int
	if c.f.has("nth") {
		nth := c.f.ints["nth"]
		if nth > int64(len(distinct)) {
			c.record(fmt.Sprintf("nth=%d but there are only %d %s tool calls; nothing changed", nth, len(distinct), c.cli))
			return steps
		}
		k = int(nth) - 2
	} else {
		k = c.rng().Intn(len(distinct) - 1)
	}
	first, again := distinct[0], distinct[k+1]
	// Every string on stdout equal to the reused call's old id (the call,
	// its result, permission requests) takes the first call's id, so the
	// call still pairs with its own result.
	var touched []string
	for _, i := range outs(steps) {
		d := parseDoc(steps[i].Text)
		if d == nil {
			continue
		}
		var edits []edit
		for _, n := range d.nodes {
			if n.kind == '"' && decodeString(d.raw(&n)) == again.id {
				edits = append(edits, edit{n.start, n.end, quote(first.id)})
			}
		}
		if len(edits) > 0 {
			steps[i].Text = applyEdits(d.text, edits)
			touched = append(touched, lineOf(steps[i]))
		}
	}
	c.record(fmt.Sprintf("tool call %d, at %s, reuses the id %q of tool call 1, at %s, instead of %q; changed %s",
		k+2, where(steps, again.step), first.id, where(steps, first.step), again.id, strings.Join(touched, ", ")),
		"nth", strconv.Itoa(k+2))
	return steps
}

// guessCLI tells the CLI from its events when the caller did not say.
func guessCLI(steps []transcript.Step) string {
	for _, i := range outs(steps) {
		d := parseDoc(steps[i].Text)
		if d == nil {
			continue
		}
		switch t := d.typ(); {
		case t == "thread.started" || t == "turn.started" || strings.HasPrefix(t, "item."):
			return "codex"
		case t == "init" || t == "tool_use" || t == "tool_result" || (t == "message" && d.get("role") != nil):
			return "gemini"
		case t == "system" || t == "assistant" || t == "user" || t == "control_request" || t == "control_response":
			return "claude"
		}
	}
	return ""
}

// unknownBlock is the content block unknown_block puts first in a Claude
// message, and unknownItem the item it adds to a Codex turn.
const (
	unknownBlock    = `{"type":"agentconform_unknown_block","agentconform":{"added_by":"agentconform"}}`
	unknownItemType = "agentconform_unknown_item"
)

// stepsUnknownBlock adds content of a kind no adapter knows inside a
// message, where adapters switch on a type they expect to be closed:
// Claude, a block before the others in the nth assistant message's
// content; Codex, a completed item of an unknown type before the nth
// item.completed. The CLIs add block and item types over time.
func stepsUnknownBlock(c *stepCtx, steps []transcript.Step) []transcript.Step {
	var idx []int
	for _, i := range outs(steps) {
		t := steps[i].Text
		switch c.cli {
		case "claude":
			if strings.Contains(t, `"type":"assistant"`) && strings.Contains(t, `"content":[{`) {
				idx = append(idx, i)
			}
		case "codex":
			if strings.Contains(t, `"type":"item.completed"`) {
				idx = append(idx, i)
			}
		}
	}
	k, ok := c.choose("nth", len(idx), "assistant messages (Claude) or completed items (Codex)")
	if !ok {
		return steps
	}
	i := idx[k]
	switch c.cli {
	case "claude":
		at := strings.Index(steps[i].Text, `"content":[{`) + len(`"content":[`)
		s := steps[i]
		s.Text = s.Text[:at] + unknownBlock + "," + s.Text[at:]
		steps[i] = s
		c.record(fmt.Sprintf("a block of type agentconform_unknown_block first in the content of %s", lineOf(steps[i])), "nth", strconv.Itoa(k+1))
		return steps
	default:
		line := object("type", quote("item.completed"), "item", object("id", quote("item_agentconform"), "type", quote(unknownItemType), "text", quote("an item of a type no adapter knows")))
		c.record(fmt.Sprintf("inserted %s before %s", line, lineOf(steps[i])), "nth", strconv.Itoa(k+1))
		return insert(steps, i, transcript.Step{Op: transcript.OpOut, Text: line})
	}
}
