package jsonl

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/finding"
)

// want is one expected finding: its rule, column and pointer.
type want struct {
	rule *finding.Rule
	col  int
	ptr  string
}

// checkFindings compares findings with the expected list, in order.
func checkFindings(t *testing.T, got []finding.Finding, wants []want) {
	t.Helper()
	ok := len(got) == len(wants)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Rule == wants[i].rule && got[i].Column == wants[i].col && got[i].Pointer == wants[i].ptr
	}
	if ok {
		return
	}
	var g, w []string
	for _, f := range got {
		g = append(g, f.Rule.ID+"@"+itoa(f.Column)+f.Pointer+" ("+f.Message+")")
	}
	for _, f := range wants {
		w = append(w, f.rule.ID+"@"+itoa(f.col)+f.ptr)
	}
	t.Errorf("findings:\n got %q\nwant %q", g, w)
}

func itoa(i int) string { return strconv.Itoa(i) }

// parseCases trigger each rule Parse reports, and near-misses that must
// not. value, when set, is the object Parse must return (compared as JSON
// after json.Marshal, so that json.Number and float64 can be told apart
// by the test that needs it separately).
var parseCases = []struct {
	name  string
	rule  *finding.Rule // the rule the case is about
	line  string
	want  []want
	msg   []string // substrings of the concatenated messages, expected and actual
	value string   // the returned object as compact JSON; "nil" for none
}{
	// jsonl/bom
	{name: "bom", rule: RuleBOM, line: "\xef\xbb\xbf{\"a\":1}", want: []want{{RuleBOM, 0, ""}}, value: `{"a":1}`},
	{name: "escaped bom in a string", rule: RuleBOM, line: `{"a":"\ufeff"}`, value: `{"a":"\ufeff"}`},
	{name: "raw bom in a string", rule: RuleBOM, line: "{\"a\":\"\xef\xbb\xbf\"}", value: `{"a":"\ufeff"}`},

	// jsonl/invalid-utf8
	{name: "invalid byte in a string", rule: RuleInvalidUTF8, line: "{\"a\":\"x\xffy\"}",
		want: []want{{RuleInvalidUTF8, 7, ""}}, msg: []string{"0xff"}, value: `{"a":"x\ufffdy"}`},
	{name: "truncated sequence in a key", rule: RuleInvalidUTF8, line: "{\"k\xc3\":1,\"b\":\"\xe2\x82\"}",
		want: []want{{RuleInvalidUTF8, 3, ""}}, msg: []string{"3 invalid byte"}, value: `{"k\ufffd":1,"b":"\ufffd\ufffd"}`},
	{name: "valid multi-byte text", rule: RuleInvalidUTF8, line: `{"a":"é😀中"}`, value: `{"a":"é😀中"}`},

	// jsonl/ansi-escape
	{name: "colour around the line", rule: RuleANSIEscape, line: "\x1b[32m{\"a\":1}\x1b[0m",
		want: []want{{RuleANSIEscape, 0, ""}}, msg: []string{`"\x1b[32m"`, "2 raw"}, value: `{"a":1}`},
	{name: "colour inside a string", rule: RuleANSIEscape, line: "{\"a\":\"\x1b[1;31mred\x1b[0m\"}",
		want: []want{{RuleANSIEscape, 6, ""}}, value: `{"a":"red"}`},
	{name: "osc title", rule: RuleANSIEscape, line: "\x1b]0;my title\x07{}",
		want: []want{{RuleANSIEscape, 0, ""}}, value: `{}`},
	{name: "columns after stripping map to the line", rule: RuleANSIEscape, line: "\x1b[1m{\"a\":1,}",
		want: []want{{RuleANSIEscape, 0, ""}, {RuleInvalidJSON, 11, ""}}, value: "nil"},
	{name: "escaped ESC in a string", rule: RuleANSIEscape, line: `{"a":"\u001b[31m"}`, value: `{"a":"\u001b[31m"}`},

	// jsonl/sse-prefix
	{name: "data prefix", rule: RuleSSEPrefix, line: `data: {"a":1}`, want: []want{{RuleSSEPrefix, 0, ""}}, value: `{"a":1}`},
	{name: "data prefix without space", rule: RuleSSEPrefix, line: `data:{"a":1}`, want: []want{{RuleSSEPrefix, 0, ""}}, value: `{"a":1}`},
	{name: "data prefix, columns map", rule: RuleSSEPrefix, line: `data: {"a":1,}`,
		want: []want{{RuleSSEPrefix, 0, ""}, {RuleInvalidJSON, 13, ""}}, value: "nil"},
	{name: "sse done marker", rule: RuleSSEPrefix, line: `data: [DONE]`,
		want: []want{{RuleSSEPrefix, 0, ""}, {RuleNotJSON, 6, ""}}, value: "nil"},
	{name: "data as a key", rule: RuleSSEPrefix, line: `{"data":"data: x"}`, value: `{"data":"data: x"}`},

	// jsonl/not-json
	{name: "stdin notice", rule: RuleNotJSON, line: "Reading additional input from stdin...",
		want: []want{{RuleNotJSON, 0, ""}}, msg: []string{`"Reading additional input from stdin..."`}, value: "nil"},
	{name: "sandbox debug", rule: RuleNotJSON, line: "[SandboxDebug] Seccomp filter applied",
		want: []want{{RuleNotJSON, 0, ""}}, msg: []string{"[SandboxDebug]"}, value: "nil"},
	{name: "timestamped log line", rule: RuleNotJSON, line: "2025-12-03 10:00:00 INFO starting",
		want: []want{{RuleNotJSON, 0, ""}}, value: "nil"},
	{name: "bracketed timestamp", rule: RuleNotJSON, line: "[2025-12-03 10:00] ready",
		want: []want{{RuleNotJSON, 0, ""}}, value: "nil"},
	{name: "word that starts like a literal", rule: RuleNotJSON, line: "null pointer exception",
		want: []want{{RuleNotJSON, 0, ""}}, value: "nil"},
	{name: "blank", rule: RuleNotJSON, line: " \t ", want: []want{{RuleNotJSON, 0, ""}}, msg: []string{"blank"}, value: "nil"},
	{name: "long banner is quoted short", rule: RuleNotJSON, line: strings.Repeat("Loading... ", 40),
		want: []want{{RuleNotJSON, 0, ""}}, msg: []string{`"Loading... Loading`, `"...`}, value: "nil"},
	{name: "binary", rule: RuleNotJSON, line: "\x00\x01\xff\xfe\x80garbage",
		want: []want{{RuleNotJSON, 0, ""}}, msg: []string{"binary"}, value: "nil"},
	{name: "raw NUL before the object", rule: RuleNotJSON, line: "\x00{}", want: []want{{RuleNotJSON, 0, ""}}, value: "nil"},
	{name: "leakage text inside a string", rule: RuleNotJSON, line: `{"msg":"Reading additional input from stdin..."}`,
		value: `{"msg":"Reading additional input from stdin..."}`},

	// jsonl/invalid-json
	{name: "truncated mid-line", rule: RuleInvalidJSON,
		line: `{"type":"assistant","message":{"content":[{"type":"text","text":"hel`,
		want: []want{{RuleInvalidJSON, 68, "/message/content/0/text"}}, msg: []string{"truncated", `closing '"'`, "end of line"}, value: "nil"},
	{name: "raw NUL in a string", rule: RuleInvalidJSON, line: "{\"a\":\"b\x00\"}",
		want: []want{{RuleInvalidJSON, 7, "/a"}}, msg: []string{"raw control byte 0x00", `\u0000`}, value: "nil"},
	{name: "raw newline-like control in a string", rule: RuleInvalidJSON, line: "{\"a\":\"b\tc\"}",
		want: []want{{RuleInvalidJSON, 7, "/a"}}, value: "nil"},
	{name: "raw NUL between members", rule: RuleInvalidJSON, line: "{\"a\":1,\x00}",
		want: []want{{RuleInvalidJSON, 7, ""}}, msg: []string{"byte 0x00", "key in double quotes"}, value: "nil"},
	{name: "raw NUL after the object", rule: RuleInvalidJSON, line: "{\"a\":1}\x00",
		want: []want{{RuleInvalidJSON, 7, ""}}, msg: []string{"after the end"}, value: `{"a":1}`},
	{name: "trailing text", rule: RuleInvalidJSON, line: `{"a":1} // done`,
		want: []want{{RuleInvalidJSON, 8, ""}}, value: `{"a":1}`},
	{name: "trailing comma", rule: RuleInvalidJSON, line: `{"a":1,}`, want: []want{{RuleInvalidJSON, 7, ""}}, msg: []string{"trailing comma"}, value: "nil"},
	{name: "bad escape", rule: RuleInvalidJSON, line: `{"a":"\q"}`, want: []want{{RuleInvalidJSON, 7, "/a"}}, msg: []string{`\uXXXX`}, value: "nil"},
	{name: "short unicode escape", rule: RuleInvalidJSON, line: `{"a":"\u12"}`, want: []want{{RuleInvalidJSON, 10, "/a"}}, msg: []string{"four hex digits"}, value: "nil"},
	{name: "bad literal", rule: RuleInvalidJSON, line: `{"a":tru}`, want: []want{{RuleInvalidJSON, 8, "/a"}}, value: "nil"},
	{name: "missing colon", rule: RuleInvalidJSON, line: `{"a" 1}`, want: []want{{RuleInvalidJSON, 5, "/a"}}, msg: []string{"':'"}, value: "nil"},
	{name: "leading zero", rule: RuleInvalidJSON, line: `{"a":01}`, want: []want{{RuleInvalidJSON, 6, ""}}, value: "nil"},
	{name: "NaN", rule: RuleInvalidJSON, line: `{"a":NaN}`, want: []want{{RuleInvalidJSON, 5, "/a"}}, value: "nil"},
	{name: "unquoted key", rule: RuleInvalidJSON, line: `{a:1}`, want: []want{{RuleInvalidJSON, 1, ""}}, value: "nil"},
	{name: "lone brace", rule: RuleInvalidJSON, line: `{`, want: []want{{RuleInvalidJSON, 1, ""}}, value: "nil"},
	{name: "truncated array", rule: RuleInvalidJSON, line: `[1, 2`, want: []want{{RuleInvalidJSON, 5, ""}}, value: "nil"},
	{name: "exponent without digits", rule: RuleInvalidJSON, line: `{"a":1e}`, want: []want{{RuleInvalidJSON, 7, "/a"}}, value: "nil"},
	{name: "escaped NUL", rule: RuleInvalidJSON, line: `{"a":"b\u0000"}`, value: `{"a":"b\u0000"}`},

	// jsonl/multiple-values
	{name: "two objects", rule: RuleMultipleValues, line: `{}{}`, want: []want{{RuleMultipleValues, 2, ""}}, value: `{}`},
	{name: "two objects spaced", rule: RuleMultipleValues, line: `{"a":1} {"b":2}`,
		want: []want{{RuleMultipleValues, 8, ""}}, msg: []string{"column 8"}, value: `{"a":1}`},
	{name: "object then number", rule: RuleMultipleValues, line: `{} 1`, want: []want{{RuleMultipleValues, 3, ""}}, value: `{}`},
	{name: "two arrays", rule: RuleMultipleValues, line: `[][]`,
		want: []want{{RuleMultipleValues, 2, ""}, {RuleNotObject, 0, ""}}, value: "nil"},
	{name: "objects inside a string", rule: RuleMultipleValues, line: `{"a":"{}{}"}`, value: `{"a":"{}{}"}`},
	{name: "trailing whitespace", rule: RuleMultipleValues, line: "{} \t ", value: `{}`},

	// jsonl/not-object
	{name: "array", rule: RuleNotObject, line: `[1,2]`, want: []want{{RuleNotObject, 0, ""}}, msg: []string{"array"}, value: "nil"},
	{name: "string", rule: RuleNotObject, line: `"x"`, want: []want{{RuleNotObject, 0, ""}}, value: "nil"},
	{name: "number", rule: RuleNotObject, line: ` 12`, want: []want{{RuleNotObject, 1, ""}}, value: "nil"},
	{name: "true", rule: RuleNotObject, line: `true`, want: []want{{RuleNotObject, 0, ""}}, msg: []string{"boolean"}, value: "nil"},
	{name: "null", rule: RuleNotObject, line: `null`, want: []want{{RuleNotObject, 0, ""}}, value: "nil"},
	{name: "object with spaces", rule: RuleNotObject, line: ` {"a": [1, {}] } `, value: `{"a":[1,{}]}`},

	// jsonl/duplicate-key
	{name: "codex web_search", rule: RuleDuplicateKey,
		line: `{"type":"item.started","item":{"id":"item_1","type":"web_search","id":"ws_mock_1","query":"rust serde flatten","action":{"type":"search","query":"rust serde flatten"}}}`,
		want: []want{{RuleDuplicateKey, 65, "/item/id"}}, msg: []string{`"item_1"`, `"ws_mock_1"`},
		value: `{"item":{"action":{"query":"rust serde flatten","type":"search"},"id":"item_1","query":"rust serde flatten","type":"web_search"},"type":"item.started"}`},
	{name: "three times", rule: RuleDuplicateKey, line: `{"a":1,"a":{"x":2},"a":3}`,
		want: []want{{RuleDuplicateKey, 7, "/a"}, {RuleDuplicateKey, 19, "/a"}}, msg: []string{`{"x":2}`}, value: `{"a":1}`},
	{name: "key needing escape in the pointer", rule: RuleDuplicateKey, line: `{"x":[{"a/b~":1,"a/b~":2}]}`,
		want: []want{{RuleDuplicateKey, 16, "/x/0/a~1b~0"}}, value: `{"x":[{"a/b~":1}]}`},
	{name: "other findings are not repeated", rule: RuleDuplicateKey, line: `{"a":"\ud800","b":[1e400],"a":1}`,
		want: []want{{RuleLoneSurrogate, 6, "/a"}, {RuleNumberPrecision, 19, "/b/0"}, {RuleDuplicateKey, 26, "/a"}}, value: `{"a":"\ufffd","b":[1e400]}`},
	{name: "nested duplicates", rule: RuleDuplicateKey, line: `{"a":{"b":{"c":1,"c":2},"b":3},"a":4}`,
		want: []want{{RuleDuplicateKey, 17, "/a/b/c"}, {RuleDuplicateKey, 24, "/a/b"}, {RuleDuplicateKey, 31, "/a"}}, value: `{"a":{"b":{"c":1}}}`},
	{name: "same key at different levels", rule: RuleDuplicateKey, line: `{"id":1,"x":{"id":2},"y":[{"id":3},{"id":4}]}`,
		value: `{"id":1,"x":{"id":2},"y":[{"id":3},{"id":4}]}`},

	// jsonl/lone-surrogate
	{name: "lone high surrogate", rule: RuleLoneSurrogate, line: `{"a":"\ud800"}`,
		want: []want{{RuleLoneSurrogate, 6, "/a"}}, msg: []string{`\ud800`}, value: `{"a":"\ufffd"}`},
	{name: "lone low surrogate", rule: RuleLoneSurrogate, line: `{"a":"x\uDC00y"}`,
		want: []want{{RuleLoneSurrogate, 7, "/a"}}, value: `{"a":"x\ufffdy"}`},
	{name: "two high surrogates", rule: RuleLoneSurrogate, line: `{"a":"\ud800\ud800"}`,
		want: []want{{RuleLoneSurrogate, 6, "/a"}}, value: `{"a":"\ufffd\ufffd"}`},
	{name: "high surrogate then plain escape", rule: RuleLoneSurrogate, line: `{"a":"\ud83d\u0041"}`,
		want: []want{{RuleLoneSurrogate, 6, "/a"}}, value: `{"a":"\ufffdA"}`},
	{name: "in a key", rule: RuleLoneSurrogate, line: `{"k\ud800":1}`,
		want: []want{{RuleLoneSurrogate, 3, "/k\ufffd"}}, value: `{"k\ufffd":1}`},
	{name: "in an array", rule: RuleLoneSurrogate, line: `{"a":["x","\ud83dz"]}`,
		want: []want{{RuleLoneSurrogate, 11, "/a/1"}}, value: `{"a":["x","\ufffdz"]}`},
	{name: "surrogate pair", rule: RuleLoneSurrogate, line: `{"a":"\ud83d\ude00"}`, value: `{"a":"😀"}`},
	{name: "escaped backslash", rule: RuleLoneSurrogate, line: `{"a":"\\ud800"}`, value: `{"a":"\\ud800"}`},

	// jsonl/too-deep
	{name: "limit plus one", rule: RuleTooDeep, line: strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
		want: []want{{RuleTooDeep, 1000, strings.Repeat("/0", 16)}}, msg: []string{"limit of 1000", "first 16 levels"}, value: "nil"},
	{name: "ten thousand objects", rule: RuleTooDeep, line: strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
		want: []want{{RuleTooDeep, 5000, strings.Repeat("/a", 16)}}, value: "nil"},
	{name: "shallow", rule: RuleTooDeep, line: `{"a":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`,
		value: `{"a":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`},

	// jsonl/number-precision
	{name: "huge integer", rule: RuleNumberPrecision, line: `{"n":123456789012345678901234567890}`,
		want: []want{{RuleNumberPrecision, 5, "/n"}}, value: `{"n":123456789012345678901234567890}`},
	{name: "2^53", rule: RuleNumberPrecision, line: `{"n":9007199254740992}`,
		want: []want{{RuleNumberPrecision, 5, "/n"}}, value: `{"n":9007199254740992}`},
	{name: "negative beyond 2^53", rule: RuleNumberPrecision, line: `{"n":[-9007199254740993]}`,
		want: []want{{RuleNumberPrecision, 6, "/n/0"}}, value: `{"n":[-9007199254740993]}`},
	{name: "overflow", rule: RuleNumberPrecision, line: `{"n":1e400}`,
		want: []want{{RuleNumberPrecision, 5, "/n"}}, msg: []string{"float64 range"}, value: `{"n":1e400}`},
	{name: "negative overflow", rule: RuleNumberPrecision, line: `{"n":-1.5E+309}`,
		want: []want{{RuleNumberPrecision, 5, "/n"}}, value: `{"n":-1.5E+309}`},
	{name: "underflow", rule: RuleNumberPrecision, line: `{"n":1e-400}`,
		want: []want{{RuleNumberPrecision, 5, "/n"}}, msg: []string{"underflow"}, value: `{"n":1e-400}`},
	{name: "largest safe integer", rule: RuleNumberPrecision, line: `{"n":9007199254740991,"m":-9007199254740991}`,
		value: `{"m":-9007199254740991,"n":9007199254740991}`},
	{name: "largest double", rule: RuleNumberPrecision, line: `{"n":1.7976931348623157e308,"m":5e-324,"z":0e-400}`,
		value: `{"m":5e-324,"n":1.7976931348623157e+308,"z":0}`},
	{name: "large float", rule: RuleNumberPrecision, line: `{"n":12345678901234567890.5}`, value: `{"n":12345678901234567000}`},
}

