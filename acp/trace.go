package acp

import (
	"encoding/json"
	"strings"
)

// Entry is one line of an ACP session, as one side wrote it.
type Entry struct {
	// From is the side that wrote the line.
	From Side
	// Line and Offset locate the line in its source (a transcript, a
	// log file), for findings; Line is 1-based, 0 when unknown.
	Line   int
	Offset int64
	// TMS is when the line was written, in milliseconds since the session
	// began; -1 when not recorded.
	TMS int64
	// Raw is the line without its newline.
	Raw []byte
	// Msg is the decoded message; nil when Err says why the line is not
	// one.
	Msg *Message
	Err error
}

// NewEntry decodes a line written by from.
func NewEntry(from Side, raw []byte) Entry {
	e := Entry{From: from, Raw: raw, TMS: -1}
	e.Msg, e.Err = Decode(raw)
	return e
}

// Call is one request and what answered it.
type Call struct {
	// Method is the request's method; From the side that sent it.
	Method string
	From   Side
	// Request is the index of the request's entry.
	Request int
	// Responses are the indexes of the responses with its id that came
	// while it was outstanding (the first) or after (a second answer).
	Responses []int
}

// Answered reports whether the call got a response.
func (c *Call) Answered() bool { return len(c.Responses) > 0 }

// Prompt is one prompt turn: a session/prompt request, what the agent
// sent for its session while it ran, and how it ended.
type Prompt struct {
	Call *Call
	// SessionID is the session the prompt is for.
	SessionID string
	// Cancel is the index of the first session/cancel for the session
	// sent while the prompt ran; -1 when none was.
	Cancel int
	// End is the index of the prompt's response; -1 when none came.
	End int
	// StopReason is the response's stopReason ("" for an error, a missing
	// response, or a result without one).
	StopReason string
	// Error is the response's error, if it was one.
	Error *Error
	// Text is the text of the agent_message_chunk updates of the turn,
	// concatenated.
	Text string
	// Tools are the tool calls started during the turn, in the order they
	// were first seen.
	Tools []*ToolCall
	// Updates counts the turn's session/update notifications.
	Updates int

	text strings.Builder
}

// Cancelled reports whether the client cancelled the prompt while it ran.
func (p *Prompt) Cancelled() bool { return p.Cancel >= 0 }

// ToolCall is one tool call of a session.
type ToolCall struct {
	ID    string
	Title string
	// Status is the last status the agent reported ("pending" when it
	// reported none, as the protocol defaults it).
	Status string
	// First is the index of the entry that announced it: a tool_call
	// update, a tool_call_update or a permission request.
	First int
	// Final is the index of the first update with a final status
	// (completed, failed); -1 while there is none.
	Final int
	// Rejected is the index of the client's answer that rejected the
	// call's permission request (a reject option, or cancelled); -1 when
	// none did.
	Rejected int
	// Failed is true when its final status is failed.
	Failed bool
	// Prompt is the turn that was running when the call was announced;
	// nil outside any (a loaded session's history).
	Prompt *Prompt
	// Late are the indexes of its updates that came after its prompt's
	// response.
	Late []int
}

// Done reports whether the call reached a final status or was rejected.
func (t *ToolCall) Done() bool { return t.Final >= 0 || t.Rejected >= 0 }

// Trace is what a log of ACP lines shows: every request paired with its
// responses, sessions, prompt turns, tool calls and permission requests.
// A Trace is built once and read by the rules and checks.
type Trace struct {
	Entries []Entry
	// Calls are the requests, in the order they were sent.
	Calls []*Call
	// Prompts are the session/prompt turns, in order.
	Prompts []*Prompt
	// Sessions are the session ids that session/new answered or that
	// session/load and session/resume named, in order.
	Sessions []string
	// Strays are the indexes of responses that answer no outstanding
	// request of the other side (an unknown id, or one answered already).
	Strays []int
	// Reused are the indexes of requests whose id was that of a request of
	// the same side still outstanding.
	Reused []int
	// Cancels are the indexes of session/cancel notifications.
	Cancels []int
	// LateHistory are the indexes of the conversation updates (message
	// chunks, tool calls) of a loaded session that came after the
	// session/load response and before the session's next prompt: history
	// the agent replayed after it said the load was done.
	LateHistory []int

	callOf map[int]*Call // request or response entry -> its call
}

