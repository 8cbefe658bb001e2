package fakecli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
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
// expect is answered as Gemini CLI's ACP layer answers it (acpBuiltin).
func runGeminiACP(p *proc, st *store) int {
	ref, t, err := acpTranscriptRef(p.env)
	if err != nil {
		return p.harnessError(err)
	}
	r := &acpReplay{p: p, st: st, ref: ref, vars: transcript.Vars{}, rewrite: map[string]string{}, onSig: map[string]string{}}
	for _, part := range t.Processes() {
		r.parts = append(r.parts, p.plan.steps("gemini", part))
	}
	r.recordedSession = recordedSessionID(t, "sessionId")
	r.setPart(0)
	if p.stdin == nil {
		p.stdin = strings.NewReader("")
	}
	r.in = readLines(p.stdin, p.start)
	defer r.in.close()
	return r.run()
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

// acpReplay is one agent process replaying an ACP transcript.
type acpReplay struct {
	p   *proc
	st  *store
	ref string

	parts  [][]transcript.Step
	part   int
	steps  []transcript.Step
	labels map[string]int
	pc     int
	vars   transcript.Vars
	onSig  map[string]string

	in   *lineSource
	held []*stdinMsg

	// recordedSession is the transcript's session id; session the one
	// this process gave out (the same, unless the store already had it).
	recordedSession, session string
	rewrite                  map[string]string

	// prompt is the raw JSON id of the session/prompt being answered
	// ("" when none runs); cancelled is set once session/cancel came for
	// it, so that it ends with stopReason cancelled.
	prompt    string
	cancelled bool
	// cancelAfterAnswer is set when session/cancel came while the agent
	// waited for the client's answer to one of its requests (a permission
	// request): the prompt ends once the answer is in.
	cancelAfterAnswer bool

	anchor  time.Duration
	anchorT int64
	busy    int
	code    int
}

func (r *acpReplay) setPart(i int) {
	r.part = i
	r.steps = r.parts[i]
	r.labels = transcript.Labels(r.steps)
	r.pc = 0
}

// run replays the steps and returns the exit status.
func (r *acpReplay) run() int {
	for {
		if r.pc < 0 || r.pc >= len(r.steps) {
			return r.finish(0)
		}
		if f := r.poll(); f != flowNone {
			if f == flowEnd {
				return r.code
			}
			continue
		}
		st := &r.steps[r.pc]
		if st.T != nil {
			if at, ok := r.p.timing.at(*st.T - r.anchorT); ok {
				if d := r.anchor + at - r.p.elapsed(); d > 0 {
					if f := r.waitFor(d, nil); f == flowEnd {
						return r.code
					} else if f == flowJump {
						continue
					}
				}
			}
		}
		if r.busy++; r.busy > maxBusy {
			fmt.Fprintf(r.p.stderr, "agentconform fake gemini: the transcript loops at line %d without writing or waiting\n", st.Line)
			return r.finish(exitHarness)
		}
		var f flow
		switch st.Op {
		case transcript.OpOut:
			f = r.out(st)
		case transcript.OpErr:
			text := r.fill(st.Text)
			if !st.NoNewline {
				text += "\n"
			}
			n, _ := io.WriteString(r.p.stderr, text)
			r.p.obs.log("err", "bytes", n, "line", st.Line)
			r.pc++
		case transcript.OpIn:
			f = r.inStep(st)
		case transcript.OpDelay:
			f = r.delay(st)
		case transcript.OpStdinEOF:
			f = r.waitFor(-1, st)
		case transcript.OpLabel:
			r.pc++
		case transcript.OpGoto:
			r.pc = r.labels[st.Label]
		case transcript.OpOnSignal:
			for k, v := range st.OnSignal {
				r.onSig[k] = v
			}
			r.pc++
		case transcript.OpNextProcess:
			return r.finish(0)
		case transcript.OpExit:
			return r.finish(st.Code)
		case transcript.OpExitSignal:
			sig, ok := signalByName(st.Signal)
			if !ok {
				return r.finish(exitHarness)
			}
			r.p.dieSig = sig
			return r.finish(128 + int(sig))
		default:
			r.pc++
		}
		if f == flowEnd {
			return r.code
		}
	}
}

// fill fills templates and puts this process's session id for the
// recorded one.
func (r *acpReplay) fill(text string) string {
	if len(r.vars) > 0 {
		text = r.vars.Fill(text)
	}
	for from, to := range r.rewrite {
		text = strings.ReplaceAll(text, from, to)
	}
	return text
}

// out writes one stdout line; the response to the running prompt ends
// it (with stopReason cancelled once the client cancelled it).
func (r *acpReplay) out(st *transcript.Step) flow {
	text := r.fill(st.Text)
	r.pc++
	if r.prompt != "" {
		if id, isResponse := responseID(text); isResponse && id == r.prompt {
			if r.cancelled && !strings.Contains(text, `"stopReason":"cancelled"`) {
				text = `{"jsonrpc":"2.0","id":` + id + `,"result":{"stopReason":"cancelled"}}`
			}
			r.prompt, r.cancelled = "", false
		}
	}
	if strings.Contains(text, `"sessionId"`) && r.session == "" {
		r.noteSession(text)
	}
	return r.write(text, !st.NoNewline, st.Line)
}

// noteSession keeps the session a session/new response gives out, so
// that a later process can session/load it.
func (r *acpReplay) noteSession(text string) {
	var m struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(text), &m) != nil || m.Result.SessionID == "" {
		return
	}
	r.session = m.Result.SessionID
	rec := &session{CLI: "gemini", ID: r.session, Transcript: refFile + r.ref, Next: r.part + 1, Cwd: cwd(), Title: "acp"}
	if strings.HasPrefix(r.ref, "acp/") {
		rec.Transcript = r.ref
	}
	if err := r.st.put(rec); err != nil {
		fmt.Fprintf(r.p.stderr, "agentconform fake gemini: %v\n", err)
	}
}

