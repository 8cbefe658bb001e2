// Package unified holds Go types for the unified event model of the protocol
// spec (docs/protocols/unified.md#events: its §7.2, JSON Schema §8.1, and the corrected copy
// schemas/unified/unified-event.schema.json): the eight events an adapter
// hands its caller whichever CLI it drives (Claude Code, Codex CLI, Gemini
// CLI).
//
// There is one struct per event type, each implementing Event. The JSON
// field names are exactly those of §8.1; every event marshals with its
// "type" discriminator, and fields the schema requires are always written,
// even when they hold the zero value (an empty textChunk content, a
// toolCompleted with success false). Decode reads a line back into the
// matching struct.
package unified

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/agentconform/agentconform/jsonstr"

	"github.com/agentconform/agentconform/jsonvalid"
)

// Type is the value of an event's "type" field.
type Type string

// The eight event types of §8.1.
const (
	TypeSessionStarted Type = "sessionStarted"
	TypeTextChunk      Type = "textChunk"
	TypeToolStarted    Type = "toolStarted"
	TypeToolProgress   Type = "toolProgress"
	TypeToolCompleted  Type = "toolCompleted"
	TypeFileChanged    Type = "fileChanged"
	TypeTurnCompleted  Type = "turnCompleted"
	TypeSessionEnded   Type = "sessionEnded"
)

// Event is one unified event. Every event type in this package implements
// it; Header gives access to the fields all events share.
type Event interface {
	// EventType is the event's "type" value.
	EventType() Type
	// Header returns the shared fields (id, sessionId, timestamp), so code
	// that stamps or inspects them need not switch on the type.
	Header() *Base
	json.Marshaler
}

// Base holds the fields every event carries (§8.1 BaseEvent). It is
// embedded in each event struct.
type Base struct {
	// ID identifies the event; unique within a session.
	ID string `json:"id"`
	// SessionID is the CLI's session (Claude, Gemini) or thread (Codex) id;
	// the same on every event of a session.
	SessionID string `json:"sessionId"`
	// Timestamp is when the adapter produced the event, RFC 3339 (the
	// schema's date-time format).
	Timestamp string `json:"timestamp"`
}

// Header returns b itself, so that every event embedding Base implements
// Event.Header.
func (b *Base) Header() *Base { return b }

// Role is the speaker of a textChunk: assistant, user, or none (JSON null).
// A nil *Role marshals as null.
type Role string

// The roles §8.1 allows besides null.
const (
	RoleAssistant Role = "assistant"
	RoleUser      Role = "user"
)

// RolePtr returns a pointer to r, for TextChunk.Role.
func RolePtr(r Role) *Role { return &r }

// ChangeType is how a fileChanged event changed its file.
type ChangeType string

// The change types of §7.2 FileChangeType.
const (
	ChangeCreated  ChangeType = "created"
	ChangeModified ChangeType = "modified"
	ChangeDeleted  ChangeType = "deleted"
)

// Reason is why a session ended.
type Reason string

// The reasons of §7.2 SessionEndReason.
const (
	ReasonCompleted Reason = "completed"
	ReasonFailed    Reason = "failed"
	ReasonCancelled Reason = "cancelled"
	ReasonTimeout   Reason = "timeout"
)

// SessionConfig is the §8.1 SessionConfig: how the session was set up, as
// far as the adapter knows. Every field is optional.
type SessionConfig struct {
	// AgentType is "claude", "codex" or "gemini".
	AgentType string `json:"agentType,omitempty"`
	// WorkingDirectory is the CLI's working directory.
	WorkingDirectory string `json:"workingDirectory,omitempty"`
	// Model is the model the CLI reported, else the one it was asked for.
	Model string `json:"model,omitempty"`
	// ApprovalMode is ask, askDangerous, autoEdit or autoAll.
	ApprovalMode string `json:"approvalMode,omitempty"`
	// SandboxMode is none, readOnly, workspaceWrite or fullAccess.
	SandboxMode string `json:"sandboxMode,omitempty"`
	// AllowedTools and BlockedTools restrict the CLI's tools.
	AllowedTools []string `json:"allowedTools,omitempty"`
	BlockedTools []string `json:"blockedTools,omitempty"`
	// MaxTurns bounds the agent's model turns.
	MaxTurns *int `json:"maxTurns,omitempty"`
}

