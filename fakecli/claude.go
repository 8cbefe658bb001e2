package fakecli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf16"
	"unsafe"

	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/transcript"
)

// claudeVersion is the version the fake claims when its transcript does
// not say (docs/protocols/claude.md).
const claudeVersion = "2.1.329"

// runClaude is the claude personality.
func runClaude(p *proc) int {
	ref, err := transcriptRef("claude", p.env)
	if err != nil {
		return p.harnessError(err)
	}
	p.logStart(refName(ref))

	f, msg := parseClaudeFlags(p.args)
	if msg != "" {
		return p.flagsError(msg, 1)
	}
	if f.help {
		fmt.Fprint(p.out.w, claudeHelp)
		return 0
	}
	if f.version {
		v := claudeVersion
		if t, err := loadRef("claude", ref); err == nil && t.Header.CLIVersion != "" {
			v = t.Header.CLIVersion
		}
		p.out.line(v+" (Claude Code)", true)
		return 0
	}
	printMode := f.print || !p.stdoutTTY
	if msg := claudeCheck(&f, printMode, os.Geteuid() == 0, p.env); msg != "" {
		return p.flagsError(msg, 1)
	}
	if !printMode {
		return p.harnessError(fmt.Errorf("interactive mode is not faked: pass -p (or run with stdout not a terminal)"))
	}
	streamIn := f.inputFormat == "stream-json"

	// Sessions: --resume, --continue, --session-id, --fork-session.
	st, err := openStore(p.env)
	if err != nil {
		return p.harnessError(err)
	}
	here := cwd()
	ses, code, ok := claudeResolve(p, &f, st, ref, here)
	if !ok {
		return code
	}
	if ses != nil {
		ref = ses.Transcript
	}

	// The prompt of text input: the argument, else all of stdin.
	eng := newEngine(p, nil, nil)
	eng.defaultSignal = claudeSignal
	var prompt string
	if !streamIn {
		prompt = f.prompt
		if !f.promptGiven {
			if p.stdinTTY {
				return p.flagsError("Error: Input must be provided either through stdin or as a prompt argument when using --print", 1)
			}
			eng.in = readLines(p.stdin, p.start)
			fl, lines, _ := eng.collectStdin(-1)
			if fl == flowEnd {
				return eng.code
			}
			var b strings.Builder
			for i, m := range lines {
				eng.logStdin(m, "prompt")
				if i > 0 {
					b.WriteByte('\n')
				}
				b.Write(m.raw)
			}
			prompt = b.String()
			if strings.TrimSpace(prompt) == "" {
				return p.flagsError("Error: Input must be provided either through stdin or as a prompt argument when using --print", 1)
			}
		}
	}

	t, parts, part, recID, err := sessionTranscript("claude", ref, ses, "session_id")
	if err != nil {
		return p.harnessError(err)
	}
	sid := recID
	rng := p.rng("claude", ref, fmt.Sprint(part))
	switch {
	case ses != nil && f.forkSession:
		sid = f.sessionID
		if sid == "" {
			sid = newUUID(rng)
		}
	case ses != nil:
		sid = ses.ID
	case f.sessionID != "":
		sid = f.sessionID
	}
	if sid == "" {
		sid = newUUID(rng)
	}
	p.logSession(sid, ses != nil && !f.forkSession)
	if !f.noSessionPersistence {
		rec := &session{CLI: "claude", ID: sid, Transcript: ref, Next: part + 1, Cwd: here}
		if ses != nil && !f.forkSession {
			rec.Created = ses.Created
		}
		if err := st.put(rec); err != nil {
			return p.harnessError(err)
		}
	}

	steps := p.plan.steps("claude", parts[part])
	steps = adaptClaude(steps, streamIn, p.plan.startBanner())
	eng.steps, eng.labels = steps, transcript.Labels(steps)
	if recID != "" && sid != recID {
		eng.rewriteFrom, eng.rewriteTo = recID, sid
	}
	c := newClaudeState(p, eng, &f, sid, rng, t.Header.CLIVersion)
	eng.c = c
	if streamIn {
		eng.in = readLines(p.stdin, p.start)
	} else {
		line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
		eng.in = staticLines([]inLine{{raw: line, synthetic: true}}, 0)
	}
	switch f.outputFormat {
	case "json":
		eng.format = &claudeJSON{verbose: f.verbose}
	case "text":
		eng.format = &claudeText{}
	}
	return eng.run()
}

// adaptClaude fits a transcript to how the process was started:
//   - a transcript with no "in" step for a user message (a print-mode
//     capture) gets one before its first output (or a pause before it:
//     the CLI took the prompt, then its turn is slow to begin), and, when it ends with
//     exit, a stdin_eof before that: with stream-json input the fake then
//     waits for the first user message and ends when stdin closes, as the
//     real CLI does;
//   - a start-up banner (banner: the banner fault at its first line) stays
//     first, ahead of that "in" step;
//   - with text input (-p "prompt") nobody sends control requests, so the
//     steps that expect them and the responses to them go.
func adaptClaude(steps []transcript.Step, streamIn, banner bool) []transcript.Step {
	hasUser := false
	for i := range steps {
		if stepType(&steps[i]) == "user" {
			hasUser = true
			break
		}
	}
	out := make([]transcript.Step, 0, len(steps)+2)
	inserted := false
	// banner: the first step is a start-up banner (the banner fault),
	// written as the CLI starts, before it reads its prompt.
	for i, st := range steps {
		if !hasUser && !inserted && !(banner && i == 0) && (st.Op == transcript.OpOut || st.Op == transcript.OpErr || st.Op == transcript.OpExit || st.Op == transcript.OpDelay) {
			out = append(out, transcript.Step{Op: transcript.OpIn, Match: map[string]any{"type": "user"}})
			inserted = true
		}
		if !streamIn {
			if st.Op == transcript.OpIn && stepType(&st) == "control_request" {
				continue
			}
			if st.Op == transcript.OpOut && lineType(st.Text) == "control_response" {
				continue
			}
		}
		if !hasUser && st.Op == transcript.OpExit && i == len(steps)-1 {
			out = append(out, transcript.Step{Op: transcript.OpStdinEOF})
		}
		out = append(out, st)
	}
	return out
}