// canonical re-encodes a JSON text as json.Marshal writes it, keeping
// numbers as written; "nil" stays "nil".
func canonical(t *testing.T, s string) string {
	t.Helper()
	if s == "nil" {
		return s
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad expected value %s: %v", s, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseRules(t *testing.T) {
	for _, tt := range parseCases {
		t.Run(tt.rule.ID+"/"+tt.name, func(t *testing.T) {
			m, fs := Parse([]byte(tt.line), ParseOptions{})
			checkFindings(t, fs, tt.want)
			var all strings.Builder
			for _, f := range fs {
				all.WriteString(f.Message + "|" + f.Expected + "|" + f.Actual + "\n")
			}
			for _, s := range tt.msg {
				if !strings.Contains(all.String(), s) {
					t.Errorf("messages %q do not contain %q", all.String(), s)
				}
			}
			got := "nil"
			if m != nil {
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
			}
			if tt.value != "" && got != canonical(t, tt.value) {
				t.Errorf("value = %s, want %s", got, tt.value)
			}
		})
	}
}

// TestRulesCovered demands a triggering case and a near-miss for every
// rule of the package.
func TestRulesCovered(t *testing.T) {
	trig, miss := map[*finding.Rule]bool{}, map[*finding.Rule]bool{}
	for _, c := range parseCases {
		fired := false
		for _, w := range c.want {
			fired = fired || w.rule == c.rule
		}
		if fired {
			trig[c.rule] = true
		} else {
			miss[c.rule] = true
		}
	}
	for _, c := range framingCases {
		if len(c.want) > 0 {
			trig[c.rule] = true
		} else {
			miss[c.rule] = true
		}
	}
	for _, r := range Rules {
		if !trig[r] || !miss[r] {
			t.Errorf("rule %s: triggering case %v, near-miss %v", r.ID, trig[r], miss[r])
		}
	}
}

func TestRules(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if !strings.HasPrefix(r.ID, "jsonl/") || r.Requirement == "" || r.Source == "" {
			t.Errorf("rule %+v is incomplete", r)
		}
		if seen[r.ID] {
			t.Errorf("rule %s listed twice", r.ID)
		}
		seen[r.ID] = true
	}
	if len(Rules) != 15 {
		t.Errorf("%d rules, want 15", len(Rules))
	}
}

