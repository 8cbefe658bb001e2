package linesplit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// split feeds input to a Splitter in pieces of size n and returns the
// lines, a cut last line marked with a "PARTIAL:" prefix.
func split(input string, n int) []string {
	var s Splitter
	var out []string
	for len(input) > 0 {
		k := min(n, len(input))
		s.Feed([]byte(input[:k]), func(l []byte) { out = append(out, string(l)) })
		input = input[k:]
	}
	s.Flush(func(l []byte, partial bool) { out = append(out, "PARTIAL:"+string(l)) })
	return out
}

func TestSplitter(t *testing.T) {
	cases := []struct {
		name, input string
		want        []string
	}{
		{"lines", "{\"a\":1}\n{\"b\":2}\n", []string{`{"a":1}`, `{"b":2}`}},
		{"crlf and blank lines", "{\"a\":1}\r\n\r\n  \n{\"b\":2}\r\n", []string{`{"a":1}`, `{"b":2}`}},
		{"no final newline", "{\"a\":1}\n{\"b\":{\"c\":[1,{}]}}", []string{`{"a":1}`, `{"b":{"c":[1,{}]}}`}},
		{"braces and quotes in strings", "{\"s\":\"}{\\\"}\\\\\"}\n", []string{`{"s":"}{\"}\\"}`}},
		{"two objects on one line", "{\"a\":1}{\"b\":2}\n", []string{`{"a":1}`, `{"b":2}`}},
		{"banner", "Loading...\n{\"a\":1}\n", []string{"Loading...", `{"a":1}`}},
		{"banner without newline", "warn: x", []string{"PARTIAL:warn: x"}},
		{"cut mid-line", "{\"a\":1}\n{\"b\":\"xy", []string{`{"a":1}`, `PARTIAL:{"b":"xy`}},
		{"leading space", "  {\"a\":1}\n", []string{`  {"a":1}`}},
	}
	for _, tc := range cases {
		for _, n := range []int{1, 2, 3, 7, 1 << 20} {
			if diff := cmp.Diff(tc.want, split(tc.input, n)); diff != "" {
				t.Errorf("%s, reads of %d bytes (-want +got):\n%s", tc.name, n, diff)
			}
		}
	}
}

func TestSplitterHugeLine(t *testing.T) {
	text := strings.Repeat("x{}\\\"", 4<<20) // 20 MiB of awkward bytes, escaped below
	line := `{"type":"text","content":"` + strings.ReplaceAll(strings.ReplaceAll(text, `\`, `\\`), `"`, `\"`) + `"}`
	got := split(line+"\n"+`{"b":1}`+"\n", 64<<10)
	if len(got) != 2 || got[0] != line || got[1] != `{"b":1}` {
		t.Fatalf("got %d lines, first %d bytes (want %d)", len(got), len(got[0]), len(line))
	}
}

// FuzzSplitter checks that the lines do not depend on how stdout is
// cut into reads: the whole input at once, and reads whose sizes the
// fuzzer picks, give the lines that reads of one byte give.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("{\"s\":\"}{\\\"}\\\\\"}\n{\"a\":1}{\"b\":2}"), []byte{3, 1, 7})
	f.Add([]byte("Loading...\n{\"a\":\"x\\\\\\\"\"}\r\n\n {\"b\":[{\"c\":\"\\\\\"}]}"), []byte{1, 2})
	f.Add([]byte(`{"a":"\\\\\\\\\\\\\\"}"}`), []byte{5})
	f.Fuzz(func(t *testing.T, input, sizes []byte) {
		want := split(string(input), 1)
		if diff := cmp.Diff(want, split(string(input), len(input)+1)); diff != "" {
			t.Fatalf("whole input versus one byte at a time (-bytes +whole):\n%s", diff)
		}
		var s Splitter
		var got []string
		rest := input
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(sizes) > 0 {
				n = min(n, 1+int(sizes[i%len(sizes)]))
			}
			s.Feed(rest[:n], func(l []byte) { got = append(got, string(l)) })
			rest = rest[n:]
		}
		s.Flush(func(l []byte, partial bool) { got = append(got, "PARTIAL:"+string(l)) })
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("reads of %v versus one byte at a time (-bytes +reads):\n%s", sizes, diff)
		}
	})
}

// TestSplitterKeep feeds lines longer than the splitter's buffer
// before it grows fourfold, and than that, in reads of many sizes into
// one reused buffer, with and without Keep: the lines are the same, and
// under Keep each stays intact after the buffer is read into again.
func TestSplitterKeep(t *testing.T) {
	long := `{"text":"` + strings.Repeat("0123456789", 6*gatherMax/10) + `"}`
	input := "{\"a\":1}\n" + long + "\r\n{\"b\":2}{\"c\":3}\n" + long[:gatherMax+5] + "\n" + long[:len(long)/2]
	want := split(input, 1<<16)
	for _, n := range []int{1000, 4096, 1 << 16, gatherMax + 3, 3 * gatherMax} {
		s := Splitter{Keep: true}
		buf := make([]byte, n)
		var kept [][]byte
		var partial []bool
		for in := input; len(in) > 0; {
			k := copy(buf, in)
			in = in[k:]
			s.Feed(buf[:k], func(l []byte) { kept = append(kept, l); partial = append(partial, false) })
			clear(buf)
		}
		s.Flush(func(l []byte, p bool) { kept = append(kept, l); partial = append(partial, p) })
		var got []string
		for i, l := range kept {
			if partial[i] {
				got = append(got, "PARTIAL:"+string(l))
			} else {
				got = append(got, string(l))
			}
		}
		if len(got) != len(want) {
			t.Fatalf("reads of %d: %d lines, want %d", n, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("reads of %d: line %d is %.60q... (%d bytes), want %.60q... (%d bytes)", n, i, got[i], len(got[i]), want[i], len(want[i]))
			}
		}
	}
}