// CallAt returns the call whose request or response is entry i, or nil.
func (t *Trace) CallAt(i int) *Call { return t.callOf[i] }

// NewTrace follows a session through its entries.
func NewTrace(entries []Entry) *Trace {
	t := &Trace{Entries: entries, callOf: map[int]*Call{}}
	// outstanding[side][id] is a request of side not yet answered;
	// answered[side][id] the last call of side with that id once answered.
	outstanding := map[Side]map[string]*Call{Client: {}, Agent: {}}
	answered := map[Side]map[string]*Call{Client: {}, Agent: {}}
	running := map[string]*Prompt{} // session id -> the prompt that runs
	tools := map[string]map[string]*ToolCall{}
	permissionCall := map[*Call]*ToolCall{}
	loaded := map[string]bool{} // sessions whose load was answered, until their next prompt
	seenSession := map[string]bool{}
	addSession := func(id string) {
		if id != "" && !seenSession[id] {
			seenSession[id] = true
			t.Sessions = append(t.Sessions, id)
		}
	}
	toolOf := func(session, id string, at int) (*ToolCall, bool) {
		m := tools[session]
		if m == nil {
			m = map[string]*ToolCall{}
			tools[session] = m
		}
		if tc := m[id]; tc != nil {
			return tc, false
		}
		tc := &ToolCall{ID: id, Status: ToolPending, First: at, Final: -1, Rejected: -1}
		m[id] = tc
		return tc, true
	}
	for i := range entries {
		e := &entries[i]
		m := e.Msg
		if m == nil {
			continue
		}
		switch m.Kind {
		case Request:
			key := m.IDKey()
			if outstanding[e.From][key] != nil {
				t.Reused = append(t.Reused, i)
			}
			c := &Call{Method: m.Method, From: e.From, Request: i}
			outstanding[e.From][key] = c
			t.Calls = append(t.Calls, c)
			t.callOf[i] = c
			switch {
			case e.From == Client && m.Method == MethodSessionPrompt:
				sid := sessionOf(m.Params)
				p := &Prompt{Call: c, SessionID: sid, Cancel: -1, End: -1}
				t.Prompts = append(t.Prompts, p)
				running[sid] = p
				delete(loaded, sid)
			case e.From == Client && (m.Method == MethodSessionLoad || m.Method == MethodSessionResume):
				addSession(sessionOf(m.Params))
			case e.From == Agent && m.Method == MethodRequestPermission:
				var params struct {
					SessionID string `json:"sessionId"`
					ToolCall  struct {
						ToolCallID string `json:"toolCallId"`
						Title      string `json:"title"`
						Status     string `json:"status"`
					} `json:"toolCall"`
				}
				if json.Unmarshal(m.Params, &params) == nil && params.ToolCall.ToolCallID != "" {
					tc, isNew := toolOf(params.SessionID, params.ToolCall.ToolCallID, i)
					if params.ToolCall.Title != "" {
						tc.Title = params.ToolCall.Title
					}
					if isNew {
						if p := running[params.SessionID]; p != nil {
							p.Tools = append(p.Tools, tc)
							tc.Prompt = p
						}
					}
					permissionCall[c] = tc
				}
			}
		case Notification:
			if e.From == Client && m.Method == MethodSessionCancel {
				t.Cancels = append(t.Cancels, i)
				if p := running[sessionOf(m.Params)]; p != nil && p.Cancel < 0 {
					p.Cancel = i
				}
				continue
			}
			if e.From != Agent || m.Method != MethodSessionUpdate {
				continue
			}
			var params struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					Kind       string          `json:"sessionUpdate"`
					Content    json.RawMessage `json:"content"`
					ToolCallID string          `json:"toolCallId"`
					Title      string          `json:"title"`
					Status     *string         `json:"status"`
				} `json:"update"`
			}
			if json.Unmarshal(m.Params, &params) != nil {
				continue
			}
			u := params.Update
			p := running[params.SessionID]
			if p != nil {
				p.Updates++
			}
			if p == nil && loaded[params.SessionID] && historyKinds[u.Kind] {
				t.LateHistory = append(t.LateHistory, i)
			}
			switch u.Kind {
			case UpdateAgentMessageChunk:
				if p != nil {
					p.text.WriteString(textOf(u.Content))
				}
			case UpdateToolCall, UpdateToolCallUpdate:
				if u.ToolCallID == "" {
					continue
				}
				tc, isNew := toolOf(params.SessionID, u.ToolCallID, i)
				if isNew && p != nil {
					p.Tools = append(p.Tools, tc)
					tc.Prompt = p
				}
				if tc.Prompt != nil && tc.Prompt.End >= 0 {
					tc.Late = append(tc.Late, i)
				}
				if u.Title != "" {
					tc.Title = u.Title
				}
				if u.Status != nil {
					tc.Status = *u.Status
				} else if u.Kind == UpdateToolCall {
					tc.Status = ToolPending
				}
				if (tc.Status == ToolCompleted || tc.Status == ToolFailed) && tc.Final < 0 {
					tc.Final = i
					tc.Failed = tc.Status == ToolFailed
				}
			}
		case Response:
			// A response answers a request of the other side.
			asker := e.From.Other()
			key := m.IDKey()
			c := outstanding[asker][key]
			if c == nil {
				t.Strays = append(t.Strays, i)
				if old := answered[asker][key]; old != nil {
					old.Responses = append(old.Responses, i)
					t.callOf[i] = old
				}
				continue
			}
			delete(outstanding[asker], key)
			answered[asker][key] = c
			c.Responses = append(c.Responses, i)
			t.callOf[i] = c
			switch c.Method {
			case MethodSessionLoad:
				if m.Error == nil {
					loaded[sessionOf(entries[c.Request].Msg.Params)] = true
				}
			case MethodSessionNew:
				var r struct {
					SessionID string `json:"sessionId"`
				}
				if m.Error == nil && json.Unmarshal(m.Result, &r) == nil {
					addSession(r.SessionID)
				}
			case MethodSessionPrompt:
				for _, p := range t.Prompts {
					if p.Call == c {
						p.End = i
						p.Error = m.Error
						if m.Error == nil {
							var r struct {
								StopReason string `json:"stopReason"`
							}
							json.Unmarshal(m.Result, &r)
							p.StopReason = r.StopReason
						}
						if running[p.SessionID] == p {
							delete(running, p.SessionID)
						}
					}
				}
			case MethodRequestPermission:
				if tc := permissionCall[c]; tc != nil && rejects(entries, c, m) {
					tc.Rejected = i
				}
			}
		}
	}
	for _, p := range t.Prompts {
		p.Text = p.text.String()
		p.text = strings.Builder{}
	}
	return t
}

