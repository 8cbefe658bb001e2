package jsonl

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentconform/agentconform/finding"
)

// DefaultMaxDepth is the nesting limit used when ParseOptions.MaxDepth is
// zero or negative. Real events nest fewer than 20 levels; 1000 leaves wide
// room while keeping the recursion (and a hostile line) cheap. The limit
// counts objects and arrays: a depth of 1 is a flat object.
const DefaultMaxDepth = 1000

// tooDeepTokens is how many leading tokens of the pointer a too-deep
// finding keeps; the full pointer would be as long as the limit.
const tooDeepTokens = 16

// ParseOptions configures Parse.
type ParseOptions struct {
	// MaxDepth is the deepest nesting of objects and arrays Parse decodes.
	// Zero or negative means DefaultMaxDepth. The decoder recurses, so
	// stack use grows with this limit.
	MaxDepth int
	// ShareMin, when positive, lets string values of at least ShareMin
	// bytes (and more than the few that are interned) that hold no escape
	// share the line's memory instead of being copied into strings of
	// their own. Parse then retains b: the caller must not change it while
	// the result is in use. It is for callers that keep the line anyway
	// (the conformance runner keeps every event's raw bytes next to its
	// decoded object), or own a long one: a 64 MiB line then costs one
	// copy, not two.
	ShareMin int
	// Known lists long strings the caller holds: a string value of the
	// line that has escapes, is longer than 64 KiB on the line, and
	// decodes to one of them is returned as that string rather than
	// decoded into a copy of its own (a CLI's 64 MiB text the runner
	// already holds from the adapter's event). The value is the same
	// either way; the strings must not change while the result is in use.
	Known []string
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// Parse decodes one line (without its "\n") and returns the object it holds
// together with findings for every problem in it. Findings carry Column
// (byte offset inside b) and Pointer; Locate fills in the rest.
//
// Values have the shapes encoding/json gives an `any`, except that
// numbers a float64 cannot hold are json.Number and that the first of
// duplicate keys wins. Parse reports a leading BOM, terminal escape
// sequences and a "data:" prefix, then decodes the text without them, so
// the event is still checked. The object is nil when the line is not a
// JSON object; when a complete object is followed by more text
// (jsonl/multiple-values, or jsonl/invalid-json for trailing garbage) the
// object is still returned. Parse never retains b (unless
// opts.ShareMin is set) and is safe for concurrent use.
func Parse(b []byte, opts ParseOptions) (map[string]any, []finding.Finding) {
	maxDepth := opts.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	var pre []finding.Finding
	view := b
	var cm colMap
	if bytes.HasPrefix(view, bom) {
		pre = append(pre, finding.Finding{Rule: RuleBOM, Message: "line starts with a UTF-8 byte order mark (EF BB BF); it was ignored"})
		view = view[len(bom):]
		cm.drop(len(bom))
	}
	var first map[string]any
	var firstFs []finding.Finding
	tried := false
	if len(view) >= cleanFirst {
		// A long line is decoded as it is first: a raw ESC anywhere in it
		// is a finding of the decoding (outside strings a syntax error,
		// inside them a raw control byte), so a decoding without one of
		// its own proves there is none, and the search for one through
		// the whole line is spared.
		var clean bool
		first, firstFs, clean = parseView(b, view, pre[:len(pre):len(pre)], cm, opts, maxDepth)
		if clean {
			return first, firstFs
		}
		tried = true
	}
	if i := bytes.IndexByte(view, esc); i >= 0 {
		col := cm.orig(i)
		clean, ncm, n, first := stripANSI(view, cm)
		pre = append(pre, finding.Finding{
			Rule:   RuleANSIEscape,
			Column: col,
			Message: "line contains " + strconv.Itoa(n) + " raw terminal escape sequence(s), first " +
				strconv.Quote(string(first)) + "; they were removed before parsing",
			Actual: strconv.Quote(string(first)),
		})
		view, cm = clean, ncm
	} else if tried {
		// No ESC: the first decoding is the line's.
		return first, firstFs
	}
	m, fs, _ := parseView(b, view, pre, cm, opts, maxDepth)
	return m, fs
}

// cleanFirst is the length from which Parse decodes a line before it
// looks for terminal escapes in it.
const cleanFirst = 64 << 10

// parseView decodes view, the text of line b after its BOM and terminal
// escapes (their findings in pre, their columns in cm) went: an SSE
// prefix is reported and skipped, the rest decoded. clean reports that
// the decoding found nothing wrong itself (the findings are pre's and
// the prefix's).
func parseView(b, view []byte, pre []finding.Finding, cm colMap, opts ParseOptions, maxDepth int) (m map[string]any, fs []finding.Finding, clean bool) {
	if bytes.HasPrefix(view, []byte("data:")) {
		n := len("data:")
		if n < len(view) && view[n] == ' ' {
			n++
		}
		pre = append(pre, finding.Finding{
			Rule:    RuleSSEPrefix,
			Column:  cm.orig(0),
			Message: "line carries the SSE prefix " + strconv.Quote(string(view[:n])) + "; the rest was parsed",
		})
		view = view[n:]
		cm.drop(n)
	}
	npre := len(pre)
	d := decoders.Get().(*decoder)
	d.reset(view, maxDepth)
	d.shareMin = opts.ShareMin
	d.known = opts.Known
	m, fs = d.line(b, pre[:npre:npre], &cm)
	d.release()
	decoders.Put(d)
	return m, fs, len(fs) == npre
}

// line decodes the prepared text in d.data and classifies the result.
func (d *decoder) line(orig []byte, pre []finding.Finding, cm *colMap) (map[string]any, []finding.Finding) {
	text := d.data
	framing := len(pre) // findings that survive a not-json verdict
	if !utf8.Valid(text) {
		d.checkUTF8 = true
		pre = append(pre, invalidUTF8(text, cm))
	}
	notJSON := func(msg string) []finding.Finding {
		return append(pre[:framing:framing], finding.Finding{Rule: RuleNotJSON, Column: cm.orig(0), Message: msg})
	}
	c := d.skipWS()
	if c < 0 {
		return nil, notJSON("line is blank: it holds no JSON value")
	}
	first := byte(c)
	start := d.pos
	v := d.value()
	if d.redo {
		// A duplicate key: decode again, carefully, from the start.
		d.pos, d.depth, d.failed, d.redo, d.careful = start, 0, false, false, true
		d.counts = [numSlots]int{}
		clear(d.finds)
		d.finds = d.finds[:0]
		v = d.value()
	}
	if d.failed {
		if d.tooDeep || startsLikeJSON(text, start) {
			return nil, append(pre, d.finish(d.errIdx, cm))
		}
		return nil, notJSON(notJSONMessage(orig))
	}
	out := pre
	for i := range d.finds {
		out = append(out, d.finish(i, cm))
	}
	for slot, n := range d.counts {
		if n <= maxPerRule {
			continue
		}
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].Rule == slotRules[slot] {
				out[i].Message += " (" + strconv.Itoa(n-maxPerRule) + " more like this in the line are not reported)"
				break
			}
		}
	}
	if c := d.skipWS(); c >= 0 {
		switch {
		case first == '-' || first-'0' <= 9 || first == 't' || first == 'f' || first == 'n':
			// A bare number or word followed by more text is prose such as
			// "2025-12-03 10:00 INFO ..." or "null pointer", not JSON.
			return nil, notJSON(notJSONMessage(orig))
		case isValueStart(byte(c)):
			col := cm.orig(d.pos)
			out = append(out, finding.Finding{
				Rule:     RuleMultipleValues,
				Column:   col,
				Message:  "line holds more than one JSON value; the second starts at column " + strconv.Itoa(col),
				Expected: "end of line",
				Actual:   describe(d.data, d.pos),
			})
		default:
			out = append(out, finding.Finding{
				Rule:     RuleInvalidJSON,
				Column:   cm.orig(d.pos),
				Message:  "malformed JSON: unexpected character after the end of the JSON value",
				Expected: "end of line",
				Actual:   describe(d.data, d.pos),
			})
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		kind := kindOf(v)
		out = append(out, finding.Finding{
			Rule:     RuleNotObject,
			Column:   cm.orig(start),
			Message:  "line is " + kind + ", not a JSON object",
			Expected: "object",
			Actual:   strings.TrimPrefix(strings.TrimPrefix(kind, "an "), "a "),
		})
		return nil, out
	}
	return obj, out
}