// TestNumbersKeptExactly checks the types, not just the JSON text.
func TestNumbersKeptExactly(t *testing.T) {
	m, _ := Parse([]byte(`{"big":123456789012345678901234567890,"inf":1e400,"ok":1.5,"int":42,"neg":-7,"nz":-0}`), ParseOptions{})
	wantVals := map[string]any{
		"big": json.Number("123456789012345678901234567890"),
		"inf": json.Number("1e400"),
		"ok":  1.5,
		"int": 42.0,
		"neg": -7.0,
		"nz":  0.0,
	}
	if !reflect.DeepEqual(m, wantVals) {
		t.Errorf("got %#v, want %#v", m, wantVals)
	}
}

// TestDeepNestingIsLinear parses very deep lines under a time budget that
// a quadratic algorithm or a stack overflow would blow.
func TestDeepNestingIsLinear(t *testing.T) {
	for _, n := range []int{10_000, 1_000_000} {
		line := strings.Repeat("[", n) + strings.Repeat("]", n)
		start := time.Now()
		m, fs := Parse([]byte(line), ParseOptions{})
		if m != nil || len(fs) != 1 || fs[0].Rule != RuleTooDeep {
			t.Errorf("depth %d: %v, %v", n, m, fs)
		}
		// A deadline with room for a loaded machine: a parse quadratic in
		// the depth would take hours at a million; the speed itself is
		// BenchmarkDeepNesting's.
		if d := time.Since(start); d > time.Minute {
			t.Errorf("depth %d took %v", n, d)
		}
	}
	// Duplicate keys make the decoder start over once, never more.
	for _, line := range []string{
		"{" + strings.Repeat(`"k":1,`, 200_000) + `"k":2}`,
		strings.Repeat(`{"a":1,"a":`, 900) + "0" + strings.Repeat("}", 900),
	} {
		start := time.Now()
		m, fs := Parse([]byte(line), ParseOptions{})
		if m == nil || len(fs) == 0 || fs[0].Rule != RuleDuplicateKey {
			t.Errorf("duplicates: %v, %d findings", m == nil, len(fs))
		}
		if d := time.Since(start); d > time.Minute {
			t.Errorf("%d-byte line with duplicates took %v", len(line), d)
		}
	}
	// Repeatable findings are capped per line.
	_, fs := Parse([]byte("{"+strings.Repeat(`"k":1,`, 150)+`"k":2}`), ParseOptions{})
	if len(fs) != maxPerRule || !strings.Contains(fs[len(fs)-1].Message, "50 more like this") {
		t.Errorf("%d duplicate findings, last %q", len(fs), fs[len(fs)-1].Message)
	}
	// An explicit limit applies.
	_, fs = Parse([]byte(`{"a":{"b":{"c":{}}}}`), ParseOptions{MaxDepth: 3})
	checkFindings(t, fs, []want{{RuleTooDeep, 15, "/a/b/c"}})
	_, fs = Parse([]byte(`{"a":{"b":{"c":1}}}`), ParseOptions{MaxDepth: 3})
	checkFindings(t, fs, nil)
}

