package faults

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentconform/agentconform/transcript"
)

// stallMS is how long stall sleeps: long enough for any test to time out.
const stallMS = 24 * 3600 * 1000

func stepsStall(c *stepCtx, steps []transcript.Step) []transcript.Step {
	o := outs(steps)
	after, note := c.chooseAfter("after", len(o))
	c.record("stalls for 24 h "+afterWhat(steps, o, after)+note, "after", strconv.Itoa(after))
	return insert(steps, afterOut(o, after), transcript.Step{Op: transcript.OpDelay, DelayMS: stallMS})
}

func stepsDie(c *stepCtx, steps []transcript.Step) []transcript.Step {
	o := outs(steps)
	after, note := c.chooseAfter("after", len(o))
	sig := c.f.strs["signal"]
	c.record("dies by "+sig+" "+afterWhat(steps, o, after)+note, "after", strconv.Itoa(after))
	return insert(steps, afterOut(o, after), transcript.Step{Op: transcript.OpExitSignal, Signal: sig})
}

func stepsIgnoreSignal(c *stepCtx, steps []transcript.Step) []transcript.Step {
	sig := c.f.strs["signal"]
	if sig == "SIGKILL" {
		c.record("SIGKILL cannot be ignored; nothing changed")
		return steps
	}
	out := make([]transcript.Step, 0, len(steps)+1)
	out = append(out, transcript.Step{Op: transcript.OpOnSignal, OnSignal: map[string]string{sig: "ignore"}})
	overridden := 0
	for _, s := range steps {
		if s.Op == transcript.OpOnSignal {
			if _, ok := s.OnSignal[sig]; ok {
				m := make(map[string]string, len(s.OnSignal))
				for k, v := range s.OnSignal {
					m[k] = v
				}
				m[sig] = "ignore"
				s.OnSignal = m
				overridden++
			}
		}
		out = append(out, s)
	}
	c.record(fmt.Sprintf("ignores %s from the first step (%d later on_signal steps overridden)", sig, overridden))
	return out
}

func stepsExitMidLine(c *stepCtx, steps []transcript.Step) []transcript.Step {
	o := outs(steps)
	if len(o) == 0 {
		c.record("no eligible event: no stdout line to cut; nothing changed")
		return steps
	}
	k := len(o)
	if c.f.has("line") {
		k = int(c.f.ints["line"])
		if k > len(o) {
			c.record(fmt.Sprintf("line=%d but there are only %d stdout lines; nothing changed", k, len(o)))
			return steps
		}
	}
	i := o[k-1]
	s := &steps[i]
	cut := halfway(s.Text)
	code := int(c.f.ints["code"])
	c.record(fmt.Sprintf("writes %d of the %d bytes of %s without a newline, then exits %d", cut, len(s.Text), where(steps, i), code),
		"line", strconv.Itoa(k))
	s.Text = s.Text[:cut]
	s.NoNewline = true
	return insert(steps, i+1, transcript.Step{Op: transcript.OpExit, Code: code})
}

// halfway is where exit_mid_line cuts a line: in the middle, but never
// inside a {{name}} template (which the fake fills at replay), and at
// least one byte in for a non-empty line.
func halfway(text string) int {
	cut := len(text) / 2
	if open := strings.LastIndex(text[:cut], "{{"); open >= 0 {
		if end := strings.Index(text[open:], "}}"); end >= 0 && open+end+2 > cut {
			cut = open
		}
	}
	if cut == 0 && len(text) > 0 {
		cut = 1
	}
	return cut
}

func stepsExitCode(c *stepCtx, steps []transcript.Step) []transcript.Step {
	code := c.f.ints["code"]
	var where []string
	for i := range steps {
		if steps[i].Op == transcript.OpExit {
			where = append(where, fmt.Sprintf("%s (was %d)", lineOf(steps[i]), steps[i].Code))
			steps[i].Code = int(code)
		}
	}
	if len(where) == 0 {
		c.record("no eligible event: no exit step in this process; nothing changed")
		return steps
	}
	c.record(fmt.Sprintf("exit status %d at %s", code, strings.Join(where, ", ")))
	return steps
}