// finish turns pending finding i into a finding: the pointer assembled from
// its tokens (outermost first) and the column mapped onto the line.
func (d *decoder) finish(i int, cm *colMap) finding.Finding {
	p := &d.finds[i]
	f := p.f
	f.Column = cm.orig(f.Column)
	if n := len(p.toks); n > 0 {
		keep := n
		if f.Rule == RuleTooDeep && keep > tooDeepTokens {
			keep = tooDeepTokens
			f.Message += "; the pointer shows the first " + strconv.Itoa(keep) + " levels"
		}
		var b strings.Builder
		for j := n - 1; j >= n-keep; j-- {
			b.WriteByte('/')
			b.WriteString(finding.EscapeToken(p.toks[j]))
		}
		f.Pointer = b.String()
	}
	return f
}

// invalidUTF8 builds the invalid-utf8 finding for text, which is not valid
// UTF-8: the column of the first bad byte and the count of bad bytes.
func invalidUTF8(text []byte, cm *colMap) finding.Finding {
	firstBad, bad := -1, 0
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && size == 1 {
			if firstBad < 0 {
				firstBad = i
			}
			bad++
		}
		i += size
	}
	if firstBad < 0 { // cannot happen: the caller checked utf8.Valid
		firstBad = 0
	}
	return finding.Finding{
		Rule:   RuleInvalidUTF8,
		Column: cm.orig(firstBad),
		Message: "line is not valid UTF-8: " + strconv.Itoa(bad) + " invalid byte(s), the first is " +
			hexByte(text[firstBad]) + "; strings read them as U+FFFD",
		Expected: "UTF-8",
		Actual:   "byte " + hexByte(text[firstBad]),
	}
}

