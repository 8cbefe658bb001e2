package fakecli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentconform/agentconform/transcript"
)

// The threads of the fake `codex app-server` outlive its process, as the
// real server's rollouts do (docs/protocols/codex-app-server.md#resume):
// a thread is kept in the session store (AGENTCONFORM_SESSIONS, the store
// of `codex exec resume`) once its first turn/start is taken, and
// thread/resume in a later process finds it there by id and replays the
// next process part of its transcript from that part's thread/resume
// step, the recorded thread id rewritten to the one resumed. A thread the
// store does not hold is refused as 0.169.0 refuses it.

// uuidGroups are the lengths of the five groups of a hyphenated UUID.
var uuidGroups = [5]int{8, 4, 4, 4, 12}

// parseThreadID reads a thread id as the uuid crate's Uuid::parse_str does
// (ThreadId::from_string in codex-rs): the simple (32 hex digits),
// hyphenated, braced and urn:uuid: forms, in either case. It returns the
// id in the hyphenated lower-case form the server names threads by, or
// the crate's error message (observed on 0.169.0: "invalid character:
// expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-],
// found `n` at 1", "invalid length: expected length 32 for simple format,
// found 8", "invalid group length in group 4: expected 12, found 11").
func parseThreadID(s string) (id, msg string) {
	body, offset, simple := s, 0, true
	switch {
	case len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}':
		body, offset, simple = s[1:len(s)-1], 1, false
	case strings.HasPrefix(s, "urn:uuid:"):
		body, offset, simple = s[len("urn:uuid:"):], len("urn:uuid:"), false
	}
	hex := strings.ReplaceAll(body, "-", "")
	if ok := len(hex) == 32 && (len(body) == 32 && simple || len(body) == 36 && hyphenated(body)); ok && isHex(hex) {
		h := strings.ToLower(hex)
		return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], ""
	}
	var bounds []int
	for i, r := range body {
		switch {
		case r == '-':
			bounds = append(bounds, i)
		case r >= 0x80:
			return "", fmt.Sprintf("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `%c` at %d", r, i+offset+1)
		case !isHex(string(r)):
			return "", fmt.Sprintf("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `%c` at %d", r, i+offset+1)
		}
	}
	switch {
	case len(bounds) == 0 && simple:
		return "", fmt.Sprintf("invalid length: expected length 32 for simple format, found %d", len(s))
	case len(bounds) != 4:
		return "", fmt.Sprintf("invalid group count: expected 5, found %d", len(bounds)+1)
	}
	start := 0
	for g := 0; g < 4; g++ {
		if n := bounds[g] - start; n != uuidGroups[g] {
			return "", fmt.Sprintf("invalid group length in group %d: expected %d, found %d", g, uuidGroups[g], n)
		}
		start = bounds[g] + 1
	}
	// Like the crate, the last group's length is counted on the whole
	// input (braces or urn:uuid: prefix included).
	return "", fmt.Sprintf("invalid group length in group 4: expected 12, found %d", len(s)-24)
}

// hyphenated reports whether s has its hyphens where a UUID has them.
func hyphenated(s string) bool {
	return s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-'
}

// isHex reports whether s is made of hexadecimal digits only.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// threadParam returns the threadId of a request's params: its text, and
// whether there is one (a string).
func threadParam(obj map[string]any) (string, bool) {
	params, _ := obj["params"].(map[string]any)
	id, ok := params["threadId"].(string)
	return id, ok
}

// threadTypeError is the serde error of a threadId that is no string,
// as 0.169.0 answers it ("Invalid request: invalid type: integer `42`,
// expected a string"; a missing one: "Invalid request: missing field
// `threadId`"); "" when the request has a string threadId.
func threadTypeError(obj map[string]any) string {
	params, _ := obj["params"].(map[string]any)
	v, present := params["threadId"]
	var what string
	switch x := v.(type) {
	case string:
		return ""
	case nil:
		if !present {
			return "Invalid request: missing field `threadId`"
		}
		what = "null"
	case bool:
		what = "boolean `" + strconv.FormatBool(x) + "`"
	case float64:
		if x == float64(int64(x)) {
			what = "integer `" + strconv.FormatInt(int64(x), 10) + "`"
		} else {
			what = "floating point `" + strconv.FormatFloat(x, 'f', -1, 64) + "`"
		}
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			what = "floating point `" + string(x) + "`"
		} else {
			what = "integer `" + string(x) + "`"
		}
	case []any:
		what = "sequence"
	default:
		what = "map"
	}
	return "Invalid request: invalid type: " + what + ", expected a string"
}

