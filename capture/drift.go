package capture

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

// Shape is what a transcript's stdout shows about a CLI's protocol, with
// the values that change every run (ids, texts, times, numbers) left out:
// which kinds of events appear, which fields each kind carries, which
// values its enum-like fields take, in which order the kinds come, and how
// the processes exit.
type Shape struct {
	// Kinds counts the events of each kind ("assistant:tool_use",
	// "item.started:command_execution", "result/success").
	Kinds map[string]int
	// Fields holds, per kind, the JSON pointers of the fields the events
	// carry, with array indexes and data-like object keys as "*".
	Fields map[string]map[string]bool
	// Values holds, per kind and pointer ("kind pointer"), the values of
	// enum-like fields (type, subtype, status, role, stop_reason, ...).
	Values map[string]map[string]bool
	// Order is the sequence of kinds along the main path of each process
	// (repeats of one kind in a row counted once).
	Order [][]string
	// Exits maps, per process, "main" and every signal with an on_signal
	// action to the exit status reached ("0", "1", "SIGTERM").
	Exits []map[string]string
}

// kindOf names an event's kind for cli: its type, with the subtype or the
// variant that tells events of one type apart.
func kindOf(cli string, ev map[string]any) string {
	typ, _ := ev["type"].(string)
	if typ == "" {
		return "(no type)"
	}
	switch typ {
	case "assistant", "user":
		msg, _ := ev["message"].(map[string]any)
		switch c := msg["content"].(type) {
		case []any:
			if len(c) > 0 {
				if b, ok := c[0].(map[string]any); ok {
					if bt, ok := b["type"].(string); ok {
						return typ + ":" + bt
					}
				}
			}
		case string:
			return typ + ":text"
		}
		return typ
	case "control_request", "control_response":
		key := "request"
		if typ == "control_response" {
			key = "response"
		}
		if r, ok := ev[key].(map[string]any); ok {
			if sub, ok := r["subtype"].(string); ok {
				return typ + "/" + sub
			}
		}
		return typ
	case "stream_event":
		if e, ok := ev["event"].(map[string]any); ok {
			if et, ok := e["type"].(string); ok {
				return typ + "/" + et
			}
		}
		return typ
	case "message":
		if role, ok := ev["role"].(string); ok {
			return typ + ":" + role
		}
		return typ
	}
	if strings.HasPrefix(typ, "item.") {
		if item, ok := ev["item"].(map[string]any); ok {
			if it, ok := item["type"].(string); ok {
				return typ + ":" + it
			}
		}
	}
	if sub, ok := ev["subtype"].(string); ok {
		return typ + "/" + sub
	}
	if cli == "gemini" && typ == "result" {
		if st, ok := ev["status"].(string); ok {
			return typ + "/" + st
		}
	}
	return typ
}

// freeForm are the fields whose contents are data, not protocol: tool
// inputs and results, per-model maps.
var freeForm = map[string]bool{
	"input": true, "parameters": true, "arguments": true, "tool_use_result": true, "tool_input": true,
	"modelUsage": true, "models": true, "structured_content": true, "updatedInput": true, "hooks": true,
	"memory_paths": true, "partial_json": true,
}

// enumKeys are the fields whose string values form a (possibly open)
// enumeration worth comparing across versions.
var enumKeys = map[string]bool{
	"type": true, "subtype": true, "status": true, "role": true, "stop_reason": true, "terminal_reason": true,
	"severity": true, "kind": true, "behavior": true, "permissionMode": true, "apiKeySource": true,
	"output_style": true, "error": true, "fast_mode_state": true, "service_tier": true, "decision": true,
	"reason_type": true, "current_permission_mode": true, "state": true, "session_state": true,
}

var (
	identKey   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	identValue = regexp.MustCompile(`^[A-Za-z0-9_./:<>-]{1,48}$`)
)

const maxShapeDepth = 8

// ShapeOf reads a transcript's shape.
func ShapeOf(t *transcript.Transcript) *Shape {
	s := &Shape{Kinds: map[string]int{}, Fields: map[string]map[string]bool{}, Values: map[string]map[string]bool{}}
	cli := t.Header.CLI
	for _, st := range t.Steps {
		if st.Op != transcript.OpOut {
			continue
		}
		ev := decodeEvent(st.Text)
		if ev == nil {
			continue
		}
		k := kindOf(cli, ev)
		s.Kinds[k]++
		if s.Fields[k] == nil {
			s.Fields[k] = map[string]bool{}
		}
		s.walk(k, ev, "", 0)
	}
	for _, proc := range t.Processes() {
		s.Order = append(s.Order, mainOrder(cli, proc))
		s.Exits = append(s.Exits, exitsOf(proc))
	}
	return s
}

