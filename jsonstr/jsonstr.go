// Package jsonstr encodes a string as a JSON string exactly as
// encoding/json does with HTML escaping off (json.Encoder.SetEscapeHTML
// false): the same escapes, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped. It exists for long strings: encoding/json looks at every byte
// through a table and grows its buffer by doubling, where Append skips
// runs of plain ASCII eight bytes at a time into a buffer sized once, so
// that a 64 MiB tool output is encoded in one pass and one allocation.
package jsonstr

import (
	"encoding/binary"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// Marshal returns s encoded as a JSON string, in a buffer of about its
// size.
func Marshal(s string) []byte {
	return Append(make([]byte, 0, len(s)+len(s)/32+2), s)
}

// Append appends s encoded as a JSON string to dst.
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight plain bytes at a time: none below 0x20, none of
		// '"' and '\\', none at 0x80 or above; thirty-two at a time once
		// a run is 64 bytes long (a run that short, in text escaped line
		// by line, is not slowed by tests that would fail).
		for n := 0; i+8 <= len(s) && plain8(binary.LittleEndian.Uint64([]byte(s[i:i+8]))); {
			i += 8
			if n++; n == 8 {
				i = plainRun(s, i)
			}
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plain8 reports whether none of the eight bytes of x needs a look:
// every byte is at least 0x20, below 0x80, and neither '"' nor '\\'.
func plain8(x uint64) bool { return needsLook(x) == 0 }

// needsLook is plain8 before it is reduced to a bool, so that the tests
// of several words take one branch.
func needsLook(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	// A byte below 0x20, and a zero byte of quote or backslash, borrow
	// into their high bits (bytes of 0x80 and up count anyway).
	return (x | (x-ones*0x20)&^x | (quote-ones)&^quote | (backslash-ones)&^backslash) & highs
}

// plainRun skips s[i:] thirty-two bytes at a time while none of them
// needs a look, and returns where it stopped.
func plainRun(s string, i int) int {
	for len(s)-i >= 32 {
		w := []byte(s[i : i+32])
		if needsLook(binary.LittleEndian.Uint64(w[0:8]))|needsLook(binary.LittleEndian.Uint64(w[8:16]))|
			needsLook(binary.LittleEndian.Uint64(w[16:24]))|needsLook(binary.LittleEndian.Uint64(w[24:32])) != 0 {
			break
		}
		i += 32
	}
	return i
}
