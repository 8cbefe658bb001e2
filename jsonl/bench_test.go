package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// benchLines is the corpus every benchmark decodes: unified events as
// bench/gen_unified.py generates them.
var benchLines = unifiedLines(6000)

// benchBytes is the size of benchLines without newlines.
func benchBytes() int64 {
	var n int64
	for _, l := range benchLines {
		n += int64(len(l))
	}
	return n
}

// BenchmarkParse measures Parse on the unified-event corpus; compare its
// MB/s with BenchmarkEncodingJSON.
func BenchmarkParse(b *testing.B) {
	b.SetBytes(benchBytes())
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range benchLines {
			m, fs := Parse(l, ParseOptions{})
			if m == nil || fs != nil {
				b.Fatalf("Parse(%s) = %v, %v", l, m, fs)
			}
		}
	}
}

// BenchmarkParseParallel measures Parse on all cores, as validate runs it.
func BenchmarkParseParallel(b *testing.B) {
	b.SetBytes(benchBytes())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			for _, l := range benchLines {
				if m, _ := Parse(l, ParseOptions{}); m == nil {
					b.Error("Parse returned no object")
					return
				}
			}
		}
	})
}

// BenchmarkEncodingJSON is the baseline: json.Unmarshal into an `any` on
// the same lines.
func BenchmarkEncodingJSON(b *testing.B) {
	b.SetBytes(benchBytes())
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range benchLines {
			var v any
			if err := json.Unmarshal(l, &v); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkReader measures framing alone: cutting a large input into lines.
func BenchmarkReader(b *testing.B) {
	data := bytes.Repeat(joinLines(benchLines), 8) // about 12 MB
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), Options{})
		for {
			if _, err := r.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

// BenchmarkCaptures compares Parse with encoding/json on the real CLI
// captures: longer lines, more escapes, deeper nesting.
func BenchmarkCaptures(b *testing.B) {
	lines, _ := captureLines(b)
	var size int64
	for _, l := range lines {
		size += int64(len(l))
	}
	b.Run("Parse", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				Parse(l, ParseOptions{})
			}
		}
	})
	b.Run("EncodingJSON", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				var v any
				if err := json.Unmarshal(l, &v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
