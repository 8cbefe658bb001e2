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
			c := t.CallAt(i)
			if c == nil {
				continue
			}
			if m.Error != nil {
				s, base, what = v.errSchema, "/error", c.Method+" error"
				raw, _ = json.Marshal(m.Error)
			} else {
				s, raw, base = v.results[string(c.From.Other())+" "+c.Method], m.Result, "/result"
				what = c.Method + " result"
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
// validation error (the first leaf).
func deepest(ve *jsonschema.ValidationError) (string, string) {
	for len(ve.Causes) > 0 {
		best := ve.Causes[0]
		for _, c := range ve.Causes {
			if len(c.InstanceLocation) > len(best.InstanceLocation) {
				best = c
			}
		}
		ve = best
	}
	ptr := ""
	for _, tok := range ve.InstanceLocation {
		ptr += "/" + strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
	}
	return ptr, ve.Error()
}
