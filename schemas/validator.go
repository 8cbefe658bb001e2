package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Validator judges decoded events against one schema file. It evaluates each
// event against the single branch its type (and subtype) selects, instead of
// the file's whole oneOf, and finds drift (properties and open-enum values
// the file does not name) by walking the event against a tree of what that
// branch declares. A Validator is safe for concurrent use.
type Validator struct {
	// File is the schema's path inside the schema file system.
	File string
	// Version is the CLI version the file was derived from, or "".
	Version string

	root     *branch
	branches map[string]*branch // by type, and by type+"\x00"+subtype
	subtyped map[string]bool    // types whose branches are chosen by subtype
	types    []string           // known type values, sorted
}

type branch struct {
	kind   string // "type" or "type/subtype"
	schema *jsonschema.Schema
	known  *known
}

// Problem is one way an event breaks its schema.
type Problem struct {
	// Pointer is the RFC 6901 pointer of the offending value in the event.
	Pointer string
	// Message says what is wrong, in one sentence.
	Message string
	// Expected and Actual are short renderings, where the keyword has them.
	Expected, Actual string
	// Keyword is the failing JSON Schema keyword ("required", "type", ...).
	Keyword string
}

// DriftKind classifies what a schema does not know.
type DriftKind string

const (
	// UnknownType is an event whose type no branch of the schema names.
	UnknownType DriftKind = "type"
	// UnknownSubtype is a known type with a subtype no branch names.
	UnknownSubtype DriftKind = "subtype"
	// UnknownField is a property the schema does not declare.
	UnknownField DriftKind = "field"
	// UnknownValue is a value outside an open enum (x-open-enum).
	UnknownValue DriftKind = "value"
)

// Drift is one thing in an event that the schema does not know.
type Drift struct {
	Kind DriftKind
	// Pointer locates the unknown thing in the event.
	Pointer string
	// Name is the unknown type, subtype, field name or value.
	Name string
}

// Result is the verdict on one event.
type Result struct {
	// Kind is the event kind that was checked ("assistant", "system/init"),
	// or "" when the event had no usable type.
	Kind     string
	Problems []Problem
	Drift    []Drift
}

// Set loads and caches validators from one schema file system (the embedded
// schemas, or a directory a user supplies). It is safe for concurrent use.
type Set struct {
	fsys  fs.FS
	mu    sync.Mutex
	cache map[string]*Validator
	errs  map[string]error
}

// NewSet returns a Set reading schema files from fsys, laid out as the
// embedded FS() is.
func NewSet(fsys fs.FS) *Set {
	return &Set{fsys: fsys, cache: map[string]*Validator{}, errs: map[string]error{}}
}

// FS is the file system the Set reads schema files from.
func (s *Set) FS() fs.FS { return s.fsys }

var defaultSet = NewSet(FS())

// Load returns the validator for dialect d under profile p from the embedded
// schemas; see Resolve for how the file and version are chosen.
func Load(p Profile, d Dialect, version string) (*Validator, error) {
	return defaultSet.Load(p, d, version)
}

// Load returns the validator for dialect d under profile p from s's files.
func (s *Set) Load(p Profile, d Dialect, version string) (*Validator, error) {
	file, fileVersion, err := Resolve(s.fsys, p, d, version)
	if err != nil {
		return nil, err
	}
	return s.Compile(file, fileVersion)
}

// Compile returns the validator for one schema file, compiling it on first use.
func (s *Set) Compile(file, version string) (*Validator, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.cache[file]; ok {
		return v, nil
	}
	if err, ok := s.errs[file]; ok {
		return nil, err
	}
	v, err := compile(s.fsys, file, version)
	if err != nil {
		s.errs[file] = err
		return nil, err
	}
	s.cache[file] = v
	return v, nil
}

func compile(fsys fs.FS, file, version string) (*Validator, error) {
	raw, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("reading schema %s: %w", file, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema %s is not valid JSON: %w", file, err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %s: top level is not an object", file)
	}
	url := "agentconform:///" + file
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(url, root); err != nil {
		return nil, fmt.Errorf("schema %s: %w", file, err)
	}
	v := &Validator{File: file, Version: version, branches: map[string]*branch{}, subtyped: map[string]bool{}}
	rs, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compiling schema %s: %w", file, err)
	}
	v.root = &branch{schema: rs, known: buildKnown(root, []any{root}, 0)}
	for _, d := range dispatchTable(root) {
		b := &branch{kind: d.typ}
		if d.subtype != "" {
			b.kind = d.typ + "/" + d.subtype
		}
		if b.schema, err = c.Compile(url + "#" + d.ptr); err != nil {
			return nil, fmt.Errorf("compiling schema %s branch %s: %w", file, d.ptr, err)
		}
		b.known = buildKnown(root, []any{mustResolve(root, d.ptr)}, 0)
		key := d.typ
		if d.subtype != "" {
			key += "\x00" + d.subtype
			v.subtyped[d.typ] = true
		}
		if _, dup := v.branches[key]; !dup {
			v.branches[key] = b
		}
	}
	seen := map[string]bool{}
	for k := range v.branches {
		t, _, _ := strings.Cut(k, "\x00")
		if !seen[t] {
			seen[t] = true
			v.types = append(v.types, t)
		}
	}
	sort.Strings(v.types)
	return v, nil
}

