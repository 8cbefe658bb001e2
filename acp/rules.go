package acp

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentconform/agentconform/finding"
)

// Sources of the rules: sections of docs/protocols/acp.md.
const (
	srcFraming      = "docs/protocols/acp.md#framing"
	srcIDs          = "docs/protocols/acp.md#ids"
	srcInit         = "docs/protocols/acp.md#initialization"
	srcSessions     = "docs/protocols/acp.md#sessions"
	srcStopReasons  = "docs/protocols/acp.md#stop-reasons"
	srcCancellation = "docs/protocols/acp.md#cancellation"
	srcToolCalls    = "docs/protocols/acp.md#tool-calls"
	srcPermission   = "docs/protocols/acp.md#permission"
	srcSchema       = "docs/protocols/acp.md#schema"
)

// The rules of an ACP session (Check).
var (
	RuleMessage = &finding.Rule{ID: "acp/jsonrpc/message", Level: finding.Must, Source: srcFraming,
		Requirement: "Every line is one JSON-RPC 2.0 message: a request (method and id), a notification (method, no id) or a response (id and exactly one of result and error)."}
	RuleResponsePairs = &finding.Rule{ID: "acp/jsonrpc/response-pairs", Level: finding.Must, Source: srcIDs,
		Requirement: "Every response carries the id of a request the other side sent and has not had answered: no unknown id, no request answered twice."}
	RuleIDUnique = &finding.Rule{ID: "acp/jsonrpc/id-unique", Level: finding.Must, Source: srcIDs,
		Requirement: "A side never sends a request with the id of one of its own requests that is still unanswered."}
	RuleAnswered = &finding.Rule{ID: "acp/jsonrpc/answered", Level: finding.Must, Source: srcIDs,
		Requirement: "Every request is answered before the session ends."}
	RuleInitializeFirst = &finding.Rule{ID: "acp/order/initialize-first", Level: finding.Must, Source: srcInit,
		Requirement: "The client sends initialize first, and no session request before initialize has been answered."}
	RuleSessionKnown = &finding.Rule{ID: "acp/session/known", Level: finding.Must, Source: srcSessions,
		Requirement: "session/prompt, session/cancel and session/update name a session that session/new created or session/load (or session/resume) named."}
	RuleLoadHistory = &finding.Rule{ID: "acp/session/history-before-load-response", Level: finding.Must, Source: srcSessions,
		Requirement: "The agent replays the whole conversation of a loaded session before it answers session/load: no message chunk or tool call of the history comes after the response."}
	RuleStopReason = &finding.Rule{ID: "acp/prompt/stop-reason", Level: finding.Must, Source: srcStopReasons,
		Requirement: "Every session/prompt ends with one response: a result whose stopReason is end_turn, max_tokens, max_turn_requests, refusal or cancelled, or a JSON-RPC error."}
	RuleCancelled = &finding.Rule{ID: "acp/prompt/cancelled", Level: finding.Must, Source: srcCancellation,
		Requirement: "A session/prompt during which the client sent session/cancel for its session is answered with stopReason cancelled: not end_turn, not an error."}
	RuleCancelNotification = &finding.Rule{ID: "acp/cancel/notification", Level: finding.Must, Source: srcCancellation,
		Requirement: "session/cancel is a notification: it has no id and gets no response."}
	RuleToolFinal = &finding.Rule{ID: "acp/tool/final-status", Level: finding.Must, Source: srcToolCalls,
		Requirement: "Every tool call a prompt turn starts reaches status completed or failed (or has its permission request turned down) before the turn's response, unless the turn was cancelled."}
	RuleToolLate = &finding.Rule{ID: "acp/tool/no-late-update", Level: finding.Must, Source: srcCancellation,
		Requirement: "The agent sends a turn's tool call updates before it answers the turn's session/prompt, never after."}
	RulePermissionCancelled = &finding.Rule{ID: "acp/permission/cancelled-outcome", Level: finding.Must, Source: srcPermission,
		Requirement: "Once the client has sent session/cancel, it answers the session's pending session/request_permission requests with the cancelled outcome."}
	RuleSchema = &finding.Rule{ID: "acp/schema", Level: finding.Must, Source: srcSchema,
		Requirement: "The params of every request and notification, and the result of every response, are valid under the ACP schema for its method."}
)

// Rules lists every rule of the package.
var Rules = []*finding.Rule{RuleMessage, RuleResponsePairs, RuleIDUnique, RuleAnswered, RuleInitializeFirst, RuleSessionKnown,
	RuleLoadHistory, RuleStopReason, RuleCancelled, RuleCancelNotification, RuleToolFinal, RuleToolLate, RulePermissionCancelled, RuleSchema}

