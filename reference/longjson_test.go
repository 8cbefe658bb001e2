package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentconform/agentconform/jsonvalid"
	"github.com/agentconform/agentconform/reference/unified"
)

// TestUnmarshalAgrees holds unmarshal to json.Unmarshal on lines with long
// strings everywhere a line struct meets them: string fields, raw
// members, arrays, duplicate keys, keys that match only case-insensitively,
// and strings the fast path must leave to encoding/json (escapes, invalid
// UTF-8, a control byte, a string where a number goes, broken JSON).
func TestUnmarshalAgrees(t *testing.T) {
	long := strings.Repeat("ladder padding ", 1<<20/15)
	lines := map[string]string{
		"text block":        `{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"` + long + `"}]}}`,
		"string content":    `{"type":"user","message":{"id":"m1","content":"` + long + `"}}`,
		"tool result":       `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"` + long + `"}],"is_error":false}]}}`,
		"two long":          `{"message":{"id":"` + long + `","content":["` + long + `", {"x":"` + long + `"}]}}`,
		"duplicate":         `{"message":{"id":"` + long + `","ID":"short","content":null}}`,
		"case":              `{"MESSAGE":{"Id":"` + long + `"}}`,
		"escape":            `{"message":{"id":"` + long + `\n","content":"` + long + `"}}`,
		"invalid utf8":      `{"message":{"id":"` + long + "\xff" + `"}}`,
		"control":           `{"message":{"id":"` + long + "\x01" + `"}}`,
		"broken":            `{"message":{"id":"` + long + `"},}`,
		"trailing":          `{"message":{"id":"` + long + `"}} x`,
		"number":            `{"type":"result","duration_ms":"` + long + `","usage":{"input_tokens":1}}`,
		"short line":        `{"message":{"id":"m"}}`,
		"delta":             `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + long[:4096] + `"}},"session_id":"s"}`,
		"just short":        `{"message":{"id":"` + long[:longString-1] + `","content":"` + long[:longLine] + `"}}`,
		"marker lookalike":  `{"message":{"id":"` + long + `","content":["\u0000agentconform-long-` + longNonce + `-0\u0000","\u0000agentconform-long-` + longNonce + `-7\u0000"]}}`,
		"nonce in long":     `{"message":{"id":"` + long + longNonce + `","content":["` + longNonce + long + `"]}}`,
		"spaced raw":        `{"message":{"content": [ {"type" : "text", "text":"` + long + `" } , "` + long + `" ] , "id" : "m" }}`,
		"codex item":        `{"type":"item.completed","item":{"id":"i","type":"command_execution","aggregated_output":"` + long + `","exit_code":0,"result":{"out":"` + long + `"}}}`,
		"gemini tool_use":   `{"type":"tool_use","tool_name":"x","parameters":{"a":"` + long + `","b":[1,2]}}`,
		"white space":       " \t{ \"message\" : { \"id\" : \"" + long + "\" } }\n",
		"nested raw in raw": `{"type":"user","message":{"content":[{"type":"tool_result","content":{"deep":[{"text":"` + long + `"}]}}]}}`,
	}
	targets := map[string]func() any{
		"claudeMessageLine": func() any { return new(claudeMessageLine) },
		"claudeBlocks":      func() any { return new([]claudeBlock) },
		"claudeResult":      func() any { return new(claudeResult) },
		"claudeStreamLine":  func() any { return new(claudeStreamLine) },
		"codexItemLine":     func() any { return new(codexItemLine) },
		"geminiToolUse":     func() any { return new(geminiToolUse) },
	}
	for name, line := range lines {
		for tname, mk := range targets {
			raws := [][]byte{[]byte(line)}
			// The content of a message, as blocks() decodes it.
			var m claudeMessageLine
			if json.Unmarshal([]byte(line), &m) == nil && m.Message != nil && len(m.Message.Content) > 0 {
				raws = append(raws, m.Message.Content)
			}
			for _, raw := range raws {
				want, got := mk(), mk()
				werr := json.Unmarshal(raw, want)
				gerr := unmarshal(raw, got)
				if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(want, got) {
					t.Errorf("%s into %s: unmarshal gives %v, %.300v; json.Unmarshal %v, %.300v", name, tname, gerr, got, werr, want)
				}
				shared := mk()
				var sc lineScan
				serr := sc.unmarshal(bytes.Clone(raw), shared, true)
				if fmt.Sprint(werr) != fmt.Sprint(serr) || !reflect.DeepEqual(want, shared) {
					t.Errorf("%s into %s: shared, unmarshal gives %v, %.300v; json.Unmarshal %v, %.300v", name, tname, serr, shared, werr, want)
				}
				// The parts it left in place know their long strings.
				for _, p := range sc.parts {
					if longs, ok := longStrings(p.raw); !ok || !slices.Equal(longs, p.longs) {
						t.Errorf("%s into %s: a part of %d bytes notes long strings %v, longStrings %v (%v)", name, tname, len(p.raw), p.longs, longs, ok)
					}
				}
			}
		}
	}
}