// stepType is the "type" an "in" step's match expects ("" for none).
func stepType(st *transcript.Step) string {
	if st.Op != transcript.OpIn || st.Match == nil {
		return ""
	}
	s, _ := st.Match["type"].(string)
	return s
}

// lineType is the top-level "type" of a JSON line.
func lineType(line string) string { return jsonStringField(line, "type") }

// claudeKind classifies Claude stdout lines for turn tracking.
type claudeKind int

const (
	kindOther claudeKind = iota
	kindResult
	kindAssistant
	kindUser
	kindCanUseTool
	kindControlResponse
	kindPartial // stream_event, and system/status "requesting"
	kindSessionState
	kindPermissionDenied
)

// claudeLine is what the fake needs to know about one stdout step.
type claudeLine struct {
	kind  claudeKind
	tools []string // tool_use ids (assistant) or tool_result ids (user); the denied tool (permission_denied)
	names []string // the tool_use blocks' tool names (assistant), in the order of tools
	// preEcho marks the lines the real CLI writes before its echo of the
	// turn's user message (--replay-user-messages): system/init and the
	// "requesting" status.
	preEcho bool
	// isError is a result's is_error.
	isError bool
}

func classifyClaude(text string) claudeLine {
	obj := parseString(text)
	if obj == nil {
		return claudeLine{}
	}
	var cl claudeLine
	switch obj["type"] {
	case "result":
		cl.kind = kindResult
		cl.isError = obj["is_error"] == true
	case "assistant", "user":
		cl.kind = kindAssistant
		if obj["type"] == "assistant" && len(text) >= keepMin {
			keepStreamed(text, obj) // parseStreamed would parse it again
		}
		want := "tool_use"
		if obj["type"] == "user" {
			cl.kind, want = kindUser, "tool_result"
		}
		msg, _ := obj["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			blk, _ := b.(map[string]any)
			if blk["type"] != want {
				continue
			}
			key := "id"
			if want == "tool_result" {
				key = "tool_use_id"
			}
			if id, ok := blk[key].(string); ok {
				cl.tools = append(cl.tools, id)
				if want == "tool_use" {
					name, _ := blk["name"].(string)
					cl.names = append(cl.names, name)
				}
			}
		}
	case "control_request":
		req, _ := obj["request"].(map[string]any)
		if req["subtype"] == "can_use_tool" {
			cl.kind = kindCanUseTool
		}
	case "control_response":
		cl.kind = kindControlResponse
	case "stream_event":
		cl.kind = kindPartial
	case "system":
		switch obj["subtype"] {
		case "status":
			if obj["status"] == "requesting" {
				cl.kind = kindPartial
				cl.preEcho = true
			}
		case "init":
			cl.preEcho = true
		case "session_state_changed":
			cl.kind = kindSessionState
		case "permission_denied":
			cl.kind = kindPermissionDenied
			if id, ok := obj["tool_use_id"].(string); ok {
				cl.tools = []string{id}
			}
		}
	}
	return cl
}

// claudeState is the Claude personality during replay: turns, the tools a
// turn left open, a pending permission prompt, and the built-in control
// layer.
type claudeState struct {
	p         *proc
	flags     *claudeFlags
	streamIn  bool
	sessionID string
	rng       *rand.Rand
	// deltaBuf is the last long delta's line, written and forgotten: the
	// next one is marshalled into it (spliceDelta), not into fresh memory
	// (the fake does not collect, and a 64 MiB block streams as 4,096
	// deltas: 16,000 page faults).
	deltaBuf []byte

	lines []claudeLine // per step index, for out steps
	// toolNames are the names of the tool_use blocks written so far, by id.
	toolNames map[string]string

	turnActive bool
	// deferredInterrupt is the request id of an interrupt that came after
	// a user message still waiting for its turn: the real CLI reads stdin
	// in order, so that turn starts and the interrupt ends it.
	deferredInterrupt string
	turnStart         time.Time
	openTools         []string
	results           int
	// pendingPerm is the request id of a can_use_tool the client has not
	// answered yet; skipPerm says one was withheld (no stdio prompt tool),
	// so the next "in" for its answer takes the deny branch.
	pendingPerm string
	skipPerm    bool
	permMode    string
	// pendingPermTool is the tool_use_id of the pending can_use_tool;
	// answeredTools are the tools whose permission the client decided:
	// the real CLI writes system/permission_denied only for a denial it
	// decided without asking (permission mode, rules, no prompt tool),
	// so the transcript's permission_denied lines for these are skipped.
	pendingPermTool string
	answeredTools   map[string]bool
	// perm is the pending request's tool and what the client's answer
	// changes in the lines to come (claude_permission.go).
	perm permState
	// initSeen says the running turn's system/init was written;
	// deferredInt that SIGINT came before it (claude_sigint.go).
	initSeen, deferredInt bool
	// initPayload is the recorded initialize response payload (raw, so
	// that its members keep their recorded order), reused by the control
	// layer.
	initPayload json.RawMessage

	// lastResultError is the is_error of the last result written: with
	// stream-json input, stdin EOF after a turn that ended in error (an
	// interrupt, an API error) ends the process with 1, not 0.
	lastResultError bool

	// pendingEcho is the --replay-user-messages echo of the turn's user
	// message, written before the first line of the turn that is not
	// system/init or the "requesting" status.
	pendingEcho string

	// states: CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS (or
	// CLAUDE_CODE_SDK_READS_SESSION_STATE, then hostOnly) is set, so
	// system/session_state_changed lines are written; synthStates: the
	// transcript records none, so the fake writes them itself.
	states, hostOnly, synthStates bool

	// partialSynth: --include-partial-messages was given and the
	// transcript records no partial messages, so the fake makes them from
	// each assistant line; streamMsg is the API message being streamed
	// ("" between messages) and streamIndex its next content block index.
	partialSynth bool
	streamMsg    string
	streamIndex  int
	streamTool   bool // the message has a tool_use block
	streamOut    int  // its estimated output tokens

	// version is the transcript's CLI version (result key order).
	version string
}