// historyKinds are the session updates that replay a conversation.
var historyKinds = map[string]bool{UpdateUserMessageChunk: true, UpdateAgentMessageChunk: true, UpdateAgentThoughtChunk: true,
	UpdateToolCall: true, UpdateToolCallUpdate: true}

// rejects reports whether the client's answer m to the permission request
// c turns the tool call down: the cancelled outcome, an error, or an
// option of kind reject_once or reject_always (or, when the request named
// no kinds, an option id that says reject).
func rejects(entries []Entry, c *Call, m *Message) bool {
	if m.Error != nil {
		return true
	}
	var r struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if json.Unmarshal(m.Result, &r) != nil {
		return false
	}
	if r.Outcome.Outcome == "cancelled" {
		return true
	}
	var req struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	json.Unmarshal(entries[c.Request].Msg.Params, &req)
	for _, o := range req.Options {
		if o.OptionID == r.Outcome.OptionID {
			return strings.HasPrefix(o.Kind, "reject")
		}
	}
	return false
}

// sessionOf is the sessionId member of params.
func sessionOf(params json.RawMessage) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(params, &p)
	return p.SessionID
}

// textOf is the text of a content block of type text.
func textOf(content json.RawMessage) string {
	var c struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &c) != nil || c.Type != "text" {
		return ""
	}
	return c.Text
}
