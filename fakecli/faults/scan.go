package faults

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
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

// parseDoc returns nil unless text is one valid JSON object. Docs are
// never modified once made, so they are shared through docCache.
func parseDoc(text string) *doc {
	if d, ok := docCache.get(text); ok {
		return d
	}
	var d *doc
	i := skipSpace(text, 0)
	if i < len(text) && text[i] == '{' && json.Valid([]byte(text)) {
		w := &walker{s: text}
		w.value(nil, false)
		d = &doc{text: text, nodes: w.nodes}
	}
	docCache.put(text, d)
	return d
}

// docCache remembers the lines parsed lately. A fake parses each line of
// its transcript once, but the fuzzer applies new faults to the same
// fixture lines thousands of times a second, and parsing them again was a
// third of its time. Lines longer than docCacheLine (ladder lines, mostly
// made by a fault and seen once) are not kept, and the whole cache is
// dropped once it holds docCacheBytes of text.
var docCache = &parsedDocs{}

const (
	docCacheLine  = 512 << 10
	docCacheBytes = 32 << 20
)

// parsedDocs is a size-bounded map from line text to its parse (nil for
// a line that is not a JSON object).
type parsedDocs struct {
	mu    sync.Mutex
	m     map[string]*doc
	bytes int
}

func (c *parsedDocs) get(text string) (*doc, bool) {
	if len(text) > docCacheLine {
		return nil, false
	}
	c.mu.Lock()
	d, ok := c.m[text]
	c.mu.Unlock()
	return d, ok
}

func (c *parsedDocs) put(text string, d *doc) {
	if len(text) > docCacheLine {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.bytes+len(text) > docCacheBytes {
		c.m, c.bytes = map[string]*doc{}, 0
	}
	if _, ok := c.m[text]; !ok {
		c.m[text] = d
		c.bytes += len(text)
	}
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
