package schemas

import "strconv"

// known is what a schema declares at one instance location, for finding
// drift without a second validation: the property names declared there
// (through $ref, allOf, anyOf, oneOf and if/then/else, merged), what each
// property's value declares in turn, what array items declare, and the
// values of an open enum ("x-open-enum").
//
// Names are merged over every branch of a polymorphic object, so a name
// declared by any kind of, say, a Codex item is known for all kinds; the
// schema itself still judges each kind exactly.
type known struct {
	// declares is true when the location declares any property; only then
	// are undeclared names drift.
	declares bool
	// open is true when the location accepts undeclared names by design
	// (additionalProperties, patternProperties, unevaluatedProperties or
	// "x-open": true).
	open  bool
	names map[string]*known
	items *known
	enum  map[string]bool
}

// maxKnownDepth bounds how deep the tree is built: recursive schemas (a
// JSON-RPC message inside a control request) are treated as free-form
// below it.
const maxKnownDepth = 24

// buildKnown merges the schemas applied at one location into a known node.
func buildKnown(root map[string]any, nodes []any, depth int) *known {
	if depth > maxKnownDepth {
		return nil
	}
	k := &known{}
	var props map[string][]any
	var items []any
	seen := map[string]bool{}
	var visit func(n any)
	visit = func(n any) {
		m, ok := n.(map[string]any)
		if !ok {
			return
		}
		if p, ok := m["properties"].(map[string]any); ok {
			k.declares = true
			if props == nil {
				props = map[string][]any{}
			}
			for name, s := range p {
				props[name] = append(props[name], s)
			}
		}
		if m["x-open"] == true {
			k.open = true
		}
		for _, kw := range []string{"additionalProperties", "patternProperties", "unevaluatedProperties"} {
			if v, ok := m[kw]; ok && v != false {
				k.open = true
			}
		}
		if e, ok := m["x-open-enum"].([]any); ok {
			if k.enum == nil {
				k.enum = map[string]bool{}
			}
			for _, v := range e {
				if s, ok := v.(string); ok {
					k.enum[s] = true
				}
			}
		}
		if it, ok := m["items"]; ok {
			if l, isList := it.([]any); isList {
				items = append(items, l...)
			} else {
				items = append(items, it)
			}
		}
		if l, ok := m["prefixItems"].([]any); ok {
			items = append(items, l...)
		}
		if ref, ok := m["$ref"].(string); ok {
			if t, ok := resolveLocal(root, ref, seen); ok {
				visit(t)
			}
		}
		for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
			if l, ok := m[kw].([]any); ok {
				for _, x := range l {
					visit(x)
				}
			}
		}
		for _, kw := range []string{"then", "else"} {
			if s, ok := m[kw]; ok {
				visit(s)
			}
		}
	}
	// A location keeps an open enum only if every schema applied there
	// declares one: where one kind of a polymorphic object constrains a
	// field and another leaves it free (Codex collab_tool_call.tool versus
	// mcp_tool_call.tool), any value is known.
	free := false
	for _, n := range nodes {
		visit(n)
		if !declaresEnum(root, n) {
			free = true
		}
	}
	if free {
		k.enum = nil
	}
	if len(props) > 0 {
		k.names = make(map[string]*known, len(props))
		for name, schemas := range props {
			k.names[name] = buildKnown(root, schemas, depth+1)
		}
	}
	if len(items) > 0 {
		k.items = buildKnown(root, items, depth+1)
	}
	return k
}

// drift appends what v holds that k does not declare. path holds the
// reference tokens of v's location; pointers are built only for drift, so
// a clean event costs map lookups and no allocation.
func (k *known) drift(v any, path []string, out []Drift) []Drift {
	if k == nil {
		return out
	}
	switch x := v.(type) {
	case map[string]any:
		for name, child := range x {
			c, ok := k.names[name]
			if !ok {
				if k.declares && !k.open {
					out = append(out, Drift{Kind: UnknownField, Pointer: pointerOf(append(path, name)), Name: name})
				}
				continue
			}
			if c != nil {
				switch child.(type) {
				case map[string]any, []any, string:
					out = c.drift(child, append(path, name), out)
				}
			}
		}
	case []any:
		if k.items != nil {
			for i, item := range x {
				out = k.items.drift(item, append(path, itoa(i)), out)
			}
		}
	case string:
		if k.enum != nil && !k.enum[x] {
			out = append(out, Drift{Kind: UnknownValue, Pointer: pointerOf(path), Name: render(x)})
		}
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// declaresEnum reports whether a schema's in-place closure has x-open-enum.
func declaresEnum(root map[string]any, n any) bool {
	m, ok := n.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := m["x-open-enum"]; ok {
		return true
	}
	if ref, ok := m["$ref"].(string); ok {
		if t, ok := resolveLocal(root, ref, map[string]bool{}); ok && declaresEnum(root, t) {
			return true
		}
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := m[kw].([]any); ok {
			for _, x := range l {
				if declaresEnum(root, x) {
					return true
				}
			}
		}
	}
	return false
}
