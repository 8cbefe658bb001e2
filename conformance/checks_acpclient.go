package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/acp/acpschema"
)

// srcACPClient is the protocol reference section of a check of ACP
// clients.
func srcACPClient(anchors ...string) string {
	var out []string
	for _, a := range anchors {
		out = append(out, "docs/protocols/acp.md#"+a)
	}
	return strings.Join(out, "; ")
}

// The checks of clients of gemini --acp (AgentGeminiACP). They judge the
// client on both directions of the agent's stdio as the fake gemini saw
// them (acpClientProcs), and on what it handed its caller.
var (
	CheckACPClientTurns = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/acp-client-turns", "MUST",
		"Every turn the caller asks for is one session/prompt, and every prompt the agent answers is delivered to the caller once, as the answer says: one turn_end per turn, ok:true for stopReason end_turn, not a success for stopReason cancelled, ok:false for any other stop reason or a JSON-RPC error.",
		srcACPClient("client-turns", "prompt-turn", "stop-reasons")),
		Applies: acpClientCase(nil), Judge: judgeACPClientTurns})
	CheckACPClientFailure = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/acp-client-reports-failure", "MUST",
		"When the agent fails the turn (a JSON-RPC error), dies, stalls or never answers session/prompt, the client reports the turn failed, not an empty success.",
		srcACPClient("client-failure", "errors")),
		Applies: acpClientCase(func(c *Case) bool { return c.Expect.TurnFails }), Judge: judgeReportedFailure})
	CheckACPClientCancel = register(&Check{Family: FamilyInterrupt, Rule: rule("interrupt/acp-client-cancel", "MUST",
		"An interrupt is sent to the agent as session/cancel for the running prompt's session (not a signal, not a kill), and the turn ends with the agent's answer to that prompt.",
		srcACPClient("client-cancel", "cancellation")),
		Applies: acpClientCase(func(c *Case) bool { return c.Interrupt != nil }), Judge: judgeACPClientCancel})
	CheckACPClientPermission = register(&Check{Family: FamilyControl, Rule: rule("control/acp-client-permission", "MUST",
		"Every session/request_permission is answered exactly once, with its id: with an option of the policy's kind (allow: allow_once or allow_always; deny: reject_once or reject_always), or with the cancelled outcome when the client answers it after its session/cancel for the turn.",
		srcACPClient("client-permission", "permission", "cancellation")),
		Applies: acpClientCase(nil), Judge: judgeACPClientPermission})
	CheckACPClientRequests = register(&Check{Family: FamilyControl, Rule: rule("control/acp-client-agent-requests", "MUST",
		"Every other request of the agent (fs/read_text_file, fs/write_text_file, terminal/..., a method the client does not know) is answered exactly once, with its id: a result only for a method the client declared in its initialize capabilities, else a JSON-RPC error.",
		srcACPClient("client-requests", "fs", "ids")),
		Applies: acpClientCase(nil), Judge: judgeACPClientRequests})
	CheckACPClientProtocol = register(&Check{Family: FamilyOutput, Rule: rule("output/acp-client-protocol", "MUST",
		"The client starts gemini with --acp and speaks ACP on its stdin: initialize first, then only JSON-RPC 2.0 messages of methods the agent handles, valid under the ACP schema, request ids not reused while outstanding, no answer to a request the agent did not make or had already had answered.",
		srcACPClient("client-protocol", "framing", "ids", "schema", "initialization")),
		Applies: acpClientCase(nil), Judge: judgeACPClientProtocol})
	CheckACPClientText = register(&Check{Family: FamilyLossless, Rule: rule("lossless/acp-client-text", "MUST",
		"The agent's text reaches the caller whole: per turn, the text of the agent_message_chunk updates of the prompt, exactly (unified textChunk events) or found in the events (native), multibyte characters included however the bytes were split across reads.",
		srcACPClient("client-text", "content", "framing")),
		Applies: acpClientCase(func(c *Case) bool { return !c.Expect.TurnFails && !c.Expect.Cancelled && !c.Expect.Stall }), Judge: judgeACPClientText})
)