// CheckOptions tune Check.
type CheckOptions struct {
	// Partial says the log may have been cut off (a process killed, a
	// capture stopped): requests still outstanding at its end are not
	// findings of RuleAnswered, but a session/prompt without its response
	// still is one of RuleStopReason.
	Partial bool
	// Schema validates params and results (acpschema.Schema gives the
	// protocol's own); nil skips RuleSchema.
	Schema SchemaChecker
}

// SchemaChecker judges the params and results of a trace's messages
// against a JSON Schema (package acp/acpschema validates with the
// protocol's schema; this package links no JSON Schema compiler).
type SchemaChecker interface {
	Check(t *Trace) []SchemaProblem
}

// SchemaProblem is one message that breaks the schema.
type SchemaProblem struct {
	// Entry is the index of the message in the trace.
	Entry int
	// Pointer locates the offending value in the message.
	Pointer string
	// Message says what is wrong; Expected and Actual are the failure's
	// two sides (Actual is the offending JSON, clipped when reported).
	Message, Expected, Actual string
}

// Check returns what the trace breaks of the rules, in entry order; file
// names the source in every finding.
func Check(t *Trace, file string, o CheckOptions) []finding.Finding {
	var out []finding.Finding
	at := func(r *finding.Rule, i int, ptr, msg, expected, actual string) {
		f := finding.Finding{Rule: r, File: file, Pointer: ptr, Message: msg, Expected: expected, Actual: actual}
		if i >= 0 && i < len(t.Entries) {
			f.Line, f.Offset = t.Entries[i].Line, t.Entries[i].Offset
		}
		out = append(out, f)
	}
	desc := func(i int) string {
		e := t.Entries[i]
		return fmt.Sprintf("%s %s", e.From, clip(string(e.Raw), 160))
	}
	initAnswered := -1
	clientFirst := true
	for i, e := range t.Entries {
		if e.Msg == nil {
			ptr := ""
			if de, ok := e.Err.(*DecodeError); ok {
				ptr = de.Pointer
			}
			at(RuleMessage, i, ptr, fmt.Sprintf("the %s wrote a line that is not a JSON-RPC 2.0 message: %v", e.From, e.Err), "a JSON-RPC 2.0 message", clip(string(e.Raw), 120))
			continue
		}
		m := e.Msg
		if e.From == Client && m.Kind == Request && clientFirst {
			clientFirst = false
			if m.Method != MethodInitialize {
				at(RuleInitializeFirst, i, "/method", "the client's first request is not initialize", MethodInitialize, m.Method)
			}
		}
		if e.From == Client && m.Kind == Request && strings.HasPrefix(m.Method, "session/") && initAnswered < 0 {
			at(RuleInitializeFirst, i, "/method", fmt.Sprintf("the client sent %s before initialize was answered", m.Method), "initialize answered first", m.Method)
		}
		if m.Kind == Response && initAnswered < 0 {
			if c := t.CallAt(i); c != nil && c.Method == MethodInitialize && c.From == Client {
				initAnswered = i
			}
		}
		if m.Kind == Request && m.Method == MethodSessionCancel {
			at(RuleCancelNotification, i, "/id", "session/cancel was sent as a request (with an id), not as a notification", "no id", string(m.ID))
		}
		if m.Kind != Response {
			if sid := sessionOf(m.Params); sid != "" && needsKnownSession(e.From, m.Method) && !slices.Contains(t.Sessions, sid) {
				at(RuleSessionKnown, i, "/params/sessionId", fmt.Sprintf("%s names session %q, which no session/new created and no session/load named", m.Method, sid), "a known session", sid)
			}
		}
	}
	for _, i := range t.Reused {
		at(RuleIDUnique, i, "/id", fmt.Sprintf("the %s reused id %s while its request with that id was still unanswered", t.Entries[i].From, t.Entries[i].Msg.ID), "a fresh id", string(t.Entries[i].Msg.ID))
	}
	for _, i := range t.Strays {
		if c := t.CallAt(i); c != nil {
			at(RuleResponsePairs, i, "/id", fmt.Sprintf("%s (id %s) was answered again (first at line %d)", c.Method, t.Entries[i].Msg.ID, t.Entries[c.Responses[0]].Line), "one response per request", desc(i))
			continue
		}
		at(RuleResponsePairs, i, "/id", fmt.Sprintf("the %s answered id %s, which no outstanding request of the %s has", t.Entries[i].From, t.Entries[i].Msg.ID, t.Entries[i].From.Other()), "the id of an outstanding request", desc(i))
	}
	for _, c := range t.Calls {
		if c.Answered() || c.Method == MethodSessionPrompt || o.Partial {
			continue
		}
		at(RuleAnswered, c.Request, "", fmt.Sprintf("the %s's %s request (id %s) was never answered", c.From, c.Method, t.Entries[c.Request].Msg.ID), "a response", "none before the end of the session")
	}
	for _, p := range t.Prompts {
		req := p.Call.Request
		switch {
		case p.End < 0:
			at(RuleStopReason, req, "", fmt.Sprintf("session/prompt (id %s) never got its response", t.Entries[req].Msg.ID), "one response with a stopReason", "none before the end of the session")
		case p.Error == nil && !slices.Contains(StopReasons, p.StopReason):
			got := p.StopReason
			if got == "" {
				got = "no stopReason: " + clip(string(t.Entries[p.End].Msg.Result), 120)
			}
			at(RuleStopReason, p.End, "/result/stopReason", "the session/prompt response has no valid stopReason", strings.Join(StopReasons, ", "), got)
		}
		if p.Cancelled() && p.End >= 0 && p.StopReason != StopCancelled {
			got := "stopReason " + p.StopReason
			if p.Error != nil {
				got = fmt.Sprintf("an error (%d %s)", p.Error.Code, clip(p.Error.Message, 100))
			}
			at(RuleCancelled, p.End, "/result/stopReason", fmt.Sprintf("the prompt was cancelled (session/cancel at line %d) but its response is %s", t.Entries[p.Cancel].Line, got), StopCancelled, got)
		}
		if p.End >= 0 && p.StopReason != StopCancelled {
			for _, tc := range p.Tools {
				if tc.Final >= 0 && tc.Final < p.End || tc.Rejected >= 0 && tc.Rejected < p.End {
					continue
				}
				at(RuleToolFinal, p.End, "", fmt.Sprintf("the turn ended (%s) with tool call %s%s still %s", endWord(p), tc.ID, titled(tc), tc.Status), "completed or failed before the response", tc.Status)
			}
		}
		for _, tc := range p.Tools {
			for _, i := range tc.Late {
				at(RuleToolLate, i, "/params/update", fmt.Sprintf("an update of tool call %s came after its turn's response (line %d)", tc.ID, t.Entries[p.End].Line), "updates before the response", desc(i))
			}
		}
	}
	for _, i := range t.LateHistory {
		at(RuleLoadHistory, i, "/params/update/sessionUpdate", "a history update of the loaded session came after the session/load response", "the history before the response", desc(i))
	}
	checkPermissionAfterCancel(t, at)
	if o.Schema != nil {
		for _, p := range o.Schema.Check(t) {
			at(RuleSchema, p.Entry, p.Pointer, p.Message, p.Expected, clip(p.Actual, 160))
		}
	}
	sortFindings(out)
	return out
}