// TestUnmarshalSharedRaw: a raw value with long strings in it is, shared,
// the part of the line it came from, not a copy.
func TestUnmarshalSharedRaw(t *testing.T) {
	long := strings.Repeat("ladder padding ", 1<<20/15)
	line := []byte(`{"type":"assistant","message":{"id":"m1","content":[ {"type":"text","text":"` + long + `"} ]}}`)
	var l claudeMessageLine
	var sc lineScan
	if err := sc.unmarshal(line, &l, true); err != nil {
		t.Fatal(err)
	}
	if _, ok := sc.longsOf(l.Message.Content); !ok {
		t.Errorf("the scan does not know the long strings of the content it left in place")
	}
	c := l.Message.Content
	i := bytes.Index(line, []byte(`[ {`))
	if len(c) == 0 || &c[0] != &line[i] || cap(c) != len(c) {
		t.Errorf("content %.40q... is not the line's own bytes at %d (or has room to grow into the line)", c, i)
	}
}

// BenchmarkUnmarshalDelta compares unmarshal with json.Unmarshal on a
// 4 KiB text delta, as a ladder line streams in 16,384 of them.
func BenchmarkUnmarshalDelta(b *testing.B) {
	line := []byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + strings.Repeat("x", 4096) + `"}},"session_id":"0b8e0d6c-1f0e-4a3e-9a55-3f7c0a0e5f11","parent_tool_use_id":null,"uuid":"6d1f8c6e-2b7a-4c55-8f3e-9e2d7c1b0a44"}`)
	for name, f := range map[string]func([]byte, any) error{"fast": unmarshal, "encoding-json": json.Unmarshal} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				var l claudeStreamLine
				if err := f(line, &l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUnmarshalLong compares unmarshal with json.Unmarshal on a
// 64 MiB assistant line.
func BenchmarkUnmarshalLong(b *testing.B) {
	line := []byte(`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"` + strings.Repeat("x", 64<<20) + `"}]}}`)
	for name, f := range map[string]func([]byte, any) error{"fast": unmarshal, "encoding-json": json.Unmarshal} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				var l claudeMessageLine
				if err := f(line, &l); err != nil {
					b.Fatal(err)
				}
				var bs []claudeBlock
				if err := f(l.Message.Content, &bs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPlainTargets checks that the fast path reads every line struct of
// the translators (a struct it refuses is decoded by encoding/json alone,
// correctly but slowly), and refuses what it cannot put strings back in.
func TestPlainTargets(t *testing.T) {
	for _, v := range []any{new(claudeInit), new(claudeMessageLine), new([]claudeBlock), new(claudeStreamLine), new(claudeResult),
		new(claudeToolProgress), new(codexThread), new(codexTurnCompleted), new(codexTurnFailed), new(codexError), new(codexItemLine),
		new(geminiInit), new(geminiMessage), new(geminiToolUse), new(geminiError), new(geminiToolResult)} {
		if !plainTarget(reflect.TypeOf(v)) {
			t.Errorf("%T: not read by the fast path", v)
		}
	}
	type withMap struct{ M map[string]string }
	type withAny struct{ A any }
	type text struct{ T textOnly }
	for _, v := range []any{new(withMap), new(withAny), new(text), new(map[string]any)} {
		if plainTarget(reflect.TypeOf(v)) {
			t.Errorf("%T: read by the fast path, which cannot put strings back in it", v)
		}
	}
}

// textOnly decodes itself from a string.
type textOnly string

func (t *textOnly) UnmarshalText(b []byte) error { *t = textOnly(b); return nil }

// TestStreamedTextSplit checks that the hash of streamed text does not
// depend on how the deltas split it.
func TestStreamedTextSplit(t *testing.T) {
	text := strings.Repeat("0123456789abcdef", 1000) + "tail"
	for _, size := range []int{1, 7, 127, 128, 129, 4096, len(text)} {
		var b streamedText
		for i := 0; i < len(text); i += size {
			b.write(text[i:min(len(text), i+size)])
		}
		if !b.prefixOf(text) || !b.prefixOf(text+"more") || b.prefixOf(text[:len(text)-1]) || b.prefixOf("x"+text) {
			t.Errorf("deltas of %d bytes: prefixOf is wrong", size)
		}
	}
}

// FuzzCanonicalToken holds canonicalToken to its definition: a valid
// string token is canonical exactly when jsonString of its value gives
// it back.
func FuzzCanonicalToken(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"q\" \\ \/"`, `"\u001f\u000b\u0000"`, `"\u001F"`, `"\u0041"`, `"\u00e9"`, `"\u2028\u2029"`,
		"\"\u2028\"", "\"\xff\"", `"\ufffd"`, "\"\ufffd\"", `"\ud83d\ude00"`, `"\b\f\r"`, `"\u0008"`, `"\u000a"`, "\"é漢\"", `"<&>"`, "\"\x7f\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, tok []byte) {
		if len(tok) < 2 || tok[0] != '"' || jsonvalid.End(tok, 0, 0) != len(tok) {
			return
		}
		s, ok := unquote(tok)
		if !ok {
			t.Fatalf("%q: a valid token does not decode", tok)
		}
		if got, want := canonicalToken(tok), string(jsonString(s)) == string(tok); got != want {
			t.Fatalf("%q: canonicalToken %v, jsonString of its value gives %q", tok, got, jsonString(s))
		}
	})
}

// TestToolOutputShared: a Codex command's long output, in an owned line
// and written as jsonString writes it, is its result as it is in the
// line; written otherwise (an escaped slash), it is encoded anew.
func TestToolOutputShared(t *testing.T) {
	long := strings.Repeat(`ladder padding\n`, 1<<16)
	for _, tc := range []struct {
		out    string
		shared bool
	}{{long, true}, {long + `\/`, false}} {
		tr, err := NewUnified(Codex, Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := tr.(ownedLiner[unified.Event])
		tr.BeginTurn("hi")
		line := []byte(`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"` + tc.out + `","exit_code":0,"status":"completed"}}`)
		evs, err := o.ownedLine(line)
		if err != nil {
			t.Fatal(err)
		}
		var res []byte
		for _, ev := range evs {
			if tcEv, ok := ev.(*unified.ToolCompleted); ok {
				res = tcEv.Result
			}
		}
		s, _ := unquote([]byte(`"` + tc.out + `"`))
		if string(res) != string(jsonString(s)) {
			t.Fatalf("result %.60q..., want %.60q...", res, jsonString(s))
		}
		i := bytes.Index(line, []byte(`"ladder`))
		if shared := &res[0] == &line[i]; shared != tc.shared {
			t.Errorf("output %.20q...: result shares the line: %v", tc.out, shared)
		}
	}
}

// TestPlainASCII holds plainASCII to a byte-at-a-time look: the first
// quote, backslash, control byte or byte of 0x80 and up, wherever it lies
// in a long run.
func TestPlainASCII(t *testing.T) {
	for _, special := range []byte{'"', '\\', 0x01, 0x1f, 0x80, 0xff} {
		for at := range 300 {
			b := []byte(strings.Repeat("plain text ", 30))
			b[at] = special
			want := bytes.IndexFunc(b, func(r rune) bool { return r < ' ' || r >= utf8.RuneSelf || r == '"' || r == '\\' })
			for from := range min(at+1, 40) {
				if got := plainASCII(b, from); got != want {
					t.Fatalf("special %#x at %d, from %d: plainASCII %d", special, at, from, got)
				}
			}
		}
	}
}
