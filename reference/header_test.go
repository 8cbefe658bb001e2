package reference

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// headerSeeds are lines whose headers the fast pass must read exactly as
// json.Unmarshal does, or hand to it: escapes, case-folded and duplicate
// keys, values of the wrong kind, nesting, and lines that are not JSON.
var headerSeeds = []string{
	`{"type":"assistant","session_id":"s1","message":{"content":[{"type":"text","text":"hi \"there\""}]}}`,
	`{"type":"system","subtype":"init","session_id":"s"}`,
	` { "type" : "result" , "subtype" : "success" } `,
	`{"Type":"result"}`,
	`{"TYPE":"a","type":"b"}`,
	`{"type":"a","type":"b"}`,
	`{"type":"a","type":5}`,
	`{"type":null}`,
	`{"typ\u0065":"x"}`,
	`{"type":"caf\u00e9"}`,
	`{"type":"café"}`,
	`{"ſubtype":"x","type":"y"}`,
	`{"message":{"a":[1,2,{"b":"}"}]},"type":"t"}`,
	`{"session_id":{"a":1},"type":"t"}`,
	`{"x":"\\","type":"t"}`,
	`{"x":[],"y":{},"z":-1.5e3,"w":true,"v":null,"type":"t"}`,
	`{}`,
	`[]`,
	`"type"`,
	`{"type":"a"`,
	`{"type":"a"}}`,
	`{"type":"a",}`,
	``,
	`{"type":"a\u0000"}`,
	"{\"type\":\"a\tb\"}",
	`{"n":[-0,0.5,1e5,-1E+2,2.5e-3],"type":"t"}`,
	`{"n":01,"type":"t"}`,
	`{"n":-,"type":"t"}`,
	`{"n":1.,"type":"t"}`,
	`{"s":"\u12g4","type":"t"}`,
	`{"s":"\x","type":"t"}`,
	`{"a":tru,"type":"t"}`,
	`{"a":[1,],"type":"t"}`,
	`{"a":{"b":1,},"type":"t"}`,
	`{"a" "b","type":"t"}`,
	`{"type":"t"} x`,
	`{"type":"t"}` + "\n",
	"\xef\xbb\xbf{\"type\":\"t\"}",
	"{\"s\":\"\xff\xfe\",\"type\":\"t\"}",
}

func init() {
	// Nesting on both sides of encoding/json's limit.
	for _, n := range []int{9998, 9999, 10000, 10001} {
		headerSeeds = append(headerSeeds, `{"type":"t","a":`+strings.Repeat("[", n)+strings.Repeat("]", n)+`}`)
	}
}

// FuzzReadHeader checks the fast header reader against json.Unmarshal on
// any bytes: the same header, or the same failure.
func FuzzReadHeader(f *testing.F) {
	for _, s := range headerSeeds {
		f.Add([]byte(s))
	}
	long := strings.Repeat("x", longString)
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"text":"` + long + `"}],"id":"` + long[1:] + `"},"session_id":"` + long + `"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, typeOnly := range []bool{false, true} {
			got, gerr := readHeader(raw, "cli", typeOnly)
			var want lineHeader
			var werr error
			if typeOnly {
				var th typeHeader
				werr = json.Unmarshal(raw, &th)
				want.Type = th.Type
			} else {
				werr = json.Unmarshal(raw, &want)
			}
			if (gerr != nil) != (werr != nil) {
				t.Fatalf("typeOnly=%v %q: readHeader error %v, json.Unmarshal error %v", typeOnly, raw, gerr, werr)
			}
			if werr == nil && got != want {
				t.Fatalf("typeOnly=%v %q: readHeader %+v, json.Unmarshal %+v", typeOnly, raw, got, want)
			}
			// The long strings the pass notes are those longStrings finds.
			if _, sc, _ := scanHeader(raw, "cli", typeOnly); sc.known {
				longs, ok := longStrings(raw)
				if !ok || !slices.Equal(longs, sc.longs) {
					t.Fatalf("typeOnly=%v %q: the header pass notes long strings %v, longStrings %v (%v)", typeOnly, raw, sc.longs, longs, ok)
				}
			}
		}
	})
}

// TestReadHeaderFastPass checks that ordinary lines take the fast pass
// (so that it is not silently always falling back).
func TestReadHeaderFastPass(t *testing.T) {
	for _, s := range []string{headerSeeds[0], headerSeeds[1], headerSeeds[2], headerSeeds[12], headerSeeds[14], headerSeeds[15]} {
		var h lineHeader
		if !json.Valid([]byte(s)) || !h.scan([]byte(s), false, new([]span)) {
			t.Errorf("%s: fast pass declined", s)
		}
	}
	var h lineHeader
	for _, s := range []string{`{"Type":"result"}`, `{"typ\u0065":"x"}`, `{"type":"café"}`, `{"type":null}`} {
		if h.scan([]byte(s), false, new([]span)) {
			t.Errorf("%s: fast pass accepted a line only json.Unmarshal reads right", s)
		}
	}
}

// FuzzMentionsControl holds mentionsControl to bytes.Contains.
func FuzzMentionsControl(f *testing.F) {
	for _, s := range []string{"", "control_", "xcontrol_request", "control", "_control", "contro_l_", strings.Repeat("_", 5000) + "control_",
		strings.Repeat("a_", 3000) + "control_x", "control_" + strings.Repeat("_", 100)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := mentionsControl(b), bytes.Contains(b, []byte("control_")); got != want {
			t.Fatalf("%q: mentionsControl %v, bytes.Contains %v", b, got, want)
		}
	})
}