// Types lists the event types the schema knows.
func (v *Validator) Types() []string { return v.types }

// Validate judges one decoded event. Events of an unknown type or subtype
// are drift, not problems; so are properties and open-enum values the
// schema does not name.
func (v *Validator) Validate(obj map[string]any) Result {
	return v.validate(obj, true)
}

// validate is Validate; standIns lets the library judge long strings by
// a stand-in where it is blind to them (standin.go).
func (v *Validator) validate(obj map[string]any, standIns bool) Result {
	b, res := v.pick(obj)
	if b == nil {
		return res
	}
	res.Kind = b.kind
	inst := obj
	if standIns {
		inst = b.withStandIns(obj)
	}
	// Drift is found on the event itself.
	if err := b.schema.Validate(inst); err != nil {
		for _, l := range leaves(err) {
			res.Problems = append(res.Problems, problemOf(l))
		}
		sortProblems(res.Problems)
	}
	var path [16]string
	res.Drift = b.known.drift(obj, path[:0], nil)
	if len(res.Drift) > 1 {
		sort.Slice(res.Drift, func(i, j int) bool { return res.Drift[i].Pointer < res.Drift[j].Pointer })
	}
	return res
}

// pick selects the branch for obj, or reports why there is none.
func (v *Validator) pick(obj map[string]any) (*branch, Result) {
	if len(v.branches) == 0 {
		return v.root, Result{}
	}
	tv, present := obj["type"]
	t, isString := tv.(string)
	if !present || !isString {
		p := Problem{Pointer: "/type", Keyword: "required", Expected: "a string naming the event type (" + strings.Join(v.types, ", ") + ")"}
		if !present {
			p.Message = "the event has no type field"
			p.Actual = "no type"
		} else {
			p.Message = "the event's type is not a string"
			p.Keyword = "type"
			p.Actual = render(tv)
		}
		return nil, Result{Problems: []Problem{p}}
	}
	if v.subtyped[t] {
		st, _ := obj["subtype"].(string)
		if b, ok := v.branches[t+"\x00"+st]; ok {
			return b, Result{}
		}
		if b, ok := v.branches[t]; ok {
			return b, Result{}
		}
		if _, has := obj["subtype"]; !has {
			return nil, Result{Kind: t, Problems: []Problem{{Pointer: "/subtype", Keyword: "required", Message: "a " + strconv.Quote(t) + " event must have a subtype", Expected: "a subtype", Actual: "no subtype"}}}
		}
		return nil, Result{Kind: t, Drift: []Drift{{Kind: UnknownSubtype, Pointer: "/subtype", Name: t + "/" + render(obj["subtype"])}}}
	}
	if b, ok := v.branches[t]; ok {
		return b, Result{}
	}
	return nil, Result{Drift: []Drift{{Kind: UnknownType, Pointer: "/type", Name: t}}}
}

// leaves flattens a validation error to the errors that have no causes,
// skipping the wrappers ("allOf failed", "$ref").
func leaves(err error) []*jsonschema.ValidationError {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var out []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

var printer = message.NewPrinter(language.English)

// problemOf turns a library error into a Problem with expected/actual.
func problemOf(e *jsonschema.ValidationError) Problem {
	p := Problem{Pointer: pointerOf(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(printer)}
	if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
		p.Keyword = kp[0]
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		p.Expected = "properties " + strings.Join(k.Missing, ", ")
		p.Actual = "missing"
		if len(k.Missing) == 1 {
			p.Pointer += "/" + escape(k.Missing[0])
			p.Expected = "property " + k.Missing[0]
		}
		p.Message = "missing required " + p.Expected
	case *kind.Type:
		p.Expected = strings.Join(k.Want, " or ")
		p.Actual = k.Got
	case *kind.Const:
		p.Expected = render(k.Want)
		p.Actual = render(k.Got)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = render(w)
		}
		p.Expected = "one of " + strings.Join(want, ", ")
		p.Actual = render(k.Got)
	case *kind.Format:
		p.Expected = k.Want
		p.Actual = render(k.Got)
	case *kind.FalseSchema:
		p.Message = "this property is not allowed here"
		p.Expected = "no such property"
		p.Actual = "present"
	}
	return p
}

func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Pointer < ps[j].Pointer })
}

// pointerOf builds a JSON pointer from the library's instance location.
func pointerOf(loc []string) string {
	var b strings.Builder
	for _, t := range loc {
		b.WriteByte('/')
		b.WriteString(escape(t))
	}
	return b.String()
}

func escape(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// render prints a JSON value briefly for messages (at most 80 bytes).
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}
