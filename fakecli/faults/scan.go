package faults

import (
	"encoding/json"
	"strconv"
	"strings"
)

// doc is one stdout line that is a JSON object, with the position of every
// value in it, so faults can change one value and leave every other byte
// of the line as it was.
type doc struct {
	text  string
	nodes []node // in document order
}

// node is one JSON value inside a doc.
type node struct {
	path   []string // object keys and array indexes from the root
	kind   byte     // '{', '[', '"', '0' (number), 't', 'f', 'n'
	start  int      // the value's bytes are text[start:end]
	end    int
	member bool // the value of an object member (the path ends in a key)
}

// parseDoc returns nil unless text is one valid JSON object.
func parseDoc(text string) *doc {
	i := skipSpace(text, 0)
	if i >= len(text) || text[i] != '{' || !json.Valid([]byte(text)) {
		return nil
	}
	w := &walker{s: text}
	w.value(nil, false)
	return &doc{text: text, nodes: w.nodes}
}

// walker records the values of a document already known to be valid
// JSON. Every index is still bounds-checked, so it cannot panic.
type walker struct {
	s     string
	i     int
	nodes []node
	depth int
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func (w *walker) peek() byte {
	if w.i < len(w.s) {
		return w.s[w.i]
	}
	return 0
}

func (w *walker) value(path []string, member bool) {
	w.i = skipSpace(w.s, w.i)
	if w.i >= len(w.s) || w.depth > 10000 {
		w.i = len(w.s)
		return
	}
	at := len(w.nodes)
	w.nodes = append(w.nodes, node{path: path, start: w.i, member: member})
	c := w.s[w.i]
	kind := c
	w.depth++
	switch c {
	case '{':
		w.i++
		for w.i = skipSpace(w.s, w.i); w.i < len(w.s) && w.peek() != '}'; w.i = skipSpace(w.s, w.i) {
			if w.peek() == ',' {
				w.i++
				continue
			}
			ks := w.i
			w.str()
			key := decodeString(w.s[ks:w.i])
			w.i = skipSpace(w.s, w.i)
			if w.peek() == ':' {
				w.i++
			}
			w.value(appendPath(path, key), true)
		}
		w.i++
	case '[':
		w.i++
		n := 0
		for w.i = skipSpace(w.s, w.i); w.i < len(w.s) && w.peek() != ']'; w.i = skipSpace(w.s, w.i) {
			if w.peek() == ',' {
				w.i++
				continue
			}
			w.value(appendPath(path, strconv.Itoa(n)), false)
			n++
		}
		w.i++
	case '"':
		w.str()
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			kind = '0'
		}
		for w.i < len(w.s) && !strings.ContainsRune(",}] \t\r\n", rune(w.s[w.i])) {
			w.i++
		}
	}
	w.depth--
	if w.i > len(w.s) {
		w.i = len(w.s)
	}
	w.nodes[at].kind = kind
	w.nodes[at].end = w.i
}

// str skips one string, quotes included.
func (w *walker) str() {
	if w.peek() != '"' {
		w.i++
		return
	}
	for w.i++; w.i < len(w.s); w.i++ {
		switch w.s[w.i] {
		case '\\':
			w.i++
		case '"':
			w.i++
			return
		}
	}
}

func appendPath(path []string, seg string) []string {
	out := make([]string, len(path)+1)
	copy(out, path)
	out[len(path)] = seg
	return out
}

// decodeString decodes a raw JSON string (quotes included).
func decodeString(raw string) string {
	if len(raw) >= 2 && !strings.Contains(raw, `\`) {
		return raw[1 : len(raw)-1]
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return ""
	}
	return s
}

// raw returns a node's bytes.
func (d *doc) raw(n *node) string { return d.text[n.start:n.end] }

// get returns the last node at exactly this path (the last, as decoders
// keep the last of duplicate keys), or nil.
func (d *doc) get(path ...string) *node {
	for i := len(d.nodes) - 1; i >= 0; i-- {
		if pathIs(d.nodes[i].path, path) {
			return &d.nodes[i]
		}
	}
	return nil
}

// str returns the string at path.
func (d *doc) str(path ...string) (string, bool) {
	n := d.get(path...)
	if n == nil || n.kind != '"' {
		return "", false
	}
	return decodeString(d.raw(n)), true
}

// typ is the top-level "type", or "".
func (d *doc) typ() string {
	s, _ := d.str("type")
	return s
}

// pathIs compares a path with a pattern, where "*" matches any segment.
func pathIs(path, pattern []string) bool {
	if len(path) != len(pattern) {
		return false
	}
	for i := range path {
		if pattern[i] != "*" && pattern[i] != path[i] {
			return false
		}
	}
	return true
}

// sibling returns the path with its last segment replaced.
func sibling(path []string, last string) []string {
	out := append([]string(nil), path...)
	if len(out) > 0 {
		out[len(out)-1] = last
	}
	return out
}

// edit is one replacement of text[start:end].
type edit struct {
	start, end int
	repl       string
}

// applyEdits applies non-overlapping edits, in any order.
func applyEdits(text string, edits []edit) string {
	// Sort by start, descending, with a simple insertion sort: edits are few.
	for i := 1; i < len(edits); i++ {
		for j := i; j > 0 && edits[j].start > edits[j-1].start; j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
	for _, e := range edits {
		if e.start < 0 || e.end > len(text) || e.start > e.end {
			continue
		}
		text = text[:e.start] + e.repl + text[e.end:]
	}
	return text
}

// quote encodes s as a JSON string, without HTML escaping.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) != nil {
		return `""`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// object renders a JSON object from key, value pairs, keeping their order;
// values are raw JSON.
func object(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quote(kv[i]))
		b.WriteByte(':')
		b.WriteString(kv[i+1])
	}
	b.WriteByte('}')
	return b.String()
}
