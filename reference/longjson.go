package reference

import (
	"bytes"
	"crypto/rand"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/agentconform/agentconform/jsonvalid"
)

// unmarshal is json.Unmarshal into one of the translators' line structs
// (plain strings, json.RawMessage, numbers, and structs, pointers and
// slices of them), and gives exactly what it gives, but reads a line with
// long strings in it (a 64 MiB ladder line) without letting encoding/json
// scan them byte by byte two or three times over: a string value of at
// least longString bytes is taken out of the line, the rest decoded, and
// the string put back where it went: decoded as encoding/json decodes it
// (unquote) in a string field, as it was written inside a
// json.RawMessage. Anything the fast path is not sure of, and every
// error, goes to json.Unmarshal on the line as it is.
func unmarshal(raw []byte, v any) error { return (&lineScan{}).unmarshal(raw, v, false) }

// lineScan is what is known of a line's long strings before it is
// decoded (scanHeader found them on its way), and of the raw values that
// decoding it left sharing its memory: a raw value decoded in its turn
// (Claude's message content, into blocks) is not scanned again either.
type lineScan struct {
	raw   []byte
	longs []span // raw's long strings, when known
	known bool
	// parts are raw values put back uncopied, with their long strings.
	parts []lineScan
	// strs are the long strings put back, with their tokens in the line
	// (which is not copied: shared).
	strs []decodedString
}

// decodedString is a long string value and the token it was decoded from.
type decodedString struct {
	s   string
	tok []byte
}

// jsonString is jsonString(s), but when s is a long string value of the
// line (decoding left it there, shared) whose token is already what
// jsonString gives (canonicalToken), the token itself: a 64 MiB tool
// output is not encoded again into a fresh buffer of its size.
func (sc *lineScan) jsonString(s string) json.RawMessage {
	for _, d := range sc.strs {
		if len(d.s) == len(s) && len(s) > 0 && unsafe.StringData(d.s) == unsafe.StringData(s) && canonicalToken(d.tok) {
			return d.tok
		}
	}
	return jsonString(s)
}

// canonicalToken reports whether the valid JSON string token tok is what
// jsonstr.Marshal writes for its value: valid UTF-8 without a raw U+2028
// or U+2029, and only the escapes jsonstr writes (\", \\, \b, \f, \n, \r,
// \t, \u00xx in lower case for the other control characters, \u2028,
// \u2029). It looks at most bytes with bytes.IndexByte and utf8.Valid,
// several times faster than encoding the value again.
func canonicalToken(tok []byte) bool {
	body := tok[1 : len(tok)-1]
	if !utf8.Valid(body) {
		return false
	}
	for b := body; ; {
		i := bytes.IndexByte(b, 0xE2) // U+2028 and U+2029 are E2 80 A8 and E2 80 A9
		if i < 0 {
			break
		}
		if i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9) {
			return false
		}
		b = b[i+1:]
	}
	for b := body; ; {
		i := bytes.IndexByte(b, '\\')
		if i < 0 {
			return true
		}
		b = b[i+1:] // the escape (tok is valid: it is complete)
		switch b[0] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			b = b[1:]
		case 'u':
			h := string(b[1:5])
			switch {
			case h == "2028" || h == "2029":
			case (h[2] == '0' || h[2] == '1') && h[:2] == "00" && ('0' <= h[3] && h[3] <= '9' || 'a' <= h[3] && h[3] <= 'f'):
				switch h[2:] {
				case "08", "09", "0a", "0c", "0d": // \b \t \n \f \r
					return false
				}
			default:
				return false
			}
			b = b[5:]
		default:
			return false
		}
	}
}

// decode decodes a line into the struct of its type, naming the type in
// the error. An owned line (see ownedLiner) is decoded shared: its long
// strings and raw values stay in it, uncopied.
func (sc *lineScan) decode(raw []byte, owned bool, v any, what string) error {
	if err := sc.unmarshal(raw, v, owned); err != nil {
		return fmt.Errorf("%s: undecodable line: %w", what, err)
	}
	return nil
}

// unmarshal is unmarshal, taking raw's long strings from the scan when it
// knows them, of raw or of a part of it. Shared, for raw that no one
// changes while v is in use (an owned line, or a raw value the parser
// decoded itself), the long strings and raw values put back share raw's
// memory instead of being copied.
func (sc *lineScan) unmarshal(raw []byte, v any, shared bool) error {
	if len(raw) < longLine || !plainTarget(reflect.TypeOf(v)) {
		return json.Unmarshal(raw, v)
	}
	longs, ok := sc.longsOf(raw)
	if !ok {
		longs, ok = longStrings(raw)
	}
	if !ok || len(longs) == 0 {
		return json.Unmarshal(raw, v)
	}
	// A line that spells this process's stand-ins is read as it is. Only
	// what lies between the long strings is looked at: a stand-in in one
	// of them is taken out with it (and the nonce, hex digits, cannot
	// run across a string's quote).
	nonce := []byte(longNonce)
	ll := &longDoc{raw: raw, longs: longs, shared: shared, at: make([]int, len(longs)), scan: sc}
	small := make([]byte, 0, 256)
	last := 0
	for k, l := range longs {
		if bytes.Contains(raw[last:l.start], nonce) {
			return json.Unmarshal(raw, v)
		}
		small = append(small, raw[last:l.start]...)
		ll.at[k] = len(small)
		small = append(small, '"')
		small = append(small, longMarker(k)...)
		small = append(small, '"')
		last = l.end
	}
	if bytes.Contains(raw[last:], nonce) {
		return json.Unmarshal(raw, v)
	}
	small = append(small, raw[last:]...)
	if err := json.Unmarshal(small, v); err != nil {
		reflect.ValueOf(v).Elem().SetZero()
		return json.Unmarshal(raw, v)
	}
	ll.small = small
	putBack(reflect.ValueOf(v).Elem(), ll)
	return nil
}

