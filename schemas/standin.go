package schemas

import (
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The schema library copies every string it validates (a []byte of it,
// for contentEncoding, whether the schema has one or not): a 64 MiB text
// in an event costs a 64 MiB copy per schema that applies to it, in one
// memmove no goroutine preemption can cut short. Validate therefore hands
// the library a stand-in for a long string (longString bytes or more) in
// the place of every schema that could look at it is provably blind to
// the difference, and the string itself everywhere else.
//
// The stand-in is the string's first standInLen bytes or so (cut where a
// character starts). Every keyword then judges it as it judges the
// string: "type" sees a string either way; "const" and "enum" values that
// are strings shorter than the stand-in (or not strings) equal neither;
// "minLength" up to a quarter of the stand-in's length holds for both (a
// character is at most 4 bytes); "maxLength" at least the string's length
// in bytes holds for both; and the errors render the two alike (Problem's
// Actual keeps a value's first 77 bytes, the messages of "const" and
// "enum" do not show it). A schema at the string's place with any other
// content keyword ("pattern", "format", "contentEncoding",
// "contentMediaType"), with a "minLength", "maxLength", "const" or "enum"
// beyond those bounds, or an extension, a "$dynamicRef" or a
// "$recursiveRef" (what they reach depends on the instance) keeps the
// string; so does one at a place that holds it with "const", "enum",
// "uniqueItems" or "format" (they compare or read the whole value there).

// longString is the length from which Validate considers a stand-in (a
// Claude text streamed as 16 KiB deltas is judged by stand-ins too).
const longString = 4 << 10

// standInLen is about the length of a stand-in.
const standInLen = 128

// maxStandInWalk bounds the schemas visited to clear one string; past it
// the string is kept.
const maxStandInWalk = 4096

// step is one step of the path from the event to a value in it: a
// property name, or an array index.
type step struct {
	key   string
	index int // -1 for a property
}

// withStandIns returns obj with a stand-in for every long string that
// b's schema is blind to, copying the objects and arrays on the way to
// them (obj itself is not changed); obj itself when there is none.
func (b *branch) withStandIns(obj map[string]any) map[string]any {
	var path [16]step
	out, changed := b.standIns(obj, path[:0])
	if !changed {
		return obj
	}
	return out.(map[string]any)
}

func (b *branch) standIns(v any, path []step) (any, bool) {
	switch x := v.(type) {
	case string:
		if len(x) < longString {
			return v, false
		}
		s := standIn(x)
		if !blindAt(b.schema, path, len(x), len(s)) {
			return v, false
		}
		return s, true
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if ne, ok := b.standIns(e, append(path, step{key: k, index: -1})); ok {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			if ne, ok := b.standIns(e, append(path, step{index: i})); ok {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// standIn returns the first standInLen bytes of s or a little less, cut
// where a character starts.
func standIn(s string) string {
	n := standInLen
	for n > standInLen-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// blindAt reports whether every schema that root may apply to the value
// at path (a string of n bytes; its stand-in has m) judges a stand-in as
// it judges the string (see above).
func blindAt(root *jsonschema.Schema, path []step, n, m int) bool {
	w := blindWalk{n: n, m: m, seen: map[blindKey]bool{}}
	return w.blind(root, path)
}

type blindKey struct {
	s    *jsonschema.Schema
	left int // steps of the path still to go
}

type blindWalk struct {
	n, m int
	seen map[blindKey]bool
}

// blind reports whether s, applied to the value at the end of the path
// less rest, is blind to the string at the path's end. A schema already
// visited at the same place adds nothing (that visit answers for it).
func (w *blindWalk) blind(s *jsonschema.Schema, rest []step) bool {
	if s == nil || s.Bool != nil {
		return true
	}
	k := blindKey{s, len(rest)}
	if w.seen[k] {
		return true
	}
	w.seen[k] = true
	if len(w.seen) > maxStandInWalk {
		return false
	}
	if s.DynamicRef != nil || s.RecursiveRef != nil || len(s.Extensions) > 0 ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil {
		return false
	}
	// The schemas that apply at the same place.
	same := []*jsonschema.Schema{s.Ref, s.Not, s.If, s.Then, s.Else}
	same = append(same, s.AllOf...)
	same = append(same, s.AnyOf...)
	same = append(same, s.OneOf...)
	for _, d := range s.DependentSchemas {
		same = append(same, d)
	}
	for _, d := range s.Dependencies {
		if d, ok := d.(*jsonschema.Schema); ok {
			same = append(same, d)
		}
	}
	for _, sub := range same {
		if !w.blind(sub, rest) {
			return false
		}
	}
	if len(rest) == 0 {
		return w.blindToString(s)
	}
	if s.Const != nil || s.Enum != nil || s.UniqueItems || s.Format != nil {
		return false
	}
	// The schemas that apply to the next step (all that may, whether or
	// not they do).
	var next []*jsonschema.Schema
	if rest[0].index < 0 {
		if p, ok := s.Properties[rest[0].key]; ok {
			next = append(next, p)
		}
		for _, p := range s.PatternProperties {
			next = append(next, p)
		}
		next = append(next, s.UnevaluatedProperties)
		if p, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			next = append(next, p)
		}
	} else {
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			next = append(next, it)
		case []*jsonschema.Schema:
			next = append(next, it...)
		}
		if p, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
			next = append(next, p)
		}
		next = append(next, s.PrefixItems...)
		next = append(next, s.Items2020, s.Contains, s.UnevaluatedItems)
	}
	for _, sub := range next {
		if !w.blind(sub, rest[1:]) {
			return false
		}
	}
	return true
}

// blindToString reports whether s's own keywords judge the string and
// its stand-in alike.
func (w *blindWalk) blindToString(s *jsonschema.Schema) bool {
	if s.Format != nil || s.Pattern != nil {
		return false
	}
	if s.MinLength != nil && *s.MinLength > w.m/utf8.UTFMax {
		return false
	}
	if s.MaxLength != nil && *s.MaxLength < w.n {
		return false
	}
	if s.Const != nil && !w.unequal(*s.Const) {
		return false
	}
	if s.Enum != nil {
		for _, v := range s.Enum.Values {
			if !w.unequal(v) {
				return false
			}
		}
	}
	return true
}

// unequal reports whether v equals neither the string nor its stand-in:
// it is not a string, or a string shorter than both.
func (w *blindWalk) unequal(v any) bool {
	s, ok := v.(string)
	return !ok || len(s) < w.m
}
