package schemas

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func demo(t *testing.T) *Validator {
	t.Helper()
	v, err := NewSet(os.DirFS("testdata/loader")).Compile("observed/demo/1.0.0/events.schema.json", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestValidatorDispatchAndDrift(t *testing.T) {
	v := demo(t)
	if got, want := v.Types(), []string{"item", "start", "system"}; !cmp.Equal(got, want) {
		t.Fatalf("Types() = %v, want %v", got, want)
	}
	tests := []struct {
		name     string
		event    string
		kind     string
		problems []Problem
		drift    []Drift
	}{
		{name: "clean", event: `{"type":"start","id":"a","usage":{"in":1,"out":2},"input":{"cmd":"ls","extra":1},"free":{"x":1}}`, kind: "start"},
		{name: "missing required names the property", event: `{"type":"start"}`, kind: "start",
			problems: []Problem{{Pointer: "/id", Keyword: "required", Message: "missing required property id", Expected: "property id", Actual: "missing"}}},
		{name: "wrong type in a $ref'd child", event: `{"type":"start","id":"a","usage":{"in":"1"}}`, kind: "start",
			problems: []Problem{{Pointer: "/usage/in", Keyword: "type", Expected: "integer", Actual: "string"}}},
		{name: "format asserted", event: `{"type":"start","id":"a","ts":"yesterday"}`, kind: "start",
			problems: []Problem{{Pointer: "/ts", Keyword: "format", Expected: "date-time", Actual: `"yesterday"`}}},
		{name: "unknown top-level field is drift, also through allOf base", event: `{"type":"start","id":"a","new":1}`, kind: "start",
			drift: []Drift{{Kind: UnknownField, Pointer: "/new", Name: "new"}}},
		{name: "unknown nested field is drift", event: `{"type":"start","id":"a","usage":{"in":1,"cache":3}}`, kind: "start",
			drift: []Drift{{Kind: UnknownField, Pointer: "/usage/cache", Name: "cache"}}},
		{name: "violation and drift together", event: `{"type":"start","usage":{"in":1,"cache":3}}`, kind: "start",
			problems: []Problem{{Pointer: "/id", Keyword: "required", Message: "missing required property id", Expected: "property id", Actual: "missing"}},
			drift:    []Drift{{Kind: UnknownField, Pointer: "/usage/cache", Name: "cache"}}},
		{name: "unknown type", event: `{"type":"bogus","x":1}`, drift: []Drift{{Kind: UnknownType, Pointer: "/type", Name: "bogus"}}},
		{name: "subtype dispatch", event: `{"type":"system","subtype":"init"}`, kind: "system/init",
			problems: []Problem{{Pointer: "/model", Keyword: "required", Message: "missing required property model", Expected: "property model", Actual: "missing"}}},
		{name: "subtype enum group", event: `{"type":"system","subtype":"notice"}`, kind: "system/notice"},
		{name: "unknown subtype", event: `{"type":"system","subtype":"weird"}`, kind: "system", drift: []Drift{{Kind: UnknownSubtype, Pointer: "/subtype", Name: `system/"weird"`}}},
		{name: "missing subtype", event: `{"type":"system"}`, kind: "system",
			problems: []Problem{{Pointer: "/subtype", Keyword: "required", Message: `a "system" event must have a subtype`, Expected: "a subtype", Actual: "no subtype"}}},
		{name: "an enum of one item kind does not constrain another kind's field", event: `{"type":"item","item":{"id":"i","type":"msg","text":"hi","kind":"anything"}}`, kind: "item"},
		{name: "if/then item fields known", event: `{"type":"item","item":{"id":"i","type":"cmd","command":"ls","status":"ok"}}`, kind: "item"},
		{name: "if/then item violation", event: `{"type":"item","item":{"id":"i","type":"cmd","command":"ls","status":"weird"}}`, kind: "item",
			problems: []Problem{{Pointer: "/item/status", Keyword: "enum", Expected: `one of "ok", "failed"`, Actual: `"weird"`}}},
		{name: "unknown item type is drift with its fields", event: `{"type":"item","item":{"id":"i","type":"plan","steps":[]}}`, kind: "item",
			drift: []Drift{{Kind: UnknownValue, Pointer: "/item/type", Name: `"plan"`}, {Kind: UnknownField, Pointer: "/item/steps", Name: "steps"}}},
		// Documented limit of the closed variant: a name declared by any kind
		// of a polymorphic object is known for all its kinds.
		{name: "field of another item kind is known", event: `{"type":"item","item":{"id":"i","type":"msg","text":"hi","command":"ls"}}`, kind: "item"},
		{name: "no type", event: `{"x":1}`,
			problems: []Problem{{Pointer: "/type", Keyword: "required", Message: "the event has no type field", Expected: "a string naming the event type (item, start, system)", Actual: "no type"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := v.Validate(decode(t, tt.event))
			if res.Kind != tt.kind {
				t.Errorf("Kind = %q, want %q", res.Kind, tt.kind)
			}
			ignoreMsg := cmpopts.IgnoreFields(Problem{}, "Message")
			opts := []cmp.Option{cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b Drift) bool { return a.Pointer < b.Pointer })}
			wantHasMsg := len(tt.problems) > 0 && tt.problems[0].Message != ""
			if !wantHasMsg {
				opts = append(opts, ignoreMsg)
			}
			if d := cmp.Diff(tt.problems, res.Problems, opts...); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.drift, res.Drift, opts...); d != "" {
				t.Errorf("drift (-want +got):\n%s", d)
			}
		})
	}
}

func TestVersions(t *testing.T) {
	fsys := os.DirFS("testdata/loader")
	vs, err := Versions(fsys, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(vs, []string{"1.0.0", "2.0.0"}) {
		t.Fatalf("Versions = %v", vs)
	}
	for want, ask := range map[string]string{"2.0.0": "", "1.0.0": "0.1", "1.0.0 ": "1.9.9", "2.0.0 ": "10.0.0"} {
		if got := pickVersion(vs, ask); got+" " != want && got != want {
			t.Errorf("pickVersion(%q) = %q, want %q", ask, got, want)
		}
	}
	if CompareVersions("0.61.0", "0.169.0") >= 0 || CompareVersions("2.1.329", "2.1.197") <= 0 {
		t.Error("compareVersions must compare numerically")
	}
}