func newClaudeState(p *proc, e *engine, f *claudeFlags, sid string, rng *rand.Rand, version string) *claudeState {
	c := &claudeState{p: p, flags: f, streamIn: f.inputFormat == "stream-json", sessionID: sid, rng: rng,
		permMode: f.permissionMode, answeredTools: map[string]bool{}, version: version, toolNames: map[string]string{}}
	// The real CLI (2.1.329, 2.1.331) writes session state changes when
	// CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS is true, else, marked
	// "sdk_host_only": true, when CLAUDE_CODE_SDK_READS_SESSION_STATE is
	// (the TypeScript SDK sets that one when it spawns the CLI, reads the
	// lines to end a run and hands them to nobody).
	switch {
	case envTrue(p.env("CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS")):
		c.states = true
	case envTrue(p.env("CLAUDE_CODE_SDK_READS_SESSION_STATE")):
		c.states, c.hostOnly = true, true
	}
	c.lines = make([]claudeLine, len(e.steps))
	recordedPartial, recordedStates := false, false
	for i := range e.steps {
		if e.steps[i].Op != transcript.OpOut {
			continue
		}
		c.lines[i] = classifyClaude(e.steps[i].Text)
		switch c.lines[i].kind {
		case kindPartial:
			recordedPartial = true
		case kindSessionState:
			recordedStates = true
		case kindControlResponse:
			if c.initPayload == nil {
				if pl := initializePayload(e.steps[i].Text); pl != nil {
					c.initPayload = pl
				}
			}
		}
	}
	c.synthStates = c.states && !recordedStates
	c.partialSynth = f.includePartial && !recordedPartial
	return c
}

// initializePayload is the payload of a recorded initialize response
// (response.response with commands), raw; nil for other lines.
func initializePayload(line string) json.RawMessage {
	var m struct {
		Response struct {
			Response json.RawMessage `json:"response"`
		} `json:"response"`
	}
	if json.Unmarshal([]byte(line), &m) != nil || len(m.Response.Response) == 0 || m.Response.Response[0] != '{' {
		return nil
	}
	var probe struct {
		Commands json.RawMessage `json:"commands"`
	}
	if json.Unmarshal(m.Response.Response, &probe) != nil || probe.Commands == nil {
		return nil
	}
	return m.Response.Response
}

// promptStdio reports whether permission prompts go to the client.
func (c *claudeState) promptStdio() bool {
	return c.flags.permissionPromptTool == "stdio" && c.streamIn
}

// skipOut withholds a can_use_tool request when the process has no stdio
// permission prompt tool (the real CLI then denies the tool itself),
// partial messages unless they were asked for, recorded session state
// events unless CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS is set, and a
// system/permission_denied for a tool the client itself refused.
func (c *claudeState) skipOut(e *engine, i int, text string) bool {
	switch c.lines[i].kind {
	case kindCanUseTool:
		if !c.promptStdio() {
			c.skipPerm = true
			return true
		}
	case kindPartial:
		// Partial messages (and the "requesting" status that comes with
		// them) are written only with --include-partial-messages.
		return !c.flags.includePartial
	case kindSessionState:
		return !c.states
	case kindPermissionDenied:
		// A deny answered by the client over can_use_tool: the real CLI
		// goes straight to the is_error tool_result (observed on 2.1.329
		// and 2.1.331: no system/permission_denied after a client's
		// deny, one when no prompt tool was asked).
		for _, id := range c.lines[i].tools {
			if c.answeredTools[id] {
				return true
			}
		}
	}
	return false
}

// beforeOut writes what the real CLI writes before a transcript line: the
// session state before a permission request, the partial messages that
// lead up to an assistant line (when the fake makes them), and the echo
// of the turn's user message.
func (c *claudeState) beforeOut(e *engine, i int, text string) flow {
	cl := c.lines[i]
	if cl.kind == kindCanUseTool {
		if f := c.state(e, "requires_action"); f != flowNone {
			return f
		}
	}
	if c.partialSynth && cl.kind == kindAssistant {
		return c.partialBefore(e, text)
	}
	if !cl.preEcho {
		return c.flushEcho(e)
	}
	return flowNone
}

// flushEcho writes the pending --replay-user-messages echo.
func (c *claudeState) flushEcho(e *engine) flow {
	if c.pendingEcho == "" {
		return flowNone
	}
	line := c.pendingEcho
	c.pendingEcho = ""
	return c.emitLine(e, line)
}

// state writes a system/session_state_changed line when the fake makes
// them (CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS set, none recorded).
func (c *claudeState) state(e *engine, state string) flow {
	if !c.synthStates {
		return flowNone
	}
	return c.emit(e, sessionState{Type: "system", Subtype: "session_state_changed", State: state,
		SDKHostOnly: c.hostOnly, UUID: newUUID(c.rng), SessionID: c.sessionID})
}

