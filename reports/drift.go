package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/validate"
)

// The drift report of agentconform validate answers, per dialect and CLI
// version, two questions about the schemas against real logs:
//
//   - What do the logs carry that the schemas do not know? Event types,
//     subtypes, fields and open-enum values (validate's drift entries, with
//     counts and where each was first seen).
//   - What do the schemas know that the logs never carried? For every event
//     kind (type, or type/subtype) the schema declares and no log of that
//     CLI version contained, the fields the schema requires of it: required
//     fields never seen. (For a kind that was seen, a missing required
//     field is already a schema violation on its line, so it is counted
//     there, not here.) A schema whose kinds never show up may describe
//     events the CLI no longer sends, or the logs may not exercise them.
//
// The second part needs the kinds of every event; KindCounter counts them
// as the stream goes by (agentconform validate tees each input into one).

// DriftReport is the drift of a set of validated streams.
type DriftReport struct {
	// Groups holds one entry per dialect, CLI version and schema file.
	Groups []*DriftGroup `json:"groups"`
}

// DriftGroup is the drift of the streams of one dialect and CLI version
// judged by one schema file.
type DriftGroup struct {
	// Dialect is the streams' dialect (claude, codex, gemini, ...).
	Dialect string `json:"dialect"`
	// CLIVersion is the version the streams declare, or "(version not in
	// stream)".
	CLIVersion string `json:"cli_version"`
	// Schema is the schema file (in the schema tree) the streams were
	// judged by, and SchemaVersion the CLI version it describes.
	Schema        string `json:"schema,omitempty"`
	SchemaVersion string `json:"schema_version,omitempty"`
	// Streams counts the streams in the group; Events the events counted.
	Streams int `json:"streams"`
	Events  int `json:"events"`
	// Unknown lists what the schema did not know, most frequent first per kind.
	Unknown []DriftItem `json:"unknown"`
	// UnknownOverflow counts drift occurrences beyond validate's entry limit.
	UnknownOverflow int `json:"unknown_overflow,omitempty"`
	// KindsCounted is false when the events' kinds were not counted (then
	// Seen and NeverSeen are empty).
	KindsCounted bool `json:"kinds_counted"`
	// Seen counts events per kind ("type" and "type/subtype").
	Seen map[string]int `json:"seen,omitempty"`
	// NeverSeen lists the kinds the schema declares that no stream carried,
	// with their required fields.
	NeverSeen []NeverSeen `json:"never_seen,omitempty"`
}

// DriftItem is one thing the schema did not know.
type DriftItem struct {
	// What is "type", "subtype", "field" or "value".
	What string `json:"what"`
	// Name is the unknown type, subtype, field name or value.
	Name string `json:"name"`
	// Pointer is where it appeared, array indexes as "*".
	Pointer string `json:"pointer"`
	// Count is how often it appeared.
	Count int `json:"count"`
	// First is where it was first seen, file:line.
	First string `json:"first"`
	// Rule is validate's drift rule.
	Rule string `json:"rule"`
}

// NeverSeen is an event kind the schema declares that no log carried.
type NeverSeen struct {
	// Kind is "type" or "type/subtype".
	Kind string `json:"kind"`
	// Required lists the fields the schema requires of the kind.
	Required []string `json:"required"`
}

// DriftCollector gathers the drift of streams as validate finishes them.
type DriftCollector struct {
	fsys   fs.FS
	mu     sync.Mutex
	groups map[string]*DriftGroup
	order  []string
	seen   map[string]map[string]int
	counts map[string]bool // groups with at least one stream whose kinds were counted
	merged map[string]map[string]*DriftItem
	kinds  map[string][]schemaKind // by schema file
}

// NewDriftCollector returns a collector that reads schema files from fsys
// (nil: the embedded schemas).
func NewDriftCollector(fsys fs.FS) *DriftCollector {
	if fsys == nil {
		fsys = schemas.FS()
	}
	return &DriftCollector{fsys: fsys, groups: map[string]*DriftGroup{}, seen: map[string]map[string]int{},
		counts: map[string]bool{}, merged: map[string]map[string]*DriftItem{}, kinds: map[string][]schemaKind{}}
}