// longDoc is a line lineScan.unmarshal decodes: the line, its long strings,
// and small, the line with a stand-in for each, the k-th at small[at[k]:].
type longDoc struct {
	raw, small []byte
	longs      []span
	at         []int
	shared     bool      // the values put back may share raw's memory
	scan       *lineScan // notes the parts of raw put back uncopied
}

// longsOf returns the long strings of b when the scan knows them: b is
// the scanned line, or a part of it put back uncopied.
func (sc *lineScan) longsOf(b []byte) ([]span, bool) {
	same := func(a []byte) bool { return len(a) == len(b) && len(b) > 0 && &a[0] == &b[0] }
	if sc.known && same(sc.raw) {
		return sc.longs, true
	}
	for _, p := range sc.parts {
		if same(p.raw) {
			return p.longs, true
		}
	}
	return nil, false
}

// rawOffset maps an offset of small that is not inside a stand-in to the
// same place in raw (-1 for one inside).
func (ll *longDoc) rawOffset(off int) int {
	grown := 0 // how much longer raw is than small before off
	for k, l := range ll.longs {
		tok := 2 + len(longMarker(k))
		switch {
		case off <= ll.at[k]:
			return off + grown
		case off < ll.at[k]+tok:
			return -1
		}
		grown += l.end - l.start - tok
	}
	return off + grown
}

// sharedRaw returns the part of raw that a raw value r holding stand-ins
// was decoded from, uncopied: encoding/json copies a raw value's bytes as
// they are, and small spells each stand-in once (and this process's
// nonce nowhere else), so r lies in small at one place, which maps to
// the part of raw between the same long strings.
func (ll *longDoc) sharedRaw(r []byte) ([]byte, bool) {
	i := bytes.Index(ll.small, r)
	if i < 0 {
		return nil, false
	}
	start, end := ll.rawOffset(i), ll.rawOffset(i+len(r))
	if start < 0 || end < start {
		return nil, false
	}
	part := ll.raw[start:end:end] // full: an append to it copies
	if ll.scan != nil && len(part) > 0 {
		// Its long strings are those of raw that lie in it.
		var longs []span
		for _, l := range ll.longs {
			if start <= l.start && l.end <= end {
				longs = append(longs, span{l.start - start, l.end - start})
			}
		}
		ll.scan.parts = append(ll.scan.parts, lineScan{raw: part, longs: longs, known: true})
	}
	return part, true
}

const (
	// longLine is the shortest line the fast path looks at (Claude's
	// text deltas are about 4 KiB each, and a ladder line streams as
	// 16,384 of them).
	longLine = 3 << 10
	// longString is the shortest string value it takes out.
	longString = 1 << 10
)

// span is a string token in the line (its quotes included).
type span struct{ start, end int }

// longNonce makes the stand-ins of one process unlike any text a line
// could hold.
var longNonce = func() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// longMarker is the JSON body standing in for the k-th long string; it
// decodes to "\x00agentconform-long-<nonce>-<k>\x00".
func longMarker(k int) string {
	return `\u0000agentconform-long-` + longNonce + "-" + strconv.Itoa(k) + `\u0000`
}

// longIndex says which long string a decoded stand-in is (-1: none).
func longIndex(s string) int {
	prefix := "\x00agentconform-long-" + longNonce + "-"
	if len(s) < len(prefix)+2 || s[:len(prefix)] != prefix || s[len(s)-1] != 0 {
		return -1
	}
	k, err := strconv.Atoi(s[len(prefix) : len(s)-1])
	if err != nil {
		return -1
	}
	return k
}

// longStrings finds the long plain string values of a line that is one
// valid JSON value (ok false otherwise, or when unsure).
func longStrings(b []byte) (out []span, ok bool) {
	i := skipWS(b, 0)
	end := longValue(b, i, 0, &out)
	if end < 0 || skipWS(b, end) != len(b) {
		return nil, false
	}
	return out, true
}

