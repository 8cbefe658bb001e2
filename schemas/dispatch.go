package schemas

import (
	"strconv"
	"strings"
)

// This file derives the dispatch table of a schema document as written:
// which branch of the top-level oneOf judges an event of a given type and
// subtype, so that an event is validated against that branch alone.

type dispatchEntry struct {
	typ, subtype string
	ptr          string // JSON pointer of the branch in the document
}

// dispatchTable reads the branches of the document's top-level oneOf (or
// anyOf) and the type const (and subtype const or enum) each one requires.
// It returns nil when any branch has no type const, in which case events are
// judged against the whole document.
func dispatchTable(root map[string]any) []dispatchEntry {
	var list []any
	kw := "oneOf"
	if l, ok := root["oneOf"].([]any); ok {
		list = l
	} else if l, ok := root["anyOf"].([]any); ok {
		list, kw = l, "anyOf"
	}
	if len(list) == 0 {
		return nil
	}
	var table []dispatchEntry
	for i, b := range list {
		ptr := "/" + kw + "/" + strconv.Itoa(i)
		typ, ok := constOf(root, b, "type", map[string]bool{})
		if !ok {
			return nil
		}
		subs := subtypesOf(root, b, map[string]bool{})
		if len(subs) == 0 {
			table = append(table, dispatchEntry{typ: typ, ptr: ptr})
			continue
		}
		for _, s := range subs {
			table = append(table, dispatchEntry{typ: typ, subtype: s, ptr: ptr})
		}
	}
	return table
}

// constOf finds properties.<name>.const in node's in-place closure.
func constOf(root map[string]any, node any, name string, seen map[string]bool) (string, bool) {
	m, ok := node.(map[string]any)
	if !ok {
		return "", false
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if p, ok := props[name].(map[string]any); ok {
			if c, ok := p["const"].(string); ok {
				return c, true
			}
		}
	}
	for _, next := range inPlace(root, m, seen) {
		if c, ok := constOf(root, next, name, seen); ok {
			return c, true
		}
	}
	return "", false
}

// subtypesOf finds the subtype values a branch requires (const or enum).
func subtypesOf(root map[string]any, node any, seen map[string]bool) []string {
	m, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if p, ok := props["subtype"].(map[string]any); ok {
			if c, ok := p["const"].(string); ok {
				return []string{c}
			}
			if e, ok := p["enum"].([]any); ok {
				var out []string
				for _, v := range e {
					if s, ok := v.(string); ok {
						out = append(out, s)
					}
				}
				return out
			}
		}
	}
	for _, next := range inPlace(root, m, seen) {
		if s := subtypesOf(root, next, seen); len(s) > 0 {
			return s
		}
	}
	return nil
}

// inPlace lists the subschemas applied at the same instance location as m:
// its local $ref target and its allOf members. (Only those that must hold;
// anyOf/oneOf/if-then members are considered by declaresProps separately.)
func inPlace(root, m map[string]any, seen map[string]bool) []any {
	var out []any
	if ref, ok := m["$ref"].(string); ok {
		if t, ok := resolveLocal(root, ref, seen); ok {
			out = append(out, t)
		}
	}
	if all, ok := m["allOf"].([]any); ok {
		out = append(out, all...)
	}
	return out
}

// resolveLocal resolves "#/a/b" against root, once per ref (cycle guard).
func resolveLocal(root map[string]any, ref string, seen map[string]bool) (any, bool) {
	if !strings.HasPrefix(ref, "#") || seen[ref] {
		return nil, false
	}
	seen[ref] = true
	var cur any = root
	frag := strings.TrimPrefix(ref, "#")
	if frag == "" {
		return root, true
	}
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, cur != nil
}

func mustResolve(root map[string]any, ptr string) any {
	v, _ := resolveLocal(root, "#"+ptr, map[string]bool{})
	return v
}