func (r *acpReplay) write(text string, newline bool, stepLine int) flow {
	r.busy = 0
	n, err := r.p.out.line(text, newline)
	r.p.obs.log("out", "bytes", n, "line", stepLine)
	if err != nil || r.p.ended() {
		return r.finishFlow(0)
	}
	return flowNone
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

// poll handles, without waiting, a fault that ended the process and the
// signals that came.
func (r *acpReplay) poll() flow {
	for {
		select {
		case <-r.p.endCh:
			return r.finishFlow(r.p.endCode)
		case s := <-r.p.sigs:
			if f := r.signal(s); f != flowNone {
				return f
			}
		default:
			return flowNone
		}
	}
}

// inStep waits for the client line an "in" step expects, answering
// whatever else comes as Gemini CLI does.
func (r *acpReplay) inStep(st *transcript.Step) flow {
	for i, m := range r.held {
		if r.matches(st, m) {
			r.held = append(r.held[:i], r.held[i+1:]...)
			return r.consume(st, m)
		}
	}
	for {
		f, m := r.next(-1)
		if f != flowNone {
			return f
		}
		if m == nil {
			return r.atEOF()
		}
		if r.matches(st, m) {
			return r.consume(st, m)
		}
		if f := r.builtin(m, st); f != flowNone {
			return f
		}
	}
}

// delay sleeps for a delay step; with cases, a client line matching one
// of them ends it and jumps there.
func (r *acpReplay) delay(st *transcript.Step) flow {
	d := r.p.timing.delay(st.DelayMS)
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			r.pc++
			return flowNone
		}
		f, m := r.next(left)
		if f != flowNone {
			return f
		}
		if m == nil {
			if r.in.eof {
				return r.atEOF()
			}
			r.pc++
			return flowNone
		}
		if c, ok := matchCase(st, m, r.vars); ok {
			r.logStdin(m, st.Line)
			r.capture(st, m)
			if m.obj["method"] == acp.MethodSessionCancel {
				r.cancelled = false // the transcript says what follows
			}
			r.pc = r.labels[c.Goto]
			return flowJump
		}
		if f := r.builtin(m, st); f != flowNone {
			return f
		}
	}
}

// waitFor waits d (forever when d < 0), or, for a stdin_eof step, until
// stdin closes; client lines that come meanwhile are held for the "in"
// step that expects them or answered.
func (r *acpReplay) waitFor(d time.Duration, eofStep *transcript.Step) flow {
	var deadline time.Time
	if d >= 0 {
		deadline = time.Now().Add(d)
	}
	for {
		left := time.Duration(-1)
		if d >= 0 {
			if left = time.Until(deadline); left <= 0 {
				return flowNone
			}
		}
		f, m := r.next(left)
		if f != flowNone {
			return f
		}
		if m == nil {
			if r.in.eof && eofStep != nil {
				r.pc++
				return flowNone
			}
			if r.in.eof && d < 0 {
				return r.atEOF()
			}
			if d >= 0 && time.Until(deadline) <= 0 {
				return flowNone
			}
			if r.in.eof {
				// Sleep out the rest of a timed wait at EOF.
				if f := r.sleep(time.Until(deadline)); f != flowNone {
					return f
				}
				return flowNone
			}
			continue
		}
		if f := r.builtin(m, nil); f != flowNone {
			return f
		}
	}
}

