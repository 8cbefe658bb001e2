package faults

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

// The JSON-RPC faults act on transcripts of JSON-RPC in both directions:
// `codex app-server` and Gemini CLI's Agent Client Protocol agent
// (`gemini --acp`). One set serves both: an answer to a client request
// written twice or never, a notification or a request of a method no
// client knows; and, for ACP alone, what its session/update
// notifications carry. Inserted lines take the stream's dialect (the
// "jsonrpc" member where its lines have one). The acp_* names of the
// faults both protocols share are aliases, kept for the specs that use
// them. They leave streams that are not JSON-RPC alone (nothing
// eligible).
func init() {
	answerParams := func(what string) []paramDef {
		return []paramDef{
			intParam("nth", 1, maxCount, "chosen by the seed", false, "which "+what+" (1-based)"),
			{name: "method", kind: kindWord, dflt: "any", fixed: true, meaning: "only answers to requests of this method (session/prompt, turn/start, ...)"},
		}
	}
	afterParam := func(what string) []paramDef {
		return []paramDef{intParam("after", 0, maxCount, "chosen by the seed, between two lines", false, "stdout lines before the inserted "+what)}
	}
	updateParam := []paramDef{intParam("nth", 1, maxCount, "chosen by the seed", false, "which session/update (1-based)")}
	defs = append(defs,
		&faultDef{name: "answer_twice", kind: "event", steps: stepsAnswerTwice,
			desc:   "JSON-RPC: writes one answer to a client request twice (the same id answered again). Catches clients that resolve a request twice (end a turn, count usage twice) or crash on an answer nobody waits for.",
			params: answerParams("answer")},
		&faultDef{name: "answer_never", kind: "event", steps: stepsAnswerNever,
			desc:   "JSON-RPC: leaves one answer to a client request out (the server or agent stays alive and goes on). Catches clients that wait for ever on one request.",
			params: answerParams("answer")},
		&faultDef{name: "unknown_method", kind: "event", steps: stepsUnknownMethod,
			desc:   `JSON-RPC: inserts a notification of a method no client knows ("agentconform/unknown_notification"). Servers and agents add methods over time; a client ignores it (a notification gets no response).`,
			params: afterParam("notification")},
		&faultDef{name: "unknown_request", kind: "event", steps: stepsUnknownRequest,
			desc:   `JSON-RPC: inserts a request of a method no client knows ("agentconform/unknown_request", id "agentconform-1") and waits for the client's answer before it goes on, as a real server awaits its requests. A client answers it with the JSON-RPC error "Method not found" (-32601); one that never answers stalls the server.`,
			params: afterParam("request")},
		&faultDef{name: "acp_unknown_update", kind: "event", steps: stepsACPUnknownUpdate,
			desc:   `ACP: inserts, before one session/update, a session/update of a kind no client knows ("sessionUpdate": "agentconform_unknown_update"). Agents add update kinds (usage_update, config_option_update); clients must skip them.`,
			params: []paramDef{intParam("nth", 1, maxCount, "chosen by the seed", false, "which session/update it comes before (1-based)")}},
		&faultDef{name: "acp_unknown_field", kind: "event", steps: stepsACPUnknownField,
			desc:   `ACP: adds "agentconform_unknown_field" inside the update of one session/update. Clients must ignore fields they do not know.`,
			params: updateParam},
	)
	defs = append(defs,
		alias("acp_answer_twice", "answer_twice", "method", "session/prompt"),
		alias("acp_no_response", "answer_never", "method", "session/prompt"),
		alias("acp_unknown_method", "unknown_method"),
		alias("acp_unknown_request", "unknown_request"),
	)
}

// alias makes name another name of the fault target with the parameters
// preset (key, value, ...) fixed.
func alias(name, target string, preset ...string) *faultDef {
	t := lookup(target)
	d := &faultDef{name: name, kind: t.kind, aliasOf: t, preset: map[string]string{}}
	var fixed []string
	for i := 0; i+1 < len(preset); i += 2 {
		d.preset[preset[i]] = preset[i+1]
		fixed = append(fixed, preset[i]+"="+preset[i+1])
	}
	for _, pd := range t.params {
		if _, ok := d.preset[pd.name]; !ok {
			d.params = append(d.params, pd)
		}
	}
	d.desc = "Another name of " + target
	if len(fixed) > 0 {
		d.desc += ":" + strings.Join(fixed, ",")
	}
	d.desc += "."
	return d
}

// templates matches the {{name}} and {{json:name}} templates of a line.
var templates = regexp.MustCompile(`\{\{[^{}]*\}\}`)

// idTemplate matches the id of an answer that echoes a client's id
// captured by an "in" step ("id":{{json:NAME}}).
var idTemplate = regexp.MustCompile(`"id":\{\{json:([^{}]+)\}\}`)

// rpcOf decodes a stdout line as a JSON-RPC message, its templates (the
// client's ids echoed) taken as 0; nil when it is none.
func rpcOf(text string) *transcript.RPCMessage {
	m, err := transcript.ParseRPC([]byte(templates.ReplaceAllString(text, "0")))
	if err != nil {
		return nil
	}
	return m
}