// Add records one stream's result and, if counted, its event kinds.
func (c *DriftCollector) Add(r *validate.Result, kinds *KindCounter) {
	if r == nil || r.Dialect == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	version := r.CLIVersion
	if version == "" {
		version = "(version not in stream)"
	}
	key := string(r.Dialect) + "\x00" + version + "\x00" + r.SchemaFile
	g, ok := c.groups[key]
	if !ok {
		g = &DriftGroup{Dialect: string(r.Dialect), CLIVersion: version, Schema: r.SchemaFile, SchemaVersion: r.SchemaVersion}
		c.groups[key] = g
		c.order = append(c.order, key)
		c.seen[key] = map[string]int{}
		c.merged[key] = map[string]*DriftItem{}
	}
	g.Streams++
	g.UnknownOverflow += r.DriftOverflow
	for _, e := range r.Drift {
		what := e.RuleID[strings.LastIndex(e.RuleID, "-")+1:]
		k := e.RuleID + "\x00" + e.Name + "\x00" + e.Pointer
		if it, ok := c.merged[key][k]; ok {
			it.Count += e.Count
			continue
		}
		c.merged[key][k] = &DriftItem{What: what, Name: e.Name, Pointer: e.Pointer, Count: e.Count,
			First: fmt.Sprintf("%s:%d", displayFile(e.FirstFile), e.FirstLine), Rule: e.RuleID}
	}
	if kinds != nil {
		c.counts[key] = true
		g.Events += kinds.Events()
		for k, n := range kinds.Counts() {
			c.seen[key][k] += n
		}
	}
}

// Report returns the drift so far, groups in the order first seen.
func (c *DriftCollector) Report() *DriftReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	rep := &DriftReport{Groups: []*DriftGroup{}}
	for _, key := range c.order {
		g := *c.groups[key]
		g.Unknown = []DriftItem{}
		for _, it := range c.merged[key] {
			g.Unknown = append(g.Unknown, *it)
		}
		sort.Slice(g.Unknown, func(i, j int) bool {
			a, b := g.Unknown[i], g.Unknown[j]
			if a.What != b.What {
				return driftOrder(a.What) < driftOrder(b.What)
			}
			if a.Count != b.Count {
				return a.Count > b.Count
			}
			return a.Pointer+a.Name < b.Pointer+b.Name
		})
		g.KindsCounted = c.counts[key]
		if g.KindsCounted {
			g.Seen = c.seen[key]
			for _, k := range c.schemaKinds(g.Schema) {
				if g.Seen[k.kind] == 0 {
					g.NeverSeen = append(g.NeverSeen, NeverSeen{Kind: k.kind, Required: k.required})
				}
			}
		}
		rep.Groups = append(rep.Groups, &g)
	}
	return rep
}

func driftOrder(what string) int {
	switch what {
	case "type":
		return 0
	case "subtype":
		return 1
	case "field":
		return 2
	}
	return 3
}

// schemaKind is one event kind a schema file declares.
type schemaKind struct {
	kind     string // "type" or "type/subtype"
	required []string
}

// schemaKinds reads the kinds a schema file declares: the branches of its
// root oneOf (or anyOf), each with its type const, its subtype const or
// enum, and its required fields (its own and those of allOf members that
// are not conditional). A file without such branches yields none.
func (c *DriftCollector) schemaKinds(file string) []schemaKind {
	if file == "" {
		return nil
	}
	if k, ok := c.kinds[file]; ok {
		return k
	}
	var out []schemaKind
	defer func() { c.kinds[file] = out }()
	raw, err := fs.ReadFile(c.fsys, file)
	if err != nil {
		return nil
	}
	var root map[string]any
	if json.Unmarshal(raw, &root) != nil {
		return nil
	}
	branches, _ := root["oneOf"].([]any)
	if branches == nil {
		branches, _ = root["anyOf"].([]any)
	}
	seen := map[string]bool{}
	for _, b := range branches {
		node := resolve(root, b)
		typ, subs, req := "", []string(nil), map[string]bool{}
		collectBranch(root, node, &typ, &subs, req, 0)
		if typ == "" {
			continue
		}
		var required []string
		for r := range req {
			required = append(required, r)
		}
		sort.Strings(required)
		names := []string{typ}
		if len(subs) > 0 {
			names = names[:0]
			for _, s := range subs {
				names = append(names, typ+"/"+s)
			}
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, schemaKind{kind: n, required: required})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].kind < out[j].kind })
	return out
}

