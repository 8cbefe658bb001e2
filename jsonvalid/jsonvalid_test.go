package jsonvalid

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var seeds = []string{
	`{"a":[1,-0,0.5,1e5,-1E+2,2.5e-3,true,false,null,"x\"\\\/\b\f\n\r\t\u00e9"]}`,
	`{ "a" : [ 1 , 2 ] }`, "\t[]\n", `""`, `"\u12g4"`, `"\x"`, `01`, `-`, `1.`, `1e`, `tru`, `[1,]`,
	`{"a":1,}`, `{"a" "b"}`, `{"a":1} x`, `{"a":1}{}`, "\"a\tb\"", "\"\xff\xfe\"", `{}`, `[]`, ``, ` `,
	"\xef\xbb\xbf{}", `{"a":"<&>"}`, "\"\u2028\"", `[[[[]]]]`, `{"a":{"b":{"c":[]}}}`, `nul`, `-01`, `1E400`,
}

func init() {
	for _, n := range []int{9999, 10000, 10001} {
		seeds = append(seeds, strings.Repeat("[", n)+strings.Repeat("]", n), strings.Repeat(`{"a":`, n)+"1"+strings.Repeat("}", n))
	}
}

// FuzzCompact holds Compact to json.Valid and json.Compact: true exactly
// when the bytes are valid and compacting leaves them as they are.
func FuzzCompact(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var buf bytes.Buffer
		want := json.Valid(b) && json.Compact(&buf, b) == nil && bytes.Equal(buf.Bytes(), b)
		if got := Compact(b); got != want {
			t.Fatalf("Compact(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

// FuzzEnd holds End to json.Valid: a value starting at 0 that ends where
// only whitespace follows is exactly a valid document.
func FuzzEnd(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		trimmed := bytes.TrimLeft(b, " \t\r\n")
		end := End(trimmed, 0, 0)
		got := end >= 0 && len(bytes.TrimLeft(trimmed[end:], " \t\r\n")) == 0
		if want := json.Valid(b); got != want {
			t.Fatalf("End(%q) = %d (valid %v), json.Valid says %v", b, end, got, want)
		}
	})
}

func BenchmarkCompactLongString(b *testing.B) {
	line, _ := json.Marshal(map[string]string{"output": strings.Repeat("some tool output, line after line\n", 30000)})
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if !Compact(line) {
			b.Fatal("not compact")
		}
	}
}

func BenchmarkEncodingJSONCompactLongString(b *testing.B) {
	line, _ := json.Marshal(map[string]string{"output": strings.Repeat("some tool output, line after line\n", 30000)})
	b.SetBytes(int64(len(line)))
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if json.Compact(&buf, line) != nil {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkEndPlainString measures End on a long string of plain ASCII,
// the body of a ladder line (where the translators spend their scans).
func BenchmarkEndPlainString(b *testing.B) {
	line, _ := json.Marshal(strings.Repeat("agentconform ladder padding: lorem ipsum dolor sit amet. ", 1<<20/56))
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if End(line, 0, 0) != len(line) {
			b.Fatal("invalid")
		}
	}
}