// sleep waits d with stdin at EOF, handling signals.
func (r *acpReplay) sleep(d time.Duration) flow {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-r.p.endCh:
			return r.finishFlow(r.p.endCode)
		case s := <-r.p.sigs:
			if f := r.signal(s); f != flowNone {
				return f
			}
		case <-t.C:
			return flowNone
		}
	}
}

// next returns the next client line (nil at EOF or when d passed),
// handling signals meanwhile. Stdout is flushed first.
func (r *acpReplay) next(d time.Duration) (flow, *stdinMsg) {
	if err := r.p.out.flush(); err != nil {
		return r.finishFlow(0), nil
	}
	r.p.obs.flush()
	r.busy = 0
	var timer <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	for {
		var inCh chan inLine
		if !r.in.eof {
			inCh = r.in.ch
		} else if d < 0 {
			return flowNone, nil
		}
		select {
		case <-r.p.endCh:
			return r.finishFlow(r.p.endCode), nil
		case s := <-r.p.sigs:
			if f := r.signal(s); f != flowNone {
				return f, nil
			}
		case <-timer:
			return flowNone, nil
		case l, ok := <-inCh:
			if !ok {
				r.in.eof = true
				r.p.obs.logAt(r.in.closedAt, "stdin_closed")
				return flowNone, nil
			}
			if len(bytes.TrimSpace(l.raw)) == 0 {
				continue
			}
			return flowNone, decodeLine(l)
		}
	}
}

// atEOF ends the replay when the client closed stdin where the
// transcript waits for a line: the connection is closed, and Gemini CLI
// runs its exit cleanup; the steps after the transcript's stdin_eof (the
// stderr tail, the exit) run, else it exits 0.
func (r *acpReplay) atEOF() flow {
	for i := r.pc; i < len(r.steps); i++ {
		if r.steps[i].Op == transcript.OpStdinEOF {
			r.pc = i + 1
			for ; r.pc < len(r.steps); r.pc++ {
				switch s := r.steps[r.pc]; s.Op {
				case transcript.OpErr:
					io.WriteString(r.p.stderr, r.fill(s.Text)+"\n")
				case transcript.OpExit:
					return r.finishFlow(s.Code)
				case transcript.OpOut, transcript.OpIn, transcript.OpNextProcess:
					return r.finishFlow(0)
				}
			}
		}
	}
	return r.finishFlow(0)
}

func (r *acpReplay) matches(st *transcript.Step, m *stdinMsg) bool {
	if st.Match != nil {
		if m.obj == nil {
			return false
		}
		ok, _ := transcript.Match(st.Match, m.obj, r.vars)
		return ok
	}
	return string(m.raw) == r.vars.Fill(st.Text)
}

func (r *acpReplay) capture(st *transcript.Step, m *stdinMsg) {
	if m.obj == nil {
		return
	}
	for name, ptr := range st.Capture {
		if v, ok := transcript.Lookup(m.obj, ptr); ok {
			r.vars[name] = v
		}
	}
}

// consume takes a client line for an "in" step: captures, the running
// prompt, then the first matching case (or the next step).
func (r *acpReplay) consume(st *transcript.Step, m *stdinMsg) flow {
	r.logStdin(m, st.Line)
	if st.T != nil {
		r.anchor, r.anchorT = r.p.elapsed(), *st.T
	}
	r.capture(st, m)
	if m.obj != nil && m.obj["method"] == acp.MethodSessionPrompt {
		if id, ok := m.obj["id"]; ok {
			b, _ := json.Marshal(id)
			r.prompt, r.cancelled = string(b), false
		}
	}
	if r.cancelAfterAnswer {
		r.cancelAfterAnswer = false
		r.pc++
		return r.skipToPromptEnd()
	}
	if c, ok := matchCase(st, m, r.vars); ok {
		r.pc = r.labels[c.Goto]
		return flowJump
	}
	r.pc++
	return flowNone
}