// acpClientCase applies a check to the cases of AgentGeminiACP (those cond
// accepts).
func acpClientCase(cond func(*Case) bool) func(*Case, *Hello) (bool, string) {
	return func(c *Case, _ *Hello) (bool, string) {
		if c.Agent != AgentGeminiACP {
			return false, "applies to clients of gemini --acp only"
		}
		if cond != nil && !cond(c) {
			return false, "not this kind of case"
		}
		return true, ""
	}
}

func judgeACPClientTurns(o *Observation) Outcome {
	procs := o.acpClientProcs(o.Fake, false)
	prompts := acpPrompts(procs)
	ends := o.TurnEnds()
	asked := o.turnsAsked()
	if len(ends) > asked {
		return failf(fmt.Sprintf("one turn_end per turn (%d turns asked for)", asked), "%d turn_end records: a turn was delivered more than once", len(ends))
	}
	// A prompt the agent refused (an error answer) may be sent again, as
	// after authenticate; one it ran may not.
	ran := 0
	for _, p := range prompts {
		if p.Error == nil {
			ran++
		}
	}
	if ran > asked {
		return failf(fmt.Sprintf("one session/prompt per turn (%d turns asked for)", asked), "%d session/prompt requests the agent ran: it ran a turn the caller did not ask for", ran)
	}
	answered := 0
	for i, p := range prompts {
		if p.End < 0 {
			continue // the agent never answered: lifecycle/acp-client-reports-failure
		}
		answered++
		if i >= len(ends) {
			return failf(fmt.Sprintf("a turn_end for prompt %d, which the agent answered", i+1), "none: the agent's answer (%s) was never delivered", acpAnswer(p))
		}
		r := ends[i]
		switch {
		case p.Error != nil:
			if r.OK {
				return failf(fmt.Sprintf("turn_end ok:false for prompt %d, which the agent answered with an error", i+1), "ok:true (the error: %d %s)", p.Error.Code, clip(p.Error.Message, 200))
			}
		case p.StopReason == acp.StopEndTurn:
			if !r.OK {
				return failf(fmt.Sprintf("turn_end ok:true for prompt %d, which the agent answered end_turn", i+1), "ok:false, error %q", clip(r.Error, 200))
			}
		case p.StopReason == acp.StopCancelled:
			if r.OK && r.Reason != "cancelled" {
				return failf(fmt.Sprintf("turn_end ok:false or reason cancelled for prompt %d, which the agent answered cancelled", i+1), "ok:true, reason %q: a cancelled turn reported a success", r.Reason)
			}
		default:
			if r.OK {
				return failf(fmt.Sprintf("turn_end ok:false for prompt %d, which the agent answered %s", i+1, acpAnswer(p)), "ok:true")
			}
		}
	}
	if answered == 0 {
		return Outcome{Skip: true, Actual: "the agent answered no session/prompt (the client sent none, or the agent failed first)"}
	}
	return pass()
}

// acpAnswer describes how the agent answered a prompt.
func acpAnswer(p *acp.Prompt) string {
	switch {
	case p.End < 0:
		return "no answer"
	case p.Error != nil:
		return fmt.Sprintf("error %d %s", p.Error.Code, clip(p.Error.Message, 120))
	case p.StopReason == "":
		return "a result without a stopReason"
	}
	return "stopReason " + p.StopReason
}

