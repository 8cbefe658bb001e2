package reference

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/agentconform/agentconform/jsonstr"

	"github.com/agentconform/agentconform/jsonvalid"
)

// jsonInt decodes any JSON number (or null) into an int64, truncating a
// fraction, so that a CLI writing 12.0 or 1e3 for a count does not make a
// whole line undecodable.
type jsonInt int64

// UnmarshalJSON accepts a number or null.
func (n *jsonInt) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		*n = 0
		return nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = jsonInt(i)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("not a number: %.40s", s)
	}
	*n = jsonInt(f)
	return nil
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// compact returns raw without insignificant whitespace (raw itself if it
// is not valid JSON, which the decoder that produced it already ruled out).
func compact(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	if jsonvalid.Compact(raw) { // what json.Compact would give back, found five times faster
		return raw
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

// jsonString encodes s as a JSON string value.
func jsonString(s string) json.RawMessage {
	return jsonstr.Marshal(s) // as marshalNoEscape would, in one pass
}

// object builds a JSON object from alternating keys and raw values,
// skipping null values, in the order given.
func object(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		var v json.RawMessage
		switch x := kv[i+1].(type) {
		case json.RawMessage:
			v = x
		case string:
			v = jsonString(x)
		default:
			enc, err := marshalNoEscape(x)
			if err != nil {
				continue
			}
			v = enc
		}
		if isNull(v) {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(k))
		b.WriteByte(':')
		b.Write(compact(v))
		n++
	}
	b.WriteByte('}')
	return b.Bytes()
}

// textOf renders a tool result for a human: a JSON string as itself, an
// array of content blocks as their text joined, anything else as JSON.
func textOf(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	if s, ok := jsonStringValue(raw); ok {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	return string(compact(raw))
}

// jsonStringValue returns the value of raw when it is one JSON string
// (whitespace around it allowed), exactly as json.Unmarshal into a string
// gives it (FuzzJSONStringValue holds the two together), in one pass
// after a fast check instead of encoding/json's two: tool results are
// such strings, often hundreds of KiB, and the shim decodes every one.
func jsonStringValue(raw []byte) (string, bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '"' {
		return "", false
	}
	end := jsonvalid.End(raw, i, 0)
	if end < 0 || skipWS(raw, end) != len(raw) {
		return "", false
	}
	return unquote(raw[i:end])
}

// unquote decodes a valid JSON string token the way encoding/json does:
// escapes resolved, a UTF-16 surrogate pair joined, a lone surrogate and
// every byte of invalid UTF-8 replaced by U+FFFD.
func unquote(tok []byte) (string, bool) {
	body := tok[1 : len(tok)-1]
	if len(body) >= 4<<10 && bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) && !hasControl(body) {
		// A long plain string (a tool result of many KiB) is itself.
		return string(body), true
	}
	i := 0
	for i < len(body) {
		c := body[i]
		if c == '\\' || c < ' ' || c == '"' {
			break
		}
		if c < utf8.RuneSelf {
			i = plainASCII(body, i+1)
			continue
		}
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	if i == len(body) {
		return string(body), true
	}
	b := make([]byte, i, len(body)+2*utf8.UTFMax)
	copy(b, body[:i])
	for i < len(body) {
		switch c := body[i]; {
		case c == '\\':
			i++
			if i >= len(body) {
				return "", false
			}
			switch body[i] {
			case '"', '\\', '/', '\'':
				b = append(b, body[i])
				i++
			case 'b':
				b = append(b, '\b')
				i++
			case 'f':
				b = append(b, '\f')
				i++
			case 'n':
				b = append(b, '\n')
				i++
			case 'r':
				b = append(b, '\r')
				i++
			case 't':
				b = append(b, '\t')
				i++
			case 'u':
				i--
				rr := hex4(body[i:])
				if rr < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(rr) {
					if rr1 := hex4(body[i:]); rr1 >= 0 {
						if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
							i += 6
							b = utf8.AppendRune(b, dec)
							break
						}
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
			default:
				return "", false
			}
		case c == '"' || c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			// A run of plain ASCII, appended a MiB at most at a time (a
			// long copy cannot be preempted, and the collector waits).
			j := plainASCII(body[:min(len(body), i+1<<20)], i+1)
			b = append(b, body[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(body[i:])
			i += size
			b = utf8.AppendRune(b, r)
		}
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), true // b is this call's own
}

// plainASCII returns the index of the first byte at or after i that is
// not plain ASCII (a quote, a backslash, a control byte, or 0x80 and up),
// or len(b); eight bytes at a time, and thirty-two once a run is 64 bytes
// long.
func plainASCII(b []byte, i int) int {
	for n := 0; i+8 <= len(b) && notPlain(binary.LittleEndian.Uint64(b[i:])) == 0; {
		i += 8
		if n++; n == 8 {
			for i+32 <= len(b) {
				w := b[i : i+32 : i+32]
				if notPlain(binary.LittleEndian.Uint64(w[0:8]))|notPlain(binary.LittleEndian.Uint64(w[8:16]))|
					notPlain(binary.LittleEndian.Uint64(w[16:24]))|notPlain(binary.LittleEndian.Uint64(w[24:32])) != 0 {
					break
				}
				i += 32
			}
		}
	}
	for i < len(b) {
		if c := b[i]; c < ' ' || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return i
		}
		i++
	}
	return i
}

// notPlain is nonzero exactly when a byte of w is not plain ASCII (the
// classic has-zero-byte and has-less-than tests: a byte below 0x20, or a
// zero byte of w^'"' or w^'\\', borrows into its high bit).
func notPlain(w uint64) uint64 {
	const ones = 0x0101010101010101
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	return (w | (w-ones*0x20)&^w | (quote-ones)&^quote | (backslash-ones)&^backslash) & 0x8080808080808080
}

// hasControl reports whether b holds a byte below 0x20 or a quote.
func hasControl(b []byte) bool {
	for _, c := range b {
		if c < ' ' || c == '"' {
			return true
		}
	}
	return false
}

// hex4 reads the \uXXXX escape at the start of s, or returns -1.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// rawStrings renders a JSON array of error entries as strings: strings as
// themselves, anything else as compact JSON.
func rawStrings(raws []json.RawMessage) []string {
	var out []string
	for _, r := range raws {
		var s string
		if json.Unmarshal(r, &s) == nil {
			out = append(out, s)
			continue
		}
		if !isNull(r) {
			out = append(out, string(compact(r)))
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// marshalNoEscape is json.Marshal without the HTML escaping of <, > and &,
// which the CLIs do not do either.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
