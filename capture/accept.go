package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
)

// Accepted is what AcceptSchemas wrote for one CLI.
type Accepted struct {
	// CLI is the CLI whose schemas were written.
	CLI string
	// Version is the new schema version; Base the version it was copied
	// from.
	Version, Base string
	// Files are the files written, relative to the schemas directory.
	Files []string
	// Added lists the additions, one line each ("field /message/foo in
	// assistant", "value \"bar\" at /status", "type baz").
	Added []string
	// Left is drift the additions did not cover (should be empty).
	Left []string
}

// observedFile is the stdout schema file of each CLI in a version directory.
var observedFile = map[string]string{"claude": "stdout.schema.json", "codex": "events.schema.json", "gemini": "events.schema.json"}

// AcceptSchemas writes observed schemas for version of cli into
// schemasDir/observed/<cli>/<version>/, after review of the drift: each
// file of the newest older version is copied with its $id, x-cli-version,
// title and description moved to the new version, and the stdout schema
// learns what the transcripts showed that it did not know: unknown event
// types and subtypes become open branches, unknown fields optional
// properties, unknown values of open enums members. An existing version
// directory is never touched (schemas of a released version are not
// edited to follow a newer CLI): that is an error.
func AcceptSchemas(schemasDir, cli, version string, ts []*transcript.Transcript) (*Accepted, error) {
	file, ok := observedFile[cli]
	if !ok {
		return nil, fmt.Errorf("capture: no observed schema for CLI %q", cli)
	}
	fsys := os.DirFS(schemasDir)
	versions, err := schemas.Versions(fsys, cli)
	if err != nil {
		return nil, err
	}
	base := ""
	for _, v := range versions {
		if v == version {
			return nil, fmt.Errorf("capture: %s already exists; a schema version is never rewritten (edit it by hand if it is wrong)", filepath.Join(schemasDir, "observed", cli, version))
		}
		if schemas.CompareVersions(v, version) < 0 {
			base = v
		}
	}
	if base == "" {
		return nil, fmt.Errorf("capture: no observed %s schema older than %s in %s to start from", cli, version, schemasDir)
	}
	acc := &Accepted{CLI: cli, Version: version, Base: base}
	baseDir := path.Join("observed", cli, base)
	entries, err := os.ReadDir(filepath.Join(schemasDir, filepath.FromSlash(baseDir)))
	if err != nil {
		return nil, err
	}
	d, _ := schemas.ParseDialect(cli)
	oldV, err := schemas.NewSet(fsys).Load(schemas.Observed, d, base)
	if err != nil {
		return nil, err
	}
	var events []map[string]any
	for _, t := range ts {
		for _, st := range t.Steps {
			if st.Op == transcript.OpOut {
				if ev := decodeNumber(st.Text); ev != nil {
					events = append(events, ev)
				}
			}
		}
	}
	outDir := filepath.Join(schemasDir, "observed", cli, version)
	written := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(schemasDir, filepath.FromSlash(baseDir), e.Name()))
		if err != nil {
			return nil, err
		}
		root, err := parseOrdered(raw)
		if err != nil {
			return nil, fmt.Errorf("capture: %s/%s: %w", baseDir, e.Name(), err)
		}
		rel := path.Join("observed", cli, version, e.Name())
		root.set("$id", strNode("https://agentconform.dev/schemas/"+rel))
		root.set("x-cli-version", strNode(version))
		if t := root.get("title"); t != nil {
			root.set("title", strNode(strings.ReplaceAll(t.str(), base, version)))
		}
		desc := ""
		if dn := root.get("description"); dn != nil {
			desc = dn.str() + " "
		}
		root.set("description", strNode(desc+fmt.Sprintf("Version %s: copied from %s by agentconform drift --accept after review of the %s %s captures; what they showed that %s did not know was added (marked \"x-added-in\").", version, base, cli, version, base)))
		if e.Name() == file {
			p := &patcher{root: root, version: version, cli: cli}
			for _, ev := range events {
				for _, dr := range oldV.Validate(ev).Drift {
					if line := p.apply(ev, dr); line != "" {
						acc.Added = append(acc.Added, line)
					}
				}
			}
		}
		var buf bytes.Buffer
		root.write(&buf, 0, 0)
		buf.WriteByte('\n')
		written[e.Name()] = buf.Bytes()
		acc.Files = append(acc.Files, rel)
	}
	sort.Strings(acc.Added)
	acc.Added = uniq(acc.Added)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	for name, b := range written {
		if err := os.WriteFile(filepath.Join(outDir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	// Check the result compiles and knows the events now.
	newV, err := schemas.NewSet(os.DirFS(schemasDir)).Load(schemas.Observed, d, version)
	if err != nil {
		return acc, fmt.Errorf("capture: the new schema does not load: %w", err)
	}
	for _, ev := range events {
		for _, dr := range newV.Validate(ev).Drift {
			acc.Left = append(acc.Left, fmt.Sprintf("%s %s at %s", dr.Kind, dr.Name, dr.Pointer))
		}
	}
	sort.Strings(acc.Left)
	acc.Left = uniq(acc.Left)
	return acc, nil
}

func uniq(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func decodeNumber(line string) map[string]any {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var ev map[string]any
	if dec.Decode(&ev) != nil {
		return nil
	}
	return ev
}

// patcher adds what drift found to an observed schema.
type patcher struct {
	root     *jnode
	version  string
	cli      string
	defCount int
}

func (p *patcher) note() *jnode {
	return strNode(fmt.Sprintf("Observed in %s %s (agentconform drift --accept); not yet described.", p.cli, p.version))
}

// apply adds one drift item found in ev; it returns a line describing the
// addition, or "" when there was nothing to add.
func (p *patcher) apply(ev map[string]any, dr schemas.Drift) string {
	switch dr.Kind {
	case schemas.UnknownType, schemas.UnknownSubtype:
		typ, _ := ev["type"].(string)
		sub, _ := ev["subtype"].(string)
		if dr.Kind == schemas.UnknownType {
			sub = ""
		}
		name := "Observed" + camel(typ) + camel(sub)
		defs := p.root.get("$defs")
		if defs == nil || defs.get(name) != nil {
			return ""
		}
		props := objNode()
		props.set("type", objNode().set("const", strNode(typ)))
		req := arrNode(strNode("type"))
		kind := typ
		if sub != "" {
			props.set("subtype", objNode().set("const", strNode(sub)))
			req.items = append(req.items, strNode("subtype"))
			kind = typ + "/" + sub
		}
		def := objNode()
		def.set("description", strNode(fmt.Sprintf("%s: an event kind first seen in %s %s (agentconform drift --accept); its fields are open until described.", kind, p.cli, p.version)))
		def.set("type", strNode("object"))
		def.set("required", req)
		def.set("properties", props)
		def.set("x-open", rawNode("true"))
		def.set("x-added-in", strNode(p.version))
		defs.set(name, def)
		if one := p.root.get("oneOf"); one != nil {
			one.items = append(one.items, objNode().set("$ref", strNode("#/$defs/"+name)))
		}
		return "event kind " + kind
	case schemas.UnknownField:
		tokens := splitPointer(dr.Pointer)
		if len(tokens) == 0 {
			return ""
		}
		nodes, _ := p.locate(ev, tokens[:len(tokens)-1])
		var target *jnode
		for _, n := range nodes {
			if pr := n.get("properties"); pr != nil && pr.kind == 'o' {
				target = pr
			}
		}
		if target == nil || target.get(dr.Name) != nil {
			return ""
		}
		target.set(dr.Name, objNode().set("description", p.note()).set("x-added-in", strNode(p.version)))
		return fmt.Sprintf("field %s in %s", dr.Pointer, kindOf(p.cli, ev))
	case schemas.UnknownValue:
		nodes, _ := p.locate(ev, splitPointer(dr.Pointer))
		val := dr.Name
		var s string
		if json.Unmarshal([]byte(val), &s) == nil {
			val = s
		}
		for i := len(nodes) - 1; i >= 0; i-- {
			e := nodes[i].get("x-open-enum")
			if e == nil || e.kind != 'a' {
				continue
			}
			for _, it := range e.items {
				if it.str() == val {
					return ""
				}
			}
			e.items = append(e.items, strNode(val))
			return fmt.Sprintf("value %q at %s in %s", val, dr.Pointer, kindOf(p.cli, ev))
		}
	}
	return ""
}

// locate returns the schema objects that apply at the instance location
// tokens of ev (the branch ev's type and subtype select, followed through
// $ref, allOf, and if/then/else by ev's own values).
func (p *patcher) locate(ev map[string]any, tokens []string) ([]*jnode, any) {
	branch := p.branchFor(ev)
	if branch == nil {
		return nil, nil
	}
	var nodes []*jnode
	p.expand(branch, ev, &nodes, 0)
	var inst any = ev
	for _, tok := range tokens {
		var child any
		switch x := inst.(type) {
		case map[string]any:
			child = x[tok]
		case []any:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(x) {
				child = x[i]
			}
		}
		var next []*jnode
		for _, n := range nodes {
			var c *jnode
			if pr := n.get("properties"); pr != nil {
				c = pr.get(tok)
			}
			if c == nil {
				if _, err := strconv.Atoi(tok); err == nil {
					c = n.get("items")
				}
			}
			if c == nil {
				if ap := n.get("additionalProperties"); ap != nil && ap.kind == 'o' {
					c = ap
				}
			}
			if c != nil {
				p.expand(c, child, &next, 0)
			}
		}
		nodes, inst = next, child
	}
	return nodes, inst
}

// branchFor is the $defs entry the root oneOf gives ev.
func (p *patcher) branchFor(ev map[string]any) *jnode {
	one := p.root.get("oneOf")
	if one == nil {
		return p.root
	}
	var best *jnode
	bestScore := -1
	for _, it := range one.items {
		def := p.resolve(it.get("$ref"))
		if def == nil {
			continue
		}
		props := def.get("properties")
		if props == nil {
			continue
		}
		if !constMatches(props.get("type"), ev["type"]) {
			continue
		}
		score := 0
		if st := props.get("subtype"); st != nil {
			if c := st.get("const"); c != nil {
				if c.str() != fmt.Sprint(ev["subtype"]) {
					continue
				}
				score = 2
			} else if e := st.get("enum"); e != nil {
				found := false
				for _, x := range e.items {
					if x.str() == fmt.Sprint(ev["subtype"]) {
						found = true
					}
				}
				if !found {
					continue
				}
				score = 1
			}
		}
		if score > bestScore {
			best, bestScore = def, score
		}
	}
	return best
}

func constMatches(n *jnode, v any) bool {
	if n == nil {
		return false
	}
	c := n.get("const")
	s, ok := v.(string)
	return c != nil && ok && c.str() == s
}

func (p *patcher) resolve(ref *jnode) *jnode {
	if ref == nil {
		return nil
	}
	r := ref.str()
	if !strings.HasPrefix(r, "#/") {
		return nil
	}
	n := p.root
	for _, tok := range splitPointer(r[1:]) {
		if n == nil {
			return nil
		}
		n = n.get(tok)
	}
	return n
}

// expand appends n and every schema it applies in place to inst.
func (p *patcher) expand(n *jnode, inst any, out *[]*jnode, depth int) {
	if n == nil || n.kind != 'o' || depth > 32 {
		return
	}
	*out = append(*out, n)
	if ref := n.get("$ref"); ref != nil {
		p.expand(p.resolve(ref), inst, out, depth+1)
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		if l := n.get(kw); l != nil {
			for _, it := range l.items {
				p.expand(it, inst, out, depth+1)
			}
		}
	}
	if cond := n.get("if"); cond != nil {
		if ifMatches(cond, inst) {
			p.expand(n.get("then"), inst, out, depth+1)
		} else {
			p.expand(n.get("else"), inst, out, depth+1)
		}
	}
}

// ifMatches evaluates the simple if schemas of the observed files:
// required keys and const or enum properties.
func ifMatches(cond *jnode, inst any) bool {
	m, ok := inst.(map[string]any)
	if !ok {
		return false
	}
	if req := cond.get("required"); req != nil {
		for _, k := range req.items {
			if _, ok := m[k.str()]; !ok {
				return false
			}
		}
	}
	if props := cond.get("properties"); props != nil {
		for i, k := range props.keys {
			v, present := m[k]
			if !present {
				continue
			}
			ps := props.vals[i]
			if c := ps.get("const"); c != nil {
				var want any
				_ = json.Unmarshal(c.raw, &want)
				if fmt.Sprint(want) != fmt.Sprint(v) {
					return false
				}
			}
			if e := ps.get("enum"); e != nil {
				found := false
				for _, x := range e.items {
					var want any
					_ = json.Unmarshal(x.raw, &want)
					if fmt.Sprint(want) == fmt.Sprint(v) {
						found = true
					}
				}
				if !found {
					return false
				}
			}
		}
	}
	return true
}

func splitPointer(p string) []string {
	if p == "" || p == "/" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			b.WriteRune(unicode.ToUpper(r))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// jnode is a JSON value that keeps the order of object keys, so a schema
// file rewritten after edits differs from its original only where edited.
type jnode struct {
	kind  byte // 'o' object, 'a' array, 'v' any other value
	keys  []string
	vals  []*jnode
	items []*jnode
	raw   json.RawMessage
}

func objNode() *jnode                { return &jnode{kind: 'o'} }
func arrNode(items ...*jnode) *jnode { return &jnode{kind: 'a', items: items} }
func rawNode(raw string) *jnode      { return &jnode{kind: 'v', raw: json.RawMessage(raw)} }

func strNode(s string) *jnode {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return &jnode{kind: 'v', raw: bytes.TrimRight(b.Bytes(), "\n")}
}

func (n *jnode) get(k string) *jnode {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for i, key := range n.keys {
		if key == k {
			return n.vals[i]
		}
	}
	return nil
}

func (n *jnode) set(k string, v *jnode) *jnode {
	for i, key := range n.keys {
		if key == k {
			n.vals[i] = v
			return n
		}
	}
	n.keys = append(n.keys, k)
	n.vals = append(n.vals, v)
	return n
}

func (n *jnode) str() string {
	if n == nil || n.kind != 'v' {
		return ""
	}
	var s string
	if json.Unmarshal(n.raw, &s) != nil {
		return string(n.raw)
	}
	return s
}

func parseOrdered(b []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON document")
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := objNode()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := arrNode()
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return strNode(t), nil
	case json.Number:
		return rawNode(t.String()), nil
	case bool:
		return rawNode(strconv.FormatBool(t)), nil
	case nil:
		return rawNode("null"), nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// inline renders n on one line.
func (n *jnode) inline(b *bytes.Buffer) {
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			strNode(k).inline(b)
			b.WriteString(": ")
			n.vals[i].inline(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteString(", ")
			}
			it.inline(b)
		}
		b.WriteByte(']')
	default:
		b.Write(n.raw)
	}
}

// write renders n in the style of the schema files: two-space indents, an
// object or array on one line when the line stays within 100 columns
// (prefix is what the line already holds), long arrays of scalars filled
// line by line.
func (n *jnode) write(b *bytes.Buffer, indent, prefix int) {
	if n.kind == 'v' {
		b.Write(n.raw)
		return
	}
	const width = 100
	var one bytes.Buffer
	n.inline(&one)
	if indent > 0 && prefix+one.Len()+1 <= width {
		b.Write(one.Bytes())
		return
	}
	pad := strings.Repeat("  ", indent+1)
	if n.kind == 'o' {
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range n.keys {
			var key bytes.Buffer
			strNode(k).inline(&key)
			b.WriteString(pad)
			b.Write(key.Bytes())
			b.WriteString(": ")
			n.vals[i].write(b, indent+1, len(pad)+key.Len()+2)
			if i < len(n.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat("  ", indent) + "}")
		return
	}
	if len(n.items) == 0 {
		b.WriteString("[]")
		return
	}
	scalars := true
	for _, it := range n.items {
		scalars = scalars && it.kind == 'v'
	}
	b.WriteString("[\n")
	if scalars {
		line := pad
		for i, it := range n.items {
			item := string(it.raw)
			if i < len(n.items)-1 {
				item += ","
			}
			if line != pad && len(line)+1+len(item) > width {
				b.WriteString(strings.TrimRight(line, " ") + "\n")
				line = pad
			}
			if line != pad {
				line += " "
			}
			line += item
		}
		b.WriteString(line + "\n")
	} else {
		for i, it := range n.items {
			b.WriteString(pad)
			it.write(b, indent+1, len(pad))
			if i < len(n.items)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
	}
	b.WriteString(strings.Repeat("  ", indent) + "]")
}