// floodLine is the length of one stderr_flood line, newline included.
const floodLine = 1024

func stepsStderrFlood(c *stepCtx, steps []transcript.Step) []transcript.Step {
	total := int(c.f.ints["bytes"])
	o := outs(steps)
	at := afterOut(o, 0)
	var lines []transcript.Step
	full := floodText(floodLine - 1)
	for left := total; left > 0; {
		n := min(left, floodLine)
		text := full
		if n < floodLine {
			text = full[:n-1]
		}
		lines = append(lines, transcript.Step{Op: transcript.OpErr, Text: text})
		left -= n
	}
	where := "before the first stdout line"
	if len(o) == 0 {
		where = "at the start (there is no stdout line)"
	}
	c.record(fmt.Sprintf("%d bytes of stderr in %d lines %s", total, len(lines), where))
	return insert(steps, at, lines...)
}

// floodText is a readable stderr line of n bytes.
func floodText(n int) string {
	const unit = "agentconform stderr_flood: this line fills the stderr pipe; an adapter that never reads stderr blocks the CLI here. "
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

func stepsBanner(c *stepCtx, steps []transcript.Step) []transcript.Step {
	o := outs(steps)
	at := int(c.f.ints["at"])
	text := c.f.strs["text"]
	note := ""
	if at > len(o)+1 {
		note = fmt.Sprintf(" (at=%d, but there are only %d stdout lines)", at, len(o))
		at = len(o) + 1
	}
	c.record(fmt.Sprintf("non-JSON line %q on stdout %s%s", text, afterWhat(steps, o, at-1), note), "at", strconv.Itoa(at))
	if at == 1 {
		// The first line a CLI writes, before it reads anything: ahead of
		// what the fake answers by itself (Claude's control responses),
		// as a real CLI's warning banner, and the real-CLI wrapper's
		// banner, come first. The CLI's next line comes bannerGap later,
		// not at once: a fake that wrote its whole turn with the banner
		// had it written before an adapter that stops at the banner could
		// stop it, which no real CLI does.
		steps = insert(steps, 0, transcript.Step{Op: transcript.OpOut, Text: text})
		return insert(steps, 1, transcript.Step{Op: transcript.OpDelay, DelayMS: bannerGap.Milliseconds()})
	}
	return insert(steps, afterOut(o, at-1), transcript.Step{Op: transcript.OpOut, Text: text})
}

// bannerGap is how long after a start-up banner the CLI writes its next
// line: a real Claude's second line came 54 to 92 ms after its first in
// the seven 2.1.332 captures that show both (testdata/captures/claude).
const bannerGap = 75 * time.Millisecond

// badUTF8 are the bytes invalid_utf8 inserts: never valid in UTF-8.
const badUTF8 = "\xff\xfe"

func stepsInvalidUTF8(c *stepCtx, steps []transcript.Step) []transcript.Step {
	type cand struct {
		i     int
		d     *doc
		nodes []int
	}
	var cands []cand
	for _, i := range outs(steps) {
		d := parseDoc(steps[i].Text)
		if d == nil {
			continue
		}
		var nodes []int
		for j, n := range d.nodes {
			if n.kind == '"' && !(n.member && (last(n.path) == "type" || last(n.path) == "subtype")) {
				nodes = append(nodes, j)
			}
		}
		if len(nodes) > 0 {
			cands = append(cands, cand{i, d, nodes})
		}
	}
	k, ok := c.choose("nth", len(cands), "JSON stdout line with a string value")
	if !ok {
		return steps
	}
	cd := cands[k]
	n := cd.d.nodes[cd.nodes[c.rng().Intn(len(cd.nodes))]]
	steps[cd.i].Text = applyEdits(cd.d.text, []edit{{n.start + 1, n.start + 1, badUTF8}})
	c.record(fmt.Sprintf(`inserted \xff\xfe at the start of the string at %s in %s`, pointer(n.path), where(steps, cd.i)),
		"nth", strconv.Itoa(k+1))
	return steps
}

func stepsCRLF(c *stepCtx, steps []transcript.Step) []transcript.Step {
	n := 0
	for i := range steps {
		if steps[i].Op == transcript.OpOut && !steps[i].NoNewline {
			steps[i].Text += "\r"
			n++
		}
	}
	c.record(fmt.Sprintf(`"\r\n" ends all %d newline-terminated stdout lines`, n))
	return steps
}

func stepsNoFinalNewline(c *stepCtx, steps []transcript.Step) []transcript.Step {
	o := outs(steps)
	if len(o) == 0 {
		c.record("no eligible event: no stdout line; nothing changed")
		return steps
	}
	i := o[len(o)-1]
	steps[i].NoNewline = true
	c.record("no newline after " + where(steps, i))
	return steps
}

func last(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1]
}