func (s *Shape) walk(kind string, v any, ptr string, depth int) {
	if depth > maxShapeDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for key, child := range x {
			name := key
			if !identKey.MatchString(key) {
				name = "*"
			}
			p := ptr + "/" + name
			s.Fields[kind][p] = true
			if freeForm[key] {
				continue
			}
			if str, ok := child.(string); ok && enumKeys[key] && identValue.MatchString(str) {
				vk := kind + " " + p
				if s.Values[vk] == nil {
					s.Values[vk] = map[string]bool{}
				}
				s.Values[vk][str] = true
			}
			s.walk(kind, child, p, depth+1)
		}
	case []any:
		for _, item := range x {
			s.walk(kind, item, ptr+"/*", depth+1)
		}
	}
}

// mainPath is the steps one process runs when nothing branches: in steps
// fall through, goto jumps, on_signal is not taken, exit ends it.
func mainPath(steps []transcript.Step, from int) []transcript.Step {
	labels := transcript.Labels(steps)
	var out []transcript.Step
	seen := map[int]bool{}
	for i := from; i >= 0 && i < len(steps) && !seen[i]; i++ {
		seen[i] = true
		st := steps[i]
		out = append(out, st)
		switch st.Op {
		case transcript.OpExit, transcript.OpExitSignal:
			return out
		case transcript.OpGoto:
			j, ok := labels[st.Label]
			if !ok {
				return out
			}
			i = j - 1
		}
	}
	return out
}

func mainOrder(cli string, steps []transcript.Step) []string {
	var order []string
	for _, st := range mainPath(steps, 0) {
		if st.Op != transcript.OpOut {
			continue
		}
		ev := decodeEvent(st.Text)
		if ev == nil {
			continue
		}
		k := kindOf(cli, ev)
		if len(order) > 0 && order[len(order)-1] == k {
			continue
		}
		order = append(order, k)
		// A pair repeated (started, completed, started, completed; or
		// tool_use, tool_result, ...) counts once, so that parallel calls
		// interleaved either way read the same.
		if n := len(order); n >= 4 && order[n-1] == order[n-3] && order[n-2] == order[n-4] {
			order = order[:n-2]
		}
	}
	return order
}

func exitOf(path []transcript.Step) string {
	if len(path) == 0 {
		return "(none)"
	}
	last := path[len(path)-1]
	switch last.Op {
	case transcript.OpExit:
		return fmt.Sprint(last.Code)
	case transcript.OpExitSignal:
		return last.Signal
	}
	return "(none)"
}

// exitsOf lists how a process ends: on its main path, and for every
// signal an on_signal step handles.
func exitsOf(steps []transcript.Step) map[string]string {
	out := map[string]string{"main": exitOf(mainPath(steps, 0))}
	labels := transcript.Labels(steps)
	for _, st := range steps {
		if st.Op != transcript.OpOnSignal {
			continue
		}
		for sig, action := range st.OnSignal {
			switch {
			case strings.HasPrefix(action, "goto:"):
				if j, ok := labels[strings.TrimPrefix(action, "goto:")]; ok {
					out[sig] = exitOf(mainPath(steps, j))
				}
			case strings.HasPrefix(action, "exit:"):
				out[sig] = strings.TrimPrefix(action, "exit:")
			case action == "die":
				out[sig] = sig
			}
		}
	}
	return out
}

// Change is one difference between a baseline's shape and a capture's.
type Change struct {
	// What changed: "type" (an event kind), "field", "value", "order" or
	// "exit".
	What string `json:"what"`
	// How: "new", "vanished" or "changed".
	How string `json:"how"`
	// Kind is the event kind concerned ("" for order and exit).
	Kind string `json:"kind,omitempty"`
	// Path is the field's JSON pointer, or the process and signal of an
	// exit ("process 1 SIGINT").
	Path string `json:"path,omitempty"`
	// Old and New are the values or orders before and after.
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// Below counts the further new (or vanished) fields inside a new (or
	// vanished) field, which are not listed one by one.
	Below int `json:"below,omitempty"`
}

