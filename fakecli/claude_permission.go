package fakecli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/transcript"
)

// What the real CLI makes of a client's answer to can_use_tool, as the
// captures testdata/captures/claude/<version>/permission-*.jsonl show it
// (docs/protocols/claude.md#permission-answers):
//
//   - a control_response of subtype "error" refuses the tool: its
//     tool_result is "Tool permission request failed: Error: <error>";
//   - any other subtype (none at all included) carries the decision in
//     response.response, which must be {"behavior":"allow"} with an
//     optional object updatedInput (required before 2.1.329), or
//     {"behavior":"deny","message":<string>} with an optional boolean
//     interrupt; anything else is refused, with the tool_result "The
//     canUseTool callback returned an invalid permission result. ..."
//     (2.1.329 and later) or "Tool permission request failed: ZodError:
//     [...]" (2.1.197);
//   - a refused answer is a denial the CLI decided: the tool does not
//     run, the call is listed in the result's permission_denials, and the
//     turn goes on, as after a deny;
//   - a deny with interrupt true ends the turn as an interrupt does;
//   - an answer for an id the CLI is not waiting for (an unknown id, a
//     second answer) is ignored without a word.
const (
	// invalidPermissionResult is 2.1.329's and 2.1.331's tool_result for
	// an answer whose decision does not parse.
	invalidPermissionResult = "The canUseTool callback returned an invalid permission result. Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}. updatedPermissions may hold at most 4096 updates, rules and directories in all."
	// permissionRequestFailed prefixes the tool_result of an error answer
	// (and, before 2.1.329, of an invalid one).
	permissionRequestFailed = "Tool permission request failed: "
	// strictUpdatedInput is the first version known to take an allow
	// without updatedInput (2.1.197 refuses it, 2.1.329 takes it).
	strictUpdatedInput = "2.1.329"
)

// What the real CLI says about the client's own control requests
// (captured: 2.1.331/control-requests, control-request-no-body): a
// request without its request member ends the process (this on stderr,
// exit 1); set_permission_mode takes one of permissionModes and answers
// any other mode with an error (error_code invalid_mode).
const missingRequest = "Error: Missing request on control_request"

var permissionModes = []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"}

// The decisions a permission record of the observation log reports.
const (
	decisionAllow     = "allow"
	decisionDeny      = "deny"
	decisionInterrupt = "interrupt"
	decisionRefused   = "refused"
)

// permAnswer is what the CLI made of an answer: its decision, and the
// text of the tool_result for a deny (the client's message) or a refusal
// (the CLI's reason).
type permAnswer struct {
	decision string
	text     string
}

// judgePermissionAnswer is the CLI at version's reading of the response
// member of a control_response that answers can_use_tool.
func judgePermissionAnswer(version string, resp map[string]any) permAnswer {
	if resp["subtype"] == "error" {
		msg, _ := resp["error"].(string)
		text := permissionRequestFailed + "Error"
		if msg != "" {
			text += ": " + msg
		}
		return permAnswer{decision: decisionRefused, text: text}
	}
	d, isObj := resp["response"].(map[string]any)
	old := versionBefore(version, strictUpdatedInput)
	if old {
		if issues := zodPermissionIssues(resp["response"]); issues != "" {
			return permAnswer{decision: decisionRefused, text: permissionRequestFailed + "ZodError: " + issues}
		}
	}
	switch {
	case !isObj:
	case d["behavior"] == "allow":
		if in, ok := d["updatedInput"]; !ok || isRecord(in) {
			return permAnswer{decision: decisionAllow}
		}
	case d["behavior"] == "deny":
		msg, ok := d["message"].(string)
		interrupt, has := d["interrupt"]
		if _, isBool := interrupt.(bool); ok && (!has || isBool) {
			if interrupt == true {
				return permAnswer{decision: decisionInterrupt, text: msg}
			}
			return permAnswer{decision: decisionDeny, text: msg}
		}
	}
	return permAnswer{decision: decisionRefused, text: invalidPermissionResult}
}

