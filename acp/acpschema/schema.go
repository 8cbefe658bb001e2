// Package acpschema validates ACP messages against the protocol's own JSON
// Schema (schemas/acp). It is apart from package acp so that what decodes
// and follows ACP sessions (the fake gemini among them) does not link a
// JSON Schema compiler, whose start-up costs every process milliseconds.
package acpschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/schemas"
)

// SchemaVersion is the version of the ACP schema shipped in schemas/acp:
// schema/schema.unstable.json of agentclientprotocol/agent-client-protocol
// at tag v0.11.3, the schema.json the TypeScript SDK
// @agentclientprotocol/sdk 0.17.0 publishes (the stable methods and the
// unstable ones real agents already use: session/resume,
// session/set_model, session/set_config_option).
const SchemaVersion = "0.11.3"

// SchemaFile is the schema's path in schemas.FS().
const SchemaFile = "acp/" + SchemaVersion + "/schema.json"

// SchemaValidator judges the params and results of an ACP session's
// messages against the definition the schema gives their method (the
// definitions carry x-method and x-side).
type SchemaValidator struct {
	// params[side+" "+method] is the schema of the params of method when
	// side receives it (a request or notification); results the same for
	// the result of a response to it.
	params, results map[string]*jsonschema.Schema
	errSchema       *jsonschema.Schema
}

var (
	schemaOnce sync.Once
	schemaVal  *SchemaValidator
	schemaErr  error
)

// Schema returns the validator of the shipped schema, compiled once.
func Schema() (*SchemaValidator, error) {
	schemaOnce.Do(func() {
		b, err := fs.ReadFile(schemas.FS(), SchemaFile)
		if err != nil {
			schemaErr = fmt.Errorf("acp: the schema: %w", err)
			return
		}
		schemaVal, schemaErr = NewSchemaValidator(b)
	})
	return schemaVal, schemaErr
}

// NewSchemaValidator compiles an ACP schema document (schema.json of the
// protocol's repository).
func NewSchemaValidator(doc []byte) (*SchemaValidator, error) {
	var defs struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
			Side   string `json:"x-side"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(doc, &defs); err != nil {
		return nil, fmt.Errorf("acp: the schema is not JSON: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("acp: the schema is not JSON: %w", err)
	}
	const url = "https://agentconform.dev/schemas/" + SchemaFile
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, v); err != nil {
		return nil, fmt.Errorf("acp: the schema: %w", err)
	}
	sv := &SchemaValidator{params: map[string]*jsonschema.Schema{}, results: map[string]*jsonschema.Schema{}}
	names := make([]string, 0, len(defs.Defs))
	for name := range defs.Defs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		d := defs.Defs[name]
		if d.Method == "" || (d.Side != string(acp.Client) && d.Side != string(acp.Agent)) {
			continue
		}
		s, err := c.Compile(url + "#/$defs/" + name)
		if err != nil {
			return nil, fmt.Errorf("acp: the schema's %s: %w", name, err)
		}
		key := d.Side + " " + d.Method
		switch {
		case strings.HasSuffix(name, "Response"):
			sv.results[key] = s
		case strings.HasSuffix(name, "Request"), strings.HasSuffix(name, "Notification"):
			sv.params[key] = s
		}
	}
	if sv.errSchema, err = c.Compile(url + "#/$defs/Error"); err != nil {
		return nil, fmt.Errorf("acp: the schema's Error: %w", err)
	}
	return sv, nil
}

// Knows reports whether the schema defines method as one side receives.
func (v *SchemaValidator) Knows(receiver acp.Side, method string) bool {
	return v.params[string(receiver)+" "+method] != nil
}

// Check validates every message of the trace whose method the schema
// defines: the params of requests and notifications, the result (or the
// error) of responses. Extension methods (a leading underscore) and
// methods the schema does not define are left alone.
func (v *SchemaValidator) Check(t *acp.Trace) []acp.SchemaProblem {
	return v.check(t, func(i int) (string, acp.Side, bool) {
		c := t.CallAt(i)
		if c == nil {
			return "", "", false
		}
		return c.Method, c.From, true
	})
}

// CheckAgentOnly is Check for a log of the agent's lines alone (its
// stdout): requests and notifications are judged as Check judges them,
// and a response only when what it carries says which request it answers
// (acp.AnsweredBy), or when it is an error (every error has one schema).
func (v *SchemaValidator) CheckAgentOnly(t *acp.Trace) []acp.SchemaProblem {
	return v.check(t, func(i int) (string, acp.Side, bool) {
		m := t.Entries[i].Msg
		if m.Error != nil {
			return "", acp.Client, true
		}
		method := acp.AnsweredBy(m.Result)
		return method, acp.Client, method != ""
	})
}

// check validates the messages of t; methodOf says which request a
// response at an index answers (its method, and who sent it), false when
// that is not known.
func (v *SchemaValidator) check(t *acp.Trace, methodOf func(i int) (string, acp.Side, bool)) []acp.SchemaProblem {
	var out []acp.SchemaProblem
	for i, e := range t.Entries {
		m := e.Msg
		if m == nil {
			continue
		}
		var s *jsonschema.Schema
		var raw json.RawMessage
		var base, what string
		switch m.Kind {
		case acp.Request, acp.Notification:
			s, raw, base = v.params[string(e.From.Other())+" "+m.Method], m.Params, "/params"
			what = m.Method + " params"
			if raw == nil {
				raw = json.RawMessage("{}")
			}
		case acp.Response:
			method, asker, ok := methodOf(i)
			if !ok {
				continue
			}
			if m.Error != nil {
				s, base, what = v.errSchema, "/error", strings.TrimSpace(method+" error")
				raw, _ = json.Marshal(m.Error)
			} else {
				s, raw, base = v.results[string(asker.Other())+" "+method], m.Result, "/result"
				what = method + " result"
			}
		}
		if s == nil {
			continue
		}
		val, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			continue // not JSON: Decode has reported the line
		}
		if err := s.Validate(val); err != nil {
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) {
				ptr, msg := deepest(ve)
				out = append(out, acp.SchemaProblem{Entry: i, Pointer: base + ptr, Message: fmt.Sprintf("%s break the ACP schema %s: %s", what, SchemaVersion, msg),
					Expected: "valid " + what, Actual: string(raw)})
				continue
			}
			out = append(out, acp.SchemaProblem{Entry: i, Pointer: base, Message: fmt.Sprintf("%s: %v", what, err)})
		}
	}
	return out
}

// deepest is the pointer and message of the most specific cause of a
// validation error: of its leaves, the one deepest in the instance, the
// first by pointer and message among those as deep. The causes come in
// no fixed order (the schema's properties are a map), and picking by
// their order made the same line's finding differ from run to run.
func deepest(ve *jsonschema.ValidationError) (string, string) {
	var bestPtr, bestMsg string
	bestDepth := -1
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		ptr := ""
		for _, tok := range e.InstanceLocation {
			ptr += "/" + strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
		}
		msg := e.Error()
		d := len(e.InstanceLocation)
		if d > bestDepth || d == bestDepth && (ptr < bestPtr || ptr == bestPtr && msg < bestMsg) {
			bestDepth, bestPtr, bestMsg = d, ptr, msg
		}
	}
	walk(ve)
	return bestPtr, bestMsg
}
