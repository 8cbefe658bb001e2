package jsonl

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/agentconform/agentconform/finding"
)

// cachedKey is one entry of the key cache.
type cachedKey struct {
	s  string
	fp shortPrint
}

// cachedStr is one entry of the short-string value cache: the string and
// the interface value boxing it, so that a hit costs no allocation at all.
type cachedStr struct {
	s  string
	v  any
	fp shortPrint
}

// key parses an object key and interns it.
func (d *decoder) key() (string, bool) {
	b, ok := d.stringBytes()
	if !ok {
		return "", false
	}
	if d.hit {
		return d.known[d.hitIdx], true
	}
	n := len(b)
	if n == 0 || n > maxInternLen {
		return string(b), true
	}
	fp := fingerprint(b)
	e := &d.keys[fp.hash()&(keyCacheSize-1)]
	if e.fp == fp && (n <= 16 || e.s == string(b)) {
		return e.s, true
	}
	s := string(b)
	e.s, e.fp = s, fp
	return s, true
}

// stringValue parses a string value. Short strings are interned together
// with their boxed interface value: repeated event types, tool names and
// ids then cost no allocation.
func (d *decoder) stringValue() any {
	b, ok := d.stringBytes()
	if !ok {
		return nil
	}
	if d.hit {
		return d.known[d.hitIdx]
	}
	n := len(b)
	if n == 0 {
		return ""
	}
	if n > maxInternLen {
		if d.fresh {
			// stringSlow decoded it into a buffer of its own.
			return unsafe.String(unsafe.SliceData(b), n)
		}
		if d.shareMin > 0 && n >= d.shareMin && within(d.data, b) {
			// A string without escapes is its bytes in the line.
			return unsafe.String(unsafe.SliceData(b), n)
		}
		return string(b)
	}
	fp := fingerprint(b)
	e := &d.strs[fp.hash()&(strCacheSize-1)]
	if e.fp == fp && e.v != nil && (n <= 16 || e.s == string(b)) {
		return e.v
	}
	s := string(b)
	var v any = s
	e.s, e.v, e.fp = s, v, fp
	return v
}

// within reports whether b (not empty) lies inside data, rather than in
// the decoder's scratch buffer.
func within(data, b []byte) bool {
	if len(data) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(data))
}

// shortPrint is a fingerprint of a short string: its length and two words
// that together hold every byte of a string of up to 16 bytes, so that
// equal prints mean equal strings without a byte comparison. Longer strings
// share prints only when their first and last 8 bytes match, and are then
// compared in full.
type shortPrint struct {
	n      int
	w0, w1 uint64
}

// fingerprint computes the shortPrint of b, which is not empty.
func fingerprint(b []byte) shortPrint {
	n := len(b)
	switch {
	case n >= 8:
		return shortPrint{n, binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])}
	case n >= 4:
		return shortPrint{n, uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[n-4:]))}
	}
	return shortPrint{n, uint64(b[0]) | uint64(b[n/2])<<8 | uint64(b[n-1])<<16, 0}
}

// hash mixes a shortPrint into a cache index; collisions only cost a miss.
func (p shortPrint) hash() uint {
	h := (p.w0*0x9e3779b97f4a7c15 ^ p.w1*0xbf58476d1ce4e5b9 ^ uint64(p.n)) * 0x94d049bb133111eb
	return uint(h >> 40)
}

// SWAR constants: one byte repeated eight times.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special reports, in the high bit of each byte, which bytes of the eight
// in x end a run of plain string content: '"', '\\' or a control byte
// below 0x20. There are no false positives unless an earlier byte is a
// true positive, so a zero result means all eight bytes are plain.
func special(x uint64) uint64 {
	q := x ^ (lsb * '"')
	s := x ^ (lsb * '\\')
	return (((q - lsb) &^ q) | ((s - lsb) &^ s) | ((x - lsb*0x20) &^ x)) & msb
}

// plainEnd returns the index of the first byte at or after i that is '"',
// '\\' or a control byte, or len(data). The first few words are tested in
// place (keys and short values end there); a longer run is searched in
// windows that double in size (plainLong), so that a call costs about the
// length of the run it finds, however far the line goes on.
func plainEnd(data []byte, i int) int {
	for k := 0; k < shortWords && i+8 <= len(data); k++ {
		if special(binary.LittleEndian.Uint64(data[i:])) != 0 {
			return plainTail(data, i)
		}
		i += 8
	}
	if i+8 > len(data) {
		return plainTail(data, i)
	}
	return plainLong(data, i)
}

// shortWords is how many 8-byte words plainEnd tests in place before it
// searches in windows.
const shortWords = 4

