// Package acp models the Agent Client Protocol (ACP): JSON-RPC 2.0 over
// stdio, one JSON object per line, between an editor (the client) and a
// coding agent (Gemini CLI in its --acp mode, or a program that wraps
// Claude Code or Codex). It decodes messages strictly, pairs requests with
// their responses by id, follows sessions, prompt turns, tool calls and
// permission requests through a log of both directions (Trace), and checks
// what the protocol promises (Check): every request answered once, every
// session/prompt ended by one response with a stop reason, cancelled after
// session/cancel, every tool call finished. The rules cite
// docs/protocols/acp.md; the schema is the protocol's own (schemas/acp).
package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Kind is what a JSON-RPC message is.
type Kind int

// The kinds of JSON-RPC 2.0 messages.
const (
	// Request has a method and an id: the other side must answer it.
	Request Kind = iota
	// Notification has a method and no id: nobody answers it.
	Notification
	// Response has an id and a result or an error: it answers a request.
	Response
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Notification:
		return "notification"
	case Response:
		return "response"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error is the error member of a JSON-RPC response.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Message is one decoded JSON-RPC 2.0 message.
type Message struct {
	// Kind is what the message is.
	Kind Kind
	// ID is the raw JSON of the id (a number, a string or null); nil for a
	// notification.
	ID json.RawMessage
	// Method names the request or notification ("session/prompt").
	Method string
	// Params, Result: the raw JSON of those members, nil when absent.
	Params, Result json.RawMessage
	// Error is a response's error, nil for a result.
	Error *Error
}

// IDKey is the id in a canonical form ids are compared by: 1 and "1" are
// different ids, 1 and 1.0 the same.
func (m *Message) IDKey() string { return IDKey(m.ID) }

// IDKey is the canonical form of a raw JSON id.
func IDKey(id json.RawMessage) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(id))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return string(id)
	}
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return fmt.Sprintf("n:%g", f)
		}
		return "n:" + x.String()
	case string:
		return "s:" + x
	case nil:
		return "null"
	}
	return string(id)
}

// DecodeError says why a line is not a JSON-RPC 2.0 message, and where
// (a JSON pointer into the line's object, "" for the line as a whole).
type DecodeError struct {
	Pointer string
	Message string
}

func (e *DecodeError) Error() string {
	if e.Pointer == "" {
		return e.Message
	}
	return e.Message + " (at " + e.Pointer + ")"
}

// Decode decodes one line (without its newline) as a JSON-RPC 2.0
// message, strictly: one JSON object, "jsonrpc": "2.0", an id that is a
// string, a number or null, a method that is a string, a response with
// exactly one of result and error, an error with an integer code and a
// string message.
func Decode(line []byte) (*Message, error) {
	line = bytes.TrimRight(line, "\r")
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&raw); err != nil {
		return nil, &DecodeError{Message: "not a JSON object: " + err.Error()}
	}
	if dec.More() {
		return nil, &DecodeError{Message: "more than one JSON value on the line"}
	}
	if raw == nil {
		return nil, &DecodeError{Message: "not a JSON object"}
	}
	var version string
	if v, ok := raw["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return nil, &DecodeError{Pointer: "/jsonrpc", Message: `"jsonrpc" must be "2.0"`}
	}
	m := &Message{}
	id, hasID := raw["id"]
	if hasID {
		switch t := strings.TrimSpace(string(id)); {
		case t == "null", strings.HasPrefix(t, `"`):
		case len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
		default:
			return nil, &DecodeError{Pointer: "/id", Message: "an id must be a string, a number or null"}
		}
		m.ID = id
	}
	if meth, ok := raw["method"]; ok {
		if json.Unmarshal(meth, &m.Method) != nil || m.Method == "" {
			return nil, &DecodeError{Pointer: "/method", Message: "a method must be a non-empty string"}
		}
		if _, ok := raw["result"]; ok {
			return nil, &DecodeError{Pointer: "/result", Message: "a request or notification has no result"}
		}
		if _, ok := raw["error"]; ok {
			return nil, &DecodeError{Pointer: "/error", Message: "a request or notification has no error"}
		}
		m.Params = raw["params"]
		if p := strings.TrimSpace(string(m.Params)); p != "" && p[0] != '{' && p[0] != '[' {
			return nil, &DecodeError{Pointer: "/params", Message: "params must be an object or an array"}
		}
		m.Kind = Notification
		if hasID {
			m.Kind = Request
		}
		return m, nil
	}
	if !hasID {
		return nil, &DecodeError{Message: "neither a method (a request or notification) nor an id (a response)"}
	}
	m.Kind = Response
	res, hasRes := raw["result"]
	errRaw, hasErr := raw["error"]
	switch {
	case hasRes && hasErr:
		return nil, &DecodeError{Pointer: "/error", Message: "a response has a result or an error, not both"}
	case hasRes:
		m.Result = res
	case hasErr:
		var e Error
		var shape map[string]json.RawMessage
		if json.Unmarshal(errRaw, &shape) != nil || shape == nil {
			return nil, &DecodeError{Pointer: "/error", Message: "an error must be an object"}
		}
		if json.Unmarshal(shape["code"], &e.Code) != nil {
			return nil, &DecodeError{Pointer: "/error/code", Message: "an error code must be an integer"}
		}
		if json.Unmarshal(shape["message"], &e.Message) != nil {
			return nil, &DecodeError{Pointer: "/error/message", Message: "an error message must be a string"}
		}
		e.Data = shape["data"]
		m.Error = &e
	default:
		return nil, &DecodeError{Pointer: "/result", Message: "a response needs a result or an error"}
	}
	return m, nil
}

// ToolCallID is the tool call a line names: the toolCallId of a
// session/update's tool_call or tool_call_update, or of the toolCall of a
// session/request_permission ("" when the line names none). Captures and
// fixtures are matched up by it.
func ToolCallID(line string) string {
	var m struct {
		Params struct {
			Update struct {
				ToolCallID string `json:"toolCallId"`
			} `json:"update"`
			ToolCall struct {
				ToolCallID string `json:"toolCallId"`
			} `json:"toolCall"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(line), &m) != nil {
		return ""
	}
	if m.Params.Update.ToolCallID != "" {
		return m.Params.Update.ToolCallID
	}
	return m.Params.ToolCall.ToolCallID
}