func judgeACPClientCancel(o *Observation) Outcome {
	log, snapshot := o.Fake, false
	if o.FakeAtGiveUp != nil {
		log, snapshot = o.FakeAtGiveUp, true
	} else if o.FakeAtTurnEnd != nil {
		log, snapshot = o.FakeAtTurnEnd, true
	}
	procs := o.acpClientProcs(log, snapshot)
	var cancelled *acp.Prompt
	var signalled []string
	for _, p := range procs {
		for _, pr := range p.Trace.Prompts {
			if pr.Cancelled() {
				cancelled = pr
				for _, s := range p.Signals {
					if s.Before <= pr.Cancel {
						signalled = append(signalled, s.Name)
					}
				}
				break
			}
		}
		if cancelled == nil {
			for _, s := range p.Signals {
				signalled = append(signalled, s.Name)
			}
		}
	}
	switch {
	case cancelled == nil && len(signalled) > 0:
		return failf("session/cancel to the agent", "the agent got %s instead: the interrupt ended the agent, with every session of it", strings.Join(signalled, ", "))
	case cancelled == nil && o.GaveUp:
		return failf("session/cancel to the agent", "no session/cancel for the running prompt's session, and no turn_end within the interrupt deadline (the runner gave up)")
	case cancelled == nil:
		if len(acpPrompts(procs)) == 0 {
			return failf("session/cancel to the agent", "no session/prompt reached the agent before the turn ended")
		}
		for _, p := range procs {
			if len(p.Trace.Cancels) > 0 {
				return failf("session/cancel for the running prompt's session", "a session/cancel came, but for no running prompt of its session: %s", entryText(p.Trace, p.Trace.Cancels[0]))
			}
		}
		return failf("session/cancel for the running prompt's session", "no session/cancel reached the agent: the prompt ran on")
	case len(signalled) > 0:
		return failf("session/cancel to the agent, not a signal", "the agent got %s before the session/cancel", strings.Join(signalled, ", "))
	}
	// The answer to the cancelled prompt, in the final log (the client may
	// report the turn as soon as it comes).
	for _, p := range acpPrompts(o.acpClientProcs(o.Fake, false)) {
		if p.Cancelled() {
			if p.End < 0 {
				return failf("the turn ends with the agent's answer to the cancelled prompt (stopReason cancelled)", "the agent never answered it: the client ended the turn some other way")
			}
			return pass()
		}
	}
	return pass()
}

// permissionAnswer is what a client's answer to a permission request
// chose: the cancelled outcome, an option's kind, or an error.
func permissionAnswer(t *acp.Trace, c *acp.Call, resp int) (outcome, kind string) {
	m := t.Entries[resp].Msg
	if m.Error != nil {
		return "error", ""
	}
	var r struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if json.Unmarshal(m.Result, &r) != nil {
		return "", ""
	}
	if r.Outcome.Outcome != "selected" {
		return r.Outcome.Outcome, ""
	}
	var req struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	json.Unmarshal(t.Entries[c.Request].Msg.Params, &req)
	for _, o := range req.Options {
		if o.OptionID == r.Outcome.OptionID {
			return "selected", o.Kind
		}
	}
	return "selected", "(no option " + r.Outcome.OptionID + ")"
}

// cancelledBefore reports whether the client sent a session/cancel for
// the prompt that ran when request req came, before entry i.
func cancelledBefore(t *acp.Trace, req, i int) bool {
	for _, p := range t.Prompts {
		if p.Call.Request < req && (p.End < 0 || p.End > req) && p.Cancel >= 0 && p.Cancel < i {
			return true
		}
	}
	return false
}

func judgeACPClientPermission(o *Observation) Outcome {
	n := 0
	for _, p := range o.acpClientProcs(o.Fake, false) {
		t := p.Trace
		for _, c := range t.Calls {
			if c.From != acp.Agent || c.Method != acp.MethodRequestPermission {
				continue
			}
			n++
			id := string(t.Entries[c.Request].Msg.ID)
			what := fmt.Sprintf("the session/request_permission %s (id %s)", acpToolTitle(t, c), id)
			switch {
			case len(c.Responses) == 0:
				return failf("one answer to "+what, "none: the agent waits for ever")
			case len(c.Responses) > 1:
				return failf("one answer to "+what, "%d answers", len(c.Responses))
			}
			resp := c.Responses[0]
			outcome, kind := permissionAnswer(t, c, resp)
			if cancelledBefore(t, c.Request, resp) {
				if outcome != "cancelled" {
					return failf("the cancelled outcome for "+what+", answered after the client's session/cancel", "%s", clip(string(t.Entries[resp].Raw), 200))
				}
				continue
			}
			want, word := "allow", "an allow option (allow_once, allow_always)"
			if o.Case.Permission == "deny" {
				want, word = "reject", "a reject option (reject_once, reject_always)"
			}
			if outcome != "selected" || !strings.HasPrefix(kind, want) {
				return failf(word+" for "+what+" (the policy is "+o.Case.Permission+")", "%s", clip(string(t.Entries[resp].Raw), 200))
			}
		}
	}
	if n == 0 {
		return Outcome{Skip: true, Actual: "the agent asked no permission (the turn did not get that far, or the case has none)"}
	}
	return pass()
}

