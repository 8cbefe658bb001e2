package capture

import (
	"fmt"

	"github.com/agentconform/agentconform/capture/mock"
)

// replyFunc is what a scenario's driver writes for Claude's can_use_tool
// request: whole stdin lines, in order, for the request's id and its
// "request" member. It lets a scenario send the malformed answers real
// adapters send, to record what the CLI does with them.
type replyFunc func(id string, req map[string]any) []map[string]any

// controlScenarios are Claude's permission prompt answered the ways
// adapters get wrong: each sends one malformed (or doubled, or misdirected)
// answer to the can_use_tool request of permissionPlan's Bash call, so that
// the transcript shows what the real CLI writes and how the turn ends.
func controlScenarios() []Scenario {
	type variant struct {
		name, summary, sent string
		reply               replyFunc
	}
	success := func(id string, decision map[string]any) map[string]any {
		return map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id, "response": decision}}
	}
	input := func(req map[string]any) any {
		if in := req["input"]; in != nil {
			return in
		}
		return map[string]any{}
	}
	variants := []variant{
		{"permission-allow-no-input", "can_use_tool answered allow without updatedInput",
			`{"behavior":"allow"} (no updatedInput)`,
			func(id string, req map[string]any) []map[string]any {
				return []map[string]any{success(id, map[string]any{"behavior": "allow"})}
			}},
		{"permission-no-behavior", "can_use_tool answered without a behavior",
			`{"updatedInput":<the tool's input>} (no behavior)`,
			func(id string, req map[string]any) []map[string]any {
				return []map[string]any{success(id, map[string]any{"updatedInput": input(req)})}
			}},
		{"permission-deny-no-message", "can_use_tool answered deny without a message",
			`{"behavior":"deny"} (no message)`,
			func(id string, req map[string]any) []map[string]any {
				return []map[string]any{success(id, map[string]any{"behavior": "deny"})}
			}},
		{"permission-error-response", "can_use_tool answered with a control_response of subtype error",
			`a control_response {"subtype":"error","error":"the adapter failed"}`,
			func(id string, req map[string]any) []map[string]any {
				return []map[string]any{{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": id, "error": "the adapter failed"}}}
			}},
		{"permission-deny-interrupt", "can_use_tool answered deny with interrupt true",
			`{"behavior":"deny","message":"stop now","interrupt":true}`,
			func(id string, req map[string]any) []map[string]any {
				return []map[string]any{success(id, map[string]any{"behavior": "deny", "message": "stop now", "interrupt": true})}
			}},
		{"permission-unknown-id", "a control_response for an unknown request_id, then the right allow",
			`first an allow for the request_id "req-unknown-1", then a complete allow (with updatedInput) for the right id`,
			func(id string, req map[string]any) []map[string]any {
				allow := map[string]any{"behavior": "allow", "updatedInput": input(req)}
				return []map[string]any{success("req-unknown-1", allow), success(id, allow)}
			}},
		{"permission-answered-twice", "can_use_tool answered allow twice",
			`a complete allow (with updatedInput) written twice, back to back`,
			func(id string, req map[string]any) []map[string]any {
				allow := map[string]any{"behavior": "allow", "updatedInput": input(req)}
				return []map[string]any{success(id, allow), success(id, allow)}
			}},
	}
	out := []Scenario{
		claudeOnly("control-requests", "client control requests the CLI answers or ignores, sent before the first turn", func() *plan {
			p := helloPlan("Client control lines written before the first user message: a control request of an unknown subtype, set_permission_mode with an unknown mode (both answered with errors), interrupt while idle, a control_response for a request never made and a line of an unknown type (both ignored).")
			p.procs[0].preamble = []map[string]any{
				{"type": "control_request", "request_id": "req-bogus", "request": map[string]any{"subtype": "bogus_subtype"}},
				{"type": "control_request", "request_id": "req-mode", "request": map[string]any{"subtype": "set_permission_mode", "mode": "nonsense"}},
				{"type": "control_request", "request_id": "req-int", "request": map[string]any{"subtype": "interrupt"}},
				{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": "never-asked", "response": map[string]any{}}},
				{"type": "bogus_type", "foo": 1},
			}
			return p
		}),
		claudeOnly("control-request-no-body", "a control_request without its request member, which ends the CLI", func() *plan {
			p := helloPlan("A control_request with a request_id but no request member, written before the first user message: the CLI reports it on stderr and exits 1.")
			p.procs[0].preamble = []map[string]any{{"type": "control_request", "request_id": "req-empty"}}
			return p
		}),
	}
	for _, v := range variants {
		v := v
		out = append(out, claudeOnly(v.name, v.summary, func() *plan {
			p := &plan{
				description: fmt.Sprintf("A shell command needing approval (touch created.txt): the can_use_tool control request is answered with %s.", v.sent),
				script: mock.Script{Turns: []mock.Turn{
					{Text: []string{"I'll create the file."}, Calls: []mock.Call{shell("touch created.txt")}},
					mock.Text("Done."),
				}},
				procs: []proc{claudeStream([]string{"Create created.txt."}, "--permission-prompt-tool", "stdio")},
			}
			p.procs[0].reply = v.reply
			return p
		}))
	}
	return out
}

// helloPlan is a one-turn stream-json session answered with text, for
// scenarios about what the client writes around it.
func helloPlan(description string) *plan {
	return &plan{
		description: description,
		script:      mock.Script{Turns: []mock.Turn{mock.Text("Hello! ", "How can I help?")}},
		procs:       []proc{claudeStream([]string{promptHello})},
	}
}
