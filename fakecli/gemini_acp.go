package fakecli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/fixtures/acpfixtures"
	"github.com/agentconform/agentconform/transcript"
)

// runGeminiACP is `gemini --acp` (and its deprecated alias
// --experimental-acp): Gemini CLI as an Agent Client Protocol agent,
// JSON-RPC 2.0 on stdio, one JSON object per line (docs/protocols/acp.md).
// It replays an ACP transcript in both directions: the client's requests
// are matched by method (their ids captured and answered), the client's
// answers to the agent's requests by id; what the transcript does not
// expect is answered as Gemini CLI's ACP layer answers it (acpState.dispatch):
// the engine of every fake (replay.go) with the ACP layer. A fixture has
// variants for clients Gemini asks other permissions of (no --yolo, yolo
// saying whether the command line has it; no fs capability): the one the
// client's initialize request calls for replaces it then (acpState.vary).
func runGeminiACP(p *proc, st *store, yolo bool) int {
	ref, t, err := acpTranscriptRef(p.env)
	if err != nil {
		return p.harnessError(err)
	}
	a := &acpState{st: st, ref: ref, recordedSession: recordedSessionID(t, "sessionId"), yolo: yolo, fixture: t, parts: acpParts(p, t)}
	if p.stdin == nil {
		p.stdin = strings.NewReader("")
	}
	e := newEngine(p, a.parts[0], readLines(p.stdin, p.start))
	e.rpc, e.defaultSignal, e.onStdoutGone = a, acpSignal, 0
	return e.run()
}

// acpParts are t's process parts as this process replays them (its
// faults applied).
func acpParts(p *proc, t *transcript.Transcript) [][]transcript.Step {
	var parts [][]transcript.Step
	for _, part := range t.Processes() {
		parts = append(parts, p.plan.steps("gemini", part))
	}
	return parts
}

// acpTranscriptRef picks the ACP transcript: EnvTranscript (an ACP
// transcript file), else the ACP fixture of EnvFixture's scenario (the
// fixture gemini/single-tool, replayed in ACP mode, is the ACP fixture
// gemini/single-tool), else gemini/plain-text.
func acpTranscriptRef(env func(string) string) (string, *transcript.Transcript, error) {
	file, fix := env(EnvTranscript), env(EnvFixture)
	switch {
	case file != "" && fix != "":
		return "", nil, fmt.Errorf("both %s and %s are set; set one", EnvTranscript, EnvFixture)
	case file != "":
		abs, err := filepath.Abs(file)
		if err != nil {
			return "", nil, fmt.Errorf("%s=%q: %w", EnvTranscript, file, err)
		}
		t, err := transcript.ReadFile(abs, transcript.Options{})
		if err != nil {
			return "", nil, err
		}
		if !t.Header.IsACP() {
			return "", nil, fmt.Errorf("%s is not a transcript of an ACP session (its argv has no --acp), but gemini was started with --acp", abs)
		}
		if t.Header.CLI != "gemini" {
			return "", nil, fmt.Errorf("%s was recorded from %s, but this fake is gemini", abs, t.Header.CLI)
		}
		return abs, t, nil
	}
	name := "gemini/plain-text"
	if fix != "" {
		scenario := fix[strings.LastIndexByte(fix, '/')+1:]
		if parts := strings.Split(fix, "/"); len(parts) == 3 && parts[1] != acpfixtures.Version {
			return "", nil, fmt.Errorf("%s=%s: the ACP fixtures are Gemini CLI %s's; there are none of %s", EnvFixture, fix, acpfixtures.Version, parts[1])
		}
		name = "gemini/" + strings.TrimPrefix(scenario, "acp-")
	}
	t, err := acpfixtures.Load(name)
	if err != nil {
		return "", nil, fmt.Errorf("gemini was started with --acp and %s names %q, but there is no ACP fixture of that scenario (%s): %w", EnvFixture, fix, strings.Join(acpfixtures.Names(), ", "), err)
	}
	return "acp/" + name, t, nil
}

