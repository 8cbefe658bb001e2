package conformance

import (
	"fmt"
	"strings"
)

// srcSessionIDs is the section that says which of a CLI's ids is its
// session's.
const srcSessionIDs = "docs/protocols/unified.md#session-id"

// CheckSessionID is lifecycle/session-id: the session id a turn_end
// reports is one the CLI gave its session, the id a caller resumes with.
// A message's uuid there looks like a session id and resumes nothing.
var CheckSessionID = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/session-id", "MUST",
	"The session id an adapter reports (turn_end's session_id) is the CLI's session: Claude's session_id, Codex's thread_id, Gemini's session_id, the id that resumes the session (or the one the caller asked to resume). Not a message's uuid or id, an item's, a tool call's or a request's id, nor an id of the adapter's own. A turn_end without a session_id is not judged.", srcResume+"; "+srcSessionIDs),
	Applies: sessionIDApplies, Judge: judgeSessionID})

// sessionIDApplies: the JSONL profiles only. An ACP agent's sessionId is
// the agent's to give (session/new answers it, session/load takes it
// back), whatever session of the CLI it keeps behind it.
func sessionIDApplies(c *Case, h *Hello) (bool, string) {
	if ok, _ := acpApplies(c, h); ok {
		return false, "an ACP agent's sessionId is its own (session/new gives it, session/load takes it back)"
	}
	return doublesApplies(c, h)
}

func judgeSessionID(o *Observation) Outcome {
	sessions := map[string]bool{}
	if o.Case.Resume != "" {
		sessions[o.Case.Resume] = true
	}
	for _, r := range o.Fake {
		if (r.Kind == "session" || r.Kind == "session_error") && r.Session != "" {
			sessions[r.Session] = true
		}
	}
	others := map[string]string{} // an id of something else -> what
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if l.Obj == nil {
				continue
			}
			for _, k := range []string{"session_id", "thread_id"} {
				if id := str(l.Obj, k); id != "" {
					sessions[id] = true
				}
			}
			otherIDs(o.Case.Agent, l.Obj, others)
		}
	}
	judged := 0
	for i, r := range o.TurnEnds() {
		if r.SessionID == "" {
			continue
		}
		judged++
		if sessions[r.SessionID] {
			continue
		}
		what := "an id the CLI never wrote (none of its sessions: the adapter's own?)"
		if w, ok := others[r.SessionID]; ok {
			what = w
		}
		return failf("the CLI's session id ("+strings.Join(sortedKeys(sessions), ", ")+")",
			"turn %d: session_id %q is %s: a caller that resumes with it resumes nothing", i+1, r.SessionID, what)
	}
	if judged == 0 {
		return Outcome{Skip: true, Actual: "no turn_end carries a session_id"}
	}
	return pass()
}

// otherIDs notes the ids of one CLI line that name something other than
// the session: Claude's line uuids, message ids, tool call and request
// ids; Codex's item ids; Gemini's tool ids.
func otherIDs(agent string, obj map[string]any, into map[string]string) {
	note := func(id, what string) {
		if id != "" {
			if _, ok := into[id]; !ok {
				into[id] = what
			}
		}
	}
	typ := str(obj, "type")
	switch agent {
	case "claude":
		note(str(obj, "uuid"), fmt.Sprintf("the uuid of the CLI's %s line", typ))
		note(str(obj, "request_id"), "the id of a control request")
		note(str(obj, "message", "id"), "an assistant message's id")
		note(str(obj, "event", "message", "id"), "an assistant message's id")
		msg, _ := obj["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			m, _ := b.(map[string]any)
			note(str(m, "id"), "a tool call's id")
			note(str(m, "tool_use_id"), "a tool call's id")
		}
	case "codex":
		note(str(obj, "item", "id"), "the id of a Codex item")
	case "gemini":
		note(str(obj, "tool_id"), "a tool call's id")
	}
}