// needsKnownSession reports whether a message of from with method must
// name a session known at that point.
func needsKnownSession(from Side, method string) bool {
	switch method {
	case MethodSessionPrompt, MethodSessionCancel:
		return from == Client
	case MethodSessionUpdate:
		return from == Agent
	}
	return false
}

// checkPermissionAfterCancel finds permission requests that were pending
// when the client cancelled their session's turn and that it then answered
// with anything but the cancelled outcome.
func checkPermissionAfterCancel(t *Trace, at func(*finding.Rule, int, string, string, string, string)) {
	for _, c := range t.Calls {
		if c.Method != MethodRequestPermission || c.From != Agent || !c.Answered() {
			continue
		}
		resp := c.Responses[0]
		sid := sessionOf(t.Entries[c.Request].Msg.Params)
		cancelled := false
		for _, i := range t.Cancels {
			if i > c.Request && i < resp && sessionOf(t.Entries[i].Msg.Params) == sid {
				cancelled = true
			}
		}
		if !cancelled {
			continue
		}
		m := t.Entries[resp].Msg
		if m.Error == nil && strings.Contains(string(m.Result), `"cancelled"`) {
			continue
		}
		at(RulePermissionCancelled, resp, "/result/outcome", "the client answered a permission request of a cancelled turn with something else than the cancelled outcome", `{"outcome":"cancelled"}`, clip(string(t.Entries[resp].Raw), 160))
	}
}

func endWord(p *Prompt) string {
	if p.Error != nil {
		return fmt.Sprintf("error %d", p.Error.Code)
	}
	return "stopReason " + p.StopReason
}

func titled(tc *ToolCall) string {
	if tc.Title == "" {
		return ""
	}
	return " (" + clip(tc.Title, 60) + ")"
}

func sortFindings(fs []finding.Finding) {
	slices.SortStableFunc(fs, func(a, b finding.Finding) int {
		if a.Offset != b.Offset {
			if a.Offset < b.Offset {
				return -1
			}
			return 1
		}
		return a.Line - b.Line
	})
}

// clip shortens s to about n bytes, on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
