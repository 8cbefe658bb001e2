package fakecli

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/transcript"
)

// rawMemberDecoder is what rawMember replaced: json.Decoder reading the
// members one by one (each value copied). rawMember must agree with it.
func rawMemberDecoder(line []byte, key string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		if k, _ := kt.(string); k == key {
			return raw
		}
	}
	return nil
}

// TestRawMemberAgrees compares rawMember and rawElements with
// encoding/json on every member and array of every fixture line, and on
// lines with white space, escapes and duplicates where json.Decoder
// reads them in its own way.
func TestRawMemberAgrees(t *testing.T) {
	lines := []string{
		` { "a" :  {"x": 1 } , "b":2}`,
		`{"\u0061":"first","a":"second"}`,
		`{"a":"quote \" and backslash \\","b":[1, "]", {"c":"}"}]}`,
		`{"a":"ends in backslash \\\\","b":true}`,
		`{"a":[ {"k":1} , "x" ,3, null, [] ]}`,
		`{"a":[]}`,
		`{"a":null}`,
		`{}`,
		`[1,2]`,
		`{"a":1,}`,
	}
	all, err := fixtures.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range all {
		tr, err := fixtures.Load(fx.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range tr.Steps {
			if st.Op == transcript.OpOut || st.Op == transcript.OpIn && st.Text != "" {
				lines = append(lines, st.Text)
			}
		}
	}
	var walk func(raw []byte, depth int)
	walk = func(raw []byte, depth int) {
		if depth > 6 {
			return
		}
		obj, _ := jsonl.Parse(raw, jsonl.ParseOptions{})
		keys := []string{"a", "nope"}
		for k := range obj {
			keys = append(keys, k)
		}
		for _, k := range keys {
			got, want := rawMember(raw, k), rawMemberDecoder(raw, k)
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("rawMember(%.200s, %q) = %.200q, encoding/json says %.200q", raw, k, got, want)
				continue
			}
			if got == nil {
				continue
			}
			walk(got, depth+1)
			var elems []json.RawMessage
			jerr := json.Unmarshal(got, &elems)
			mine, ok := rawElements(got)
			if ok != (jerr == nil && elems != nil) || !slices.EqualFunc(mine, elems, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
				t.Errorf("rawElements(%.200s) = %.200q %v, encoding/json says %.200q %v", got, mine, ok, elems, jerr)
			}
			for _, el := range mine {
				walk(el, depth+1)
			}
		}
	}
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			walk([]byte(l), 0)
		}
	}
}
