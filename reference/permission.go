package reference

import "encoding/json"

// PermissionRequest is a Claude can_use_tool control request.
type PermissionRequest struct {
	// RequestID is the control request's id.
	RequestID string
	// ToolName is the tool the CLI wants to use.
	ToolName string
	// Input is the call's input.
	Input json.RawMessage
	// ToolUseID is the tool_use block the request is about.
	ToolUseID string
}

// PermissionDecision answers a PermissionRequest.
type PermissionDecision struct {
	// Allow lets the call run.
	Allow bool
	// UpdatedInput replaces the call's input when allowed; nil keeps the
	// original (which is sent back, as the Python SDK does).
	UpdatedInput json.RawMessage
	// Message tells the model why a call was denied.
	Message string
}

// denyMessage is the reason given for denials by the fixed policies.
const denyMessage = "Permission denied by the adapter's policy"

// decide is Permission's fixed answer.
func (p Permission) decide() PermissionDecision {
	if p == PermissionAllow {
		return PermissionDecision{Allow: true}
	}
	return PermissionDecision{Message: denyMessage}
}

// permissionResponse is the PermissionResult payload of the answer
// (docs/protocols/claude.md#permission): allow with the (original or updated) input, or deny
// with a message.
func permissionResponse(req PermissionRequest, d PermissionDecision) map[string]any {
	if d.Allow {
		input := d.UpdatedInput
		if isNull(input) {
			input = req.Input
		}
		if isNull(input) {
			input = json.RawMessage("{}")
		}
		return map[string]any{"behavior": "allow", "updatedInput": input}
	}
	msg := d.Message
	if msg == "" {
		msg = denyMessage
	}
	return map[string]any{"behavior": "deny", "message": msg}
}