// afterOut tracks turns, open tools and pending permission requests, and
// writes what follows a line: the end of a streamed content block (and
// message), and the idle state after a result.
func (c *claudeState) afterOut(e *engine, i int, text string) flow {
	cl := c.lines[i]
	if cl.preEcho && cl.kind != kindPartial && c.turnActive {
		if f := c.sawInit(e); f != flowNone {
			return f
		}
	}
	switch cl.kind {
	case kindAssistant:
		c.openTools = append(c.openTools, cl.tools...)
		for k, id := range cl.tools {
			c.toolNames[id] = cl.names[k]
		}
		if c.partialSynth {
			return c.partialAfter(e, i, text)
		}
	case kindUser:
		for _, id := range cl.tools {
			for j, open := range c.openTools {
				if open == id {
					c.openTools = append(c.openTools[:j], c.openTools[j+1:]...)
					break
				}
			}
		}
	case kindCanUseTool:
		c.pendingPerm = jsonStringField(text, "request_id")
		c.pendingPermTool = ""
		c.notePermRequest(text)
		if obj, _ := jsonl.Parse([]byte(text), jsonl.ParseOptions{}); obj != nil {
			req, _ := obj["request"].(map[string]any)
			c.pendingPermTool, _ = req["tool_use_id"].(string)
		}
	case kindResult:
		c.turnActive = false
		c.initSeen = false
		c.openTools = nil
		c.pendingPerm = ""
		c.results++
		c.lastResultError = cl.isError
		c.streamMsg = ""
		return c.state(e, "idle")
	}
	return flowNone
}

// beforeIn runs before an "in" step waits: a withheld permission request
// takes the deny branch; a user message that arrived with other content
// than the step expects still starts the turn.
func (c *claudeState) beforeIn(e *engine, st *transcript.Step) (flow, bool) {
	typ := stepType(st)
	if typ == "control_request" && st.Optional {
		// The client's user message came before the replay reached this
		// optional request (initialize): it skipped the request, as when
		// the message arrives during the wait. Without this, the held
		// message and the waiting step would wait for each other.
		for _, m := range e.held {
			if m.typ == "user" {
				e.pc++
				c.skipAnswers(e, st)
				return flowJump, true
			}
		}
	}
	if c.skipPerm && typ == "control_response" {
		c.skipPerm = false
		if i, ok := e.labels[noPromptToolLabel]; ok {
			// What the CLI does when it decides without asking, as
			// recorded (system/permission_denied, then the is_error
			// tool_result with its own text).
			e.pc = i
			return flowJump, true
		}
		for _, cs := range st.Cases {
			if hasDeny(cs.Match) {
				e.pc = e.labels[cs.Goto]
				return flowJump, true
			}
		}
		e.pc++
		return flowNone, true
	}
	if typ == "user" {
		for i, m := range e.held {
			if m.typ == "user" {
				e.held = append(e.held[:i], e.held[i+1:]...)
				return c.acceptUser(e, st, m), true
			}
		}
	}
	return flowNone, false
}

// acceptUser takes a user message for a user step it does not match in
// full (the real CLI takes any user message): the mismatch is logged.
func (c *claudeState) acceptUser(e *engine, st *transcript.Step, m *stdinMsg) flow {
	e.p.obs.log("protocol_error", "message", fmt.Sprintf("user message does not match the transcript's line %d (%s); taken as the turn's prompt", st.Line, e.why(st, m)))
	if f := e.consume(st, m); f == flowEnd {
		return f
	}
	return flowJump
}

// noPromptToolLabel labels the steps a transcript records for a run
// without a stdio permission prompt tool, where the CLI refuses a tool
// without asking; a transcript without it takes its deny case instead.
const noPromptToolLabel = "no-prompt-tool"

// hasDeny reports whether a case's match selects a deny answer.
func hasDeny(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if x["behavior"] == "deny" {
			return true
		}
		for _, y := range x {
			if hasDeny(y) {
				return true
			}
		}
	case []any:
		for _, y := range x {
			if hasDeny(y) {
				return true
			}
		}
	}
	return false
}

// consumed is called when an "in" step took a line.
func (c *claudeState) consumed(e *engine, st *transcript.Step, m *stdinMsg) flow {
	switch stepType(st) {
	case "user":
		c.turnActive = true
		c.initSeen = false
		c.turnStart = time.Now()
		c.openTools = nil
		c.streamMsg = ""
		if f := c.state(e, "running"); f != flowNone {
			return f
		}
		if c.flags.replayUser && !m.synthetic {
			next := e.pc + 1
			if next >= len(e.steps) || !strings.Contains(e.steps[next].Text, `"isReplay":true`) {
				c.pendingEcho = c.replayEcho(m)
			}
		}
		if id := c.deferredInterrupt; id != "" {
			c.deferredInterrupt = ""
			e.pc++ // into the turn, which the interrupt ends
			return c.interrupt(e, id, false)
		}
	case "control_response":
		if resp, ok := m.obj["response"].(map[string]any); ok && c.pendingPerm != "" && resp["request_id"] == c.pendingPerm {
			id := c.pendingPerm
			c.pendingPerm = ""
			if c.pendingPermTool != "" {
				c.answeredTools[c.pendingPermTool] = true
			}
			if f := c.state(e, "running"); f != flowNone {
				return f
			}
			if st.Op == transcript.OpIn {
				// The answer decides the path (flowJump), not the
				// step's cases.
				return c.answerPermission(e, st, id, resp)
			}
		}
	}
	return flowNone
}

// replayEcho is the real CLI's echo of a user message under
// --replay-user-messages (observed on 2.1.329 and 2.1.331): the client's
// message as sent, with the client's own uuid when it gave one (a fresh
// one otherwise), and isReplay true, in this key order.
func (c *claudeState) replayEcho(m *stdinMsg) string {
	msg := rawMember(m.raw, "message")
	if msg == nil {
		msg = json.RawMessage("null")
	}
	id, _ := m.obj["uuid"].(string)
	if id == "" {
		id = newUUID(c.rng)
	}
	var parent *string
	if s, ok := m.obj["parent_tool_use_id"].(string); ok {
		parent = &s
	}
	b, err := marshalJSON(replayMessage{Type: "user", Message: msg, SessionID: c.sessionID, ParentToolUseID: parent,
		UUID: id, Timestamp: timestamp(), IsReplay: true})
	if err != nil {
		return ""
	}
	return string(b)
}

