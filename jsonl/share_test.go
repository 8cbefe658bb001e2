package jsonl

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestShareMin checks that ShareMin changes nothing in what Parse gives,
// and that the long plain strings then lie in the line while strings with
// escapes (decoded into a buffer of the decoder's) and short ones do not.
func TestShareMin(t *testing.T) {
	long := strings.Repeat("x", 100)
	line := []byte(`{"a":"` + long + `","b":"` + long + `\n","c":"short","d":["` + long + `",{"e":"` + long + `"}],"\u0066":1}`)
	want, wantF := Parse(line, ParseOptions{})
	got, gotF := Parse(line, ParseOptions{ShareMin: 50})
	if !reflect.DeepEqual(want, got) || !reflect.DeepEqual(wantF, gotF) {
		t.Fatalf("ShareMin changed the result:\n%v %v\n%v %v", got, gotF, want, wantF)
	}
	in := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		lo := uintptr(unsafe.Pointer(&line[0]))
		return p >= lo && p < lo+uintptr(len(line))
	}
	d := got["d"].([]any)
	for name, c := range map[string]struct {
		s     string
		share bool
	}{
		"a":      {got["a"].(string), true},
		"b":      {got["b"].(string), false},
		"c":      {got["c"].(string), false},
		"d[0]":   {d[0].(string), true},
		"d[1].e": {d[1].(map[string]any)["e"].(string), true},
	} {
		if in(c.s) != c.share {
			t.Errorf("%s: shares the line %v, want %v", name, in(c.s), c.share)
		}
	}
	got, _ = Parse(line, ParseOptions{ShareMin: 200})
	if in(got["a"].(string)) {
		t.Errorf("a string shorter than ShareMin shares the line")
	}
	got, _ = Parse(line, ParseOptions{})
	if in(got["a"].(string)) {
		t.Errorf("a string shares the line without ShareMin")
	}
}

// TestLongEscapedStrings decodes strings longer than longSlow with
// escapes, invalid UTF-8 and lone surrogates, as keys and values, as
// encoding/json decodes them.
func TestLongEscapedStrings(t *testing.T) {
	pad := strings.Repeat("p", longSlow)
	for _, body := range []string{
		`a\n` + pad,
		pad + `\"` + pad + `\\`,
		`\u00e9\ud83d\ude00` + pad + `\ud800 lone`,
		pad + "\xff\xfe invalid",
		pad + `\\\"` + pad,
	} {
		line := []byte(`{"k":"` + body + `","` + body + `":1,"arr":["` + body + `"]}`)
		got, fs := Parse(line, ParseOptions{})
		var want map[string]any
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		if got == nil || got["k"] != want["k"] || !reflect.DeepEqual(got["arr"], want["arr"]) || len(got) != len(want) {
			t.Errorf("%.40q...: Parse differs from encoding/json (findings %v)", body, fs)
		}
	}
}