func (r *acpReplay) logStdin(m *stdinMsg, matched any) {
	r.p.obs.logAt(m.at, "stdin", "line", string(m.raw), "matched", matched)
	r.p.obs.flush()
}

// builtin answers a client line the transcript does not expect here, as
// Gemini CLI's ACP layer (@agentclientprotocol/sdk's AgentSideConnection
// and GeminiAgent, packages/cli/src/acp of google-gemini/gemini-cli at
// v0.61.0) does: a line that is not JSON is reported on stderr and
// skipped; a line a later "in" step expects is held for it; session/load
// where the transcript expects session/new replays the process part that
// loads; session/cancel makes the running prompt end with stopReason
// cancelled; session/set_mode and session/set_model answer {}; any other
// request answers "Method not found" (-32601); other notifications and
// stray responses are logged and ignored.
func (r *acpReplay) builtin(m *stdinMsg, at *transcript.Step) flow {
	if m.obj == nil {
		r.logStdin(m, "malformed")
		fmt.Fprintf(r.p.stderr, "Failed to parse JSON message: %s SyntaxError: Unexpected token in JSON\n", strings.TrimSpace(string(m.raw)))
		return flowNone
	}
	method, _ := m.obj["method"].(string)
	id, hasID := m.obj["id"]
	if r.laterIn(m) {
		r.held = append(r.held, m)
		return flowNone
	}
	switch {
	case method == acp.MethodSessionLoad && hasID:
		return r.load(m)
	case method == acp.MethodSessionCancel && !hasID:
		r.logStdin(m, "control")
		if r.prompt != "" {
			r.cancelled = true
			if at != nil && at.Op == transcript.OpIn && at.Match != nil && at.Match["method"] == nil && at.Match["id"] != nil {
				// The client must still answer the agent's request (with
				// the cancelled outcome); the turn ends after that.
				r.cancelAfterAnswer = true
				return flowNone
			}
			return r.skipToPromptEnd()
		}
		fmt.Fprintf(r.p.stderr, "Error handling notification %s { code: -32603, message: 'Internal error', data: { details: 'Not currently generating' } }\n", strings.TrimSpace(string(m.raw)))
		return flowNone
	case method != "" && hasID:
		r.logStdin(m, "control")
		idJSON, _ := json.Marshal(id)
		switch method {
		case "session/set_mode", "session/set_model", acp.MethodAuthenticate:
			return r.write(`{"jsonrpc":"2.0","id":`+string(idJSON)+`,"result":{}}`, true, 0)
		}
		msg, _ := json.Marshal(`"Method not found": ` + method)
		data, _ := json.Marshal(map[string]string{"method": method})
		fmt.Fprintf(r.p.stderr, "Error handling request %s { code: -32601, message: %s }\n", strings.TrimSpace(string(m.raw)), msg)
		return r.write(`{"jsonrpc":"2.0","id":`+string(idJSON)+`,"error":{"code":-32601,"message":`+string(msg)+`,"data":`+string(data)+`}}`, true, 0)
	case method != "":
		r.logStdin(m, "ignored")
		fmt.Fprintf(r.p.stderr, "Error handling notification %s { code: -32601, message: '\"Method not found\": %s' }\n", strings.TrimSpace(string(m.raw)), method)
		return flowNone
	case hasID:
		r.logStdin(m, "unmatched")
		r.p.obs.log("protocol_error", "message", "a response to no request the agent has outstanding: "+clipText(string(m.raw), 200))
		idJSON, _ := json.Marshal(id)
		fmt.Fprintf(r.p.stderr, "Got response to unknown request %s\n", idJSON)
		return flowNone
	}
	r.logStdin(m, "unmatched")
	fmt.Fprintf(r.p.stderr, "Invalid message { message: %s }\n", strings.TrimSpace(string(m.raw)))
	return flowNone
}