// inEOF: stdin closed where the transcript waits for a line. Waiting for
// a user message (or a request the client never sent), the real CLI ends
// with 0, or 1 when the last turn ended in error (exitCode); waiting for
// a permission answer, the fake ends with 1.
func (c *claudeState) inEOF(e *engine, st *transcript.Step) flow {
	switch stepType(st) {
	case "user", "control_request", "":
		return e.finish(c.exitCode(0, true))
	}
	e.p.obs.log("protocol_error", "message", fmt.Sprintf("stdin closed while the transcript's line %d waits for %s", st.Line, brief(st.Match)))
	return e.finish(1)
}

// exitCode is the status of an exit the transcript scripts with code;
// atEOF says the process ends because stdin closed. With stream-json
// input, the real CLI then exits 1 when the last turn's result was an
// error (observed on 2.1.329 and 2.1.331: an interrupted turn, an API
// error; a later successful turn makes it 0 again), where a transcript
// recorded without that turn says 0. An exit for another reason (SIGINT,
// which exits 0) keeps its code.
func (c *claudeState) exitCode(code int, atEOF bool) int {
	if code == 0 && atEOF && c.streamIn && c.lastResultError {
		return 1
	}
	return code
}

// dispatch is the control layer: it answers a stdin line that no "in"
// step took (st is the step waiting, or nil).
func (c *claudeState) dispatch(e *engine, m *stdinMsg, st *transcript.Step) flow {
	if len(bytes.TrimSpace(m.raw)) == 0 {
		return flowNone
	}
	if !m.valid {
		e.logStdin(m, "malformed")
		e.p.obs.log("protocol_error", "message", "malformed JSON on stdin")
		fmt.Fprintf(e.p.stderr, "Error parsing streaming input line (type=unknown, %d chars): SyntaxError\n", len(utf16.Encode([]rune(string(m.raw)))))
		return e.finish(1)
	}
	if m.obj == nil || m.typ == "" {
		e.logStdin(m, "ignored")
		return flowNone
	}
	if st == nil {
		if nx := e.nextIn(); nx != nil && e.matches(nx, m) {
			e.held = append(e.held, m)
			return flowNone
		}
	}
	switch m.typ {
	case "user":
		if st != nil {
			switch stepType(st) {
			case "user":
				return c.acceptUser(e, st, m)
			case "control_request":
				// The client skipped a request the transcript recorded
				// (initialize is optional): skip it and its answers.
				e.held = append(e.held, m)
				e.pc++
				c.skipAnswers(e, st)
				return flowJump
			}
		}
		e.held = append(e.held, m)
		return flowNone
	case "control_request":
		return c.control(e, m)
	case "control_response":
		e.protocolError(m, "control_response for no pending request")
		return flowNone
	}
	if st == nil && e.expectsLater(m) {
		// Read ahead of the step that takes it (a client that wrote it
		// with its prompt, taken while the fake polled): held, not lost.
		e.held = append(e.held, m)
		return flowNone
	}
	e.logStdin(m, "ignored")
	return flowNone
}

// skipAnswers passes over the control_response lines that answer a
// client request the transcript expected at st but that never came (the
// program counter is just past st), so that no answer with an unfilled
// request id is written.
func (c *claudeState) skipAnswers(e *engine, st *transcript.Step) {
	if stepType(st) != "control_request" {
		return
	}
	for e.pc < len(e.steps) && e.steps[e.pc].Op == transcript.OpOut && c.lines[e.pc].kind == kindControlResponse {
		e.pc++
	}
}

// knownClientRequests are the control request subtypes the real CLI
// accepts from a client (docs/protocols/claude.md#stdin); those the fake has no
// payload for get an empty success.
var knownClientRequests = map[string]bool{
	"initialize": true, "interrupt": true, "set_permission_mode": true, "set_model": true,
	"set_max_thinking_tokens": true, "mcp_status": true, "get_context_usage": true, "rewind_files": true,
	"mcp_set_servers": true, "mcp_reconnect": true, "mcp_toggle": true, "stop_task": true, "cancel_async_message": true,
	"rename_session": true, "set_color": true, "get_session_cost": true, "list_models": true, "get_usage": true,
	"get_binary_version": true, "mcp_call": true, "file_suggestions": true, "read_file": true, "seed_read_state": true,
	"register_repo_root": true, "reload_plugins": true, "reload_skills": true, "reload_output_styles": true,
	"set_has_subscribers": true, "background_tasks": true, "get_task_output": true, "apply_flag_settings": true,
	"get_settings": true, "get_hooks_listing": true, "update_settings": true, "list_permission_rules": true,
	"mcp_read_resource": true,
}

