package faults

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

// The faults of an Agent Client Protocol session (a transcript the fake
// gemini replays with --acp): what an ACP agent can do to its client on
// the JSON-RPC level. They leave other transcripts alone (nothing
// eligible).
func init() {
	defs = append(defs,
		&faultDef{name: "acp_answer_twice", kind: "event", steps: stepsACPAnswerTwice,
			desc:   "ACP: writes the response to one session/prompt twice (the same id answered again). Catches clients that end a turn, or count usage, twice, or that crash on a response to no pending request.",
			params: []paramDef{intParam("nth", 1, maxCount, "chosen by the seed", false, "which session/prompt (1-based)")}},
		&faultDef{name: "acp_no_response", kind: "event", steps: stepsACPNoResponse,
			desc:   "ACP: never answers one session/prompt (its response is left out; the agent stays alive and waits for the next request). Catches clients that wait forever for a turn to end.",
			params: []paramDef{intParam("nth", 1, maxCount, "chosen by the seed", false, "which session/prompt (1-based)")}},
		&faultDef{name: "acp_unknown_update", kind: "event", steps: stepsACPUnknownUpdate,
			desc:   `ACP: inserts, before one session/update, a session/update of a kind no client knows ("sessionUpdate": "agentconform_unknown_update"). Agents add update kinds (usage_update, config_option_update); clients must skip them.`,
			params: []paramDef{intParam("nth", 1, maxCount, "chosen by the seed", false, "which session/update it comes before (1-based)")}},
		&faultDef{name: "acp_unknown_field", kind: "event", steps: stepsACPUnknownField,
			desc:   `ACP: adds "agentconform_unknown_field" inside the update of one session/update. Clients must ignore fields they do not know.`,
			params: []paramDef{intParam("nth", 1, maxCount, "chosen by the seed", false, "which session/update (1-based)")}},
		&faultDef{name: "acp_unknown_method", kind: "event", steps: stepsACPUnknownMethod,
			desc:   `ACP: inserts a notification of a method no client knows ("agentconform/unknown_notification"). A client ignores it (a notification gets no response).`,
			params: []paramDef{intParam("after", 0, maxCount, "chosen by the seed, between two lines", false, "stdout lines before the inserted notification")}},
		&faultDef{name: "acp_unknown_request", kind: "event", steps: stepsACPUnknownRequest,
			desc:   `ACP: inserts a request of a method no client knows ("agentconform/unknown_request", id "agentconform-1") and waits for the client's answer before it goes on, as a real agent awaits its requests. A client answers it with the JSON-RPC error "Method not found" (-32601); one that never answers stalls the agent.`,
			params: []paramDef{intParam("after", 0, maxCount, "chosen by the seed, between two lines", false, "stdout lines before the inserted request")}},
	)
}

// rpcLine is the shape of a JSON-RPC line the ACP faults look at.
type rpcLine struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
	} `json:"params"`
}

// promptResponses are the indexes of the stdout steps that answer a
// session/prompt: responses whose id is the {{json:rpcN}} template of an
// "in" step that matched session/prompt.
func promptResponses(steps []transcript.Step) []int {
	prompt := map[string]bool{}
	for _, s := range steps {
		if s.Op == transcript.OpIn && s.Match != nil && s.Match["method"] == "session/prompt" {
			for name, ptr := range s.Capture {
				if ptr == "/id" {
					prompt[name] = true
				}
			}
		}
	}
	var idx []int
	for i, s := range steps {
		if s.Op != transcript.OpOut || !strings.Contains(s.Text, `"id":{{json:`) {
			continue
		}
		j := strings.Index(s.Text, `"id":{{json:`) + len(`"id":{{json:`)
		k := strings.Index(s.Text[j:], "}}")
		if k > 0 && prompt[s.Text[j:j+k]] && !strings.Contains(s.Text[:j], `"method"`) {
			idx = append(idx, i)
		}
	}
	return idx
}