// laterIn reports whether an "in" step of the current part after pc
// expects m (before the next process part).
func (r *acpReplay) laterIn(m *stdinMsg) bool {
	for i := r.pc + 1; i < len(r.steps); i++ {
		st := &r.steps[i]
		if st.Op == transcript.OpIn && st.Match != nil && r.matches(st, m) {
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
func (r *acpReplay) skipToPromptEnd() flow {
	for i := r.pc; i < len(r.steps); i++ {
		st := &r.steps[i]
		if st.Op == transcript.OpOut {
			if id, ok := responseID(r.fill(st.Text)); ok && id == r.prompt {
				r.pc = i
				return flowJump
			}
		}
		if st.Op == transcript.OpNextProcess || st.Op == transcript.OpExit {
			break
		}
	}
	// The transcript never answers the prompt: answer it here.
	id := r.prompt
	r.prompt, r.cancelled = "", false
	return r.write(`{"jsonrpc":"2.0","id":`+id+`,"result":{"stopReason":"cancelled"}}`, true, 0)
}

// load handles session/load where the transcript does not expect it: it
// replays the process part of the transcript that loads the session, if
// the session exists; else it answers as Gemini CLI does for a session it
// cannot find.
func (r *acpReplay) load(m *stdinMsg) flow {
	want := ""
	if params, ok := m.obj["params"].(map[string]any); ok {
		want, _ = params["sessionId"].(string)
	}
	known := want != "" && want == r.recordedSession
	if !known && want != "" {
		if ses, err := r.st.get("gemini", want); err == nil && ses != nil {
			known = true
		}
	}
	part := -1
	idx := -1
	for pi, steps := range r.parts {
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
		r.logStdin(m, "control")
		details := r.noSession(want)
		b, _ := json.Marshal(details)
		fmt.Fprintf(r.p.stderr, "Error handling request %s {\n  code: -32603,\n  message: 'Internal error',\n  data: { details: %s }\n}\n", strings.TrimSpace(string(m.raw)), b)
		return r.write(`{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32603,"message":"Internal error","data":{"details":`+string(b)+`}}}`, true, 0)
	}
	r.steps = r.parts[part]
	r.part = part
	r.labels = transcript.Labels(r.steps)
	r.pc = idx
	if want != r.recordedSession && r.recordedSession != "" {
		r.rewrite[r.recordedSession] = want
	}
	r.session = want
	if f := r.consume(&r.steps[idx], m); f == flowEnd {
		return f
	}
	return flowJump // the replay goes on in the loading part
}

// noSession is Gemini CLI's error for a session/load it cannot resolve
// (SessionSelector.resolveSession, SessionError in packages/core of
// google-gemini/gemini-cli at v0.61.0): none at all in the project, or
// none with that id (testdata/captures/gemini/0.61.0/acp-load-unknown.jsonl).
func (r *acpReplay) noSession(want string) string {
	here := cwd()
	all, _ := r.st.list("gemini", here)
	if len(all) == 0 {
		return geminiNoSessionsFound
	}
	home := r.p.env("HOME")
	if home == "" {
		home = "/home/user"
	}
	sum := sha256.Sum256([]byte(here))
	chats := filepath.Join(home, ".gemini", "tmp", hex.EncodeToString(sum[:]), "chats")
	return fmt.Sprintf("Invalid session identifier %q.\n  Searched for sessions in %s.\n  Use --list-sessions to see available sessions, then use --resume {number}, --resume {uuid}, or --resume latest.", want, chats)
}

// geminiNoSessionsFound is SessionError.noSessionsFound's message.
const geminiNoSessionsFound = "No previous sessions found for this project."

// signal applies the transcript's on_signal action, or Gemini CLI's own
// (exit 0, no response: its graceful shutdown).
func (r *acpReplay) signal(s os.Signal) flow {
	name := signalName(s)
	action := r.onSig[name]
	if action == "" {
		action = "default"
	}
	r.p.obs.log("signal", "signal", name, "action", action)
	r.p.obs.flush()
	switch {
	case action == "ignore":
		return flowNone
	case action == "die":
		sig, _ := s.(syscall.Signal)
		r.p.dieSig = sig
		return r.finishFlow(128 + int(sig))
	case strings.HasPrefix(action, "exit:"):
		var n int
		fmt.Sscanf(action, "exit:%d", &n)
		return r.finishFlow(n)
	case strings.HasPrefix(action, "goto:"):
		if i, ok := r.labels[strings.TrimPrefix(action, "goto:")]; ok {
			r.pc = i
			return flowJump
		}
		return flowNone
	}
	return r.finishFlow(0)
}

func (r *acpReplay) finishFlow(code int) flow {
	r.finish(code)
	return flowEnd
}

// finish ends the process: the unread client lines into the log.
func (r *acpReplay) finish(code int) int {
	r.p.out.flush()
	for _, m := range r.held {
		r.logStdin(m, "unread")
	}
	r.held = nil
	r.in.close()
	r.code = code
	return code
}

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
