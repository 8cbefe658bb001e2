package redact

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Lines redacts the lines of one output stream, in order, as String
// redacts each, and also finds what a line alone cannot show: a secret
// split across the text of consecutive streamed deltas (Claude's
// stream_event content_block_delta lines, text_delta, thinking_delta and
// input_json_delta; Gemini's "delta": true messages). The text of such a
// run of deltas is searched as one, and where a secret crosses from one
// delta into the next, the delta it starts in gets its placeholder and
// the rest of it is removed from the following ones. The delta lines
// stay valid JSON with the same keys: only the delta's string changes.
func (r *Redactor) Lines(lines []string) []string {
	out := make([]string, len(lines))
	copy(out, lines)
	var run []int // indexes of the current run of deltas
	var runKey string
	var texts []string
	end := func() {
		if len(run) > 1 {
			r.splitDeltas(out, run, texts)
		}
		run, texts, runKey = run[:0], texts[:0], ""
	}
	for i, l := range lines {
		key, text, ok := deltaText(l)
		if !ok {
			end()
			continue
		}
		if len(run) > 0 && key != runKey {
			end()
		}
		run = append(run, i)
		texts = append(texts, text)
		runKey = key
	}
	end()
	for i := range out {
		out[i] = r.String(out[i])
	}
	return out
}

// splitDeltas rewrites the delta lines of one run whose texts hold a
// secret that crosses from one delta into the next.
func (r *Redactor) splitDeltas(out []string, run []int, texts []string) {
	joined := strings.Join(texts, "")
	spans := r.find(joined)
	bounds := make([]int, len(texts)+1) // texts[k] is joined[bounds[k]:bounds[k+1]]
	for k, t := range texts {
		bounds[k+1] = bounds[k] + len(t)
	}
	crossing := false
	for _, sp := range spans {
		for k := 1; k < len(texts); k++ {
			if sp.start < bounds[k] && sp.end > bounds[k] {
				crossing = true
			}
		}
	}
	if !crossing {
		return
	}
	r.mu.Lock()
	reps := make([]string, len(spans))
	for i, sp := range spans {
		ru := &r.rules[sp.rule]
		reps[i] = ru.fixed
		if reps[i] == "" {
			reps[i] = r.placeholderLocked(ru.kind, joined[sp.start:sp.end])
		}
	}
	r.mu.Unlock()
	si := 0
	for k := range texts {
		start, end := bounds[k], bounds[k+1]
		var b strings.Builder
		cur := start
		changed := false
		for si < len(spans) && spans[si].start < end {
			sp := spans[si]
			if sp.start > cur {
				b.WriteString(joined[cur:sp.start])
				cur = sp.start
			}
			changed = true
			if sp.start >= start {
				b.WriteString(reps[si])
				r.count(&r.rules[sp.rule], reps[si], joined[sp.start:sp.end])
			}
			if sp.end > end {
				cur = end
				break
			}
			cur = sp.end
			si++
		}
		if !changed {
			continue
		}
		b.WriteString(joined[cur:end])
		if line, ok := replaceDeltaText(out[run[k]], b.String()); ok {
			out[run[k]] = line
		}
	}
}

// count counts one replacement of value by rep.
func (r *Redactor) count(ru *rule, rep, value string) {
	if rep == value {
		return
	}
	r.mu.Lock()
	r.counts[ru.kind]++
	r.mu.Unlock()
}

// deltaPaths are where a streamed delta keeps its text.
var deltaPaths = [][]string{
	{"event", "delta", "text"},
	{"event", "delta", "thinking"},
	{"event", "delta", "partial_json"},
	{"content"},
}

// deltaText returns the text of a streamed delta line and a key that
// consecutive deltas of one stream of text share (the kind of delta and
// the content block's index).
func deltaText(line string) (key, text string, ok bool) {
	switch {
	case strings.Contains(line, `"content_block_delta"`) && strings.Contains(line, `_delta"`):
	case strings.Contains(line, `"delta"`) && strings.Contains(line, `"message"`):
	default:
		return "", "", false
	}
	var ev struct {
		Type  string `json:"type"`
		Role  string `json:"role"`
		Delta any    `json:"delta"`
		Event *struct {
			Type  string `json:"type"`
			Index *int   `json:"index"`
			Delta *struct {
				Type        string  `json:"type"`
				Text        *string `json:"text"`
				Thinking    *string `json:"thinking"`
				PartialJSON *string `json:"partial_json"`
			} `json:"delta"`
		} `json:"event"`
		Content *string `json:"content"`
	}
	if json.Unmarshal([]byte(line), &ev) != nil {
		return "", "", false
	}
	if e := ev.Event; ev.Type == "stream_event" && e != nil && e.Type == "content_block_delta" && e.Delta != nil {
		idx := -1
		if e.Index != nil {
			idx = *e.Index
		}
		key = e.Delta.Type + "/" + strconv.Itoa(idx)
		switch {
		case e.Delta.Text != nil:
			return key, *e.Delta.Text, true
		case e.Delta.Thinking != nil:
			return key, *e.Delta.Thinking, true
		case e.Delta.PartialJSON != nil:
			return key, *e.Delta.PartialJSON, true
		}
		return "", "", false
	}
	if ev.Type == "message" && ev.Delta == true && ev.Content != nil {
		return "message/" + ev.Role, *ev.Content, true
	}
	return "", "", false
}

// replaceDeltaText replaces the delta's text in line (at the first of
// deltaPaths it has) with text, leaving every other byte as it was.
func replaceDeltaText(line, text string) (string, bool) {
	for _, path := range deltaPaths {
		if start, end, ok := stringValueAt(line, path); ok {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if enc.Encode(text) != nil {
				return line, false
			}
			return line[:start] + strings.TrimSuffix(b.String(), "\n") + line[end:], true
		}
	}
	return line, false
}

// stringValueAt finds the string at path (object keys from the top) in the
// JSON object line and returns where its quoted form starts and ends.
func stringValueAt(line string, path []string) (start, end int, ok bool) {
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var stack []jsonFrame
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			if d, isDelim := tok.(json.Delim); isDelim && d == '}' {
				stack = stack[:n-1]
				valueDone(stack)
				continue
			}
			stack[n-1].key, _ = tok.(string)
			stack[n-1].wantKey = false
			continue
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, jsonFrame{obj: true, wantKey: true})
			case '[':
				stack = append(stack, jsonFrame{})
			case ']':
				stack = stack[:len(stack)-1]
				valueDone(stack)
			}
		case string:
			if atPath(stack, path) {
				s := int(before)
				for s < len(line) && line[s] != '"' {
					s++
				}
				return s, int(dec.InputOffset()), true
			}
			valueDone(stack)
		default:
			valueDone(stack)
		}
	}
}

// jsonFrame is one open object or array while stringValueAt reads.
type jsonFrame struct {
	obj, wantKey bool
	key          string // the current key of an object
}

// valueDone notes that the value of the innermost object's current key was
// read: a key comes next.
func valueDone(stack []jsonFrame) {
	if n := len(stack); n > 0 && stack[n-1].obj {
		stack[n-1].wantKey = true
	}
}

// atPath reports whether the value about to be read is at path.
func atPath(stack []jsonFrame, path []string) bool {
	if len(stack) != len(path) {
		return false
	}
	for i, f := range stack {
		if !f.obj || f.key != path[i] {
			return false
		}
	}
	return true
}
