package transcript

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Vars holds the values captured from stdin lines, by name.
type Vars map[string]any

// Fill replaces every {{name}} in s whose name is captured in v. A string
// value is inserted JSON-escaped without quotes (so `"id":"{{req}}"` stays
// valid JSON); any other value is inserted as its JSON text. {{json:name}}
// inserts the value's JSON text whatever its type, quotes included (a
// JSON-RPC id echoed as `"id":{{json:id1}}`, string or number). Unknown
// names are left as they are.
func (v Vars) Fill(s string) string {
	if len(v) == 0 || !strings.Contains(s, "{{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		name := s[i+2 : i+2+j]
		asJSON := strings.HasPrefix(name, "json:")
		val, ok := v[strings.TrimPrefix(name, "json:")]
		b.WriteString(s[:i])
		switch {
		case !ok:
			b.WriteString(s[i : i+4+j])
		case asJSON:
			b.WriteString(renderJSON(val))
		default:
			b.WriteString(render(val))
		}
		s = s[i+4+j:]
	}
}

func render(val any) string {
	if r, ok := val.(rawString); ok {
		return string(r)
	}
	if s, ok := val.(string); ok {
		q, _ := json.Marshal(s)
		return string(q[1 : len(q)-1])
	}
	q, err := json.Marshal(val)
	if err != nil {
		return fmt.Sprint(val)
	}
	return string(q)
}

// renderJSON is val's JSON text (a raw string as JSON, quoted).
func renderJSON(val any) string {
	if r, ok := val.(rawString); ok {
		val = string(r)
	}
	q, err := json.Marshal(val)
	if err != nil {
		return fmt.Sprint(val)
	}
	return string(q)
}

// Match reports whether value contains pattern: objects contain every key of
// the pattern with a matching value, arrays match element by element (same
// length), strings match after templates are filled, numbers by value.
// When it fails it says where and why, for the fake's error messages.
func Match(pattern, value any, vars Vars) (bool, string) {
	return match(pattern, value, vars, "")
}

func match(pattern, value any, vars Vars, ptr string) (bool, string) {
	at := ptr
	if at == "" {
		at = "the top level"
	}
	switch p := pattern.(type) {
	case map[string]any:
		m, ok := value.(map[string]any)
		if !ok {
			return false, fmt.Sprintf("at %s: expected an object, found %s", at, kindOf(value))
		}
		for _, k := range sortedKeys(p) {
			sub := ptr + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			x, ok := m[k]
			if !ok {
				return false, fmt.Sprintf("at %s: missing", sub)
			}
			if ok, why := match(p[k], x, vars, sub); !ok {
				return false, why
			}
		}
		return true, ""
	case []any:
		a, ok := value.([]any)
		if !ok || len(a) != len(p) {
			return false, fmt.Sprintf("at %s: expected an array of %d, found %s", at, len(p), kindOf(value))
		}
		for i := range p {
			if ok, why := match(p[i], a[i], vars, ptr+"/"+strconv.Itoa(i)); !ok {
				return false, why
			}
		}
		return true, ""
	case string:
		want := p
		if strings.Contains(p, "{{") {
			want = vars.fillRaw(p)
		}
		if s, ok := value.(string); ok && s == want {
			return true, ""
		}
		return false, fmt.Sprintf("at %s: expected %q, found %s", at, want, brief(value))
	case float64:
		if f, ok := value.(float64); ok && f == p {
			return true, ""
		}
		if n, ok := value.(json.Number); ok && n.String() == strconv.FormatFloat(p, 'g', -1, 64) {
			return true, ""
		}
		return false, fmt.Sprintf("at %s: expected %v, found %s", at, p, brief(value))
	default:
		if pattern == value {
			return true, ""
		}
		return false, fmt.Sprintf("at %s: expected %s, found %s", at, brief(pattern), brief(value))
	}
}

// fillRaw fills templates with the raw string values (for matching decoded
// strings, where no JSON escaping applies).
func (v Vars) fillRaw(s string) string {
	raw := Vars{}
	for k, x := range v {
		if str, ok := x.(string); ok {
			raw[k] = rawString(str)
		} else {
			raw[k] = x
		}
	}
	return raw.Fill(s)
}

// rawString is a string Fill inserts without escaping.
type rawString string

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

func brief(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}

// Lookup resolves an RFC 6901 JSON pointer in a decoded value.
func Lookup(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			x, ok := c[tok]
			if !ok {
				return nil, false
			}
			v = x
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}