// plainTail finds the end of the run byte by byte.
func plainTail(data []byte, i int) int {
	for i < len(data) {
		if c := data[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
		i++
	}
	return i
}

// Window sizes for plainLong.
const (
	firstPlainWindow = 256
	maxPlainWindow   = 64 << 10
)

// plainLong is plainEnd for a run that goes on past its first words: in
// each window, the vectorized byte searches find the first quote and the
// first backslash, and a word-at-a-time test looks for a control byte
// before them.
func plainLong(data []byte, i int) int {
	w := firstPlainWindow
	for i < len(data) {
		seg := data[i:min(len(data), i+w)]
		end := len(seg)
		if q := bytes.IndexByte(seg, '"'); q >= 0 {
			end = q
		}
		if b := bytes.IndexByte(seg[:end], '\\'); b >= 0 {
			end = b
		}
		if c := controlIndex(seg[:end]); c >= 0 {
			return i + c
		}
		if end < len(seg) {
			return i + end
		}
		i += len(seg)
		w = min(2*w, maxPlainWindow)
	}
	return len(data)
}

// controlIndex returns the index of the first byte of b below 0x20, or -1.
// A word holds one when ((x - 0x20 in every byte) &^ x) has a high bit set:
// a byte below 0x20 (and only such a byte, or one after it) borrows into
// its high bit, and bytes of 0x80 and above are masked out by &^ x.
func controlIndex(b []byte) int {
	const below = lsb * 0x20
	i := 0
	for ; i+32 <= len(b); i += 32 {
		c := b[i : i+32 : i+32]
		w0 := binary.LittleEndian.Uint64(c[0:8])
		w1 := binary.LittleEndian.Uint64(c[8:16])
		w2 := binary.LittleEndian.Uint64(c[16:24])
		w3 := binary.LittleEndian.Uint64(c[24:32])
		if ((w0-below)&^w0|(w1-below)&^w1|(w2-below)&^w2|(w3-below)&^w3)&msb != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if w := binary.LittleEndian.Uint64(b[i:]); (w-below)&^w&msb != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return -1
}

// stringBytes parses the string at d.pos (its opening quote) and returns
// its decoded content, which aliases d.data when the string has no escapes
// and d.sbuf otherwise. It reports false after a syntax error.
func (d *decoder) stringBytes() ([]byte, bool) {
	d.fresh, d.hit = false, false
	start := d.pos + 1
	i := start
	if !d.checkUTF8 {
		i = plainEnd(d.data, start)
		if i < len(d.data) && d.data[i] == '"' {
			d.pos = i + 1
			return d.data[start:i], true
		}
	}
	return d.stringSlow(start, i)
}

// stringSlow decodes a string with escapes, raw control bytes, invalid
// UTF-8 or a missing closing quote. Content from start to i is known to be
// plain. Invalid UTF-8 bytes and lone surrogates become U+FFFD, as in
// encoding/json.
func (d *decoder) stringSlow(start, i int) ([]byte, bool) {
	data := d.data
	var buf []byte
	if end := closingQuote(data, i); end-start > longSlow {
		if end < len(data) {
			if k, ok := d.findKnown(data[start:end]); ok {
				// The caller holds this string already (ParseOptions.Known).
				d.pos = end + 1
				d.hit, d.hitIdx = true, k
				return nil, true
			}
		}
		// A long string is decoded into a buffer of its own, sized for it
		// (the decoded text is never longer, unless invalid UTF-8 grows
		// it), which stringValue keeps as the string: one copy of a
		// 64 MiB string instead of a growing scratch buffer and a copy,
		// and no scratch buffer that size kept in the pool.
		buf = appendPieces(make([]byte, 0, end-start), data[start:i])
		d.fresh = true
	} else {
		buf = append(d.sbuf[:0], data[start:i]...)
		defer func() { d.sbuf = buf[:0] }()
	}
	lone := false
	for {
		if i >= len(data) {
			d.fail(i, "line ends inside a string (truncated?)", `closing '"'`)
			return nil, false
		}
		c := data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return buf, true
		case c == '\\':
			if i+1 >= len(data) {
				d.fail(i+1, "line ends inside an escape sequence (truncated?)", expectEscape)
				return nil, false
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, bad := hex4(data, i+2)
				if bad >= 0 {
					d.unexpected(bad, `in a \u escape`, "four hex digits")
					return nil, false
				}
				esc := i
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, bad := hex4(data, i+2); r < 0xDC00 && bad < 0 && i+1 < len(data) &&
						data[i] == '\\' && data[i+1] == 'u' && r2 >= 0xDC00 && r2 <= 0xDFFF {
						r = utf16.DecodeRune(r, r2)
						i += 6
					} else {
						if !lone {
							lone = true
							d.loneSurrogate(esc)
						}
						r = utf8.RuneError
					}
				}
				buf = utf8.AppendRune(buf, r)
				continue
			default:
				d.unexpected(i+1, "after '\\' in a string", expectEscape)
				return nil, false
			}
			i += 2
		case c < 0x20:
			d.fail(i, "raw control byte "+hexByte(c)+" inside a string; it must be escaped", `an escape such as \u00`+hexDigits(c))
			return nil, false
		case c >= 0x80 && d.checkUTF8:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				buf = utf8.AppendRune(buf, utf8.RuneError)
			} else {
				buf = append(buf, data[i:i+size]...)
			}
			i += size
		default:
			if d.checkUTF8 {
				buf = append(buf, c)
				i++
			} else {
				j := plainEnd(data, i+1)
				buf = appendPieces(buf, data[i:j])
				i = j
			}
		}
	}
}