// answers are the out steps that answer a request of the client: every
// one, or (method not "any") those whose id echoes the id of a client
// request of that method, as an "in" step captured it.
func answers(steps []transcript.Step, method string) []int {
	asked := map[string]string{} // capture name -> the method of the request it took the id of
	for _, s := range steps {
		if s.Op != transcript.OpIn || s.Match == nil {
			continue
		}
		m, _ := s.Match["method"].(string)
		for name, ptr := range s.Capture {
			if ptr == "/id" {
				asked[name] = m
			}
		}
	}
	var idx []int
	for i, s := range steps {
		if s.Op != transcript.OpOut {
			continue
		}
		m := rpcOf(s.Text)
		if m == nil || (m.Kind != transcript.RPCResponse && m.Kind != transcript.RPCError) {
			continue
		}
		if method != "any" {
			id := idTemplate.FindStringSubmatch(s.Text)
			if id == nil || asked[id[1]] != method {
				continue
			}
		}
		idx = append(idx, i)
	}
	return idx
}

// answersWhat names what answer_twice and answer_never choose from.
func answersWhat(method string) string {
	if method == "any" {
		return "JSON-RPC answer to a client request"
	}
	return "JSON-RPC answer to a " + method + " request"
}

// chooseAnswer picks the answer answer_twice or answer_never acts on: the
// step i, the nth (k+1) of the eligible answers.
func chooseAnswer(c *stepCtx, steps []transcript.Step) (i, k int, ok bool) {
	method := c.f.strs["method"]
	idx := answers(steps, method)
	if k, ok = c.choose("nth", len(idx), answersWhat(method)); !ok {
		return 0, 0, false
	}
	return idx[k], k, true
}

func stepsAnswerTwice(c *stepCtx, steps []transcript.Step) []transcript.Step {
	i, k, ok := chooseAnswer(c, steps)
	if !ok {
		return steps
	}
	c.record("answered twice: "+where(steps, i), "nth", strconv.Itoa(k+1))
	dup := steps[i]
	dup.T = nil
	return insert(steps, i+1, dup)
}

func stepsAnswerNever(c *stepCtx, steps []transcript.Step) []transcript.Step {
	i, k, ok := chooseAnswer(c, steps)
	if !ok {
		return steps
	}
	c.record("never answered: dropped "+where(steps, i), "nth", strconv.Itoa(k+1))
	return append(steps[:i:i], steps[i+1:]...)
}

// rpcDialect reports whether the stream's stdout is JSON-RPC, and the
// member its lines open with: `"jsonrpc":"2.0",` for ACP, none for the
// app-server, which leaves it out.
func rpcDialect(steps []transcript.Step) (rpc bool, open string) {
	for _, i := range outs(steps) {
		if rpcOf(steps[i].Text) != nil {
			if strings.Contains(steps[i].Text, `"jsonrpc":"2.0"`) {
				return true, `"jsonrpc":"2.0",`
			}
			return true, ""
		}
	}
	return false, ""
}

// insertRPC inserts line (a JSON-RPC message without its jsonrpc member)
// after the stdout line the seed or "after" chooses, and then more.
func insertRPC(c *stepCtx, steps []transcript.Step, what, line string, more ...transcript.Step) []transcript.Step {
	rpc, open := rpcDialect(steps)
	if !rpc {
		c.record("no eligible event: this process's stdout is not JSON-RPC; nothing changed")
		return steps
	}
	line = "{" + open + strings.TrimPrefix(line, "{")
	o := outs(steps)
	after, note := c.chooseAfter("after", len(o))
	c.record("inserted "+what+" "+afterWhat(steps, o, after)+note, "after", strconv.Itoa(after))
	return insert(steps, afterOut(o, after), append([]transcript.Step{{Op: transcript.OpOut, Text: line}}, more...)...)
}

func stepsUnknownMethod(c *stepCtx, steps []transcript.Step) []transcript.Step {
	return insertRPC(c, steps, "a notification of an unknown method",
		`{"method":"agentconform/unknown_notification","params":{"added_by":"agentconform","values":[1,"two",true,null]}}`)
}

func stepsUnknownRequest(c *stepCtx, steps []transcript.Step) []transcript.Step {
	return insertRPC(c, steps, "a request of an unknown method (id agentconform-1)",
		`{"id":"agentconform-1","method":"agentconform/unknown_request","params":{"added_by":"agentconform"}}`,
		transcript.Step{Op: transcript.OpIn, Match: map[string]any{"id": "agentconform-1"}, Optional: true})
}

// updates are the indexes of the stdout steps that are ACP session/update
// notifications, and their session ids.
func updates(steps []transcript.Step) (idx []int, sessions []string) {
	for i, s := range steps {
		if s.Op != transcript.OpOut || !strings.Contains(s.Text, `"session/update"`) {
			continue
		}
		var l struct {
			Method string `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(s.Text), &l) == nil && l.Method == "session/update" {
			idx = append(idx, i)
			sessions = append(sessions, l.Params.SessionID)
		}
	}
	return idx, sessions
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
