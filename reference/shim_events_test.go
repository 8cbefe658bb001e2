package reference

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzShimToolResultMarshal holds ShimToolResult's hand-written content
// member to what encoding/json writes for the same struct.
func FuzzShimToolResultMarshal(f *testing.F) {
	f.Add("t1", []byte(`"ok"`), false)
	f.Add("t2", []byte(` { "output" : "x <&>" } `), true)
	f.Add("t3", []byte(`null`), false)
	f.Add("t4", []byte(``), false)
	f.Add("t5", []byte(`[1,`), false)
	f.Fuzz(func(t *testing.T, id string, content []byte, isErr bool) {
		e := &ShimToolResult{ToolUseID: id, Content: content, IsError: isErr}
		type plain ShimToolResult
		c := *e
		if isNull(c.Content) {
			c.Content = json.RawMessage(`""`)
		}
		want, werr := marshalShim("tool_result", "", (*plain)(&c))
		got, gerr := e.MarshalJSON()
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("content %q: MarshalJSON error %v, encoding/json error %v", content, gerr, werr)
		}
		if werr == nil && string(got) != string(want) {
			t.Fatalf("content %q:\n got %s\nwant %s", content, got, want)
		}
	})
}

// FuzzShimTextMarshal holds the hand-written ShimText and ShimThinking
// lines to what encoding/json writes for the same structs.
func FuzzShimTextMarshal(f *testing.F) {
	for _, s := range []string{"", "plain", `"q" \ <&> `, "é 漢 \u2028\u2029\t\n\x01\x7f\xff", "\xff\xfe", "\xed\xa0\x80"} {
		f.Add(s, true)
	}
	f.Add("x", false)
	f.Fuzz(func(t *testing.T, text string, thinking bool) {
		type plainText ShimText
		want, werr := marshalShim("text", "", (*plainText)(&ShimText{Content: text}))
		got, gerr := (&ShimText{Content: text}).MarshalJSON()
		if werr != nil || gerr != nil || string(got) != string(want) {
			t.Fatalf("text %q:\n got %s (%v)\nwant %s (%v)", text, got, gerr, want, werr)
		}
		type plainThinking ShimThinking
		e := &ShimThinking{IsThinking: thinking, Thought: text}
		want, werr = marshalShim("thinking", "", (*plainThinking)(e))
		got, gerr = e.MarshalJSON()
		if werr != nil || gerr != nil || string(got) != string(want) {
			t.Fatalf("thinking %q:\n got %s (%v)\nwant %s (%v)", text, got, gerr, want, werr)
		}
	})
}

// FuzzJSONStringValue holds jsonStringValue to json.Unmarshal into a
// string: the same value when the bytes are one JSON string, and no value
// when they are anything else.
func FuzzJSONStringValue(f *testing.F) {
	for _, s := range []string{`"plain"`, ` "a\nb\t\"q\" \\ \/ \b\f\r" `, `"\u00e9\u2028\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`,
		`"\udc00\ud800"`, "\"\xff\xfe ok\"", `"é"`, `"a`, `"\x"`, `"\u12"`, `5`, `null`, `["a"]`, `"a" "b"`, "\"a\tb\"", `"\'"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		werr := json.Unmarshal(raw, &want)
		got, ok := jsonStringValue(raw)
		if i := skipWS(raw, 0); werr == nil && !ok && i < len(raw) && raw[i] == '"' {
			t.Fatalf("%q: json.Unmarshal gives %q, jsonStringValue nothing", raw, want)
		}
		if ok && (werr != nil || got != want) {
			t.Fatalf("%q: jsonStringValue %q, json.Unmarshal %q (error %v)", raw, got, want, werr)
		}
	})
}

// FuzzShimContentText holds a tool result's content as the shim shows it
// from the text the parser had to what it shows from the result decoded
// again.
func FuzzShimContentText(f *testing.F) {
	for _, s := range []string{"", "out\n", `"q" \ <&>`, "é 漢 \u2028\t\x01\x7f", "\xff\xfe", strings.Repeat("long output line\n", 2000)} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, ok bool) {
		with := factToolEnd{id: "t", ok: ok, result: jsonString(text), text: text, isText: true}
		without := with
		without.text, without.isText = "", false
		if got, want := shimContent(with), shimContent(without); string(got) != string(want) {
			t.Fatalf("text %q: content %.200s, decoded again %.200s", text, got, want)
		}
	})
}