func resolve(root map[string]any, n any) map[string]any {
	for i := 0; i < 16; i++ {
		m, ok := n.(map[string]any)
		if !ok {
			return nil
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") || len(m) > 2 {
			return m
		}
		var cur any = root
		for _, tok := range strings.Split(ref[2:], "/") {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			cm, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = cm[tok]
		}
		n = cur
	}
	return nil
}

func collectBranch(root, m map[string]any, typ *string, subs *[]string, req map[string]bool, depth int) {
	if m == nil || depth > 8 {
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if t, ok := props["type"].(map[string]any); ok {
			if s, ok := t["const"].(string); ok && *typ == "" {
				*typ = s
			}
		}
		if st, ok := props["subtype"].(map[string]any); ok && len(*subs) == 0 {
			if s, ok := st["const"].(string); ok {
				*subs = []string{s}
			} else if e, ok := st["enum"].([]any); ok {
				for _, v := range e {
					if s, ok := v.(string); ok {
						*subs = append(*subs, s)
					}
				}
			}
		}
	}
	if r, ok := m["required"].([]any); ok {
		for _, v := range r {
			if s, ok := v.(string); ok {
				req[s] = true
			}
		}
	}
	if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
		collectBranch(root, resolve(root, map[string]any{"$ref": ref}), typ, subs, req, depth+1)
	}
	if all, ok := m["allOf"].([]any); ok {
		for _, a := range all {
			am := resolve(root, a)
			if am == nil {
				continue
			}
			if _, cond := am["if"]; cond {
				continue
			}
			collectBranch(root, am, typ, subs, req, depth+1)
		}
	}
}

// KindCounter counts the event kinds of a stream written to it (it is the
// other end of an io.TeeReader): "type" and "type/subtype" of every event
// line; of the stdout lines of a capture transcript ({"dir":"out","line":..});
// of the "out" steps of an agentconform/v1 transcript. Lines longer than
// its limit are skipped.
type KindCounter struct {
	buf      []byte
	skipping bool
	mode     int // 0 undecided, 1 events, 2 capture transcript, 3 v1 transcript
	counts   map[string]int
	events   int
	max      int
}

// NewKindCounter returns a counter that skips lines longer than maxLine
// bytes (0: 64 MiB).
func NewKindCounter(maxLine int64) *KindCounter {
	if maxLine <= 0 || maxLine > 1<<30 {
		maxLine = 64 << 20
	}
	return &KindCounter{counts: map[string]int{}, max: int(maxLine)}
}

// Write counts the complete lines in p and keeps the rest for later.
func (k *KindCounter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if !k.skipping {
				if len(k.buf)+len(p) > k.max {
					k.buf, k.skipping = k.buf[:0], true
				} else {
					k.buf = append(k.buf, p...)
				}
			}
			break
		}
		if !k.skipping && len(k.buf)+i <= k.max {
			line := p[:i]
			if len(k.buf) > 0 {
				k.buf = append(k.buf, line...)
				line = k.buf
			}
			k.line(line)
		}
		k.buf, k.skipping = k.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// Close counts a last line without a newline.
func (k *KindCounter) Close() error {
	if len(k.buf) > 0 && !k.skipping {
		k.line(k.buf)
	}
	k.buf = nil
	return nil
}

// Counts returns the events per kind.
func (k *KindCounter) Counts() map[string]int { return k.counts }

// Events returns the number of events counted.
func (k *KindCounter) Events() int { return k.events }

type lineShape struct {
	Type       any     `json:"type"`
	Subtype    any     `json:"subtype"`
	Dir        *string `json:"dir"`
	TMS        any     `json:"t_ms"`
	Line       *string `json:"line"`
	Out        *string `json:"out"`
	Transcript string  `json:"transcript"`
}

func (k *KindCounter) line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return
	}
	var s lineShape
	if json.Unmarshal(b, &s) != nil {
		return
	}
	if k.mode == 0 {
		switch {
		case s.Transcript == "agentconform/v1":
			k.mode = 3
			return
		case s.Dir != nil && s.TMS != nil:
			k.mode = 2
		default:
			k.mode = 1
		}
	}
	switch k.mode {
	case 1:
		k.count(s.Type, s.Subtype)
	case 2:
		if s.Dir != nil && *s.Dir == "out" && s.Line != nil {
			k.inner(*s.Line)
		}
	case 3:
		if s.Out != nil {
			k.inner(*s.Out)
		}
	}
}