// updates are the indexes of the stdout steps that are session/update
// notifications, and their session ids.
func updates(steps []transcript.Step) (idx []int, sessions []string) {
	for i, s := range steps {
		if s.Op != transcript.OpOut || !strings.Contains(s.Text, `"session/update"`) {
			continue
		}
		var l rpcLine
		if json.Unmarshal([]byte(s.Text), &l) == nil && l.Method == "session/update" {
			idx = append(idx, i)
			sessions = append(sessions, l.Params.SessionID)
		}
	}
	return idx, sessions
}

func stepsACPAnswerTwice(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx := promptResponses(steps)
	k, ok := c.choose("nth", len(idx), "response to a session/prompt")
	if !ok {
		return steps
	}
	i := idx[k]
	c.record("wrote "+where(steps, i)+", the response to a session/prompt, twice", "nth", strconv.Itoa(k+1))
	dup := steps[i]
	dup.T = nil
	return insert(steps, i+1, dup)
}

func stepsACPNoResponse(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx := promptResponses(steps)
	k, ok := c.choose("nth", len(idx), "response to a session/prompt")
	if !ok {
		return steps
	}
	i := idx[k]
	c.record("left out "+where(steps, i)+", the response to a session/prompt", "nth", strconv.Itoa(k+1))
	return append(steps[:i:i], steps[i+1:]...)
}

func stepsACPUnknownUpdate(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx, sessions := updates(steps)
	k, ok := c.choose("nth", len(idx), "session/update")
	if !ok {
		return steps
	}
	sid, _ := json.Marshal(sessions[k])
	line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + string(sid) +
		`,"update":{"sessionUpdate":"agentconform_unknown_update","agentconform":{"added_by":"agentconform","values":[1,"two",true,null]}}}}`
	c.record("inserted a session/update of an unknown kind before "+where(steps, idx[k]), "nth", strconv.Itoa(k+1))
	return insert(steps, idx[k], transcript.Step{Op: transcript.OpOut, Text: line})
}

func stepsACPUnknownField(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx, _ := updates(steps)
	k, ok := c.choose("nth", len(idx), "session/update")
	if !ok {
		return steps
	}
	i := idx[k]
	text := steps[i].Text
	at := strings.Index(text, `"update":{`)
	if at < 0 {
		c.record("no update object in " + where(steps, i) + "; nothing changed")
		return steps
	}
	at += len(`"update":{`)
	member := unknownField
	if text[at] != '}' {
		member += ","
	}
	steps[i].Text = text[:at] + member + text[at:]
	c.record("added "+unknownField+" to the update of "+where(steps, i), "nth", strconv.Itoa(k+1))
	return steps
}

func stepsACPUnknownMethod(c *stepCtx, steps []transcript.Step) []transcript.Step {
	if idx, _ := updates(steps); len(idx) == 0 {
		c.record("not an ACP session (no session/update); nothing changed")
		return steps
	}
	o := outs(steps)
	after, note := c.chooseAfter("after", len(o))
	line := `{"jsonrpc":"2.0","method":"agentconform/unknown_notification","params":{"added_by":"agentconform"}}`
	c.record("inserted a notification of an unknown method after "+strconv.Itoa(after)+" stdout lines"+note, "after", strconv.Itoa(after))
	return insert(steps, afterOut(o, after), transcript.Step{Op: transcript.OpOut, Text: line})
}

func stepsACPUnknownRequest(c *stepCtx, steps []transcript.Step) []transcript.Step {
	if idx, _ := updates(steps); len(idx) == 0 {
		c.record("not an ACP session (no session/update); nothing changed")
		return steps
	}
	o := outs(steps)
	after, note := c.chooseAfter("after", len(o))
	line := `{"jsonrpc":"2.0","id":"agentconform-1","method":"agentconform/unknown_request","params":{"added_by":"agentconform"}}`
	c.record("inserted a request of an unknown method (id agentconform-1) after "+strconv.Itoa(after)+" stdout lines"+note, "after", strconv.Itoa(after))
	return insert(steps, afterOut(o, after),
		transcript.Step{Op: transcript.OpOut, Text: line},
		transcript.Step{Op: transcript.OpIn, Match: map[string]any{"id": "agentconform-1"}, Optional: true})
}
