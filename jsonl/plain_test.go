package jsonl

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
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
	body := strings.Repeat("lorem ipsum dolor ", 20000)
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