func (k *KindCounter) inner(line string) {
	var s struct {
		Type    any `json:"type"`
		Subtype any `json:"subtype"`
	}
	if json.Unmarshal([]byte(line), &s) == nil {
		k.count(s.Type, s.Subtype)
	}
}

func (k *KindCounter) count(t, st any) {
	ts, ok := t.(string)
	if !ok {
		return
	}
	k.events++
	k.counts[ts]++
	if ss, ok := st.(string); ok {
		k.counts[ts+"/"+ss]++
	}
}

// WriteDriftText renders the drift report for a terminal.
func WriteDriftText(w io.Writer, rep *DriftReport) error {
	rep = visibleCopy(rep)
	ew := &errWriter{w: w}
	if len(rep.Groups) == 0 {
		ew.printf("Drift: no stream of a known dialect.\n")
		return ew.err
	}
	for _, g := range rep.Groups {
		ew.printf("%s %s (%s, schema %s): %s, %s\n", g.Dialect, g.CLIVersion, g.Schema, orDash(g.SchemaVersion), plural(g.Streams, "stream"), plural(g.Events, "event"))
		if len(g.Unknown) == 0 {
			ew.printf("  unknown to the schema: nothing\n")
		}
		for _, it := range g.Unknown {
			ew.printf("  unknown %s %s at %s: %s, first at %s\n", it.What, it.Name, orDash(it.Pointer), plural(it.Count, "time"), it.First)
		}
		if g.UnknownOverflow > 0 {
			ew.printf("  ... and %d more occurrences beyond the entry limit\n", g.UnknownOverflow)
		}
		switch {
		case !g.KindsCounted:
			ew.printf("  kinds not counted\n")
		case len(g.NeverSeen) == 0:
			ew.printf("  every kind the schema declares was seen\n")
		default:
			ew.printf("  declared by the schema, never seen (kind: its required fields):\n")
			for _, n := range g.NeverSeen {
				ew.printf("    %s: %s\n", n.Kind, strings.Join(n.Required, ", "))
			}
		}
	}
	return ew.err
}

// WriteDriftMarkdown renders the drift report as Markdown.
func WriteDriftMarkdown(w io.Writer, rep *DriftReport) error {
	rep = visibleCopy(rep)
	ew := &errWriter{w: w}
	ew.printf("### Drift\n\n")
	if len(rep.Groups) == 0 {
		ew.printf("No stream of a known dialect.\n\n")
		return ew.err
	}
	for _, g := range rep.Groups {
		ew.printf("#### %s %s\n\n%s, %s; schema `%s` (%s).\n\n", mdText(g.Dialect), mdText(g.CLIVersion), plural(g.Streams, "stream"),
			plural(g.Events, "event"), mdCodeText(g.Schema), mdText(orDash(g.SchemaVersion)))
		if len(g.Unknown) == 0 {
			ew.printf("Nothing the schema does not know.\n\n")
		} else {
			ew.printf("| unknown | name | at | count | first seen |\n|---|---|---|---:|---|\n")
			for _, it := range g.Unknown {
				ew.printf("| %s | `%s` | `%s` | %d | %s |\n", it.What, mdCodeText(it.Name), mdCodeText(orDash(it.Pointer)), it.Count, mdText(it.First))
			}
			if g.UnknownOverflow > 0 {
				ew.printf("\n… and %d more occurrences beyond the entry limit.\n", g.UnknownOverflow)
			}
			ew.printf("\n")
		}
		switch {
		case !g.KindsCounted:
		case len(g.NeverSeen) == 0:
			ew.printf("Every kind the schema declares was seen.\n\n")
		default:
			ew.printf("<details><summary>%s the schema declares were never seen (required fields never seen)</summary>\n\n| kind | required fields |\n|---|---|\n", plural(len(g.NeverSeen), "kind"))
			for _, n := range g.NeverSeen {
				ew.printf("| `%s` | %s |\n", mdCodeText(n.Kind), mdText(strings.Join(n.Required, ", ")))
			}
			ew.printf("\n</details>\n\n")
		}
	}
	return ew.err
}

// WriteDriftJSON writes the drift report as indented JSON.
func WriteDriftJSON(w io.Writer, rep *DriftReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
