package acp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentconform/agentconform/finding"
)

// AnsweredBy is the method of the client's request that an agent's result
// answers, when the result alone says so: a stopReason is only in a
// session/prompt result, a protocolVersion only in initialize's (the
// schema's PromptResponse and InitializeResponse require them, and no
// other result has them); "" otherwise.
func AnsweredBy(result json.RawMessage) string {
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return ""
	}
	switch {
	case r["stopReason"] != nil:
		return MethodSessionPrompt
	case r["protocolVersion"] != nil:
		return MethodInitialize
	}
	return ""
}

// A log of the agent's lines alone (its stdout, as a user tees it) shows
// what the agent wrote but not what it answered: the client's requests,
// its cancel and its answers are missing. checkAgentOnly judges what one
// direction shows (docs/protocols/acp.md#one-direction-logs):
//   - every line is a JSON-RPC 2.0 message (RuleMessage);
//   - the params of the agent's requests and notifications, every error
//     object, and the results that say what they answer (AnsweredBy) are
//     valid under the schema (RuleSchema);
//   - a result with a stopReason ends a prompt turn: its stopReason is one
//     the protocol defines (RuleStopReason), and the tool calls the agent
//     announced since the previous turn ended have reached completed or
//     failed before it, unless the turn was cancelled (RuleToolFinal); a
//     tool call whose permission the agent asked for is left alone (the
//     client's answer, which may have turned it down, is not in the log);
//   - no update of a tool call comes after the response that ended its
//     turn (RuleToolLate).
//
// Turns are told apart by their responses only when the log's updates
// name one session: a prompt's response does not name its session, so
// with several sessions the tool rules are not judged.
func checkAgentOnly(t *Trace, file string, o CheckOptions) []finding.Finding {
	var out []finding.Finding
	at := func(r *finding.Rule, i int, ptr, msg, expected, actual string) {
		f := finding.Finding{Rule: r, File: file, Pointer: ptr, Message: msg, Expected: expected, Actual: actual}
		if i >= 0 && i < len(t.Entries) {
			f.Line, f.Offset = t.Entries[i].Line, t.Entries[i].Offset
		}
		out = append(out, f)
	}
	type tool struct {
		id, title, status string
		final, asked      bool
		turn              int // the turn that announced it
	}
	var (
		sessions []string
		tools    = map[string]*tool{}
		order    []*tool // the current turn's tools, in the order announced
		turn     int     // how many turns have ended
		endedAt  = map[int]int{}
	)
	toolOf := func(id string) *tool {
		tc := tools[id]
		if tc == nil {
			tc = &tool{id: id, status: ToolPending, turn: turn}
			tools[id] = tc
			order = append(order, tc)
		}
		return tc
	}
	// Turns can be told apart only when one session speaks.
	for _, e := range t.Entries {
		if m := e.Msg; m != nil && m.Kind != Response {
			if sid := sessionOf(m.Params); sid != "" && !slices.Contains(sessions, sid) {
				sessions = append(sessions, sid)
			}
		}
	}
	judgeTools := len(sessions) <= 1
	for i, e := range t.Entries {
		m := e.Msg
		if m == nil {
			ptr := ""
			if de, ok := e.Err.(*DecodeError); ok {
				ptr = de.Pointer
			}
			at(RuleMessage, i, ptr, fmt.Sprintf("the agent wrote a line that is not a JSON-RPC 2.0 message: %v", e.Err), "a JSON-RPC 2.0 message", clip(string(e.Raw), 120))
			continue
		}
		switch m.Kind {
		case Request:
			if m.Method != MethodRequestPermission {
				continue
			}
			var p struct {
				ToolCall struct {
					ToolCallID string `json:"toolCallId"`
					Title      string `json:"title"`
				} `json:"toolCall"`
			}
			if json.Unmarshal(m.Params, &p) == nil && p.ToolCall.ToolCallID != "" {
				tc := toolOf(p.ToolCall.ToolCallID)
				tc.asked = true
				if p.ToolCall.Title != "" {
					tc.title = p.ToolCall.Title
				}
			}
		case Notification:
			if m.Method != MethodSessionUpdate || !judgeTools {
				continue
			}
			var p struct {
				Update struct {
					Kind       string  `json:"sessionUpdate"`
					ToolCallID string  `json:"toolCallId"`
					Title      string  `json:"title"`
					Status     *string `json:"status"`
				} `json:"update"`
			}
			if json.Unmarshal(m.Params, &p) != nil {
				continue
			}
			u := p.Update
			if (u.Kind != UpdateToolCall && u.Kind != UpdateToolCallUpdate) || u.ToolCallID == "" {
				continue
			}
			tc := toolOf(u.ToolCallID)
			if tc.turn < turn {
				at(RuleToolLate, i, "/params/update", fmt.Sprintf("an update of tool call %s came after the response that ended its turn (line %d)", u.ToolCallID, t.Entries[endedAt[tc.turn]].Line),
					"updates before the response", fmt.Sprintf("agent %s", clip(string(e.Raw), 160)))
			}
			if u.Title != "" {
				tc.title = u.Title
			}
			if u.Status != nil {
				tc.status = *u.Status
			}
			if tc.status == ToolCompleted || tc.status == ToolFailed {
				tc.final = true
			}
		case Response:
			if m.Error != nil || AnsweredBy(m.Result) != MethodSessionPrompt {
				continue
			}
			var r struct {
				StopReason string `json:"stopReason"`
			}
			json.Unmarshal(m.Result, &r)
			if !slices.Contains(StopReasons, r.StopReason) {
				at(RuleStopReason, i, "/result/stopReason", "a session/prompt result (it carries a stopReason) has no valid stopReason", strings.Join(StopReasons, ", "), r.StopReason)
			}
			if !judgeTools {
				continue
			}
			if r.StopReason != StopCancelled {
				for _, tc := range order {
					if tc.final || tc.asked {
						continue
					}
					title := ""
					if tc.title != "" {
						title = " (" + clip(tc.title, 60) + ")"
					}
					at(RuleToolFinal, i, "", fmt.Sprintf("the turn ended (stopReason %s) with tool call %s%s still %s", r.StopReason, tc.id, title, tc.status), "completed or failed before the response", tc.status)
				}
			}
			endedAt[turn] = i
			turn++
			order = nil
		}
	}
	if sc, ok := o.Schema.(AgentOnlySchemaChecker); ok {
		for _, p := range sc.CheckAgentOnly(t) {
			at(RuleSchema, p.Entry, p.Pointer, p.Message, p.Expected, p.Actual)
		}
	}
	sortFindings(out)
	return out
}
