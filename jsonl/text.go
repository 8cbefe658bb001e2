package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Helpers that render bytes and values for finding messages. They run only
// when a finding is made, never on the hot path.

const (
	maxQuote = 60 // bytes of a line quoted in a not-json message
	maxValue = 60 // bytes of a rendered value in a duplicate-key message
)

// describe names the byte at data[i] for an "unexpected ..." message: the
// quoted character when it is a valid one, "byte 0xNN" otherwise, "end of
// line" past the end.
func describe(data []byte, i int) string {
	if i >= len(data) {
		return "end of line"
	}
	r, size := utf8.DecodeRune(data[i:])
	if (r == utf8.RuneError && size <= 1) || r < 0x20 || r == 0x7f {
		return "byte " + hexByte(data[i])
	}
	return strconv.QuoteRune(r)
}

// hexByte renders c as "0xNN".
func hexByte(c byte) string { return "0x" + hexDigits(c) }

// hexDigits renders c as two lower-case hex digits.
func hexDigits(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// clip shortens s to about max bytes, on a rune boundary, marking the cut.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// quoteStart quotes the beginning of a line as a Go string literal (control
// bytes and invalid UTF-8 escaped), truncated to maxQuote bytes.
func quoteStart(b []byte) string {
	if len(b) <= maxQuote {
		return strconv.Quote(string(b))
	}
	cut := maxQuote
	for cut > maxQuote-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strconv.Quote(string(b[:cut])) + "..."
}

// renderValue renders a decoded value as compact JSON, truncated, for a
// message.
func renderValue(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return clip(fmt.Sprint(v), maxValue)
	}
	return clip(string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), maxValue)
}