// pointerEscaper escapes a JSON pointer's segment (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointer renders a path as a JSON pointer.
func pointer(path []string) string {
	if len(path) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, seg := range path {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(seg))
	}
	return b.String()
}

// lingerLabel is where linger's signal handler jumps to.
const lingerLabel = "agentconform_linger"

// stepsLinger stalls after N stdout lines like stall, but a SIGINT or
// SIGTERM does not end the CLI at once: it first writes the stdout lines
// that were still to come (its terminal event aside), one every ms, then
// ends as the CLI ends on that signal (Codex: exit 1 on SIGINT, death by
// SIGTERM; Gemini: exit 0; Claude: exit 0 on SIGINT, death by SIGTERM).
// A real CLI flushes what it had under way while it shuts down; an adapter
// that closed its stream at the interrupt meets lines it no longer
// expects.
func stepsLinger(c *stepCtx, steps []transcript.Step) []transcript.Step {
	o := outs(steps)
	after, note := c.chooseAfter("after", len(o))
	at := afterOut(o, after)
	var late []transcript.Step
	for _, i := range o {
		if i < at || terminalLine(steps[i].Text) {
			continue
		}
		if c.f.has("lines") && int64(len(late)) >= c.f.ints["lines"] {
			break
		}
		s := steps[i]
		s.T = nil
		late = append(late, s)
	}
	ms := c.f.ints["ms"]
	branch := func(label string, end transcript.Step) []transcript.Step {
		out := []transcript.Step{{Op: transcript.OpLabel, Label: label},
			{Op: transcript.OpOnSignal, OnSignal: map[string]string{"SIGINT": "ignore", "SIGTERM": "ignore"}}}
		for _, s := range late {
			out = append(out, transcript.Step{Op: transcript.OpDelay, DelayMS: ms}, s)
		}
		return append(out, end)
	}
	intEnd, termEnd := transcript.Step{Op: transcript.OpExit, Code: 0}, transcript.Step{Op: transcript.OpExitSignal, Signal: "SIGTERM"}
	switch c.cli {
	case "codex":
		intEnd.Code = 1
	case "gemini":
		termEnd = transcript.Step{Op: transcript.OpExit, Code: 0}
	}
	more := []transcript.Step{
		{Op: transcript.OpOnSignal, OnSignal: map[string]string{"SIGINT": "goto:" + lingerLabel + "_int", "SIGTERM": "goto:" + lingerLabel + "_term"}},
		{Op: transcript.OpDelay, DelayMS: stallMS},
	}
	more = append(more, branch(lingerLabel+"_int", intEnd)...)
	more = append(more, branch(lingerLabel+"_term", termEnd)...)
	c.record(fmt.Sprintf("stalls %s; on SIGINT or SIGTERM writes %d more lines %d ms apart, then ends", afterWhat(steps, o, after)+note, len(late), ms), "after", strconv.Itoa(after))
	return insert(steps, at, more...)
}

// terminalLine reports whether a stdout line is a CLI's terminal event
// (Claude and Gemini result, Codex turn.completed or turn.failed).
func terminalLine(text string) bool {
	for _, t := range []string{`"type":"result"`, `"type":"turn.completed"`, `"type":"turn.failed"`} {
		if strings.Contains(text, t) {
			return true
		}
	}
	return false
}