// consumed is called when an "in" step took a client line: a thread/start
// asking for an ephemeral thread is noted, and the first turn/start of a
// thread keeps the thread in the session store (the real server writes
// its rollout with the turn's user message; a thread with no turn yet
// cannot be resumed: "no rollout found", as thread_resume.rs's
// thread_resume_rejects_unmaterialized_thread test shows).
func (a *appServerState) consumed(e *engine, st *transcript.Step, m *stdinMsg) flow {
	if st.Match == nil || m.obj == nil {
		return flowNone
	}
	switch st.Match["method"] {
	case "thread/start":
		params, _ := m.obj["params"].(map[string]any)
		a.ephemeral, _ = params["ephemeral"].(bool)
		if f := a.freshThread(e); f != flowNone {
			return f
		}
		for id := range a.threads {
			a.loaded[id] = true // the transcript's thread, which its answer names
		}
	case "thread/resume":
		if id, ok := threadParam(m.obj); ok {
			if norm, bad := parseThreadID(id); bad == "" {
				a.loaded[norm] = true
			}
		}
	case "turn/start":
		id, ok := threadParam(m.obj)
		if !ok || a.kept[id] || a.ephemeral || a.ref == "" {
			return flowNone
		}
		store, err := openStore(e.p.env)
		if err != nil {
			return e.finish(e.p.harnessError(err))
		}
		ses := &session{CLI: "codex", ID: id, Transcript: a.ref, Next: a.part + 1, Cwd: cwd(), Title: firstPrompt(m.obj)}
		if err := store.put(ses); err != nil {
			return e.finish(e.p.harnessError(err))
		}
		a.kept[id] = true
		e.p.logSession(id, false)
	}
	return flowNone
}

// freshThread gives the thread a thread/start opens a new id when the
// recorded one is taken (an earlier process, or an earlier thread/start of
// this one, kept it): the real server makes a new UUID for every thread,
// and a client that starts a thread where it should resume one must not
// get the old thread back. The id is drawn from the seed, skipping those
// the store holds; the answer and every later line carry it.
func (a *appServerState) freshThread(e *engine) flow {
	if a.recorded == "" || a.ref == "" {
		return flowNone
	}
	store, err := openStore(e.p.env)
	if err != nil {
		return e.finish(e.p.harnessError(err))
	}
	taken := func(id string) (bool, error) {
		ses, err := store.get("codex", id)
		return ses != nil || a.kept[id], err
	}
	used, err := taken(a.recorded)
	if err != nil {
		return e.finish(e.p.harnessError(err))
	}
	if !used {
		return flowNone
	}
	rng := e.p.rng("codex", "app-server-thread", a.ref)
	id := newUUID(rng)
	for {
		used, err := taken(id)
		if err != nil {
			return e.finish(e.p.harnessError(err))
		}
		if !used {
			break
		}
		id = newUUID(rng)
	}
	e.rewriteFrom, e.rewriteTo = a.recorded, id
	a.threads = map[string]bool{id: true}
	return flowNone
}

// firstPrompt is the text of a turn/start's first text input, for the
// stored thread's title.
func firstPrompt(obj map[string]any) string {
	if text, ok := transcript.Lookup(obj, "/params/input/0/text"); ok {
		if s, ok := text.(string); ok {
			return firstLine(s)
		}
	}
	return ""
}