// longValue returns the end of the value at b[i] (as jsonvalid.End),
// noting the long plain strings among it and its members' values.
func longValue(b []byte, i, depth int, out *[]span) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end := jsonvalid.End(b, i, depth)
		if end >= 0 && end-i-2 >= longString {
			*out = append(*out, span{i, end})
		}
		return end
	case '{', '[':
		if depth+1 > jsonvalid.MaxDepth {
			return -1
		}
		obj := b[i] == '{'
		closer := byte(']')
		if obj {
			closer = '}'
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1
		}
		for {
			if obj {
				if i >= len(b) || b[i] != '"' {
					return -1
				}
				if i = jsonvalid.End(b, i, depth+1); i < 0 {
					return -1
				}
				if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
					return -1
				}
				i = skipWS(b, i+1)
			}
			if i = longValue(b, i, depth+1, out); i < 0 {
				return -1
			}
			if i = skipWS(b, i); i >= len(b) {
				return -1
			}
			if b[i] == closer {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = skipWS(b, i+1)
		}
	}
	return jsonvalid.End(b, i, depth)
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	plainTargets        sync.Map // reflect.Type -> bool
)

// plainTarget reports whether putBack finds every place a stand-in can go
// in a value of type t (a pointer to the line struct): strings and
// json.RawMessage in structs, pointers, slices and arrays, and no map, no
// interface, no type that decodes itself unless it is a number (which
// rejects a string, and the line is then decoded as it is).
func plainTarget(t reflect.Type) bool {
	if v, ok := plainTargets.Load(t); ok {
		return v.(bool)
	}
	ok := plainType(t, map[reflect.Type]bool{})
	plainTargets.Store(t, ok)
	return ok
}

func plainType(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] || t == rawMessageType {
		return true
	}
	seen[t] = true
	if t.Kind() == reflect.Pointer {
		return plainType(t.Elem(), seen) // the element says how it decodes
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Bool:
		return true
	}
	if t.Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.String:
		return true
	case reflect.Slice, reflect.Array:
		return plainType(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && !plainType(f.Type, seen) {
				return false
			}
		}
		return true
	}
	return false
}

// putBack replaces the stand-ins in v by the long strings of the line
// (copies, or parts of it when shared).
func putBack(v reflect.Value, ll *longDoc) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			putBack(v.Elem(), ll)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				putBack(f, ll)
			}
		}
	case reflect.Slice:
		if v.Type() == rawMessageType {
			if r, ok := ll.putBackRaw(v.Bytes()); ok {
				v.SetBytes(r)
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			putBack(v.Index(i), ll)
		}
	case reflect.Array:
		for i := range v.Len() {
			putBack(v.Index(i), ll)
		}
	case reflect.String:
		if k := longIndex(v.String()); k >= 0 && k < len(ll.longs) {
			tok := ll.raw[ll.longs[k].start:ll.longs[k].end]
			body := tok[1 : len(tok)-1]
			switch {
			case bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body):
				s, _ := unquote(tok) // a valid token (jsonvalid): it decodes
				v.SetString(s)
			case ll.shared:
				v.SetString(unsafe.String(unsafe.SliceData(body), len(body)))
			default:
				v.SetString(string(body))
			}
			if ll.shared && ll.scan != nil {
				ll.scan.strs = append(ll.scan.strs, decodedString{v.String(), tok[:len(tok):len(tok)]})
			}
		}
	}
}

// putBackRaw is the raw value r with the long strings' tokens in place of
// its stand-ins: the part of the line it came from when shared, else a
// copy; ok is false when it holds none.
func (ll *longDoc) putBackRaw(r []byte) ([]byte, bool) {
	if !bytes.Contains(r, []byte(`"\u0000agentconform-long-`+longNonce+"-")) {
		return nil, false
	}
	if ll.shared {
		if out, ok := ll.sharedRaw(r); ok {
			return out, true
		}
	}
	return putBackRaw(r, ll.raw, ll.longs)
}

// putBackRaw rebuilds a raw value that holds stand-ins with the long
// strings' tokens in their place; ok is false when it holds none.
func putBackRaw(r, raw []byte, longs []span) ([]byte, bool) {
	quoted := []byte(`"\u0000agentconform-long-` + longNonce + "-")
	if !bytes.Contains(r, quoted) {
		return nil, false
	}
	var out []byte
	for {
		i := bytes.Index(r, quoted)
		if i < 0 {
			return append(out, r...), true
		}
		j := i + len(quoted)
		k := 0
		for j < len(r) && '0' <= r[j] && r[j] <= '9' {
			k = k*10 + int(r[j]-'0')
			j++
		}
		tail := `\u0000"`
		if k >= len(longs) || !bytes.HasPrefix(r[j:], []byte(tail)) {
			// Not a stand-in after all: keep it as it is.
			out = append(out, r[:j]...)
			r = r[j:]
			continue
		}
		if out == nil {
			n := len(r)
			for _, l := range longs {
				n += l.end - l.start
			}
			out = make([]byte, 0, n)
		}
		l := longs[k]
		out = append(out, r[:i]...)
		out = append(out, raw[l.start:l.end]...)
		r = r[j+len(tail):]
	}
}
