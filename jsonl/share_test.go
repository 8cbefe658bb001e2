package jsonl

import (
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