// TokenUsage is the §8.1 TokenUsage. InputTokens counts every prompt token,
// cached ones included; CachedTokens is the part served from a cache;
// ReasoningTokens the part of OutputTokens spent on reasoning, when the CLI
// reports it.
type TokenUsage struct {
	// InputTokens counts every prompt token, cached or not.
	InputTokens int64 `json:"inputTokens"`
	// OutputTokens counts every generated token, reasoning included.
	OutputTokens int64 `json:"outputTokens"`
	// CachedTokens is the part of InputTokens read from a cache.
	CachedTokens *int64 `json:"cachedTokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens spent on reasoning.
	ReasoningTokens *int64 `json:"reasoningTokens,omitempty"`
	// TotalTokens is the CLI's total, else input plus output.
	TotalTokens int64 `json:"totalTokens"`
}

// SessionStarted opens a session: the first event of every stream.
type SessionStarted struct {
	Base
	// AgentType is "claude", "codex" or "gemini".
	AgentType string `json:"agentType"`
	// Config is the session's configuration, when known.
	Config *SessionConfig `json:"config,omitempty"`
}

// TextChunk is text the CLI showed: the assistant's answer (Role
// assistant), the user's words echoed back (Role user), or text that is
// neither, such as reasoning summaries and notices (Role nil, JSON null).
type TextChunk struct {
	Base
	// Content is the text.
	Content string `json:"content"`
	// IsPartial is true for a streamed piece of a longer text block, false
	// for a block delivered whole.
	IsPartial bool `json:"isPartial"`
	// Role is the speaker; nil marshals as null.
	Role *Role `json:"role"`
}

// ToolStarted says a tool call started.
type ToolStarted struct {
	Base
	// ToolID pairs the call with its progress and completion; unique in the session.
	ToolID string `json:"toolId"`
	// ToolName is the tool's name.
	ToolName string `json:"toolName"`
	// Arguments is the call's input, a JSON object (kept as raw bytes so
	// that numbers and key order survive).
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolProgress reports a running tool's output or progress.
type ToolProgress struct {
	Base
	// ToolID names the running tool.
	ToolID string `json:"toolId"`
	// Output is new output since the previous progress event.
	Output string `json:"output,omitempty"`
	// Progress is a fraction between 0 and 1, when known.
	Progress *float64 `json:"progress,omitempty"`
}

// ToolCompleted ends a tool call.
type ToolCompleted struct {
	Base
	// ToolID names the tool that ended.
	ToolID string `json:"toolId"`
	// Success is false when the tool failed, was denied or never finished.
	Success bool `json:"success"`
	// Result is the tool's result as the CLI gave it (any JSON value).
	Result json.RawMessage `json:"result,omitempty"`
	// Error says what went wrong when Success is false.
	Error string `json:"error,omitempty"`
}

// FileChanged reports a file the agent created, modified or deleted.
type FileChanged struct {
	Base
	// FilePath is the file, as the CLI named it.
	FilePath string `json:"filePath"`
	// ChangeType is created, modified or deleted.
	ChangeType ChangeType `json:"changeType"`
	// Diff, Before and After are the change's content, when the CLI gives
	// it (none of today's CLIs does).
	Diff   string `json:"diff,omitempty"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// TurnCompleted ends a turn that the CLI finished (successfully or not).
type TurnCompleted struct {
	Base
	// Usage is the turn's token usage, when the CLI reported it.
	Usage *TokenUsage `json:"usage,omitempty"`
	// DurationMs is the turn's duration as the CLI reported it.
	DurationMs *int64 `json:"durationMs,omitempty"`
}

// SessionEnded closes the session: the last event of every stream.
type SessionEnded struct {
	Base
	// Reason is completed, failed, cancelled or timeout.
	Reason Reason `json:"reason"`
	// Error says why the session failed, when it did.
	Error string `json:"error,omitempty"`
	// FinalUsage is the session's total usage: the sum of its turns' usage.
	FinalUsage *TokenUsage `json:"finalUsage,omitempty"`
}

// EventType implementations.

// EventType returns TypeSessionStarted.
func (*SessionStarted) EventType() Type { return TypeSessionStarted }

// EventType returns TypeTextChunk.
func (*TextChunk) EventType() Type { return TypeTextChunk }

// EventType returns TypeToolStarted.
func (*ToolStarted) EventType() Type { return TypeToolStarted }

// EventType returns TypeToolProgress.
func (*ToolProgress) EventType() Type { return TypeToolProgress }

// EventType returns TypeToolCompleted.
func (*ToolCompleted) EventType() Type { return TypeToolCompleted }

// EventType returns TypeFileChanged.
func (*FileChanged) EventType() Type { return TypeFileChanged }

// EventType returns TypeTurnCompleted.
func (*TurnCompleted) EventType() Type { return TypeTurnCompleted }

// EventType returns TypeSessionEnded.
func (*SessionEnded) EventType() Type { return TypeSessionEnded }

// MarshalJSON implementations: each writes the event with "type" first.

// MarshalJSON writes the event with its type.
func (e *SessionStarted) MarshalJSON() ([]byte, error) {
	type plain SessionStarted
	return marshalTyped(TypeSessionStarted, (*plain)(e))
}

// MarshalJSON writes the event with its type. A long content is encoded
// once into a buffer of its size (package jsonstr) and spliced into the
// rest, instead of going through encoding/json, whose buffer doubles its
// way up to a 64 MiB text and is then copied once more.
func (e *TextChunk) MarshalJSON() ([]byte, error) {
	type plain TextChunk
	if len(e.Content) < longContent {
		return marshalTyped(TypeTextChunk, (*plain)(e))
	}
	head := *e
	head.Content = ""
	b, err := marshalTyped(TypeTextChunk, (*plain)(&head))
	if err != nil {
		return nil, err
	}
	// The only "content":"" is the member: inside a string value its
	// quotes would be escaped.
	const member, empty = `"content":`, `""`
	i := bytes.Index(b, []byte(member+empty))
	if i < 0 {
		return nil, fmt.Errorf("marshalling %s event: no content member in %s", TypeTextChunk, b)
	}
	i += len(member)
	out := make([]byte, 0, len(b)+len(e.Content)+len(e.Content)/32+2)
	out = jsonstr.Append(append(out, b[:i]...), e.Content)
	return append(out, b[i+len(empty):]...), nil
}

// longContent is the length from which TextChunk.MarshalJSON splices the
// content in: Claude's text deltas, 16 KiB each in a long block, are
// spliced too (encoding/json was a tenth of the adapter's time on them).
const longContent = 1 << 10

// MarshalJSON writes the event with its type.
func (e *ToolStarted) MarshalJSON() ([]byte, error) {
	type plain ToolStarted
	return marshalTyped(TypeToolStarted, (*plain)(e))
}

// MarshalJSON writes the event with its type.
func (e *ToolProgress) MarshalJSON() ([]byte, error) {
	type plain ToolProgress
	return marshalTyped(TypeToolProgress, (*plain)(e))
}

// MarshalJSON writes the event with its type. The result, the last
// members but one, is appended as it is when it is already compact JSON,
// instead of going through encoding/json, which compacts every raw value
// again byte by byte: on a tool's long output that was a third of the
// translation's time.
func (e *ToolCompleted) MarshalJSON() ([]byte, error) {
	type plain ToolCompleted
	head := *e
	head.Result, head.Error = nil, ""
	b, err := marshalTyped(TypeToolCompleted, (*plain)(&head))
	if err != nil || len(e.Result) == 0 && e.Error == "" {
		return b, err
	}
	b = b[:len(b)-1] // reopen the object
	if len(e.Result) > 0 {
		if b, err = AppendRawMember(b, "result", e.Result); err != nil {
			return nil, fmt.Errorf("marshalling %s event: %w", TypeToolCompleted, err)
		}
	}
	if e.Error != "" {
		msg, err := MarshalTagged(struct {
			Error string `json:"error"`
		}{e.Error})
		if err != nil {
			return nil, fmt.Errorf("marshalling %s event: %w", TypeToolCompleted, err)
		}
		b = append(append(b, ','), msg[1:len(msg)-1]...)
	}
	return append(b, '}'), nil
}

// AppendRawMember appends ,"key":raw to an object being written (key is
// a plain ASCII member name): raw as it is when it is already compact JSON
// (checked without decoding it), else compacted by encoding/json, as a
// json.RawMessage member would be, and made valid UTF-8 (ValidUTF8). It
// fails when raw is not JSON.
func AppendRawMember(b []byte, key string, raw json.RawMessage) ([]byte, error) {
	b = append(strconv.AppendQuote(append(b, ','), key), ':')
	if jsonvalid.Compact(raw) {
		return append(b, ValidUTF8(raw)...), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return append(b, ValidUTF8(buf.Bytes())...), nil
}

// MarshalJSON writes the event with its type.
func (e *FileChanged) MarshalJSON() ([]byte, error) {
	type plain FileChanged
	return marshalTyped(TypeFileChanged, (*plain)(e))
}

// MarshalJSON writes the event with its type.
func (e *TurnCompleted) MarshalJSON() ([]byte, error) {
	type plain TurnCompleted
	return marshalTyped(TypeTurnCompleted, (*plain)(e))
}

// MarshalJSON writes the event with its type.
func (e *SessionEnded) MarshalJSON() ([]byte, error) {
	type plain SessionEnded
	return marshalTyped(TypeSessionEnded, (*plain)(e))
}

// marshalTyped marshals v (a method-less copy of an event type, so that
// this does not recurse) and puts "type" in front of its fields.
func marshalTyped(t Type, v any) ([]byte, error) {
	b, err := MarshalTagged(v, "type", string(t))
	if err != nil {
		return nil, fmt.Errorf("marshalling %s event: %w", t, err)
	}
	return b, nil
}

// MarshalTagged marshals v, a struct without a MarshalJSON method, as a
// JSON object whose first members are the given key, value pairs (a
// discriminator such as "type", then "subtype"; pairs with an empty value
// are left out), without the HTML escaping of <, > and & that the CLIs do
// not do either. The unified events and the reference adapter's shim
// events are written with it.
func MarshalTagged(v any, kv ...string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("MarshalTagged: %T is not a JSON object", v)
	}
	head := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if len(head) > 1 {
			head = append(head, ',')
		}
		head = strconv.AppendQuote(head, kv[i])
		head = append(head, ':')
		head = strconv.AppendQuote(head, kv[i+1])
	}
	if len(b) <= 2 {
		return append(head, '}'), nil
	}
	if len(head) == 1 {
		return ValidUTF8(b), nil
	}
	// The tags go in after the '{', in place: an event may carry 64 MiB.
	head = append(head, ',')
	return ValidUTF8(slices.Insert(b, 1, head[1:]...)), nil
}

// ValidUTF8 returns the JSON text b with every byte of invalid UTF-8
// replaced by the escape \ufffd, as encoding/json writes a Go string: raw
// values taken from a CLI's line (a tool's input or result) keep the bytes
// it wrote, and a line of them would not be UTF-8 (RFC 8259 §8.1). Bytes
// of 0x80 and more appear in valid JSON only inside strings, where the
// escape is valid too. b itself is returned when it is valid.
func ValidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = append(out, `\ufffd`...)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}