// String renders the change as one line.
func (c Change) String() string {
	sign := map[string]string{"new": "+", "vanished": "-", "changed": "~"}[c.How]
	switch c.What {
	case "type":
		return fmt.Sprintf("%s %s event kind %s", sign, c.How, c.Kind)
	case "field":
		below := ""
		if c.Below > 0 {
			below = fmt.Sprintf(" (and %d fields inside it)", c.Below)
		}
		return fmt.Sprintf("%s %s field %s in %s%s", sign, c.How, c.Path, c.Kind, below)
	case "value":
		v := c.New
		if c.How == "vanished" {
			v = c.Old
		}
		return fmt.Sprintf("%s %s value %s at %s in %s", sign, c.How, v, c.Path, c.Kind)
	case "order":
		return fmt.Sprintf("~ changed order of %s:\n      was: %s\n      now: %s", c.Path, c.Old, c.New)
	case "exit":
		return fmt.Sprintf("~ changed exit of %s: %s -> %s", c.Path, c.Old, c.New)
	}
	return fmt.Sprintf("%s %s %s %s %s", sign, c.What, c.Kind, c.Path, c.New)
}

// Compare lists what changed from the baseline's shape to the capture's:
// event kinds, fields of kinds both have, values of fields both have,
// the order of kinds along each process's main path, and exit statuses.
func Compare(base, capt *Shape) []Change {
	var out []Change
	for _, k := range sortedKeys(capt.Kinds) {
		if base.Kinds[k] == 0 {
			out = append(out, Change{What: "type", How: "new", Kind: k})
		}
	}
	for _, k := range sortedKeys(base.Kinds) {
		if capt.Kinds[k] == 0 {
			out = append(out, Change{What: "type", How: "vanished", Kind: k})
		}
	}
	for _, k := range sortedKeys(capt.Kinds) {
		if base.Kinds[k] == 0 {
			continue
		}
		out = append(out, fieldChanges(k, "new", capt.Fields[k], base.Fields[k])...)
		out = append(out, fieldChanges(k, "vanished", base.Fields[k], capt.Fields[k])...)
	}
	for _, vk := range sortedKeys(capt.Values) {
		bv, ok := base.Values[vk]
		if !ok {
			continue
		}
		kind, path, _ := strings.Cut(vk, " ")
		for _, v := range sortedKeys(capt.Values[vk]) {
			if !bv[v] {
				out = append(out, Change{What: "value", How: "new", Kind: kind, Path: path, New: v})
			}
		}
		for _, v := range sortedKeys(bv) {
			if !capt.Values[vk][v] {
				out = append(out, Change{What: "value", How: "vanished", Kind: kind, Path: path, Old: v})
			}
		}
	}
	n := max(len(base.Order), len(capt.Order))
	for i := 0; i < n; i++ {
		var b, c []string
		if i < len(base.Order) {
			b = base.Order[i]
		}
		if i < len(capt.Order) {
			c = capt.Order[i]
		}
		if strings.Join(b, ",") != strings.Join(c, ",") {
			out = append(out, Change{What: "order", How: "changed", Path: fmt.Sprintf("process %d", i+1),
				Old: orderString(b), New: orderString(c)})
		}
	}
	for i := 0; i < n; i++ {
		var b, c map[string]string
		if i < len(base.Exits) {
			b = base.Exits[i]
		}
		if i < len(capt.Exits) {
			c = capt.Exits[i]
		}
		for _, k := range sortedKeys(c) {
			if old, ok := b[k]; ok && old != c[k] {
				out = append(out, Change{What: "exit", How: "changed", Path: fmt.Sprintf("process %d %s", i+1, k), Old: old, New: c[k]})
			}
		}
	}
	return out
}

// fieldChanges lists the fields in has that other lacks, each with the
// number of such fields below it instead of those fields themselves.
func fieldChanges(kind, how string, has, other map[string]bool) []Change {
	var out []Change
	for _, f := range sortedKeys(has) {
		if other[f] {
			continue
		}
		if n := len(out); n > 0 && strings.HasPrefix(f, out[n-1].Path+"/") {
			out[n-1].Below++
			continue
		}
		out = append(out, Change{What: "field", How: how, Kind: kind, Path: f})
	}
	return out
}

func orderString(o []string) string {
	if len(o) == 0 {
		return "(nothing)"
	}
	return strings.Join(o, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