// notJSONMessage says that a line is not JSON and quotes its start.
func notJSONMessage(line []byte) string {
	what := "line is not JSON (stderr leakage or a banner?): "
	if !utf8.Valid(line) || bytes.IndexByte(line, 0) >= 0 {
		what = "line is not JSON (binary data?): "
	}
	return what + quoteStart(line)
}

// startsLikeJSON tells a malformed JSON line from text that is not JSON at
// all, given the column of its first non-blank byte. Objects and strings
// count as JSON from their first byte; "[" only when what follows could
// start an array element, so that "[SandboxDebug] ..." and
// "[2025-12-03 10:00] ..." are log lines, not broken arrays.
func startsLikeJSON(text []byte, start int) bool {
	switch text[start] {
	case '{', '"':
		return true
	case '[':
	default:
		return false
	}
	i := skipBlank(text, start+1)
	if i >= len(text) {
		return true // "[" then nothing: a truncated array
	}
	switch c := text[i]; {
	case c == '{' || c == '[' || c == '"' || c == ']':
		return true
	case c == '-' || c-'0' <= 9:
		i = numberEnd(text, i)
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(text[i:], []byte(lit)) {
				i += len(lit)
				break
			}
		}
		if i < len(text) && text[i] >= 'a' && text[i] <= 'z' {
			return false
		}
	default:
		return false
	}
	if i < 0 {
		return false
	}
	i = skipBlank(text, i)
	return i >= len(text) || text[i] == ',' || text[i] == ']'
}

// skipBlank returns the index of the first non-whitespace byte at or after i.
func skipBlank(text []byte, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	return i
}

// numberEnd returns the end of the JSON number at text[i:], or -1 when
// there is none.
func numberEnd(text []byte, i int) int {
	digits := func() bool {
		j := i
		for i < len(text) && text[i]-'0' <= 9 {
			i++
		}
		return i > j
	}
	if i < len(text) && text[i] == '-' {
		i++
	}
	if i < len(text) && text[i] == '0' {
		i++
	} else if !digits() {
		return -1
	}
	if i < len(text) && text[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < len(text) && text[i]|0x20 == 'e' {
		i++
		if i < len(text) && (text[i] == '+' || text[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	return i
}

// isValueStart reports whether c can begin a JSON value.
func isValueStart(c byte) bool {
	switch c {
	case '{', '[', '"', '-', 't', 'f', 'n':
		return true
	}
	return c-'0' <= 9
}

// kindOf names the JSON type of a decoded value, with its article.
func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}

// Locate completes findings made by Parse for line l of file: it sets File,
// Line and Offset, and shifts Column by the BOM that the Reader removed from
// l.Bytes, so that Offset+Column is the problem's byte offset in the file.
// Do not use it on FramingFindings, which are located already.
func Locate(fs []finding.Finding, file string, l Line) {
	shift := 0
	if l.BOM {
		shift = len(bom)
	}
	for i := range fs {
		fs[i].File = file
		fs[i].Line = l.Number
		fs[i].Offset = l.Offset
		fs[i].Column += shift
	}
}