func TestLocate(t *testing.T) {
	r := NewReader(strings.NewReader("\xef\xbb\xbf{\"a\":1,}\n{\"b\":\"\\ud800\"}\n"), Options{})
	var got []finding.Finding
	for {
		l, err := r.Next()
		if err != nil {
			break
		}
		_, fs := Parse(l.Bytes, ParseOptions{})
		Locate(fs, "s.jsonl", l)
		got = append(got, fs...)
	}
	if len(got) != 2 {
		t.Fatalf("got %v", got)
	}
	// Line 1: the '}' after the trailing comma is byte 10 of the file.
	if f := got[0]; f.File != "s.jsonl" || f.Line != 1 || f.Offset != 0 || f.Offset+int64(f.Column) != 10 {
		t.Errorf("line 1 finding = %+v", f)
	}
	// Line 2 starts at byte 12; the escape is at column 6.
	if f := got[1]; f.Line != 2 || f.Offset != 12 || f.Column != 6 || f.Pointer != "/b" {
		t.Errorf("line 2 finding = %+v", f)
	}
	if s := got[1].String(); !strings.HasPrefix(s, "s.jsonl:2: jsonl/lone-surrogate: ") || !strings.Contains(s, "byte 18") {
		t.Errorf("String() = %q", s)
	}
}

