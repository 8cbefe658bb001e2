package jsonl

import (
	"strconv"

	"github.com/agentconform/agentconform/finding"
)

// The decoder is a hand-written single-pass recursive-descent JSON parser
// that produces the same shapes encoding/json produces for an `any`
// (map[string]any, []any, string, float64, bool, nil), plus json.Number for
// numbers a float64 cannot hold. It is tuned for many small objects:
// members go straight into their map (a line with a duplicate key is
// decoded a second time, carefully, so that the first value wins), array
// elements are collected on a reusable stack so that each slice is
// allocated once at its final size, keys, short strings and numbers are
// interned through small direct-mapped caches, and nothing touches fmt or
// allocates for findings unless there is a problem.

const (
	keyCacheSize = 512  // entries in the key cache; a power of two
	strCacheSize = 1024 // entries in the short-string value cache; a power of two
	maxInternLen = 32   // longest key or string value that is interned
	numCacheBits = 8    // the number cache has 1<<numCacheBits entries
	maxPerRule   = 100  // findings of one repeatable rule per line

	maxSafeInt = 1<<53 - 1 // largest integer every IEEE 754 double holds exactly

	// Limits on what a decoder keeps when it goes back to the pool.
	maxPooledBuf   = 64 << 10
	maxPooledStack = 4096
)

// member is one parsed object member waiting on the decoder's stack.
type member struct {
	key string
	val any
	pos int // column of the key's opening quote
}

// decoder holds the state of one Parse call plus caches and scratch stacks
// that survive in a sync.Pool between calls. A decoder is used by one
// goroutine at a time.
type decoder struct {
	data      []byte
	pos       int
	depth     int
	maxDepth  int
	checkUTF8 bool // the line has invalid UTF-8: strings take the slow path
	failed    bool // a syntax error (or too-deep, or redo) stopped decoding
	tooDeep   bool
	redo      bool     // a duplicate key was found on the fast path
	careful   bool     // decode objects on the member stack (see objectCareful)
	shareMin  int      // plain strings this long share data (ParseOptions.ShareMin)
	fresh     bool     // the last string was decoded into a buffer of its own
	known     []string // long strings the caller holds (ParseOptions.Known)
	hit       bool     // the last string is known[hitIdx]
	hitIdx    int
	errIdx    int           // index in finds of the syntax or too-deep finding
	counts    [numSlots]int // repeatable findings seen, made or not

	members []member
	vals    []any
	finds   []pending
	sbuf    []byte

	keys [keyCacheSize]cachedKey
	strs [strCacheSize]cachedStr
	nums [1 << numCacheBits]cachedNum
}

// reset prepares a pooled decoder for a new line.
func (d *decoder) reset(data []byte, maxDepth int) {
	d.data = data
	d.pos = 0
	d.depth = 0
	d.maxDepth = maxDepth
	d.checkUTF8 = false
	d.failed = false
	d.tooDeep = false
	d.redo = false
	d.careful = false
	d.shareMin = 0
	d.known = nil
	d.errIdx = -1
	d.counts = [numSlots]int{}
	d.finds = d.finds[:0]
}

// release drops references to the line and to large scratch buffers before
// the decoder goes back to the pool.
func (d *decoder) release() {
	d.data = nil
	d.known = nil
	clear(d.finds)
	d.finds = d.finds[:0]
	clear(d.members)
	d.members = d.members[:0]
	clear(d.vals)
	d.vals = d.vals[:0]
	if cap(d.sbuf) > maxPooledBuf {
		d.sbuf = nil
	}
	if cap(d.members) > maxPooledStack {
		d.members = nil
	}
	if cap(d.vals) > maxPooledStack {
		d.vals = nil
	}
	if cap(d.finds) > maxPooledStack {
		d.finds = nil
	}
}

// skipWS skips JSON whitespace and returns the next byte, or -1 at the end.
func (d *decoder) skipWS() int {
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return int(c)
		}
		d.pos++
	}
	return -1
}

// value parses the value starting at d.pos, which is not whitespace.
func (d *decoder) value() any {
	if d.pos >= len(d.data) {
		d.unexpected(d.pos, "where a value should start", expectValue)
		return nil
	}
	switch c := d.data[d.pos]; c {
	case '"':
		return d.stringValue()
	case '{':
		return d.object()
	case '[':
		return d.array()
	case 't':
		if d.literal("true") {
			return true
		}
	case 'f':
		if d.literal("false") {
			return false
		}
	case 'n':
		d.literal("null")
	default:
		if c == '-' || c-'0' <= 9 {
			return d.number()
		}
		d.unexpected(d.pos, "where a value should start", expectValue)
	}
	return nil
}

// object parses an object; d.pos is at '{'. The fast path inserts members
// straight into the map and notices a duplicate key only when the map does
// not grow; the first value is lost by then, so the whole line is decoded
// again in careful mode (see objectCareful). A line is decoded at most
// twice.
func (d *decoder) object() any {
	start := d.pos
	d.pos++
	if d.depth++; d.depth > d.maxDepth {
		d.deep(start)
		return nil
	}
	c := d.skipWS()
	if c == '}' {
		d.pos++
		d.depth--
		return map[string]any{}
	}
	if d.careful {
		return d.objectCareful(c)
	}
	m := make(map[string]any)
	for {
		k, v, _, ok := d.member(c)
		if !ok {
			return nil
		}
		n := len(m)
		if m[k] = v; len(m) == n {
			d.redo = true
			d.failed = true
			return nil
		}
		if c, ok = d.afterMember(); !ok {
			return nil
		}
		if c == '}' {
			d.pos++
			d.depth--
			return m
		}
	}
}