// resume answers a thread/resume that no step of the replay takes: an id
// that is no UUID is refused ("invalid session id: ..."), one the session
// store does not hold too ("no rollout found for thread id ID"), both
// -32600 as 0.169.0 answers them; a stored thread is resumed by replaying
// the next process part of its transcript from that part's thread/resume
// step.
func (a *appServerState) resume(e *engine, m *stdinMsg, msg *transcript.RPCMessage) flow {
	raw, _ := threadParam(m.obj)
	id, bad := parseThreadID(raw)
	if bad != "" {
		e.logStdin(m, "rejected")
		e.p.obs.log("session_error", "message", "invalid session id: "+bad, "session", raw, "reason", SessionNotFound)
		return a.writeError(e, msg.ID, -32600, "invalid session id: "+bad)
	}
	if a.loaded[id] {
		return a.resumeLoaded(e, m, msg, id)
	}
	store, err := openStore(e.p.env)
	if err != nil {
		return e.finish(e.p.harnessError(err))
	}
	ses, err := store.get("codex", id)
	if err != nil {
		return e.finish(e.p.harnessError(err))
	}
	if ses == nil {
		// A well-formed request the server refuses for want of the
		// thread: "refused", not a protocol error of the client.
		text := "no rollout found for thread id " + id
		e.logStdin(m, "refused")
		e.p.obs.log("session_error", "message", text, "session", id, "reason", SessionNotFound)
		return a.writeError(e, msg.ID, -32600, text)
	}
	t, err := loadRef("codex", ses.Transcript)
	if err != nil {
		return e.finish(e.p.harnessError(err))
	}
	parts := t.Processes()
	part := sessionPart(ses, len(parts))
	steps := e.p.plan.steps("codex", parts[part])
	at := -1
	for i, s := range steps {
		if s.Op == transcript.OpIn && s.Match != nil && s.Match["method"] == "thread/resume" {
			at = i
			break
		}
	}
	if at < 0 {
		e.protocolError(m, fmt.Sprintf("thread %s is kept from transcript %s, whose process %d has no thread/resume to replay", id, refName(ses.Transcript), part+1))
		return a.writeError(e, msg.ID, -32603, "agentconform fake codex app-server: the transcript of thread "+id+" has no thread/resume to replay")
	}
	ses.Next = part + 1
	if err := store.put(ses); err != nil {
		return e.finish(e.p.harnessError(err))
	}
	e.p.logSession(id, true)
	// The replay goes on in the resumed thread's part: its steps, turns
	// and interrupt branch; the recorded thread id becomes the one asked
	// for, the only thread this process now knows.
	fresh := newAppServerState(steps)
	fresh.sawInit, fresh.ref, fresh.part, fresh.kept, fresh.loaded = true, ses.Transcript, part, a.kept, a.loaded
	fresh.threads[id] = true
	fresh.kept[id] = true
	*a = *fresh
	e.steps, e.labels = steps, transcript.Labels(steps)
	e.rewriteFrom, e.rewriteTo = "", ""
	if rec := t.Header.SessionID; rec != "" && rec != id {
		e.rewriteFrom, e.rewriteTo = rec, id
	}
	// The line is taken by the part's own thread/resume step: the (id)
	// capture and the recorded answer.
	m.obj["params"].(map[string]any)["threadId"] = id
	e.held = append(e.held, m)
	e.pc = at
	return flowJump
}

// resumeLoaded answers thread/resume of the thread this process already
// runs, as 0.169.0 does (observed: a deprecationNotice about full-history
// hydration unless excludeTurns is true, then the answer; nothing else,
// the thread being loaded already; the real answer carries the thread's
// turns, which the fake does not rebuild): the thread as this process's
// thread/start (or thread/resume) answer recorded it, under the request's
// id. The replay goes on where it was.
func (a *appServerState) resumeLoaded(e *engine, m *stdinMsg, msg *transcript.RPCMessage, id string) flow {
	answer := ""
	for _, st := range e.steps {
		if st.Op == transcript.OpOut && strings.HasPrefix(st.Text, `{"id":`) && strings.Contains(st.Text, `,"result":{"thread":`) {
			answer = st.Text
			break
		}
	}
	if answer == "" {
		e.protocolError(m, "thread/resume of thread "+id+", which this process runs, and the transcript records no thread answer to make its answer from")
		return a.writeError(e, msg.ID, -32603, "agentconform fake codex app-server: the transcript records no thread answer for thread/resume of "+id)
	}
	if len(e.vars) > 0 {
		answer = e.vars.Fill(answer)
	}
	if e.rewriteFrom != "" {
		answer = strings.ReplaceAll(answer, e.rewriteFrom, e.rewriteTo)
	}
	answer = `{"id":` + msg.ID + answer[strings.Index(answer, `,"result":{"thread":`):]
	e.logStdin(m, "resumed")
	e.p.logSession(id, true)
	if exclude, _ := transcript.Lookup(m.obj, "/params/excludeTurns"); exclude != true {
		notice := `{"method":"deprecationNotice","params":{"summary":"Full-history hydration is deprecated for paginated threads; use ` +
			"`excludeTurns: true`, then page with `thread/turns/list` and `thread/items/list`." + `","details":null},"emittedAtMs":` +
			strconv.FormatInt(time.Now().UnixMilli(), 10) + `}`
		if f := e.write(notice, true, 0); f != flowNone {
			return f
		}
	}
	return e.write(answer, true, 0)
}