// findKnown returns the index of the known string that the string body
// raw (between its quotes) decodes to, without a finding.
func (d *decoder) findKnown(raw []byte) (int, bool) {
	if d.checkUTF8 {
		return 0, false
	}
	for k, s := range d.known {
		// An escape is 2 to 12 bytes for 1 to 4 decoded: the decoded
		// string is at most as long as its body, and over a sixth of it.
		if len(s) <= len(raw) && 6*len(s) >= len(raw) && decodesTo(raw, s) {
			return k, true
		}
	}
	return 0, false
}

// decodesTo reports whether the string body raw (valid UTF-8, between its
// quotes) decodes to exactly s, as stringSlow decodes it, and without a
// finding (a lone surrogate, a bad escape, a raw control byte or a stray
// quote make it false: stringSlow then decodes and reports them).
func decodesTo(raw []byte, s string) bool {
	var enc [utf8.UTFMax]byte
	i, p := 0, 0 // raw consumed, s matched
	for i < len(raw) {
		if j := plainEnd(raw, i); j > i {
			n := j - i
			if len(s)-p < n || !equalPieces(raw[i:j], s[p:p+n]) {
				return false
			}
			i, p = j, p+n
			continue
		}
		if raw[i] != '\\' || i+1 >= len(raw) {
			return false
		}
		var c byte
		switch e := raw[i+1]; e {
		case '"', '\\', '/':
			c = e
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			r, bad := hex4(raw, i+2)
			if bad >= 0 {
				return false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, bad := hex4(raw, i+2)
				if r >= 0xDC00 || bad >= 0 || i+1 >= len(raw) || raw[i] != '\\' || raw[i+1] != 'u' || r2 < 0xDC00 || r2 > 0xDFFF {
					return false
				}
				r = utf16.DecodeRune(r, r2)
				i += 6
			}
			n := utf8.EncodeRune(enc[:], r)
			if len(s)-p < n || string(enc[:n]) != s[p:p+n] {
				return false
			}
			p += n
			continue
		default:
			return false
		}
		if p >= len(s) || s[p] != c {
			return false
		}
		i, p = i+2, p+1
	}
	return p == len(s)
}

// longSlow is the length from which a string with escapes is decoded
// into a buffer of its own.
const longSlow = 64 << 10

// closingQuote returns the index of the quote that closes the string
// whose body reaches i, or len(data) when none does.
func closingQuote(data []byte, i int) int {
	for i < len(data) {
		w := data[i:min(len(data), i+piece)]
		q := bytes.IndexByte(w, '"')
		if q < 0 {
			i += len(w)
			continue
		}
		i += q
		bs := 0
		for k := i - 1; k >= 0 && data[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return i
		}
		i++
	}
	return len(data)
}

// piece is the most that one memmove, comparison or byte search of a
// long string covers at a time: a goroutine inside one cannot be
// preempted, and a collection that waits for it makes the runtime signal
// it over and over.
const piece = 1 << 20

// appendPieces appends b to buf a piece at a time.
func appendPieces(buf, b []byte) []byte {
	for len(b) > piece {
		buf = append(buf, b[:piece]...)
		b = b[piece:]
	}
	return append(buf, b...)
}

// equalPieces reports whether b and s (of the same length) are equal,
// comparing a piece at a time.
func equalPieces(b []byte, s string) bool {
	for len(b) > piece {
		if string(b[:piece]) != s[:piece] {
			return false
		}
		b, s = b[piece:], s[piece:]
	}
	return string(b) == s
}

// hex4 decodes the four hex digits at data[i:]. It returns the column of
// the first bad digit (or of the end of the line), or -1 when all four are
// good.
func hex4(data []byte, i int) (rune, int) {
	var r rune
	for k := i; k < i+4; k++ {
		if k >= len(data) {
			return 0, k
		}
		c := data[k]
		switch {
		case c-'0' <= 9:
			r = r<<4 | rune(c-'0')
		case (c|0x20)-'a' <= 5:
			r = r<<4 | rune((c|0x20)-'a'+10)
		default:
			return 0, k
		}
	}
	return r, -1
}

// loneSurrogate records a lone-surrogate finding for the escape at col.
func (d *decoder) loneSurrogate(col int) {
	if d.capped(loneSlot) {
		return
	}
	esc := string(d.data[col : col+6])
	d.finds = append(d.finds, pending{f: finding.Finding{
		Rule:   RuleLoneSurrogate,
		Column: col,
		Message: "string contains the escaped lone UTF-16 surrogate " + esc +
			"; it is not Unicode, and decoders disagree (Go and Parse read U+FFFD, JavaScript keeps it)",
		Expected: "a surrogate pair or a plain character",
		Actual:   esc,
	}})
}