// acpState is the Agent Client Protocol layer of the fake gemini --acp
// (rpcLayer): the engine replays the transcript, and what its steps do
// not take is answered here as Gemini CLI's ACP layer answers it.
type acpState struct {
	st  *store
	ref string

	// parts are the transcript's process parts, part the one replaying:
	// a session/load moves the replay to the part that loads.
	parts [][]transcript.Step
	part  int

	// recordedSession is the transcript's session id; session the one
	// this process gave out (the same, unless the store already had it).
	recordedSession, session string

	// prompt is the raw JSON id of the session/prompt being answered
	// ("" when none runs); cancelled is set once session/cancel came for
	// it, so that it ends with stopReason cancelled.
	prompt    string
	cancelled bool
	// cancelAfterAnswer is set when session/cancel came while the agent
	// waited for the client's answer to one of its requests (a permission
	// request): the prompt ends once the answer is in.
	cancelAfterAnswer bool

	// yolo: the command line has --yolo (or --approval-mode yolo).
	// fixture is the transcript replaying, until the client's initialize
	// picked its variant (vary).
	yolo    bool
	fixture *transcript.Transcript

	// base is the scenario's own fixture ("gemini/multi-tool") and baseT
	// its transcript, fs what the client's initialize declared, and
	// prompted is set once a session/prompt was taken: a session/set_mode
	// before the first prompt picks the fixture that mode calls for
	// (setMode).
	base     string
	baseT    *transcript.Transcript
	fs       bool
	prompted bool
}

// vary replaces a fixture replaying from its start by the variant the
// client's initialize request m calls for (acpfixtures.Variant), at the
// same step: Gemini asks a client that did not start it with --yolo for
// the edits and commands a yolo capture ran unasked, and one without the
// fs capability for the writes an fs-capable one did itself.
func (a *acpState) vary(e *engine, m *stdinMsg) {
	t := a.fixture
	a.fixture = nil
	name, ok := strings.CutPrefix(a.ref, "acp/")
	if t == nil || !ok || a.part != 0 || m.obj["method"] != acp.MethodInitialize {
		return
	}
	var init struct {
		Params struct {
			ClientCapabilities struct {
				FS struct {
					Read  bool `json:"readTextFile"`
					Write bool `json:"writeTextFile"`
				} `json:"fs"`
			} `json:"clientCapabilities"`
		} `json:"params"`
	}
	json.Unmarshal(m.raw, &init)
	fsCaps := init.Params.ClientCapabilities.FS
	a.base, a.baseT, a.fs = name, t, fsCaps.Read || fsCaps.Write
	v := acpfixtures.Variant(name, t, acpfixtures.Client{YOLO: a.yolo, FS: a.fs})
	if v != name {
		a.switchTo(e, v, acp.MethodInitialize)
	}
}

// setMode is session/set_mode before the session's first prompt: Gemini
// CLI then asks what that mode asks (captured on 0.61.0 with a client
// that did not start it with --yolo: "yolo" and "autoEdit" asked nothing
// of a turn whose tools were edits, "default" asked for each edit,
// docs/protocols/acp.md#permission). The fixture that mode calls for
// replaces the one replaying, at the prompt: "yolo" the fixture of a
// --yolo client, "autoEdit" that one too when every permission the
// asking fixture requests is for an edit, any other mode the asking one.
func (a *acpState) setMode(e *engine, m *stdinMsg) bool {
	if a.base == "" || a.prompted || a.part != 0 {
		return false
	}
	params, _ := m.obj["params"].(map[string]any)
	mode, _ := params["modeId"].(string)
	asking := acpfixtures.Variant(a.base, a.baseT, acpfixtures.Client{FS: a.fs})
	unasked := acpfixtures.Variant(a.base, a.baseT, acpfixtures.Client{YOLO: true, FS: a.fs})
	want := asking
	switch mode {
	case "yolo":
		want = unasked
	case "autoEdit":
		if onlyEditsAsked(asking) {
			want = unasked
		}
	}
	if "acp/"+want == a.ref {
		return false
	}
	return a.switchTo(e, want, acp.MethodSessionPrompt)
}