// control answers a client control_request.
func (c *claudeState) control(e *engine, m *stdinMsg) flow {
	id, _ := m.obj["request_id"].(string)
	req, _ := m.obj["request"].(map[string]any)
	sub, _ := req["subtype"].(string)
	if m.obj["request"] == nil {
		// The real CLI ends on it (captured: 2.1.331/control-request-no-body).
		e.protocolError(m, "control_request without request")
		fmt.Fprintln(e.p.stderr, missingRequest)
		return e.finish(1)
	}
	if id == "" || req == nil {
		e.protocolError(m, "control_request without request_id or request")
		return flowNone
	}
	e.logStdin(m, "control")
	switch sub {
	case "initialize":
		payload := c.initPayload
		if payload == nil {
			b, err := marshalJSON(defaultInitialize{Commands: []any{}, Agents: []any{}, OutputStyle: "default",
				AvailableOutputStyles: []string{"default"},
				Models:                []any{modelEntry{Value: "default", DisplayName: "Default (recommended)", Description: "Use the default model"}},
				Account:               map[string]any{}})
			if err != nil {
				return flowNone
			}
			payload = b
		}
		// The recorded payload with this process's pid, its members in
		// the recorded order (the real CLI's: commands, agents, ...,
		// account, pid, ...).
		s, ok := editObject(string(payload), []field{{key: "pid", val: os.Getpid()}})
		if !ok {
			return flowNone
		}
		return c.success(e, id, json.RawMessage(s))
	case "interrupt":
		if c.turnActive {
			return c.interrupt(e, id, false)
		}
		for _, h := range e.held {
			if h.typ == "user" {
				c.deferredInterrupt = id
				return flowNone
			}
		}
		return c.success(e, id, map[string]any{"still_queued": []any{}})
	case "set_permission_mode":
		mode, _ := req["mode"].(string)
		if !slices.Contains(permissionModes, mode) {
			return c.emit(e, controlResponse{Type: "control_response", Response: controlBody{Subtype: "error", RequestID: id,
				Error: "Cannot set permission mode: must be one of " + strings.Join(permissionModes, ", "), ErrorCode: "invalid_mode"}})
		}
		c.permMode = mode
		if f := c.success(e, id, map[string]any{"mode": mode}); f != flowNone {
			return f
		}
		return c.emit(e, systemStatus{Type: "system", Subtype: "status", Status: nil, PermissionMode: mode, UUID: newUUID(c.rng), SessionID: c.sessionID})
	case "set_model":
		return c.success(e, id, map[string]any{"model": req["model"]})
	}
	if knownClientRequests[sub] {
		return c.success(e, id, map[string]any{})
	}
	return c.emit(e, controlResponse{Type: "control_response", Response: controlBody{Subtype: "error", RequestID: id,
		Error: "Unsupported control request subtype: " + sub, ErrorCode: "unsupported_request"}})
}

// controlResponse and friends are the shapes of synthesized events, with
// the members in the order the real CLI writes them.
type controlResponse struct {
	Type     string      `json:"type"`
	Response controlBody `json:"response"`
}

type controlBody struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     string          `json:"error,omitempty"`
	ErrorCode string          `json:"error_code,omitempty"`
}

type systemStatus struct {
	Type           string  `json:"type"`
	Subtype        string  `json:"subtype"`
	Status         *string `json:"status"`
	PermissionMode string  `json:"permissionMode,omitempty"`
	UUID           string  `json:"uuid"`
	SessionID      string  `json:"session_id"`
}

// defaultInitialize is the initialize payload when the transcript
// recorded none, in the real CLI's key order.
type defaultInitialize struct {
	Commands              []any          `json:"commands"`
	Agents                []any          `json:"agents"`
	OutputStyle           string         `json:"output_style"`
	AvailableOutputStyles []string       `json:"available_output_styles"`
	Models                []any          `json:"models"`
	Account               map[string]any `json:"account"`
}

// modelEntry is one initialize models entry (value, displayName and
// description come in this order in a real 2.1.331 answer).
type modelEntry struct {
	Value       string `json:"value"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

type sessionState struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	State       string `json:"state"`
	SDKHostOnly bool   `json:"sdk_host_only,omitempty"`
	UUID        string `json:"uuid"`
	SessionID   string `json:"session_id"`
}

type replayMessage struct {
	Type            string          `json:"type"`
	Message         json.RawMessage `json:"message"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	UUID            string          `json:"uuid"`
	Timestamp       string          `json:"timestamp"`
	IsReplay        bool            `json:"isReplay"`
}

type cancelRequest struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
}

type userMessage struct {
	Type            string   `json:"type"`
	Message         userBody `json:"message"`
	ParentToolUseID *string  `json:"parent_tool_use_id"`
	SessionID       string   `json:"session_id"`
	UUID            string   `json:"uuid"`
	Timestamp       string   `json:"timestamp"`
	ToolUseResult   any      `json:"tool_use_result,omitempty"`
	ToolResultMeta  any      `json:"tool_result_meta,omitempty"`
}

type userBody struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

