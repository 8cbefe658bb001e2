package schemas

import (
	"sort"
	"strconv"
	"strings"
)

// This file derives two things from a schema document as written: the
// dispatch table (which branch of the top-level oneOf judges an event of a
// given type and subtype) and the "closed" variant used to find drift.
//
// The closed variant is the same document in which every schema applied at
// an object's own location (the root, property values, array items) that
// declares properties, directly or through $ref, allOf, anyOf, oneOf or
// if/then/else, and is not marked "x-open": true nor already says what extra
// properties may be, gets "additionalProperties": false and a "properties"
// entry (true) for every name its closure declares; a $ref beside them moves
// into an allOf so that draft-07 does not ignore the siblings. Every
// "x-open-enum" becomes "enum". Each dispatch branch gets a closed wrapper in
// $defs so it can be compiled on its own.
//
// additionalProperties is judged locally, so unlike unevaluatedProperties it
// does not flag every property of an object in which something else failed.
// The price is that a name declared by any branch of a polymorphic object is
// known for all its branches. An event that passes the closed variant passes
// the open one (for schemas without "not" and with disjoint oneOf branches,
// which the conventions in README.md require), so clean events are validated
// once.

// closedRootDef is the $defs name of the closed wrapper around the whole document.
const closedRootDef = "__agentconform_closed_root"

type dispatchEntry struct {
	typ, subtype string
	ptr          string // JSON pointer of the branch in the document
	closedDef    string // $defs name of the branch's closed wrapper
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
		def := "__agentconform_closed_" + strconv.Itoa(i)
		typ, ok := constOf(root, b, "type", map[string]bool{})
		if !ok {
			return nil
		}
		subs := subtypesOf(root, b, map[string]bool{})
		if len(subs) == 0 {
			table = append(table, dispatchEntry{typ: typ, ptr: ptr, closedDef: def})
			continue
		}
		for _, s := range subs {
			table = append(table, dispatchEntry{typ: typ, subtype: s, ptr: ptr, closedDef: def})
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

// shape walks a node's whole in-place closure ($ref, allOf, anyOf, oneOf,
// if/then/else), adds the property names it declares to names, and reports
// whether it declares any and whether it is open to properties it does not
// declare.
func shape(root map[string]any, node any, seen, names map[string]bool) (declares, open bool) {
	m, ok := node.(map[string]any)
	if !ok {
		return false, false
	}
	if props, ok := m["properties"].(map[string]any); ok {
		declares = true
		for n := range props {
			names[n] = true
		}
	}
	if m["x-open"] == true {
		open = true
	}
	for _, k := range []string{"additionalProperties", "unevaluatedProperties", "patternProperties"} {
		if _, ok := m[k]; ok {
			open = true
		}
	}
	var next []any
	if ref, ok := m["$ref"].(string); ok {
		if t, ok := resolveLocal(root, ref, seen); ok {
			next = append(next, t)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := m[k].([]any); ok {
			next = append(next, l...)
		}
	}
	for _, k := range []string{"if", "then", "else"} {
		if s, ok := m[k]; ok {
			next = append(next, s)
		}
	}
	for _, n := range next {
		d, o := shape(root, n, seen, names)
		declares = declares || d
		open = open || o
	}
	return declares, open
}

// Keywords whose values are schemas applied at a child location (a property
// value or an array item): such schemas are candidates for closing.
var childSchemaMaps = []string{"properties", "patternProperties", "dependentSchemas"}
var childSchemas = []string{"additionalProperties", "items", "contains", "unevaluatedItems", "additionalItems"}

// Keywords whose values are schemas applied in place (same location).
var inPlaceLists = []string{"allOf", "anyOf", "oneOf"}
var inPlaceSchemas = []string{"if", "then", "else", "not"}
var defsMaps = []string{"$defs", "definitions"}

// closeSchema returns the closed variant of root (see the file comment).
func closeSchema(root map[string]any) map[string]any {
	out := closeNode(root, root, true).(map[string]any)
	defs, _ := out["$defs"].(map[string]any)
	if defs == nil {
		defs = map[string]any{}
		out["$defs"] = defs
	}
	defs[closedRootDef] = map[string]any{"$ref": "#"}
	table := dispatchTable(root)
	done := map[string]bool{}
	for _, d := range table {
		if done[d.closedDef] {
			continue
		}
		done[d.closedDef] = true
		wrapper := map[string]any{"$ref": "#" + d.ptr}
		closeAt(root, mustResolve(root, d.ptr), wrapper)
		defs[d.closedDef] = wrapper
	}
	return out
}

func mustResolve(root map[string]any, ptr string) any {
	v, _ := resolveLocal(root, "#"+ptr, map[string]bool{})
	return v
}

// closeNode copies node, closing it when it sits at a child location.
func closeNode(root map[string]any, node any, atChild bool) any {
	m, ok := node.(map[string]any)
	if !ok {
		return node
	}
	out := make(map[string]any, len(m)+1)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		switch {
		case k == "x-open-enum":
			out["enum"] = v
		case contains(childSchemaMaps, k):
			out[k] = mapValues(v, func(s any) any { return closeNode(root, s, k != "dependentSchemas") })
		case contains(defsMaps, k):
			out[k] = mapValues(v, func(s any) any { return closeNode(root, s, false) })
		case contains(childSchemas, k):
			if l, ok := v.([]any); ok { // draft-07 tuple items
				out[k] = listValues(l, func(s any) any { return closeNode(root, s, true) })
			} else {
				out[k] = closeNode(root, v, true)
			}
		case k == "prefixItems":
			if l, ok := v.([]any); ok {
				out[k] = listValues(l, func(s any) any { return closeNode(root, s, true) })
			}
		case contains(inPlaceLists, k):
			if l, ok := v.([]any); ok {
				out[k] = listValues(l, func(s any) any { return closeNode(root, s, false) })
			} else {
				out[k] = v
			}
		case contains(inPlaceSchemas, k):
			out[k] = closeNode(root, v, false)
		default:
			out[k] = v
		}
	}
	if atChild {
		closeAt(root, m, out)
	}
	return out
}

// closeAt closes out (a copy of node) if node declares properties and is
// not open: see the file comment.
func closeAt(root map[string]any, node any, out map[string]any) {
	names := map[string]bool{}
	declares, open := shape(root, node, map[string]bool{}, names)
	if !declares || open {
		return
	}
	if ref, ok := out["$ref"]; ok {
		delete(out, "$ref")
		all, _ := out["allOf"].([]any)
		out["allOf"] = append([]any{map[string]any{"$ref": ref}}, all...)
	}
	props, _ := out["properties"].(map[string]any)
	merged := make(map[string]any, len(names))
	for n := range names {
		merged[n] = true
	}
	for n, s := range props {
		merged[n] = s
	}
	out["properties"] = merged
	out["additionalProperties"] = false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func mapValues(v any, f func(any) any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = f(x)
	}
	return out
}

func listValues(l []any, f func(any) any) []any {
	out := make([]any, len(l))
	for i, x := range l {
		out[i] = f(x)
	}
	return out
}
