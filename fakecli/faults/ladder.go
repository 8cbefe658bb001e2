package faults

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/agentconform/agentconform/transcript"
)

// ladderPad is what ladder pads text with: readable ASCII that JSON needs
// no escapes for (no quotes, backslashes, control characters, "<>&" or
// "{{"), so one byte of padding is one byte of line.
const ladderPad = " agentconform ladder padding: lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua."

// padBlock is ladderPad repeated to about 64 KiB, whole copies only, so
// that writing it over and over writes ladderPad over and over: a 64 MiB
// line takes a thousand writes, not half a million. It is made on first
// use: most fake processes write no ladder, and 64 KiB made at every start
// were a tenth of a fake's page faults.
var padBlock = sync.OnceValue(func() string { return strings.Repeat(ladderPad, (64<<10)/len(ladderPad)) })

// writePadding writes n bytes of ladderPad, repeated.
func writePadding(b *strings.Builder, n int) {
	padBlock := padBlock()
	for n > 0 {
		k := min(n, len(padBlock))
		b.WriteString(padBlock[:k])
		n -= k
	}
}

// textTarget is one string a ladder may grow: a text-bearing field of an
// event of the CLI's schema.
type textTarget struct {
	step int
	doc  *doc
	node *node
}

// textTargets finds, per CLI: Claude assistant text blocks
// (message.content[i].text) and user tool_result string contents; Codex
// item.completed agent_message.text and command_execution.aggregated_output;
// Gemini message.content and tool_result.output.
func textTargets(cli string, steps []transcript.Step) []textTarget {
	var out []textTarget
	for _, i := range outs(steps) {
		d := parseDoc(steps[i].Text)
		if d == nil {
			continue
		}
		add := func(n *node) {
			if n != nil && n.kind == '"' {
				out = append(out, textTarget{step: i, doc: d, node: n})
			}
		}
		switch cli {
		case "claude":
			want := map[string][2]string{"assistant": {"text", "text"}, "user": {"tool_result", "content"}}[d.typ()]
			if want[0] == "" {
				continue
			}
			for j := range d.nodes {
				n := &d.nodes[j]
				if pathIs(n.path, []string{"message", "content", "*", "type"}) && decodeString(d.raw(n)) == want[0] {
					add(d.get(sibling(n.path, want[1])...))
				}
			}
		case "codex":
			if d.typ() != "item.completed" {
				continue
			}
			switch it, _ := d.str("item", "type"); it {
			case "agent_message":
				add(d.get("item", "text"))
			case "command_execution":
				add(d.get("item", "aggregated_output"))
			}
		case "gemini":
			switch d.typ() {
			case "message":
				add(d.get("content"))
			case "tool_result":
				add(d.get("output"))
			}
		}
	}
	return out
}

func stepsLadder(c *stepCtx, steps []transcript.Step) []transcript.Step {
	size := int(c.f.ints["size"])
	targets := textTargets(c.cli, steps)
	k, ok := c.choose("nth", len(targets), fmt.Sprintf("text-bearing %s event (see the ladder fault)", c.cli))
	if !ok {
		return steps
	}
	t := targets[k]
	text := t.doc.text
	content := text[t.node.start+1 : t.node.end-1]
	other := len(text) - len(content)
	need := size - other
	if need < 0 {
		c.record(fmt.Sprintf("cannot make %s %d bytes: it is %d bytes even with %s empty; nothing changed",
			where(steps, t.step), size, other, pointer(t.node.path)), "nth", strconv.Itoa(k+1))
		return steps
	}
	// The line is built in place, once: a 64 MiB line costs one copy.
	var b strings.Builder
	b.Grow(size)
	b.WriteString(text[:t.node.start+1])
	if need >= len(content) {
		b.WriteString(content)
		need -= len(content)
	}
	writePadding(&b, need)
	b.WriteString(text[t.node.end-1:])
	steps[t.step].Text = b.String()
	note := ""
	if strings.Contains(text, "{{") {
		note = " (the line holds {{name}} templates, which replay fills)"
	}
	c.record(fmt.Sprintf("%s is now exactly %d bytes (was %d), padded at %s%s",
		where(steps, t.step), size, len(text), pointer(t.node.path), note), "nth", strconv.Itoa(k+1))
	return steps
}
