package jsonl

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentconform/agentconform/finding"
)

// syntaxRules are the rules that say a line is not a single well-formed
// JSON text; encoding/json rejects exactly the lines that get one of them.
var syntaxRules = map[*finding.Rule]bool{
	RuleInvalidJSON: true, RuleNotJSON: true, RuleMultipleValues: true,
	RuleBOM: true, RuleANSIEscape: true, RuleSSEPrefix: true, RuleTooDeep: true,
}

func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		if len(c.line) < 4096 {
			f.Add([]byte(c.line))
		}
	}
	for _, l := range unifiedLines(7) {
		f.Add(l)
	}
	f.Add([]byte(`{"a":"\ud800\udc00\ud800","b":[1e-7,-0.0,{"c":null}],"d":"\u00e9\/"}`))
	f.Add([]byte("{\"a\":\"\xf0\x9f\x98\"}"))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, fs := Parse(line, ParseOptions{})
		rules := map[*finding.Rule]bool{}
		for _, f := range fs {
			if f.Rule == nil || f.Column < 0 || f.Column > len(line) {
				t.Fatalf("bad finding %+v for a %d-byte line", f, len(line))
			}
			if f.Pointer != "" && f.Pointer[0] != '/' {
				t.Fatalf("bad pointer in %+v", f)
			}
			rules[f.Rule] = true
		}
		syntax := false
		for r := range rules {
			syntax = syntax || syntaxRules[r]
		}
		if !json.Valid(line) {
			if !syntax {
				t.Fatalf("encoding/json rejects %q but Parse reports only %v", line, fs)
			}
			return
		}
		if syntax && !rules[RuleTooDeep] {
			t.Fatalf("encoding/json accepts %q but Parse reports %v", line, fs)
		}
		if syntax || rules[RuleDuplicateKey] || rules[RuleNumberPrecision] {
			return // documented differences from encoding/json
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("json.Valid but Unmarshal fails: %v", err)
		}
		if _, isObj := v.(map[string]any); isObj != (m != nil) || isObj == rules[RuleNotObject] {
			t.Fatalf("object %v, Parse returned %v with %v", isObj, m, fs)
		}
		if m != nil && !reflect.DeepEqual(any(m), v) {
			t.Fatalf("values differ for %q:\nParse         %#v\nencoding/json %#v", line, m, v)
		}
	})
}

func FuzzReaderSplit(f *testing.F) {
	f.Add([]byte("{}\n{\"a\":1}\r\n\n"), uint8(0), uint64(1))
	f.Add([]byte("\xef\xbb\xbf12345\r\nab\n\nlast"), uint8(4), uint64(2))
	f.Add([]byte("\n\n\n"), uint8(1), uint64(3))
	f.Add([]byte(strings.Repeat("x", 300)+"\r\n"+strings.Repeat("y", 10)), uint8(9), uint64(4))
	f.Add([]byte("\xef\xbb"), uint8(2), uint64(5))
	f.Fuzz(func(t *testing.T, data []byte, max uint8, seed uint64) {
		opts := Options{MaxLineBytes: int64(max)}
		ref, refStats, err := readAll(bytes.NewReader(data), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, rd := range []io.Reader{
			iotest.OneByteReader(bytes.NewReader(data)),
			iotest.HalfReader(bytes.NewReader(data)),
			&chunkReader{data: data, rng: rand.New(rand.NewPCG(seed, seed)), max: 1 + int(seed%17)},
		} {
			got, stats, err := readAll(rd, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, ref) || stats != refStats {
				t.Fatalf("split %T differs:\n got %+v %+v\nwant %+v %+v", rd, got, stats, ref, refStats)
			}
		}
		// Invariants of the lines themselves.
		limit := opts.MaxLineBytes
		if limit == 0 {
			limit = DefaultMaxLineBytes
		}
		physical := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			physical++
		}
		if refStats.Lines+refStats.Empty != physical || refStats.Bytes != int64(len(data)) {
			t.Fatalf("stats %+v for %d physical lines, %d bytes", refStats, physical, len(data))
		}
		for i, l := range ref {
			if i > 0 && (l.Number <= ref[i-1].Number || l.Offset <= ref[i-1].Offset) {
				t.Fatalf("line %+v does not follow %+v", l, ref[i-1])
			}
			if l.TooLong != (l.Len > limit) || (l.TooLong && l.Bytes != nil) {
				t.Fatalf("line %+v: TooLong wrong for limit %d", l, limit)
			}
			start := l.Offset
			if l.BOM {
				start += 3
			}
			if !l.TooLong && !bytes.Equal(data[start:start+l.Len], l.Bytes) {
				t.Fatalf("line %+v: Bytes do not match the input at its offset", l)
			}
		}
	})
}