// acpToolTitle is the title of the tool call a permission request is for.
func acpToolTitle(t *acp.Trace, c *acp.Call) string {
	var p struct {
		ToolCall struct {
			Title string `json:"title"`
		} `json:"toolCall"`
	}
	json.Unmarshal(t.Entries[c.Request].Msg.Params, &p)
	if p.ToolCall.Title == "" {
		return ""
	}
	return "for " + strings.TrimSpace(p.ToolCall.Title)
}

// clientCapabilities are the capabilities the client's initialize
// declared, as "fs/read_text_file", "fs/write_text_file" and "terminal".
func clientCapabilities(t *acp.Trace) map[string]bool {
	out := map[string]bool{}
	for _, c := range t.Calls {
		if c.From != acp.Client || c.Method != acp.MethodInitialize {
			continue
		}
		var p struct {
			ClientCapabilities struct {
				FS struct {
					Read  bool `json:"readTextFile"`
					Write bool `json:"writeTextFile"`
				} `json:"fs"`
				Terminal bool `json:"terminal"`
			} `json:"clientCapabilities"`
		}
		json.Unmarshal(t.Entries[c.Request].Msg.Params, &p)
		out[acp.MethodReadTextFile] = p.ClientCapabilities.FS.Read
		out[acp.MethodWriteTextFile] = p.ClientCapabilities.FS.Write
		out["terminal"] = p.ClientCapabilities.Terminal
	}
	return out
}

func judgeACPClientRequests(o *Observation) Outcome {
	n := 0
	for _, p := range o.acpClientProcs(o.Fake, false) {
		t := p.Trace
		caps := clientCapabilities(t)
		for _, c := range t.Calls {
			if c.From != acp.Agent || c.Method == acp.MethodRequestPermission {
				continue
			}
			n++
			what := fmt.Sprintf("the agent's %s request (id %s)", c.Method, t.Entries[c.Request].Msg.ID)
			switch {
			case len(c.Responses) == 0:
				return failf("one answer to "+what, "none: the agent waits for ever")
			case len(c.Responses) > 1:
				return failf("one answer to "+what, "%d answers", len(c.Responses))
			}
			m := t.Entries[c.Responses[0]].Msg
			declared := caps[c.Method] || strings.HasPrefix(c.Method, "terminal/") && caps["terminal"]
			if m.Error == nil && !declared {
				return failf("a JSON-RPC error for "+what+": the client did not declare it (its initialize capabilities), so it cannot have done it",
					"a result: %s", clip(string(t.Entries[c.Responses[0]].Raw), 200))
			}
		}
	}
	if n == 0 {
		return Outcome{Skip: true, Actual: "the agent made no request of the client besides permission requests"}
	}
	return pass()
}

var (
	acpSchemaOnce sync.Once
	acpSchema     *acpschema.SchemaValidator
	acpSchemaErr  error
)

// acpClientSchema is the ACP schema, compiled once.
func acpClientSchema() (*acpschema.SchemaValidator, error) {
	acpSchemaOnce.Do(func() { acpSchema, acpSchemaErr = acpschema.Schema() })
	return acpSchema, acpSchemaErr
}

