package jsonl

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/agentconform/agentconform/finding"
)

// plainEndRef is plainEnd written plainly: the first '"', '\\' or byte
// below 0x20 at or after i.
func plainEndRef(data []byte, i int) int {
	for ; i < len(data); i++ {
		if c := data[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// TestPlainEndAgrees checks plainEnd against plainEndRef on runs of every
// length up to a few windows, with the stop byte (or none) anywhere in
// them and bytes from every class around it.
func TestPlainEndAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fill := []byte("abc \x7f\x80\xff\xe2\x82\xac{}:,")
	stops := []byte{'"', '\\', 0, 0x1f, '\n', '\t'}
	lengths := []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 255, 256, 257, 300, 1000, 4096, 70000, 200000}
	for _, n := range lengths {
		for trial := 0; trial < 40; trial++ {
			data := make([]byte, n)
			for k := range data {
				data[k] = fill[rng.IntN(len(fill))]
			}
			if n > 0 && trial%4 != 0 {
				// One or a few stop bytes at random places.
				for s := 0; s <= trial%3; s++ {
					data[rng.IntN(n)] = stops[rng.IntN(len(stops))]
				}
			}
			for _, start := range []int{0, 1, 5, n / 2, max(n-1, 0), n} {
				if start > n {
					continue
				}
				if got, want := plainEnd(data, start), plainEndRef(data, start); got != want {
					t.Fatalf("plainEnd(len %d, from %d) = %d, want %d", n, start, got, want)
				}
			}
		}
	}
	// Every position of every stop byte in runs around the word and
	// window boundaries.
	for _, n := range []int{33, 64, 257, 600} {
		for pos := 0; pos < n; pos++ {
			for _, c := range stops {
				data := bytes.Repeat([]byte{'x'}, n)
				data[pos] = c
				if got, want := plainEnd(data, 0), plainEndRef(data, 0); got != want {
					t.Fatalf("plainEnd(len %d, %q at %d) = %d, want %d", n, c, pos, got, want)
				}
			}
		}
	}
}

// TestParseLongStringWithEscapes decodes a long string whose escapes
// come at its start, in its middle and at its end, and a raw control byte
// deep inside one, as encoding/json would.
func TestParseLongStringWithEscapes(t *testing.T) {
	body := strings.Repeat("lorem ipsum dolor ", 70000) // over a piece
	line := `{"a":"` + `\n` + body + `\"` + body + `\t","b":"` + body + `"}`
	obj, fs := Parse([]byte(line), ParseOptions{})
	if len(fs) != 0 {
		t.Fatalf("findings: %v", fs)
	}
	if got, want := obj["a"], "\n"+body+"\""+body+"\t"; got != want {
		t.Fatalf("a: %d bytes, want %d", len(got.(string)), len(want))
	}
	if obj["b"] != body {
		t.Fatal("b decoded wrong")
	}
	bad := `{"a":"` + `\n` + body + "\x01" + body + `"}`
	if _, fs := Parse([]byte(bad), ParseOptions{}); len(fs) != 1 || fs[0].Column != 6+2+len(body) {
		t.Fatalf("raw control byte: %v", fs)
	}
}

// BenchmarkParseLongString parses a line holding one 8 MiB string with
// an escape near its start, as a ladder line is.
func BenchmarkParseLongString(b *testing.B) {
	body := strings.Repeat(" agentconform ladder padding: lorem ipsum dolor sit amet,", (8<<20)/56)
	line := []byte(`{"type":"x","text":"hello\n` + body + `"}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if m, _ := Parse(line, ParseOptions{ShareMin: 1}); m == nil {
			b.Fatal("no object")
		}
	}
}

// BenchmarkPlainEnd scans an 8 MiB run without a stop byte.
func BenchmarkPlainEnd(b *testing.B) {
	data := bytes.Repeat([]byte(" agentconform ladder padding: lorem ipsum dolor sit amet,"), (8<<20)/56)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if plainEnd(data, 0) != len(data) {
			b.Fatal("stopped early")
		}
	}
}

// TestParseKnown checks that Parse with ParseOptions.Known decodes every
// line exactly as Parse without it (values and findings), and returns
// the caller's string where a long string with escapes decodes to it.
func TestParseKnown(t *testing.T) {
	body := strings.Repeat("lorem ipsum dolor ", longSlow/9)
	body = strings.Repeat(body, piece/len(body)+1) // over a piece
	escaped := []string{`\n`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\t`, `\u00e9`, `\u20ac`, `\ud83d\ude00`, "é", "€"}
	decoded := []string{"\n", "\"", "\\", "/", "\b", "\f", "\r", "\t", "é", "€", "😀", "é", "€"}
	type tc struct {
		raw, want string // the string's body on the line, and its value
		hit       bool   // Known holds want and the line has it right
	}
	var cases []tc
	for k := range escaped {
		for _, at := range []int{0, 1, len(body) / 2, len(body)} {
			raw := body[:at] + escaped[k] + body[at:]
			want := body[:at] + decoded[k] + body[at:]
			// A string without escapes is never decoded: it is the line's.
			cases = append(cases, tc{raw, want, strings.HasPrefix(escaped[k], `\`)})
		}
	}
	// Strings whose decoding Parse reports or that decode otherwise.
	for _, raw := range []string{
		`\ud800` + body,      // lone surrogate: a finding
		body + `\ud83d`,      // lone at the end
		`\ud83dx` + body,     // high surrogate then no low one
		body + `\q`,          // bad escape
		body + "\x01",        // raw control byte
		body + `\u12`,        // short \u escape
		"\xff" + `\n` + body, // invalid UTF-8
		`\n` + body + `\n`,   // decodes to a longer string than want
	} {
		cases = append(cases, tc{raw, "\n" + body, false})
	}
	// Strings that decode to a prefix of the known one, or would decode to
	// it if a reversed surrogate pair were taken for a pair.
	cases = append(cases, tc{`\n` + body[:len(body)-1], "\n" + body, false},
		tc{`\udc00\udc01` + body, "\ufffd" + body, false},
		tc{`\ud800\ud800` + body, "\ufffd" + body, false})
	// A line cut off inside the string: its body decodes to a known
	// string, but it does not end, which Parse reports.
	cut := []byte(`{"type":"x","text":"\n` + body)
	wantObj, wantFs := Parse(cut, ParseOptions{})
	if gotObj, gotFs := Parse(cut, ParseOptions{Known: []string{"\n" + body}}); !reflect.DeepEqual(gotObj, wantObj) || !reflect.DeepEqual(gotFs, wantFs) || len(gotFs) == 0 {
		t.Fatalf("a line cut off inside a known string: %v, want %v", gotFs, wantFs)
	}
	for i, c := range cases {
		line := []byte(`{"type":"x","text":"` + c.raw + `","other":"` + c.raw + `","` + c.raw + `":["` + c.raw + `"]}`)
		wantObj, wantFs := Parse(line, ParseOptions{})
		known := strings.Clone(c.want)
		for _, opts := range []ParseOptions{{Known: []string{"short", known}}, {Known: []string{known}, ShareMin: 1}} {
			gotObj, gotFs := Parse(line, opts)
			if !reflect.DeepEqual(gotObj, wantObj) || !reflect.DeepEqual(gotFs, wantFs) {
				t.Fatalf("case %d: Parse with Known differs: %d findings, want %d", i, len(gotFs), len(wantFs))
			}
			if s, _ := gotObj["text"].(string); c.hit && unsafe.StringData(s) != unsafe.StringData(known) {
				t.Errorf("case %d: the known string was not returned", i)
			}
		}
	}
}

// parseStripFirst is Parse as it was before long lines were decoded
// before the search for terminal escapes: BOM, escapes, then the rest.
func parseStripFirst(b []byte, opts ParseOptions) (map[string]any, []finding.Finding) {
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
	}
	m, fs, _ := parseView(b, view, pre, cm, opts, maxDepth)
	return m, fs
}

// TestParseLongLinesWithEscapes holds Parse to parseStripFirst on long
// lines with terminal escapes (and BOMs, SSE prefixes, invalid UTF-8,
// duplicate keys) anywhere: decoding a long line first changes nothing.
func TestParseLongLinesWithEscapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	body := strings.Repeat("lorem ipsum ", cleanFirst/12+10)
	inserts := []string{"\x1b[31m", "\x1b", "\x1b]0;title\x07", "\xff", `","a":"`, "\\n", "\x01", ""}
	prefixes := []string{"", "\xef\xbb\xbf", "data: ", "\x1b[0mdata: ", "\xef\xbb\xbf\x1b[1m"}
	for trial := 0; trial < 400; trial++ {
		line := `{"a":"` + body + `","b":[1,2,{"c":"` + body[:100] + `"}]}`
		for k := rng.IntN(3); k > 0; k-- {
			at := rng.IntN(len(line) + 1)
			line = line[:at] + inserts[rng.IntN(len(inserts))] + line[at:]
		}
		line = prefixes[rng.IntN(len(prefixes))] + line
		if rng.IntN(4) == 0 {
			line += "\x1b[0m"
		}
		for _, opts := range []ParseOptions{{}, {ShareMin: 1}} {
			wantM, wantFs := parseStripFirst([]byte(line), opts)
			gotM, gotFs := Parse([]byte(line), opts)
			if !reflect.DeepEqual(gotM, wantM) || !reflect.DeepEqual(gotFs, wantFs) {
				t.Fatalf("trial %d: Parse differs from parsing after stripping escapes: %v, want %v", trial, gotFs, wantFs)
			}
		}
	}
}