// TestParseDoesNotRetainInput overwrites the input after Parse: the result
// must not change.
func TestParseDoesNotRetainInput(t *testing.T) {
	line := []byte(`{"k":"short","long":"` + strings.Repeat("v", 100) + `","n":[1.5,"x\ny"],"big":99999999999999999999}`)
	m, _ := Parse(line, ParseOptions{})
	before, _ := json.Marshal(m)
	for i := range line {
		line[i] = 'X'
	}
	after, _ := json.Marshal(m)
	if string(before) != string(after) {
		t.Errorf("result changed with the input:\n%s\n%s", before, after)
	}
}

// TestParseConcurrent runs Parse from several goroutines; run with -race.
func TestParseConcurrent(t *testing.T) {
	lines := unifiedLines(200)
	want := make([]map[string]any, len(lines))
	for i, l := range lines {
		want[i], _ = Parse(l, ParseOptions{})
	}
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			ok := true
			for rep := 0; rep < 5; rep++ {
				for i, l := range lines {
					m, _ := Parse(l, ParseOptions{})
					ok = ok && reflect.DeepEqual(m, want[i])
				}
			}
			done <- ok
		}()
	}
	for g := 0; g < 4; g++ {
		if !<-done {
			t.Error("concurrent Parse gave a different result")
		}
	}
}

// TestParseAllocs pins the allocation budget of a typical clean line:
// the map (header and slot group) and nothing else once the short strings
// are interned. Findings, pointers and column maps must cost nothing when
// there is no problem.
func TestParseAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	line := []byte(`{"type":"toolStarted","toolName":"Edit","progress":0.5,"n":1737,"ok":true}`)
	allocs := testing.AllocsPerRun(100, func() {
		if m, fs := Parse(line, ParseOptions{}); m == nil || fs != nil {
			t.Fatal(m, fs)
		}
	})
	t.Logf("%v allocations per Parse", allocs)
	if allocs > 2.5 {
		t.Errorf("Parse of a clean line: %v allocations, want about 2", allocs)
	}
}

// BenchmarkDeepNesting measures Parse on lines nested 10,000 and 1,000,000
// deep: the time per byte must stay flat (linear in the depth).
func BenchmarkDeepNesting(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		line := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for i := 0; i < b.N; i++ {
				Parse(line, ParseOptions{})
			}
		})
	}
}