// rejectedResultBlock is the tool_result of a tool stopped by an
// interrupt, in the real CLI's key order for an is_error tool_result
// (observed on 2.1.329 and 2.1.331: type first, tool_use_id last, unlike
// a successful tool's).
type rejectedResultBlock struct {
	Type      string `json:"type"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error"`
	ToolUseID string `json:"tool_use_id"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (c *claudeState) success(e *engine, id string, payload any) flow {
	raw, err := marshalJSON(payload)
	if err != nil {
		raw = []byte("{}")
	}
	return c.emit(e, controlResponse{Type: "control_response", Response: controlBody{Subtype: "success", RequestID: id, Response: raw}})
}

// emit writes a synthesized event.
func (c *claudeState) emit(e *engine, v any) flow {
	b, err := marshalJSON(v)
	if err != nil {
		return flowNone
	}
	return c.emitLine(e, unsafe.String(unsafe.SliceData(b), len(b))) // b is this call's own: not copied again
}

// emitLine writes a synthesized line, through the output format if any.
func (c *claudeState) emitLine(e *engine, s string) flow {
	if e.format != nil && !e.format.passes() {
		e.format.line(e, s)
		return flowNone
	}
	return e.write(s, true, 0)
}

func timestamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// The messages of an interrupted turn, as the real CLI writes them (the
// captures in testdata/captures/claude/2.1.329 and 2.1.331: interrupt,
// interrupt-sigint, interrupt-stream-sigint, interrupt-sigterm).
const (
	interruptedForTool = "[Request interrupted by user for tool use]"
	interrupted        = "[Request interrupted by user]"
	rejectedToolUse    = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."
	// stoppedWhileRunning follows rejectedToolUse in the tool_result of a
	// tool stopped by a control_request interrupt (2.1.329 and later; not
	// after SIGINT, whose tool_result has rejectedToolUse alone).
	stoppedWhileRunning = " Correction to the text above: this call was stopped while running, not refused before it ran. It may have run in part or in full, and its changes may have been written. No permission prompt was involved. Work it started elsewhere (a remote command, a background process) may still be running, so check before starting the same work again. The instruction to stop and wait still stands."
	// killedBash is the tool_result of a Bash command killed when the CLI
	// gets SIGTERM (its tool_use_result is "Error: " and this).
	killedBash = "Exit code 137"
)

// toolResultMeta is a tool_result line's tool_result_meta entry.
type toolResultMeta struct {
	ID                 string          `json:"id"`
	NonExecutionKind   string          `json:"non_execution_kind,omitempty"`
	PermissionDecision json.RawMessage `json:"permission_decision,omitempty"`
}

// interrupt ends the running turn as the real CLI does on an interrupt
// request (reqID, answered with the receipt) or SIGINT (bySignal):
// withdraw a pending permission request, answer the interrupt, fail every
// open tool, say the turn was interrupted, write the error result, and
// skip the rest of the turn. With text input, or on a signal, the process
// then exits 0; with stream-json input it waits for the next user message.
func (c *claudeState) interrupt(e *engine, reqID string, bySignal bool) flow {
	return c.abortTurn(e, reqID, !bySignal, bySignal || !c.streamIn)
}

// abortTurn is interrupt's work: stopped says a running tool was stopped
// by a control request (its tool_result then says so, from 2.1.329 on),
// exit that the process ends after the turn's result (with 0). A deny
// answer with interrupt true aborts the turn the same way, with neither.
func (c *claudeState) abortTurn(e *engine, reqID string, stopped, exit bool) flow {
	emit := func(v any) bool { return c.emit(e, v) != flowNone }
	if f := c.flushEcho(e); f != flowNone {
		return f
	}
	c.streamMsg = ""
	if c.pendingPerm != "" {
		if emit(cancelRequest{Type: "control_cancel_request", RequestID: c.pendingPerm}) {
			return flowEnd
		}
		c.pendingPerm = ""
	}
	c.skipPerm = false
	if reqID != "" {
		if f := c.success(e, reqID, map[string]any{"still_queued": []any{}}); f != flowNone {
			return f
		}
	}
	resultAt, after := c.skipTurn(e)
	modern := !versionBefore(c.version, "2.1.329")
	for _, id := range c.openTools {
		text := rejectedToolUse
		var meta any
		if modern {
			if stopped {
				text += stoppedWhileRunning
			}
			meta = []toolResultMeta{{ID: id, NonExecutionKind: "user-rejected"}}
		}
		if emit(userMessage{Type: "user", Message: userBody{Role: "user", Content: []any{
			rejectedResultBlock{Type: "tool_result", Content: text, IsError: true, ToolUseID: id}}},
			SessionID: c.sessionID, UUID: newUUID(c.rng), Timestamp: timestamp(), ToolUseResult: "User rejected tool use", ToolResultMeta: meta}) {
			return flowEnd
		}
	}
	text, reason := interrupted, "aborted_streaming"
	if len(c.openTools) > 0 {
		text, reason = interruptedForTool, "aborted_tools"
	}
	if emit(userMessage{Type: "user", Message: userBody{Role: "user", Content: []any{textBlock{Type: "text", Text: text}}},
		SessionID: c.sessionID, UUID: newUUID(c.rng), Timestamp: timestamp()}) {
		return flowEnd
	}
	if f := c.emitLine(e, c.errorResult(e, resultAt, reason)); f != flowNone {
		return f
	}
	c.turnActive = false
	c.initSeen, c.deferredInt = false, false
	c.openTools = nil
	c.results++
	c.lastResultError = true
	if f := c.state(e, "idle"); f != flowNone {
		return f
	}
	e.pc = after
	if exit {
		return e.finish(0)
	}
	return flowJump
}

// skipTurn finds, without writing anything, the step that writes the
// running turn's result (following gotos, taking no case) and the step
// after it; on_signal steps on the way take effect, as if the turn had
// run. resultAt is -1 when the turn has no result before the next user
// message or the end.
func (c *claudeState) skipTurn(e *engine) (resultAt, after int) {
	i := e.pc
	for n := 0; i >= 0 && i < len(e.steps) && n <= 2*len(e.steps); n++ {
		st := &e.steps[i]
		switch st.Op {
		case transcript.OpOut:
			if c.lines[i].kind == kindResult {
				return i, i + 1
			}
		case transcript.OpOnSignal:
			for k, v := range st.OnSignal {
				e.onSig[k] = v
			}
		case transcript.OpGoto:
			i = e.labels[st.Label]
			continue
		case transcript.OpIn:
			if stepType(st) == "user" {
				return -1, i
			}
		case transcript.OpExit, transcript.OpExitSignal, transcript.OpNextProcess, transcript.OpStdinEOF:
			return -1, i
		}
		i++
	}
	return -1, len(e.steps)
}

// errorResult is the interrupted turn's result: the transcript's result
// for the turn made an error (so it keeps the recorded shape, key order
// and version's fields), or one built from scratch.
//
// The real CLI's result key order changed between the 2.1.197 captures
// (type and subtype first, errors last) and 2.1.329 (observed on 2.1.329
// and 2.1.331: duration_api_ms first, then ..., is_error, num_turns,
// subtype, errors, type, duration_ms, uuid, ...); an error result has no
// result, api_error_status or time-to-first-token members. The recorded
// line tells which order to keep.
func (c *claudeState) errorResult(e *engine, resultAt int, reason string) string {
	var stop any
	diag := "[ede_diagnostic] result_type=assistant last_content_type=text stop_reason=null"
	if reason == "aborted_tools" {
		stop = "tool_use"
		diag = "[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"
	}
	set := []field{
		{key: "subtype", val: "error_during_execution"},
		{key: "is_error", val: true},
		{key: "duration_ms", val: time.Since(c.turnStart).Milliseconds()},
		{key: "stop_reason", val: stop},
		{key: "session_id", val: c.sessionID},
		{key: "terminal_reason", val: reason},
		{key: "errors", val: []string{diag}},
		{key: "uuid", val: newUUID(c.rng)},
	}
	if resultAt >= 0 {
		tmpl := e.steps[resultAt].Text
		if len(e.vars) > 0 {
			tmpl = e.vars.Fill(tmpl)
		}
		if !strings.HasPrefix(tmpl, `{"type":`) {
			// The 2.1.329 order: errors right after subtype.
			set[6].after = "subtype"
			if s, ok := editObject(tmpl, set, "result", "structured_output", "api_error_status", "api_error_type",
				"ttft_ms", "ttft_stream_ms", "time_to_request_ms", "first_content_frame_ms"); ok {
				return s
			}
		} else if s, ok := editObject(tmpl, set, "result", "structured_output"); ok {
			return s
		}
	}
	base := fmt.Sprintf(`{"duration_api_ms":0,"stop_reason":null,"session_id":"","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"modelUsage":{},"permission_denials":[],"terminal_reason":"","is_error":true,"num_turns":1,"subtype":"error_during_execution","errors":[],"type":"result","duration_ms":0,"uuid":"","queued_turn_count":0,"result_index":%d}`, c.results)
	if versionBefore(c.version, "2.1.329") {
		base = `{"type":"result","subtype":"error_during_execution","duration_ms":0,"duration_api_ms":0,"is_error":true,"num_turns":1,"stop_reason":null,"session_id":"","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"modelUsage":{},"permission_denials":[],"uuid":"","errors":[]}`
	}
	s, _ := editObject(base, set)
	return s
}

// versionBefore reports whether the dotted version v is older than w ("" is
// not).
func versionBefore(v, w string) bool {
	if v == "" {
		return false
	}
	a, b := strings.Split(v, "."), strings.Split(w, ".")
	for i := 0; i < len(a) && i < len(b); i++ {
		x, errx := strconv.Atoi(a[i])
		y, erry := strconv.Atoi(b[i])
		if errx != nil || erry != nil {
			return a[i] < b[i]
		}
		if x != y {
			return x < y
		}
	}
	return len(a) < len(b)
}

// claudeSignal is Claude's own answer to a signal: SIGINT interrupts a
// running turn and exits 0 (0 while idle too, and with stream-json input
// without waiting for stdin to close); SIGTERM kills a running Bash
// command, whose tool_result "Exit code 137" is written, and ends the
// stream with no result, exit 143; SIGHUP exits 129 (the captures
// interrupt-sigint, interrupt-stream-sigint, interrupt-sigterm and
// interrupt-stream-sigterm of 2.1.329 and 2.1.331).
func claudeSignal(e *engine, sig syscall.Signal) flow {
	switch sig {
	case syscall.SIGINT:
		if e.c != nil && e.c.deferSIGINT(e) {
			return flowNone
		}
		if e.c != nil && e.c.turnActive {
			return e.c.interrupt(e, "", true)
		}
		return e.finish(0)
	case syscall.SIGTERM:
		if e.c != nil && e.c.turnActive {
			if f := e.c.killTools(e); f != flowNone {
				return f
			}
		}
		return e.finish(143)
	}
	return e.finish(128 + int(sig))
}

// killTools writes what the real CLI writes for its running Bash commands
// when SIGTERM kills them: per command, an is_error tool_result "Exit code
// 137" (tool_use_result "Error: Exit code 137"), with the tool_result_meta
// the transcript records for that call's own result, if any (2.1.329 and
// later; the permission decision that let it run).
func (c *claudeState) killTools(e *engine) flow {
	if f := c.flushEcho(e); f != flowNone {
		return f
	}
	for _, id := range c.openTools {
		if c.toolNames[id] != "Bash" {
			continue
		}
		var meta any
		if !versionBefore(c.version, "2.1.329") {
			if m := c.recordedMeta(e, id); m != nil {
				meta = m
			}
		}
		if f := c.emit(e, userMessage{Type: "user", Message: userBody{Role: "user", Content: []any{
			rejectedResultBlock{Type: "tool_result", Content: killedBash, IsError: true, ToolUseID: id}}},
			SessionID: c.sessionID, UUID: newUUID(c.rng), Timestamp: timestamp(), ToolUseResult: "Error: " + killedBash, ToolResultMeta: meta}); f != flowNone {
			return f
		}
	}
	return flowNone
}

// recordedMeta is the tool_result_meta of the transcript's own tool_result
// line for the tool id (raw), or nil.
func (c *claudeState) recordedMeta(e *engine, id string) json.RawMessage {
	for i := range e.steps {
		if e.steps[i].Op != transcript.OpOut || c.lines[i].kind != kindUser || !slices.Contains(c.lines[i].tools, id) {
			continue
		}
		if m := rawMember([]byte(e.steps[i].Text), "tool_result_meta"); len(m) > 0 && m[0] == '[' {
			return m
		}
	}
	return nil
}

// brief renders a value for a message.
func brief(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// claudeText renders --output-format text: each turn's result text.
type claudeText struct{}

func (claudeText) passes() bool { return false }

func (claudeText) line(e *engine, text string) {
	if lineType(text) != "result" {
		return
	}
	if r := jsonStringField(text, "result"); r != "" {
		e.write(r, true, 0)
	}
}

func (claudeText) end(*engine, int) {}

// claudeJSON renders --output-format json: the result object, or with
// --verbose an array of every message.
type claudeJSON struct {
	verbose bool
	lines   []string
	last    string
}

func (j *claudeJSON) passes() bool { return false }

func (j *claudeJSON) line(e *engine, text string) {
	if j.verbose {
		j.lines = append(j.lines, text)
	}
	if lineType(text) == "result" {
		j.last = text
	}
}

func (j *claudeJSON) end(e *engine, code int) {
	switch {
	case j.verbose && len(j.lines) > 0:
		e.write("["+strings.Join(j.lines, ",")+"]", true, 0)
	case !j.verbose && j.last != "":
		e.write(j.last, true, 0)
	}
}
