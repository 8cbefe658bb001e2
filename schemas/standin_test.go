package schemas

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// longValues are long strings of several makes: plain ASCII, a valid
// timestamp padded out, multi-byte characters with a character across
// the stand-in's cut, invalid UTF-8, and a string starting with a short
// value a schema may name.
func longValues(prefix string) []string {
	n := longString + 1000
	multi := strings.Repeat("é", standInLen/2-1) + "€" + strings.Repeat("ü", n/2)
	return []string{
		strings.Repeat("x", n),
		"2024-01-02T03:04:05Z" + strings.Repeat(" ", n),
		multi,
		strings.Repeat("a\xff\xe2\x82", n/4),
		strings.Repeat("\U0001F600", n/4),
		prefix + strings.Repeat("<&>\u2028", n/6),
	}
}

// replaceLeaves calls f with a copy of v for every string in it replaced
// by each of the long values (made from that string).
func replaceLeaves(v any, f func(any, string)) {
	var walk func(cur any, set func(any) any, ptr string)
	walk = func(cur any, set func(any) any, ptr string) {
		switch x := cur.(type) {
		case string:
			for _, l := range longValues(x) {
				f(set(l), ptr)
			}
		case map[string]any:
			for k, e := range x {
				walk(e, func(nv any) any {
					c := make(map[string]any, len(x))
					for kk, vv := range x {
						c[kk] = vv
					}
					c[k] = nv
					return set(c)
				}, ptr+"/"+k)
			}
		case []any:
			for i, e := range x {
				walk(e, func(nv any) any {
					c := append([]any(nil), x...)
					c[i] = nv
					return set(c)
				}, ptr+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(v, func(nv any) any { return nv }, "")
}

// agree holds Validate with stand-ins to Validate without them on obj.
func agree(t *testing.T, v *Validator, obj map[string]any, what string) {
	t.Helper()
	want := v.validate(obj, false)
	got := v.validate(obj, true)
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("%s, %s: stand-ins change the result (-without +with):\n%s", v.File, what, d)
	}
}

// TestStandInsAgreeOnEventSchemas puts long strings in every string of
// every seed event and checks that every event schema judges the events
// alike with stand-ins and without.
func TestStandInsAgreeOnEventSchemas(t *testing.T) {
	var events []map[string]any
	files, _ := filepath.Glob(filepath.Join(testSeedsDir, "*.jsonl"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m != nil {
				events = append(events, m)
			}
		}
		fh.Close()
	}
	var schemaFiles []string
	fs.WalkDir(FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "event.schema.json") || strings.HasSuffix(p, "events.schema.json") || strings.HasSuffix(p, "stdout.schema.json") {
			schemaFiles = append(schemaFiles, p)
		}
		return nil
	})
	if len(events) < 20 || len(schemaFiles) < 5 {
		t.Fatalf("%d events, %d schema files", len(events), len(schemaFiles))
	}
	for _, file := range schemaFiles {
		v, err := NewSet(FS()).Compile(file, "")
		if err != nil {
			t.Fatal(err)
		}
		for i, ev := range events {
			replaceLeaves(ev, func(nv any, ptr string) {
				agree(t, v, nv.(map[string]any), "event "+strconv.Itoa(i)+" long at "+ptr)
			})
		}
	}
}

// standInSchema has every keyword a string may meet, each at a property
// of its own, and the places a stand-in must not go.
var standInSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "plain": {"type": "string"},
    "pattern": {"type": "string", "pattern": "^x*$"},
    "patternNo": {"type": "string", "pattern": "^y"},
    "format": {"type": "string", "format": "date-time"},
    "email": {"format": "email"},
    "maxSmall": {"maxLength": 10},
    "maxBig": {"maxLength": 100000000},
    "maxNear": {"maxLength": ` + strconv.Itoa(longString+1000) + `},
    "minSmall": {"minLength": 5},
    "minBig": {"minLength": 1000000},
    "minNear": {"minLength": 40},
    "const": {"const": "x"},
    "constObj": {"const": {"a": "x"}},
    "enum": {"enum": ["a", "b", 1, null]},
    "enumLong": {"enum": ["` + strings.Repeat("x", standInLen) + `"]},
    "constLong": {"const": "` + strings.Repeat("x", standInLen+50) + `"},
    "notType": {"type": "integer"},
    "notString": {"not": {"type": "string"}},
    "oneOf": {"oneOf": [{"type": "string"}, {"maxLength": 3}]},
    "anyOf": {"anyOf": [{"type": "integer"}, {"pattern": "^x"}]},
    "ifThen": {"if": {"minLength": 2}, "then": {"maxLength": 5}, "else": {"type": "integer"}},
    "ref": {"$ref": "#/$defs/short"},
    "encoded": {"contentEncoding": "base64"},
    "media": {"contentMediaType": "application/json"},
    "unique": {"type": "array", "uniqueItems": true},
    "enumObj": {"enum": [{"a": "x"}, "y"]},
    "constArr": {"const": ["x"]},
    "contains": {"type": "array", "contains": {"pattern": "^z"}},
    "prefix": {"type": "array", "prefixItems": [{"type": "string"}, {"maxLength": 2}], "items": {"format": "date"}},
    "nested": {"type": "object", "properties": {"deep": {"type": "array", "items": {"$ref": "#/$defs/short"}}}, "additionalProperties": {"pattern": "^q"}},
    "patternProps": {"type": "object", "patternProperties": {"^p": {"maxLength": 1}}, "unevaluatedProperties": {"format": "uri"}},
    "dependent": {"type": "object", "dependentSchemas": {"a": {"properties": {"b": {"maxLength": 1}}}}}
  },
  "additionalProperties": {"type": "string", "maxLength": 4},
  "$defs": {"short": {"type": "string", "maxLength": 8}}
}`

// TestStandInsAgreeOnEveryKeyword checks a schema with every keyword that
// can look at a string, long strings in each of its places, alone and
// together, against the results without stand-ins; and that a long
// string that breaks the schema is reported, with its place.
func TestStandInsAgreeOnEveryKeyword(t *testing.T) {
	fsys := fstest.MapFS{"s.schema.json": {Data: []byte(standInSchema)}}
	v, err := NewSet(fsys).Compile("s.schema.json", "")
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	json.Unmarshal([]byte(standInSchema), &root)
	base := map[string]any{}
	for k := range root["properties"].(map[string]any) {
		base[k] = "x"
	}
	for _, k := range []string{"unique", "contains", "prefix", "constArr"} {
		base[k] = []any{"x", "z", "x"}
	}
	base["nested"] = map[string]any{"deep": []any{"x"}, "other": "q"}
	base["patternProps"] = map[string]any{"p1": "x", "o": "x"}
	base["dependent"] = map[string]any{"a": "x", "b": "x"}
	base["enumObj"] = map[string]any{"a": "x"}
	base["constObj"] = map[string]any{"a": "x"}
	base["extra"] = "x"
	replaceLeaves(base, func(nv any, ptr string) {
		agree(t, v, nv.(map[string]any), "long at "+ptr)
	})
	// Every string long at once.
	all := map[string]any{}
	for k, e := range base {
		if _, ok := e.(string); ok {
			all[k] = longValues("x")[0]
		} else {
			all[k] = e
		}
	}
	agree(t, v, all, "all long")
	// Long strings a stand-in would be judged otherwise than.
	long := longValues("x")[0]
	for i, obj := range []map[string]any{
		{"unique": []any{long + "a", long + "b"}},
		{"unique": []any{long, long}},
		{"encoded": long + "!"},
		{"media": `"` + long + `"`},
		{"enumLong": long},
		{"constLong": long},
		{"minNear": longValues("x")[5]},
		{"maxNear": long},
		{"contains": []any{"z" + long}},
	} {
		agree(t, v, obj, "special "+strconv.Itoa(i))
	}

	// A long string that breaks the schema is still reported, where it is.
	res := v.Validate(map[string]any{"plain": long, "maxSmall": long, "format": long, "pattern": long + "y", "enum": long})
	var ptrs []string
	for _, p := range res.Problems {
		ptrs = append(ptrs, p.Pointer+" "+p.Keyword)
		if len(p.Actual) > 80 || len(p.Message) > 200 && p.Keyword != "format" && p.Keyword != "pattern" {
			t.Errorf("%s: a long rendering: %d, %d bytes", p.Pointer, len(p.Actual), len(p.Message))
		}
	}
	want := []string{"/enum enum", "/format format", "/maxSmall maxLength", "/pattern pattern"}
	if !cmp.Equal(ptrs, want) {
		t.Errorf("problems at %v, want %v", ptrs, want)
	}
}

// TestStandInsAreUsed checks that the stand-ins do stand in where the
// runner needs them: a unified textChunk's content and a shim text
// event's, a Claude assistant message's text; and that a long timestamp
// (format date-time) is kept.
func TestStandInsAreUsed(t *testing.T) {
	long := longValues("x")[0]
	tests := []struct {
		p     Profile
		d     Dialect
		event map[string]any
		want  bool
	}{
		{Unified, UnifiedEvents, map[string]any{"type": "textChunk", "id": "e", "sessionId": "s", "timestamp": "2024-01-02T03:04:05Z", "content": long}, true},
		{Unified, UnifiedEvents, map[string]any{"type": "textChunk", "id": "e", "sessionId": "s", "timestamp": long, "content": "x"}, false},
		{Shim, ShimEvents, map[string]any{"type": "text", "content": long}, true},
		{Observed, Claude, map[string]any{"type": "assistant", "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": long}}}}, true},
	}
	for _, tt := range tests {
		v, err := Load(tt.p, tt.d, "")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := v.pick(tt.event)
		if b == nil {
			t.Fatalf("%s: no branch for %v", v.File, tt.event["type"])
		}
		inst := b.withStandIns(tt.event)
		used := false
		replaceLeaves(inst, func(any, string) {}) // walks it: it must be well formed
		if b, _ := json.Marshal(inst); len(b) < longString {
			used = true
		}
		if used != tt.want {
			t.Errorf("%s, %v: stand-in used %v, want %v", v.File, tt.event["type"], used, tt.want)
		}
		agree(t, v, tt.event, "the runner's event")
		if _, ok := tt.event["content"]; ok && tt.event["content"] != long && tt.event["timestamp"] != long {
			t.Errorf("withStandIns changed the event")
		}
	}
}
