package reference

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/agentconform/agentconform/jsonstr"
	"github.com/agentconform/agentconform/reference/unified"
)

// ShimEvent is one line of the shim stream (the Claude-compatible
// stream-json a translation shim emits; schemas/shim/shim-event.schema.json).
// Each type marshals with its "type" (and "subtype") first.
type ShimEvent interface {
	// ShimType is the line's "type" value.
	ShimType() string
	json.Marshaler
}

// ShimInit is system/init: session metadata, first and once per session.
type ShimInit struct {
	// SessionID is the CLI's session (or thread) id.
	SessionID string `json:"session_id"`
	// Model and Cwd are the CLI's model and working directory.
	Model string `json:"model"`
	Cwd   string `json:"cwd"`
	// PermissionMode is default, auto or deny (docs/protocols/shim.md#permissions).
	PermissionMode string `json:"permissionMode"`
	// Tools lists the tools the CLI reported (Claude), else none.
	Tools []string `json:"tools"`
}

// ShimUser is a user message (the turn's prompt), which starts a turn.
type ShimUser struct {
	// Message is the user's message.
	Message ShimUserMessage `json:"message"`
}

// ShimUserMessage is the Claude-style message of a ShimUser.
type ShimUserMessage struct {
	// Role is "user".
	Role string `json:"role"`
	// Content is the prompt.
	Content string `json:"content"`
}

// ShimText is assistant text.
type ShimText struct {
	// Content is the text (at most 16 KiB per line).
	Content string `json:"content"`
}

// ShimThinking is reasoning text.
type ShimThinking struct {
	// IsThinking is always true.
	IsThinking bool `json:"is_thinking"`
	// Thought is the reasoning text.
	Thought string `json:"thought"`
}

// ShimToolUse is a tool call.
type ShimToolUse struct {
	// ID is unique in the session.
	ID string `json:"id"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Input is the call's input, a JSON object.
	Input json.RawMessage `json:"input"`
}

// ShimToolResult is a tool call's result. Content is a JSON string or an
// object with content or output (docs/protocols/shim.md#message-types).
type ShimToolResult struct {
	// ToolUseID is the id of the tool_use this answers.
	ToolUseID string `json:"tool_use_id"`
	// Content is the result.
	Content json.RawMessage `json:"content"`
	// IsError is set when the call failed.
	IsError bool `json:"is_error"`
}

// ShimTokens are Claude-style token counts: InputTokens excludes the
// cached prompt tokens, which are CacheReadInputTokens (read from the
// cache) and CacheCreationInputTokens (written to it).
type ShimTokens struct {
	// InputTokens are the prompt tokens not served from or written to a cache.
	InputTokens int64 `json:"input_tokens"`
	// OutputTokens are the generated tokens.
	OutputTokens int64 `json:"output_tokens"`
	// CacheCreationInputTokens were written to the cache.
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens,omitempty"`
	// CacheReadInputTokens were read from the cache.
	CacheReadInputTokens *int64 `json:"cache_read_input_tokens,omitempty"`
}

// ShimUsage is a usage line: the turn's tokens.
type ShimUsage struct {
	ShimTokens
}

// ShimResult is the terminal record of a turn.
type ShimResult struct {
	// IsError is set when the turn did not complete successfully.
	IsError bool `json:"is_error"`
	// Subtype is success, cancelled, error_during_execution or Claude's own.
	Subtype string `json:"subtype,omitempty"`
	// Usage is the turn's usage, when reported.
	Usage *ShimTokens `json:"usage,omitempty"`
	// TotalCostUSD is Claude's (cumulative) cost.
	TotalCostUSD *float64 `json:"total_cost_usd,omitempty"`
	// DurationMs is the turn's duration, when reported.
	DurationMs *int64 `json:"duration_ms,omitempty"`
	// Errors are the turn's error messages.
	Errors []string `json:"errors,omitempty"`
}

// ShimMessageStop follows each result.
type ShimMessageStop struct{}

// ShimError is a fatal or recoverable error.
type ShimError struct {
	// Message says what went wrong.
	Message string `json:"message"`
}

// ShimInterrupt says the turn was interrupted; a result follows.
type ShimInterrupt struct{}

// ShimType implementations.

// ShimType returns "system".
func (*ShimInit) ShimType() string { return "system" }

// ShimType returns "user".
func (*ShimUser) ShimType() string { return "user" }

// ShimType returns "text".
func (*ShimText) ShimType() string { return "text" }

// ShimType returns "thinking".
func (*ShimThinking) ShimType() string { return "thinking" }

// ShimType returns "tool_use".
func (*ShimToolUse) ShimType() string { return "tool_use" }

// ShimType returns "tool_result".
func (*ShimToolResult) ShimType() string { return "tool_result" }

// ShimType returns "usage".
func (*ShimUsage) ShimType() string { return "usage" }

