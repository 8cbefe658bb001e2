package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// reference is encoding/json's encoding with HTML escaping off.
func reference(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestLikeEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "a", `"`, `\`, "plain ASCII text of some length, more than eight", "tab\there\nnew\r\x00\x01\x1f\x7f",
		"<html> & friends", "héllo wörld ✓ 漢字 😀", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", strings.Repeat("x", 17) + `"` + strings.Repeat("y", 9) + "\\",
		"\xe2\x80", "12345678\x80", "1234567\"", "\b\f"} {
		if got, want := Marshal(s), reference(s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzLikeEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff", "héllo\u2028", strings.Repeat("ab\x01", 9)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Marshal(s), reference(s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}

// BenchmarkLong compares Marshal with encoding/json on a 64 MiB ASCII text.
func BenchmarkLong(b *testing.B) {
	s := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit. ", (64<<20)/57)
	b.Run("jsonstr", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			Marshal(s)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			reference(s)
		}
	})
}

func BenchmarkLongReused(b *testing.B) {
	s := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit. ", (64<<20)/57)
	buf := make([]byte, 0, len(s)+len(s)/32+2)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = Append(buf[:0], s)
	}
}

// BenchmarkLongEscaped is BenchmarkLongReused on text escaped line by
// line (a tool's output: a newline every 34 bytes), where the runs of
// plain bytes are short.
func BenchmarkLongEscaped(b *testing.B) {
	s := strings.Repeat("some tool output, line after line\n", (16<<20)/34)
	buf := make([]byte, 0, len(s)+len(s)/32+2)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = Append(buf[:0], s)
	}
}