// onlyEditsAsked reports whether every permission request of the fixture
// name is for a tool call of kind edit.
func onlyEditsAsked(name string) bool {
	t, err := acpfixtures.Load(name)
	if err != nil {
		return false
	}
	for _, st := range t.Steps {
		if st.Op != transcript.OpOut || !strings.Contains(st.Text, `"method":"session/request_permission"`) {
			continue
		}
		var req struct {
			Params struct {
				ToolCall struct {
					Kind string `json:"kind"`
				} `json:"toolCall"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(st.Text), &req) != nil || req.Params.ToolCall.Kind != "edit" {
			return false
		}
	}
	return true
}

// switchTo makes the fixture name (a variant, or the scenario's own) the
// one replaying, at its first "in" step of method at: the replay stands
// there in the fixture replaced. The session id already given out stays
// the client's.
func (a *acpState) switchTo(e *engine, name, at string) bool {
	vt := a.baseT
	if name != a.base {
		var err error
		if vt, err = acpfixtures.Load(name); err != nil {
			fmt.Fprintf(e.p.stderr, "agentconform fake gemini: %v\n", err)
			return false
		}
	}
	parts := acpParts(e.p, vt)
	pc := slices.IndexFunc(parts[0], func(st transcript.Step) bool {
		return st.Op == transcript.OpIn && st.Match != nil && st.Match["method"] == at
	})
	if pc < 0 {
		return false
	}
	a.parts = parts
	a.ref, a.recordedSession = "acp/"+name, recordedSessionID(vt, "sessionId")
	e.steps, e.labels, e.pc = a.parts[0], transcript.Labels(a.parts[0]), pc
	if a.session != "" {
		// The client has its session: the new fixture's recorded id is
		// written as that one, and a later process loads this fixture.
		if a.recordedSession != a.session {
			e.rewriteFrom, e.rewriteTo = a.recordedSession, a.session
		}
		rec := &session{CLI: "gemini", ID: a.session, Transcript: a.ref, Next: a.part + 1, Cwd: cwd(), Title: "acp"}
		if err := a.st.put(rec); err != nil {
			fmt.Fprintf(e.p.stderr, "agentconform fake gemini: %v\n", err)
		}
	}
	return true
}

// acpSignal is Gemini CLI's own answer to a signal in ACP mode: exit 0,
// no response (its graceful shutdown).
func acpSignal(e *engine, _ syscall.Signal) flow { return e.finish(0) }

// eager implements rpcLayer: the agent reads the client's lines when it
// waits, not between the lines it writes (latency:line=N makes a client's
// line cross the agent's request that way).
func (a *acpState) eager() bool { return false }

// accepts implements rpcLayer.
func (a *acpState) accepts(*stdinMsg) bool { return true }

// out implements rpcLayer: the response to the running prompt ends it
// (with stopReason cancelled once the client cancelled it), and a
// session/new response names the session a later process may load.
func (a *acpState) out(e *engine, _ int, text string) string {
	if a.prompt != "" {
		if id, isResponse := responseID(text); isResponse && id == a.prompt {
			if a.cancelled && !strings.Contains(text, `"stopReason":"cancelled"`) {
				text = `{"jsonrpc":"2.0","id":` + id + `,"result":{"stopReason":"cancelled"}}`
			}
			a.prompt, a.cancelled = "", false
		}
	}
	if strings.Contains(text, `"sessionId"`) && a.session == "" {
		a.noteSession(e, text)
	}
	return text
}

// noteSession keeps the session a session/new response gives out, so
// that a later process can session/load it.
func (a *acpState) noteSession(e *engine, text string) {
	var m struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(text), &m) != nil || m.Result.SessionID == "" {
		return
	}
	a.session = m.Result.SessionID
	rec := &session{CLI: "gemini", ID: a.session, Transcript: refFile + a.ref, Next: a.part + 1, Cwd: cwd(), Title: "acp"}
	if strings.HasPrefix(a.ref, "acp/") {
		rec.Transcript = a.ref
	}
	if err := a.st.put(rec); err != nil {
		fmt.Fprintf(e.p.stderr, "agentconform fake gemini: %v\n", err)
	}
}

// responseID is the id of a JSON-RPC response line, as raw JSON.
func responseID(text string) (string, bool) {
	if !strings.Contains(text, `"result"`) && !strings.Contains(text, `"error"`) {
		return "", false
	}
	m, err := acp.Decode([]byte(text))
	if err != nil || m.Kind != acp.Response {
		return "", false
	}
	return string(m.ID), true
}

// eof implements rpcLayer: where the transcript waits for a client line
// (or in a delay) and the client closed stdin, the connection is closed
// and Gemini CLI runs its exit cleanup: the steps after the transcript's
// stdin_eof (the stderr tail, the exit) run, else it exits 0. A timed
// wait sleeps its time out.
func (a *acpState) eof(e *engine, kind waitKind) (flow, bool) {
	if kind == waitTime && (e.pc < 0 || e.pc >= len(e.steps) || e.steps[e.pc].Op != transcript.OpDelay) {
		return flowNone, false
	}
	for i := e.pc; i < len(e.steps); i++ {
		if e.steps[i].Op != transcript.OpStdinEOF {
			continue
		}
		for i++; i < len(e.steps); i++ {
			switch s := e.steps[i]; s.Op {
			case transcript.OpErr:
				io.WriteString(e.p.stderr, e.fillOut(s.Text)+"\n")
			case transcript.OpExit:
				return e.finish(s.Code), true
			case transcript.OpOut, transcript.OpIn, transcript.OpNextProcess:
				return e.finish(0), true
			}
		}
	}
	return e.finish(0), true
}

// consumed implements rpcLayer: a session/prompt taken starts the
// running prompt; a session/cancel a delay's case took leaves what
// follows to the transcript; the client's answer to the agent's request
// that a cancel crossed ends the prompt.
func (a *acpState) consumed(e *engine, st *transcript.Step, m *stdinMsg) flow {
	if m.obj == nil {
		return flowNone
	}
	if a.fixture != nil {
		a.vary(e, m)
	}
	if st.Op == transcript.OpDelay {
		if m.obj["method"] == acp.MethodSessionCancel {
			a.cancelled = false // the transcript says what follows
		}
		return flowNone
	}
	if m.obj["method"] == acp.MethodSessionPrompt {
		if id, ok := m.obj["id"]; ok {
			b, _ := json.Marshal(id)
			a.prompt, a.cancelled = string(b), false
		}
		a.prompted = true
	}
	if a.cancelAfterAnswer {
		a.cancelAfterAnswer = false
		e.pc++
		if f := a.skipToPromptEnd(e); f != flowNone {
			return f
		}
		return flowJump
	}
	return flowNone
}

// dispatch implements rpcLayer: it answers a client line the transcript
// does not expect here, as
// Gemini CLI's ACP layer (@agentclientprotocol/sdk's AgentSideConnection
// and GeminiAgent, packages/cli/src/acp of google-gemini/gemini-cli at
// v0.61.0) does: a line that is not JSON is reported on stderr and
// skipped; a line a later "in" step expects is held for it; session/load
// where the transcript expects session/new replays the process part that
// loads; session/cancel makes the running prompt end with stopReason
// cancelled; session/set_mode and session/set_model answer {}; any other
// request answers "Method not found" (-32601); other notifications and
// stray responses are logged and ignored.
func (a *acpState) dispatch(e *engine, m *stdinMsg, at *transcript.Step) flow {
	if len(bytes.TrimSpace(m.raw)) == 0 {
		return flowNone
	}
	if at == nil && e.pc >= 0 && e.pc < len(e.steps) && e.steps[e.pc].Op == transcript.OpIn {
		// Read between the steps: the step the replay stands at waits.
		at = &e.steps[e.pc]
	}
	if m.obj == nil {
		e.logStdin(m, "malformed")
		fmt.Fprintf(e.p.stderr, "Failed to parse JSON message: %s SyntaxError: Unexpected token in JSON\n", strings.TrimSpace(string(m.raw)))
		return flowNone
	}
	method, _ := m.obj["method"].(string)
	id, hasID := m.obj["id"]
	if a.laterIn(e, m) {
		e.held = append(e.held, m)
		return flowNone
	}
	switch {
	case method == acp.MethodSessionLoad && hasID:
		return a.load(e, m)
	case method == acp.MethodSessionCancel && !hasID:
		e.logStdin(m, "control")
		if a.prompt != "" {
			a.cancelled = true
			if at != nil && at.Op == transcript.OpIn && at.Match != nil && at.Match["method"] == nil && at.Match["id"] != nil {
				// The client must still answer the agent's request (with
				// the cancelled outcome); the turn ends after that.
				a.cancelAfterAnswer = true
				return flowNone
			}
			return a.skipToPromptEnd(e)
		}
		fmt.Fprintf(e.p.stderr, "Error handling notification %s { code: -32603, message: 'Internal error', data: { details: 'Not currently generating' } }\n", strings.TrimSpace(string(m.raw)))
		return flowNone
	case method != "" && hasID:
		e.logStdin(m, "control")
		idJSON, _ := json.Marshal(id)
		switch method {
		case "session/set_mode":
			switched := a.setMode(e, m)
			if f := e.write(`{"jsonrpc":"2.0","id":`+string(idJSON)+`,"result":{}}`, true, 0); f == flowEnd || !switched {
				return f
			}
			return flowJump // the replay goes on in the fixture the mode calls for
		case "session/set_model", acp.MethodAuthenticate:
			return e.write(`{"jsonrpc":"2.0","id":`+string(idJSON)+`,"result":{}}`, true, 0)
		}
		msg, _ := json.Marshal(`"Method not found": ` + method)
		data, _ := json.Marshal(map[string]string{"method": method})
		fmt.Fprintf(e.p.stderr, "Error handling request %s { code: -32601, message: %s }\n", strings.TrimSpace(string(m.raw)), msg)
		return e.write(`{"jsonrpc":"2.0","id":`+string(idJSON)+`,"error":{"code":-32601,"message":`+string(msg)+`,"data":`+string(data)+`}}`, true, 0)
	case method != "":
		e.logStdin(m, "ignored")
		fmt.Fprintf(e.p.stderr, "Error handling notification %s { code: -32601, message: '\"Method not found\": %s' }\n", strings.TrimSpace(string(m.raw)), method)
		return flowNone
	case hasID:
		e.logStdin(m, "unmatched")
		e.p.obs.log("protocol_error", "message", "a response to no request the agent has outstanding: "+clipText(string(m.raw), 200))
		idJSON, _ := json.Marshal(id)
		fmt.Fprintf(e.p.stderr, "Got response to unknown request %s\n", idJSON)
		return flowNone
	}
	e.logStdin(m, "unmatched")
	fmt.Fprintf(e.p.stderr, "Invalid message { message: %s }\n", strings.TrimSpace(string(m.raw)))
	return flowNone
}

// laterIn reports whether an "in" step of the current part after pc
// expects m (before the next process part).
func (a *acpState) laterIn(e *engine, m *stdinMsg) bool {
	for i := e.pc + 1; i < len(e.steps); i++ {
		st := &e.steps[i]
		if st.Op == transcript.OpIn && st.Match != nil && e.matches(st, m) {
			// Only requests and notifications are held: a response the
			// transcript expects later answers a request not yet made.
			_, isReq := m.obj["method"]
			return isReq
		}
	}
	return false
}

// skipToPromptEnd drops what the transcript still has for the cancelled
// prompt, up to its response, which out then writes as cancelled. Gemini
// CLI returns {stopReason: "cancelled"} as soon as the aborted stream or
// tool lets it (acpSession.ts, Session.prompt).
func (a *acpState) skipToPromptEnd(e *engine) flow {
	for i := e.pc; i < len(e.steps); i++ {
		st := &e.steps[i]
		if st.Op == transcript.OpOut {
			if id, ok := responseID(e.fillOut(st.Text)); ok && id == a.prompt {
				e.pc = i
				return flowJump
			}
		}
		if st.Op == transcript.OpNextProcess || st.Op == transcript.OpExit {
			break
		}
	}
	// The transcript never answers the prompt: answer it here.
	id := a.prompt
	a.prompt, a.cancelled = "", false
	return e.write(`{"jsonrpc":"2.0","id":`+id+`,"result":{"stopReason":"cancelled"}}`, true, 0)
}

// load handles session/load where the transcript does not expect it: it
// replays the process part of the transcript that loads the session, if
// the session exists; else it answers as Gemini CLI does for a session it
// cannot find.
func (a *acpState) load(e *engine, m *stdinMsg) flow {
	want := ""
	if params, ok := m.obj["params"].(map[string]any); ok {
		want, _ = params["sessionId"].(string)
	}
	known := want != "" && want == a.recordedSession
	if !known && want != "" {
		if ses, err := a.st.get("gemini", want); err == nil && ses != nil {
			known = true
		}
	}
	part := -1
	idx := -1
	for pi, steps := range a.parts {
		for i, st := range steps {
			if st.Op == transcript.OpIn && st.Match != nil && st.Match["method"] == acp.MethodSessionLoad {
				part, idx = pi, i
				break
			}
		}
		if part >= 0 {
			break
		}
	}
	id, _ := json.Marshal(m.obj["id"])
	if !known || part < 0 {
		e.logStdin(m, "control")
		details := a.noSession(e, want)
		b, _ := json.Marshal(details)
		fmt.Fprintf(e.p.stderr, "Error handling request %s {\n  code: -32603,\n  message: 'Internal error',\n  data: { details: %s }\n}\n", strings.TrimSpace(string(m.raw)), b)
		return e.write(`{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32603,"message":"Internal error","data":{"details":`+string(b)+`}}}`, true, 0)
	}
	e.steps, e.labels = a.parts[part], transcript.Labels(a.parts[part])
	a.part = part
	e.pc = idx
	if want != a.recordedSession && a.recordedSession != "" {
		e.rewriteFrom, e.rewriteTo = a.recordedSession, want
	}
	a.session = want
	if f := e.consume(&e.steps[idx], m); f == flowEnd {
		return f
	}
	return flowJump // the replay goes on in the loading part
}

// noSession is Gemini CLI's error for a session/load it cannot resolve
// (SessionSelector.resolveSession, SessionError in packages/core of
// google-gemini/gemini-cli at v0.61.0): none at all in the project, or
// none with that id (testdata/captures/gemini/0.61.0/acp-load-unknown.jsonl).
func (a *acpState) noSession(e *engine, want string) string {
	here := cwd()
	all, _ := a.st.list("gemini", here)
	if len(all) == 0 {
		return geminiNoSessionsFound
	}
	home := e.p.env("HOME")
	if home == "" {
		home = "/home/user"
	}
	sum := sha256.Sum256([]byte(here))
	chats := filepath.Join(home, ".gemini", "tmp", hex.EncodeToString(sum[:]), "chats")
	return fmt.Sprintf("Invalid session identifier %q.\n  Searched for sessions in %s.\n  Use --list-sessions to see available sessions, then use --resume {number}, --resume {uuid}, or --resume latest.", want, chats)
}

// geminiNoSessionsFound is SessionError.noSessionsFound's message.
const geminiNoSessionsFound = "No previous sessions found for this project."

// clipText shortens s to about n bytes, on a character boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