func judgeACPClientProtocol(o *Observation) Outcome {
	procs := o.acpClientProcs(o.Fake, false)
	if len(procs) == 0 {
		var argv []string
		for _, s := range o.FakeStarts() {
			if s.CLI == "gemini" {
				argv = append(argv, strings.Join(s.Argv, " "))
			}
		}
		if len(argv) == 0 {
			return failf("gemini started with --acp", "the client started no gemini")
		}
		return failf("gemini started with --acp (or --experimental-acp)", "gemini started as: %s", strings.Join(argv, "; "))
	}
	schema, err := acpClientSchema()
	if err != nil {
		return Outcome{Info: true, Actual: "no ACP schema: " + err.Error()}
	}
	var bad []string
	add := func(format string, args ...any) {
		if len(bad) < 5 {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	for _, p := range procs {
		t := p.Trace
		first := true
		for i, e := range t.Entries {
			if e.From != acp.Client {
				continue
			}
			if e.Msg == nil {
				add("not a JSON-RPC 2.0 message (%v): %s", e.Err, entryText(t, i))
				continue
			}
			if first && (e.Msg.Kind != acp.Request || e.Msg.Method != acp.MethodInitialize) {
				add("the first message is not initialize: %s", entryText(t, i))
			}
			first = false
			if e.Msg.Kind != acp.Response && !schema.Knows(acp.Agent, e.Msg.Method) && !strings.HasPrefix(e.Msg.Method, "_") {
				add("%s %s: a method the agent does not handle", e.Msg.Kind, e.Msg.Method)
			}
		}
		for _, i := range t.Strays {
			if t.Entries[i].From == acp.Client {
				add("an answer to no outstanding request of the agent: %s", entryText(t, i))
			}
		}
		for _, i := range t.Reused {
			if t.Entries[i].From == acp.Client {
				add("a request id still outstanding used again: %s", entryText(t, i))
			}
		}
		for _, sp := range schema.Check(t) {
			if t.Entries[sp.Entry].From == acp.Client {
				add("%s (at %s): %s", sp.Message, sp.Pointer, entryText(t, sp.Entry))
			}
		}
	}
	if len(bad) > 0 {
		return failf("initialize first, then valid ACP messages of methods the agent handles, answers only to its outstanding requests", "%s", strings.Join(bad, "; "))
	}
	return pass()
}

func judgeACPClientText(o *Observation) Outcome {
	prompts := acpPrompts(o.acpClientProcs(o.Fake, false))
	if len(prompts) == 0 {
		return Outcome{Skip: true, Actual: "no session/prompt reached the agent"}
	}
	native := o.Hello != nil && o.Hello.Profile == "native"
	if !native && (o.Hello == nil || o.Hello.Profile != "unified") {
		return Outcome{Skip: true, Actual: "judged on unified textChunk events or native events only"}
	}
	late := acpLateHistoryText(o)
	for i, p := range prompts {
		want := p.Text
		if native {
			x := buildIndex(o.EventsOfTurn(i))
			if want != "" && !x.hasText([]string{want}) {
				return failf(fmt.Sprintf("turn %d's text in the events: %q", i+1, clip(want, 300)), "not found whole in the turn's events (a piece lost or mangled)")
			}
			continue
		}
		got := ""
		for _, ev := range o.EventsOfTurn(i) {
			if ev.Obj["type"] == "textChunk" && ev.Obj["role"] != "user" {
				s, _ := ev.Obj["content"].(string)
				got += s
			}
		}
		// The first turn after a load may begin with the end of the
		// history the agent streamed after its answer to session/load.
		if got != want && !(i == 0 && strings.HasSuffix(got, want) && strings.HasSuffix(late, strings.TrimSuffix(got, want))) {
			return Outcome{Expected: fmt.Sprintf("turn %d's text: %q", i+1, clip(want, 300)), Actual: fmt.Sprintf("%q", clip(got, 300))}
		}
	}
	return pass()
}

// acpLateHistoryText is the text of the agent_message_chunk updates of a
// loaded session's history that the agent wrote after it answered
// session/load (Gemini CLI 0.61.0 does not wait for them): a client that
// prompts at once gets them while its first prompt runs, and may hand
// them on with it.
func acpLateHistoryText(o *Observation) string {
	var b strings.Builder
	for _, p := range o.acpClientProcs(o.Fake, false) {
		t := p.Trace
		for _, i := range t.LateHistory {
			m := t.Entries[i].Msg
			var params struct {
				Update struct {
					Kind    string `json:"sessionUpdate"`
					Content struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			}
			if json.Unmarshal(m.Params, &params) == nil && params.Update.Kind == acp.UpdateAgentMessageChunk && params.Update.Content.Type == "text" {
				b.WriteString(params.Update.Content.Text)
			}
		}
	}
	return b.String()
}
