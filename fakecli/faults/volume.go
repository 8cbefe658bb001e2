package faults

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

// Volume faults: a turn far longer than the fixture's, in lines of the
// CLI's own kinds. A turn of many small lines (volume) passes every
// per-line limit and runs into a per-turn one; a session of many turns
// (turns) runs into what an adapter keeps per turn and never lets go.

// volumeLabel starts the text of every line volume adds.
const volumeLabel = "agentconform volume line "

// splice is one replacement of text[start:end].
type splice struct {
	start, end int
	with       string
}

// apply returns text with the splices made (they must not overlap).
func apply(text string, ss []splice) string {
	sort.Slice(ss, func(i, j int) bool { return ss[i].start < ss[j].start })
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, s := range ss {
		b.WriteString(text[at:s.start])
		b.WriteString(s.with)
		at = s.end
	}
	b.WriteString(text[at:])
	return b.String()
}

// renamed is an id made one of a kind for copy k of a line: a UUID keeps
// its shape, its last twelve hex digits the copy's number; any other id
// gets the number appended ("msg_mock_002_7", "item_1_7").
func renamed(id string, k int) string {
	if len(id) == 36 && strings.Count(id, "-") == 4 && id[23] == '-' {
		tail := fmt.Sprintf("%012x", k)
		if tail == id[24:] {
			tail = fmt.Sprintf("%012x", k+1<<40)
		}
		return id[:24] + tail
	}
	return id + "_" + strconv.Itoa(k)
}

// idSplices renames the ids a copy of a line must not share with the
// line itself (a Claude line's uuid and message id, a Codex item's id).
func idSplices(d *doc, k int) []splice {
	var ss []splice
	for _, p := range [][]string{{"uuid"}, {"message", "id"}, {"item", "id"}} {
		n := d.get(p...)
		if n == nil || n.kind != '"' {
			continue
		}
		id := decodeString(d.raw(n))
		ss = append(ss, splice{n.start, n.end, strconv.Quote(renamed(id, k))})
	}
	return ss
}

// volumeTargets are the lines volume copies: Claude's assistant text
// blocks, Codex's agent messages and Gemini's assistant messages (not a
// tool's output: the copies are the model's words).
func volumeTargets(cli string, steps []transcript.Step) []textTarget {
	var out []textTarget
	for _, t := range textTargets(cli, steps) {
		switch cli {
		case "claude":
			if t.doc.typ() != "assistant" {
				continue
			}
		case "codex":
			if it, _ := t.doc.str("item", "type"); it != "agent_message" {
				continue
			}
		case "gemini":
			if role, _ := t.doc.str("role"); role != "assistant" {
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

func stepsVolume(c *stepCtx, steps []transcript.Step) []transcript.Step {
	total, size := int(c.f.ints["bytes"]), int(c.f.ints["line"])
	targets := volumeTargets(c.cli, steps)
	if len(targets) == 0 {
		c.record("no assistant text line in this process's stdout; nothing changed")
		return steps
	}
	t := targets[0]
	text := t.doc.text
	var copies []transcript.Step
	written := 0
	for k := 1; written < total; k++ {
		ss := idSplices(t.doc, k)
		// The text's length: the line's size less everything but the text.
		fixed := len(text) - (t.node.end - t.node.start) + 2
		for _, s := range ss {
			fixed += len(s.with) - (s.end - s.start)
		}
		label := volumeLabel + strconv.Itoa(k) + ":"
		need := size - fixed
		if need < len(label)+1 {
			c.record(fmt.Sprintf("cannot make %s %d bytes: it is %d bytes with a text of its own; nothing changed", where(steps, t.step), size, fixed+len(label)+1))
			return steps
		}
		var b strings.Builder
		b.Grow(need)
		b.WriteString(label)
		writePadding(&b, need-len(label))
		ss = append(ss, splice{t.node.start, t.node.end, `"` + b.String() + `"`})
		st := steps[t.step]
		st.Text = apply(text, ss)
		copies = append(copies, st)
		written += len(st.Text) + 1
	}
	c.record(fmt.Sprintf("%d lines of %d bytes (%d bytes in all, newlines included) written before %s, each a copy of it with a text and ids of its own",
		len(copies), size, written, where(steps, t.step)))
	return insert(steps, t.step, copies...)
}

// stepsTurns repeats the last turn of a Claude process (its last user
// message and everything after it up to the end of stdin) until the
// process takes n user messages, each copy with ids of its own. Codex and
// Gemini run a process per turn, and the fakes replay a session's last
// process again for every resume past it: nothing changes.
func stepsTurns(c *stepCtx, steps []transcript.Step) []transcript.Step {
	n := int(c.f.ints["n"])
	if c.cli != "claude" {
		c.record(c.cli + " runs a process per turn, and every resume replays the session's last one: nothing changed")
		return steps
	}
	var users []int
	end := len(steps)
	for i, s := range steps {
		if s.Op == transcript.OpIn && s.Match != nil && s.Match["type"] == "user" {
			users = append(users, i)
		}
		if (s.Op == transcript.OpStdinEOF || s.Op == transcript.OpExit || s.Op == transcript.OpNextProcess) && end == len(steps) && len(users) > 0 {
			end = i
		}
	}
	if len(users) == 0 || len(users) >= n {
		c.record(fmt.Sprintf("the process takes %d user messages already; nothing changed", len(users)))
		return steps
	}
	last := users[len(users)-1]
	if end < last {
		end = len(steps)
	}
	block := steps[last:end]
	var more []transcript.Step
	for k := 1; len(users)+k <= n; k++ {
		for _, s := range block {
			if s.Op == transcript.OpOut {
				if d := parseDoc(s.Text); d != nil {
					if ss := idSplices(d, k); len(ss) > 0 {
						s.Text = apply(s.Text, ss)
					}
				}
			}
			more = append(more, s)
		}
	}
	c.record(fmt.Sprintf("the turn of %s repeated %d more times: %d user turns", lineOf(steps[last]), n-len(users), n))
	return insert(steps, end, more...)
}