// isRecord reports whether v is a JSON object (zod's record: not null,
// not an array).
func isRecord(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// zodType is zod 4's name for the type of a decoded JSON value.
func zodType(v any, present bool) string {
	switch v.(type) {
	case nil:
		if !present {
			return "undefined"
		}
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "number"
}

// zodIssue is one zod 4 issue, its members in zod's order.
type zodIssue struct {
	Expected string   `json:"expected,omitempty"`
	Code     string   `json:"code"`
	Values   []string `json:"values,omitempty"`
	Errors   [][]any  `json:"errors,omitempty"`
	Path     []string `json:"path"`
	Message  string   `json:"message"`
}

// zodPermissionIssues is the ZodError text (the issues as
// JSON.stringify(issues, null, 2) writes them) Claude Code 2.1.197 gives
// for a decision that matches neither {behavior: "allow", updatedInput:
// record} nor {behavior: "deny", message: string, interrupt?: boolean};
// "" when it matches one.
func zodPermissionIssues(v any) string {
	d, isObj := v.(map[string]any)
	option := func(behavior string, fields []zodField) []any {
		if !isObj {
			return []any{zodIssue{Expected: "object", Code: "invalid_type", Path: []string{},
				Message: "Invalid input: expected object, received " + zodType(v, v != nil)}}
		}
		var out []any
		if d["behavior"] != behavior {
			q, _ := json.Marshal(behavior)
			out = append(out, zodIssue{Code: "invalid_value", Values: []string{behavior}, Path: []string{"behavior"},
				Message: "Invalid input: expected " + string(q)})
		}
		for _, f := range fields {
			x, present := d[f.key]
			if !present && f.optional || zodType(x, present) == f.want || f.want == "record" && isRecord(x) {
				continue
			}
			out = append(out, zodIssue{Expected: f.want, Code: "invalid_type", Path: []string{f.key},
				Message: fmt.Sprintf("Invalid input: expected %s, received %s", f.want, zodType(x, present))})
		}
		return out
	}
	allow := option("allow", []zodField{{key: "updatedInput", want: "record"}})
	deny := option("deny", []zodField{{key: "message", want: "string"}, {key: "interrupt", want: "boolean", optional: true}})
	if len(allow) == 0 || len(deny) == 0 {
		return ""
	}
	issues := []zodIssue{{Code: "invalid_union", Errors: [][]any{allow, deny}, Path: []string{}, Message: "Invalid input"}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(issues); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// zodField is one field of a zod object option: its key, the type it must
// have, and whether it may be missing.
type zodField struct {
	key, want string
	optional  bool
}

// permState is the fake's memory of the can_use_tool request the client
// is answering, and of what its answer changes in the lines still to come.
type permState struct {
	// toolName and input are the pending request's (input raw).
	toolName string
	input    json.RawMessage
	// edit, when set, replaces the recorded tool_result of its tool with
	// the one the answer makes; denial, when set, is added to the next
	// result's permission_denials (a denial on a path recorded with the
	// tool allowed).
	edit   *permEdit
	denial *permissionDenial
}

// permEdit is the tool_result a deny or a refusal makes for a tool.
type permEdit struct {
	tool    string
	text    string
	refused bool
}

// permissionDenial is one entry of a result's permission_denials, in the
// real CLI's key order.
type permissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// permissionDecision is a tool_result_meta permission_decision, in the
// real CLI's key order.
type permissionDecision struct {
	Decision   string `json:"decision"`
	Source     string `json:"source"`
	ReasonType string `json:"reason_type,omitempty"`
}

// notePermRequest remembers the tool and input of a can_use_tool request
// line.
func (c *claudeState) notePermRequest(text string) {
	c.perm = permState{}
	obj, _ := jsonl.Parse([]byte(text), jsonl.ParseOptions{})
	req, _ := obj["request"].(map[string]any)
	c.perm.toolName, _ = req["tool_name"].(string)
	if raw := rawMember([]byte(text), "request"); raw != nil {
		c.perm.input = rawMember(raw, "input")
	}
	if len(c.perm.input) == 0 {
		c.perm.input = json.RawMessage("{}")
	}
}

// answerPermission takes the client's answer to the pending can_use_tool
// request (resp is the control_response's response member; st the "in"
// step that took it) as the real CLI at the transcript's version does: it
// logs the decision and sends the replay down the path the decision
// takes. A recorded allow or deny branch is followed as recorded, the
// tool_result of a deny or a refusal carrying the client's message or the
// CLI's reason; where the transcript recorded no branch for the decision
// (2.1.197 recorded the allow path alone), a denial is written over the
// allow path's tool_result and added to its result's permission_denials
// (the model's recorded words after it stay as they were).
func (c *claudeState) answerPermission(e *engine, st *transcript.Step, id string, resp map[string]any) flow {
	ans := judgePermissionAnswer(c.version, resp)
	tool := c.pendingPermTool
	e.p.obs.log("permission", "request_id", id, "tool_use_id", tool, "decision", ans.decision, "message", ans.text)
	if ans.decision != decisionAllow && ans.decision != decisionInterrupt {
		c.perm.edit = &permEdit{tool: tool, text: ans.text, refused: ans.decision == decisionRefused}
	}
	label := ""
	for _, cs := range st.Cases {
		if ans.decision == decisionAllow && hasBehavior(cs.Match, "allow") || ans.decision != decisionAllow && hasDeny(cs.Match) {
			label = cs.Goto
			break
		}
	}
	if ans.decision == decisionInterrupt {
		// The real CLI stops the turn: the tool's rejected tool_result,
		// "[Request interrupted by user for tool use]", an error result
		// (the deny branch's, which lists the denial), as after SIGINT
		// (docs/protocols/claude.md#permission-answers).
		if i, ok := e.labels[label]; ok && label != "" {
			e.pc = i
		} else {
			e.pc++
		}
		return c.abortTurn(e, "", false, false)
	}
	if i, ok := e.labels[label]; ok && label != "" {
		e.pc = i
		return flowJump
	}
	if ans.decision != decisionAllow {
		c.perm.denial = c.denialOf(tool)
	}
	e.pc++
	return flowJump
}

// denialOf is the permission_denials entry for the pending request's tool.
func (c *claudeState) denialOf(tool string) *permissionDenial {
	return &permissionDenial{ToolName: c.perm.toolName, ToolUseID: tool, ToolInput: c.perm.input}
}

// hasBehavior reports whether a case's match selects an answer with
// behavior b.
func hasBehavior(v any, b string) bool {
	switch x := v.(type) {
	case map[string]any:
		if x["behavior"] == b {
			return true
		}
		for _, y := range x {
			if hasBehavior(y, b) {
				return true
			}
		}
	}
	return false
}

// editPermLine rewrites a stdout line for the answer the client gave: the
// tool_result of a denied or refused tool, and the permission_denials of
// the result after a denial the transcript recorded as allowed. Other
// lines pass unchanged.
func (c *claudeState) editPermLine(e *engine, i int, text string) string {
	if c.perm.edit == nil && c.perm.denial == nil {
		return text
	}
	cl := c.lines[i]
	switch {
	case c.perm.edit != nil && cl.kind == kindUser && containsString(cl.tools, c.perm.edit.tool):
		if s, ok := c.permToolResult(text, c.perm.edit); ok {
			text = s
		}
		c.perm.edit = nil
	case c.perm.denial != nil && cl.kind == kindResult:
		var denials []json.RawMessage
		if raw := rawMember([]byte(text), "permission_denials"); len(raw) > 0 {
			if err := json.Unmarshal(raw, &denials); err != nil {
				denials = nil
			}
		}
		d, err := marshalJSON(c.perm.denial)
		if err == nil {
			if s, ok := editObject(text, []field{{key: "permission_denials", val: append(denials, d), after: "modelUsage"}}); ok {
				text = s
			}
		}
		c.perm.denial = nil
	}
	return text
}

// permToolResult is the tool_result line the real CLI writes for a tool
// denied (edit.text is the client's message) or refused (the CLI's
// reason), made from the recorded tool_result line of that tool: its
// uuid and timestamp kept, the rest as the CLI writes it (an is_error
// tool_result, tool_use_result "Error: <text>", and from 2.1.329 on a
// tool_result_meta with the permission decision: user_reject for a
// client's deny, config with reason_type other for a refusal).
func (c *claudeState) permToolResult(recorded string, edit *permEdit) (string, bool) {
	obj, _ := jsonl.Parse([]byte(recorded), jsonl.ParseOptions{})
	if obj == nil {
		return "", false
	}
	uuid, _ := obj["uuid"].(string)
	ts, _ := obj["timestamp"].(string)
	if uuid == "" {
		uuid = newUUID(c.rng)
	}
	if ts == "" {
		ts = timestamp()
	}
	var meta any
	if !versionBefore(c.version, "2.1.329") {
		dec := permissionDecision{Decision: "reject", Source: "user_reject"}
		if edit.refused {
			dec = permissionDecision{Decision: "reject", Source: "config", ReasonType: "other"}
		}
		raw, err := marshalJSON(dec)
		if err != nil {
			return "", false
		}
		meta = []toolResultMeta{{ID: edit.tool, NonExecutionKind: "permission-rule", PermissionDecision: raw}}
	}
	b, err := marshalJSON(userMessage{Type: "user", Message: userBody{Role: "user", Content: []any{
		rejectedResultBlock{Type: "tool_result", Content: edit.text, IsError: true, ToolUseID: edit.tool}}},
		SessionID: c.sessionID, UUID: uuid, Timestamp: ts, ToolUseResult: "Error: " + edit.text, ToolResultMeta: meta})
	if err != nil {
		return "", false
	}
	return string(b), true
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
