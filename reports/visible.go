package reports

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentconform/agentconform/finding"
)

// Text in reports comes from adapters and CLIs under test: wire lines,
// expected and actual values, names, file names. Such text may carry
// terminal escape sequences (which recolour or rewrite a terminal, or a CI
// log viewer), control characters (NUL truncates some viewers, a lone CR
// overwrites a line) and Unicode bidirectional controls (which reorder
// what a reader sees, so that text shows other than it is). Every report
// for people (text, Markdown, HTML, JUnit) shows them instead, as escapes:
// ESC as \x1b, NUL as \x00, U+202E as \u202e. The machine-readable JSON
// and NDJSON forms keep the text as it was (JSON escapes control
// characters itself).

// isBidi reports whether r is a bidirectional formatting character: the
// embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), the
// marks (U+200E, U+200F) and the Arabic letter mark (U+061C).
func isBidi(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}

// mustShow reports whether r is shown as an escape: C0 controls other
// than tab and newline, DEL, C1 controls and the bidi controls.
func mustShow(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' || r == 0x7F || r >= 0x80 && r <= 0x9F || isBidi(r)
}

// visible returns s with every control character (but tab and newline),
// every bidi control and every byte that is not UTF-8 written as a
// visible escape: \x1b, \r, \x00, \u0085, \u202e, \xff. Terminal escape
// sequences thereby lose their ESC and show as text ("\x1b[31m").
func visible(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' || c == 0x7F {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || mustShow(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7F:
			fmt.Fprintf(&b, `\x%02x`, r)
		case mustShow(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// visibleFinding is f with its free text made visible (the rule is the
// toolkit's own).
func visibleFinding(f finding.Finding) finding.Finding {
	f.File = visible(f.File)
	f.Pointer = visible(f.Pointer)
	f.Message = visible(f.Message)
	f.Expected = visible(f.Expected)
	f.Actual = visible(f.Actual)
	return f
}

// visibleCopy returns a deep copy of v with every string in it (in
// exported struct fields, slices, arrays, maps and interfaces, through
// pointers) made visible; v itself is not changed. Parts that hold no
// string are shared, not copied, and two pointers to one value still
// point to one value in the copy.
func visibleCopy[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	c := &copier{seen: map[uintptr]reflect.Value{}}
	out := c.copy(rv)
	return out.Interface().(T)
}

type copier struct {
	seen map[uintptr]reflect.Value // pointer -> its copy
}

// holdsStrings caches whether values of a type can reach a string.
var holdsStrings sync.Map // reflect.Type -> bool

func hasStrings(t reflect.Type) bool {
	if v, ok := holdsStrings.Load(t); ok {
		return v.(bool)
	}
	holdsStrings.Store(t, true) // for recursive types while deciding
	res := false
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		res = true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		res = hasStrings(t.Elem())
	case reflect.Map:
		res = hasStrings(t.Key()) || hasStrings(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && hasStrings(f.Type) {
				res = true
				break
			}
		}
	}
	holdsStrings.Store(t, res)
	return res
}

func (c *copier) copy(v reflect.Value) reflect.Value {
	t := v.Type()
	if !hasStrings(t) {
		return v
	}
	switch t.Kind() {
	case reflect.String:
		out := reflect.New(t).Elem()
		out.SetString(visible(v.String()))
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(t).Elem()
		out.Set(c.copy(v.Elem()))
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		if p, ok := c.seen[v.Pointer()]; ok {
			return p
		}
		p := reflect.New(t.Elem())
		c.seen[v.Pointer()] = p
		p.Elem().Set(c.copy(v.Elem()))
		return p
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(c.copy(v.Index(i)))
		}
		return out
	case reflect.Array:
		out := reflect.New(t).Elem()
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(c.copy(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		it := v.MapRange()
		for it.Next() {
			out.SetMapIndex(c.copy(it.Key()), c.copy(it.Value()))
		}
		return out
	case reflect.Struct:
		out := reflect.New(t).Elem()
		out.Set(v) // unexported fields as they are
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				out.Field(i).Set(c.copy(v.Field(i)))
			}
		}
		return out
	}
	return v
}