// ShimType returns "result".
func (*ShimResult) ShimType() string { return "result" }

// ShimType returns "message_stop".
func (*ShimMessageStop) ShimType() string { return "message_stop" }

// ShimType returns "error".
func (*ShimError) ShimType() string { return "error" }

// ShimType returns "interrupt".
func (*ShimInterrupt) ShimType() string { return "interrupt" }

// MarshalJSON implementations.

// MarshalJSON writes system/init.
func (e *ShimInit) MarshalJSON() ([]byte, error) {
	type plain ShimInit
	c := *e
	if c.Tools == nil {
		c.Tools = []string{}
	}
	return marshalShim("system", "init", (*plain)(&c))
}

// MarshalJSON writes the line with its type.
func (e *ShimUser) MarshalJSON() ([]byte, error) {
	type plain ShimUser
	return marshalShim("user", "", (*plain)(e))
}

// MarshalJSON writes the line with its type. It is written by hand, the
// text encoded by package jsonstr in one pass into a buffer of its size:
// a 64 MiB text is 4,096 such lines, and encoding/json looked at every
// byte of them through a table (FuzzShimTextMarshal holds the two to the
// same bytes).
func (e *ShimText) MarshalJSON() ([]byte, error) {
	return e.appendJSON(make([]byte, 0, len(e.Content)+len(e.Content)/32+32)), nil
}

// appendJSON appends the line MarshalJSON writes to b (lineWriter writes
// it from a buffer of its own, used again line after line).
func (e *ShimText) appendJSON(b []byte) []byte {
	b = jsonstr.Append(append(b, `{"type":"text","content":`...), e.Content)
	return append(b, '}')
}

// MarshalJSON writes the line with its type, by hand as ShimText's.
func (e *ShimThinking) MarshalJSON() ([]byte, error) {
	return e.appendJSON(make([]byte, 0, len(e.Thought)+len(e.Thought)/32+64)), nil
}

// appendJSON appends the line MarshalJSON writes to b.
func (e *ShimThinking) appendJSON(b []byte) []byte {
	b = append(b, `{"type":"thinking","is_thinking":`...)
	b = strconv.AppendBool(b, e.IsThinking)
	b = jsonstr.Append(append(b, `,"thought":`...), e.Thought)
	return append(b, '}')
}

// MarshalJSON writes the line with its type; a missing input is {}.
func (e *ShimToolUse) MarshalJSON() ([]byte, error) {
	type plain ShimToolUse
	c := *e
	if isNull(c.Input) {
		c.Input = json.RawMessage("{}")
	}
	return marshalShim("tool_use", "", (*plain)(&c))
}

// MarshalJSON writes the line with its type; a missing content is "".
// The content is appended by unified.AppendRawMember, which does not
// compact a long result that is already compact once more.
func (e *ShimToolResult) MarshalJSON() ([]byte, error) {
	content := e.Content
	if isNull(content) {
		content = json.RawMessage(`""`)
	}
	b, err := marshalShim("tool_result", "", &struct {
		ToolUseID string `json:"tool_use_id"`
	}{e.ToolUseID})
	if err != nil {
		return nil, err
	}
	if b, err = unified.AppendRawMember(b[:len(b)-1], "content", content); err != nil {
		return nil, fmt.Errorf("marshalling shim tool_result: %w", err)
	}
	return append(b, `,"is_error":`+strconv.FormatBool(e.IsError)+`}`...), nil
}

// MarshalJSON writes the line with its type.
func (e *ShimUsage) MarshalJSON() ([]byte, error) {
	return marshalShim("usage", "", &e.ShimTokens)
}

// MarshalJSON writes the line with its type.
func (e *ShimResult) MarshalJSON() ([]byte, error) {
	type plain ShimResult
	return marshalShim("result", "", (*plain)(e))
}

// MarshalJSON writes {"type":"message_stop"}.
func (e *ShimMessageStop) MarshalJSON() ([]byte, error) {
	return marshalShim("message_stop", "", struct{}{})
}

// MarshalJSON writes the line with its type.
func (e *ShimError) MarshalJSON() ([]byte, error) {
	type plain ShimError
	return marshalShim("error", "", (*plain)(e))
}

// MarshalJSON writes {"type":"interrupt"}.
func (e *ShimInterrupt) MarshalJSON() ([]byte, error) {
	return marshalShim("interrupt", "", struct{}{})
}

// marshalShim marshals v (a method-less copy of a shim type) and puts
// "type" (and "subtype") in front of its fields.
func marshalShim(typ, subtype string, v any) ([]byte, error) {
	b, err := unified.MarshalTagged(v, "type", typ, "subtype", subtype)
	if err != nil {
		return nil, fmt.Errorf("marshalling shim %s: %w", typ, err)
	}
	return b, nil
}
