package capture

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

// Shape is what a transcript's stdout shows about a CLI's protocol along
// some paths through it, with the values that change every run (ids,
// texts, times, numbers) left out: which kinds of events appear, which
// fields each kind carries, which values its enum-like fields take, and
// per path the order of the kinds and how the process exits.
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
	// Paths are the paths compared, in order: per process its main path
	// ("process 1") and the path after each signal its capture sent
	// ("process 1 after SIGINT").
	Paths []PathShape
	// Problems are the places where a baseline cannot follow the
	// capture's path (set by Along only).
	Problems []Change
	// Notes say what was not compared and why (set by Along only).
	Notes []string

	seen map[[2]int]bool // the stdout lines counted, by process and step
	// enum and free are the enum-like and the free-form fields (nil: the
	// JSON streams' enumKeys and freeForm).
	enum, free map[string]bool
}

// PathShape is one path through one process.
type PathShape struct {
	// Name is "process N" or "process N after SIGNAL".
	Name string
	// Order is the sequence of event kinds on stdout (repeats of one kind
	// in a row counted once).
	Order []string
	// Exit is the exit status reached ("0", "1", "SIGTERM", "(none)"); ""
	// when the path was not followed to its end.
	Exit string
	// Unanswered are the requests left without a response on the path,
	// and Terminal the last prompt's response or turn's completion
	// ("(none)" when there was none), of a JSON-RPC session's agent or
	// server (AlongRPC); both unset for the JSON streams.
	Unanswered []string
	Terminal   string
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

// ShapeOf reads a transcript's shape along its own paths: the main path of
// each process, and the branch each of its on_signal steps takes.
func ShapeOf(t *transcript.Transcript) *Shape {
	_, c := Along(t, t)
	return c
}

// Along walks base along every path capt took (the same stdin lines, the
// same answers to the CLI's requests, the same signal after the same
// stdout) and returns the shapes of both on those paths. Where base leaves
// a path to the fake (an on_signal "default", a control request it scripts
// no step for), both are compared only up to that point, and a note says
// so; where base cannot follow (it exits before the signal, waits for
// another line), a Change of What "path" says so.
func Along(base, capt *transcript.Transcript) (b, c *Shape) {
	b, c = newShape(), newShape()
	cli := capt.Header.CLI
	baseProcs := base.Processes()
	for pi, proc := range capt.Processes() {
		var bsteps []transcript.Step
		if pi < len(baseProcs) {
			bsteps = baseProcs[pi]
		}
		for _, p := range capturePaths(capt.Header, pi, proc) {
			w := follow(capt.Header, bsteps, p.events)
			couts := p.outs
			cexit := exitOfPath(proc, p)
			if w.stopped >= 0 {
				couts = couts[:p.events[w.stopped].at]
				cexit, w.exit = "", ""
			}
			if w.note != "" {
				b.Notes = append(b.Notes, p.name+": "+w.note)
			}
			// Where the baseline cannot follow, the problem says so; the
			// order and exit of the path are not compared as well.
			compared := w.problem == ""
			if !compared {
				b.Problems = append(b.Problems, Change{What: "path", How: "changed", Path: p.name, New: w.problem})
			}
			b.addPath(cli, pi, p.name, bsteps, w.outs, w.exit, compared)
			c.addPath(cli, pi, p.name, proc, couts, cexit, compared)
		}
	}
	return b, c
}

// exitOfPath is how a capture's path ends.
func exitOfPath(steps []transcript.Step, p capPath) string {
	if len(p.steps) == 0 {
		return "(none)"
	}
	last := steps[p.steps[len(p.steps)-1]]
	switch last.Op {
	case transcript.OpExit:
		return fmt.Sprint(last.Code)
	case transcript.OpExitSignal:
		return last.Signal
	case transcript.OpOnSignal:
		// The signal's action ended the process.
		for _, e := range p.events {
			if e.op == transcript.OpOnSignal {
				action := last.OnSignal[e.signal]
				if code, ok := strings.CutPrefix(action, "exit:"); ok {
					return code
				}
				if action == "die" {
					return e.signal
				}
			}
		}
	}
	return "(none)"
}

func newShape() *Shape {
	return &Shape{Kinds: map[string]int{}, Fields: map[string]map[string]bool{}, Values: map[string]map[string]bool{},
		seen: map[[2]int]bool{}}
}

// addPath adds one path of process proc: its stdout lines (indexes into
// steps) and, when the path is compared, its order and exit.
func (s *Shape) addPath(cli string, proc int, name string, steps []transcript.Step, outs []int, exit string, compared bool) {
	var order []string
	for _, i := range outs {
		ev := decodeEvent(steps[i].Text)
		if ev == nil {
			continue
		}
		k := kindOf(cli, ev)
		if key := [2]int{proc, i}; !s.seen[key] {
			s.seen[key] = true
			s.Kinds[k]++
			if s.Fields[k] == nil {
				s.Fields[k] = map[string]bool{}
			}
			s.walk(k, ev, "", 0)
		}
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
	if compared {
		s.Paths = append(s.Paths, PathShape{Name: name, Order: order, Exit: exit})
	}
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
			enum, free := enumKeys, freeForm
			if s.enum != nil {
				enum, free = s.enum, s.free
			}
			if free[key] {
				continue
			}
			if str, ok := child.(string); ok && enum[key] && identValue.MatchString(str) {
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

// Change is one difference between a baseline's shape and a capture's.
type Change struct {
	// What changed: "type" (an event kind), "field", "value", "order",
	// "exit", "unanswered" (the requests a JSON-RPC path leaves without a
	// response), "terminal" (its last prompt's response or turn's
	// completion), or "path" (the baseline cannot follow the capture's
	// path: New says where and why).
	What string `json:"what"`
	// How: "new", "vanished" or "changed".
	How string `json:"how"`
	// Kind is the event kind concerned ("" for order and exit).
	Kind string `json:"kind,omitempty"`
	// Path is the field's JSON pointer, or the path of an order, exit or
	// path change ("process 1", "process 1 after SIGINT").
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
	case "unanswered":
		return fmt.Sprintf("~ changed requests left unanswered on %s: %s -> %s", c.Path, c.Old, c.New)
	case "terminal":
		return fmt.Sprintf("~ changed terminal response of %s: %s -> %s", c.Path, c.Old, c.New)
	case "path":
		return fmt.Sprintf("~ changed path of %s: %s", c.Path, c.New)
	}
	return fmt.Sprintf("%s %s %s %s %s", sign, c.What, c.Kind, c.Path, c.New)
}

// Compare lists what changed from the baseline's shape to the capture's:
// event kinds, fields of kinds both have, values of fields both have, and
// per path of the capture (see Along) the order of kinds and the exit
// status, then where the baseline could not follow the capture.
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
	bp := map[string]PathShape{}
	for _, p := range base.Paths {
		bp[p.Name] = p
	}
	for _, c := range capt.Paths {
		b, ok := bp[c.Name]
		if !ok {
			continue
		}
		if strings.Join(b.Order, ",") != strings.Join(c.Order, ",") {
			out = append(out, Change{What: "order", How: "changed", Path: c.Name, Old: orderString(b.Order), New: orderString(c.Order)})
		}
		if b.Exit != "" && c.Exit != "" && b.Exit != c.Exit {
			out = append(out, Change{What: "exit", How: "changed", Path: c.Name, Old: b.Exit, New: c.Exit})
		}
		if bu, cu := orderString(b.Unanswered), orderString(c.Unanswered); bu != cu {
			out = append(out, Change{What: "unanswered", How: "changed", Path: c.Name, Old: bu, New: cu})
		}
		if b.Terminal != c.Terminal {
			out = append(out, Change{What: "terminal", How: "changed", Path: c.Name, Old: b.Terminal, New: c.Terminal})
		}
	}
	out = append(out, base.Problems...)
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