// objectCareful parses the members of an object on the decoder's stack and
// builds the map at the end, so that the first of duplicate keys wins and
// every duplicate is reported. c is the first byte after '{'.
func (d *decoder) objectCareful(c int) any {
	base := len(d.members)
	for {
		k, v, kpos, ok := d.member(c)
		if !ok {
			break
		}
		d.members = append(d.members, member{key: k, val: v, pos: kpos})
		if c, ok = d.afterMember(); !ok {
			break
		}
		if c == '}' {
			d.pos++
			d.depth--
			return d.makeObject(base)
		}
	}
	clear(d.members[base:])
	d.members = d.members[:base]
	return nil
}

// member parses one object member: key, colon and value. c is the byte at
// d.pos. Findings made inside the member get the key as pointer token.
func (d *decoder) member(c int) (k string, v any, kpos int, ok bool) {
	if c != '"' {
		d.unexpected(d.pos, "where an object key should start", expectKey)
		return "", nil, 0, false
	}
	n0 := len(d.finds)
	kpos = d.pos
	if k, ok = d.key(); !ok {
		return "", nil, 0, false
	}
	if d.skipWS() == ':' {
		d.pos++
		d.skipWS()
		v = d.value()
	} else {
		d.unexpected(d.pos, "after an object key", "':'")
	}
	if len(d.finds) > n0 {
		d.addToken(n0, k)
	}
	return k, v, kpos, !d.failed
}

// afterMember consumes the ',' after a member, or finds the closing '}'
// (not consumed). It returns the byte that starts the next member, or '}'.
func (d *decoder) afterMember() (int, bool) {
	switch c := d.skipWS(); c {
	case ',':
		d.pos++
		if c = d.skipWS(); c == '}' {
			d.fail(d.pos, "trailing comma before '}'", expectKey)
			return c, false
		}
		return c, true
	case '}':
		return c, true
	}
	d.unexpected(d.pos, "after an object member", "',' or '}'")
	return 0, false
}

// makeObject builds the map for the members above base on the stack and
// pops them. Members are inserted last to first so that the first of
// duplicate keys wins with no extra lookups; duplicates show up as a map
// smaller than the member list.
func (d *decoder) makeObject(base int) map[string]any {
	ms := d.members[base:]
	m := make(map[string]any, len(ms))
	for i := len(ms) - 1; i >= 0; i-- {
		m[ms[i].key] = ms[i].val
	}
	if len(m) != len(ms) {
		d.duplicates(ms)
	}
	clear(ms)
	d.members = d.members[:base]
	return m
}

// duplicates reports every later occurrence of a key in ms.
func (d *decoder) duplicates(ms []member) {
	first := make(map[string]int, len(ms))
	for j, mb := range ms {
		i, seen := first[mb.key]
		if !seen {
			first[mb.key] = j
			continue
		}
		if d.capped(dupSlot) {
			continue
		}
		kept, ignored := renderValue(ms[i].val), renderValue(mb.val)
		d.finds = append(d.finds, pending{
			f: finding.Finding{
				Rule:   RuleDuplicateKey,
				Column: mb.pos,
				Message: "key " + strconv.Quote(mb.key) + " appears more than once in one object; Parse keeps the first value " +
					kept + " and ignores " + ignored + " (most decoders keep the last)",
				Expected: "unique keys",
			},
			toks: []string{mb.key},
		})
	}
}

// array parses an array; d.pos is at '['.
func (d *decoder) array() any {
	start := d.pos
	d.pos++
	if d.depth++; d.depth > d.maxDepth {
		d.deep(start)
		return nil
	}
	c := d.skipWS()
	if c == ']' {
		d.pos++
		d.depth--
		return []any{}
	}
	base := len(d.vals)
	for idx := 0; ; idx++ {
		n0 := len(d.finds)
		v := d.value()
		if len(d.finds) > n0 {
			d.addToken(n0, strconv.Itoa(idx))
		}
		if d.failed {
			break
		}
		d.vals = append(d.vals, v)
		c = d.skipWS()
		if c == ',' {
			d.pos++
			if c = d.skipWS(); c == ']' {
				d.fail(d.pos, "trailing comma before ']'", expectValue)
				break
			}
			continue
		}
		if c == ']' {
			d.pos++
			d.depth--
			out := make([]any, len(d.vals)-base)
			copy(out, d.vals[base:])
			clear(d.vals[base:])
			d.vals = d.vals[:base]
			return out
		}
		d.unexpected(d.pos, "after an array element", "',' or ']'")
		break
	}
	clear(d.vals[base:])
	d.vals = d.vals[:base]
	return nil
}

// literal consumes lit (true, false or null) at d.pos.
func (d *decoder) literal(lit string) bool {
	rest := d.data[d.pos:]
	if len(rest) >= len(lit) && string(rest[:len(lit)]) == lit {
		d.pos += len(lit)
		return true
	}
	i := 0
	for i < len(rest) && i < len(lit) && rest[i] == lit[i] {
		i++
	}
	d.unexpected(d.pos+i, "in the literal "+lit, strconv.Quote(lit))
	return false
}
