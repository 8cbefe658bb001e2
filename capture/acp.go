package capture

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/capture/mock"
	"github.com/agentconform/agentconform/recorder"
	"github.com/agentconform/agentconform/redact"
	"github.com/agentconform/agentconform/transcript"
)

// acpSession is what the capture driver does as the client of the Agent
// Client Protocol (an editor) with one agent process: Gemini CLI started
// with --acp speaks JSON-RPC 2.0 on its stdio, one JSON object per line
// (docs/protocols/acp.md#framing).
type acpSession struct {
	// load resumes the session the previous process reported with
	// session/load instead of starting one with session/new.
	load bool
	// loadID, when set, is the session id session/load asks for instead
	// (one that does not exist).
	loadID string
	// prompts are the session/prompt requests, each sent once the
	// previous one has its response.
	prompts []string
	// permission answers session/request_permission: "allow" picks the
	// allow_once option, anything else the reject_once one.
	permission string
	// cancel sends session/cancel InterruptDelay after the first prompt's
	// first tool call started.
	cancel bool
	// fs declares the client's file system capability and answers the
	// agent's fs/read_text_file and fs/write_text_file requests from the
	// project directory, as an editor does.
	fs bool
	// mode, when set, is the session/set_mode the client sends once the
	// session is open, before its first prompt (an editor's mode picker:
	// "yolo", "autoEdit", "default").
	mode string
}

// ACPFlag is the flag that starts Gemini CLI 0.61.0 in ACP mode (its
// deprecated alias is --experimental-acp).
const ACPFlag = "--acp"

// acpProtocolVersion is the protocol version the driver asks for: ACP's
// only major version.
const acpProtocolVersion = 1

func geminiACP(s acpSession, extra ...string) proc {
	return proc{args: append([]string{ACPFlag}, extra...), stdin: stdinRPC, acp: &s}
}

// acpScenarios are the scenarios of Gemini CLI's ACP mode: the compliance
// five, permissions, a cancel during a tool, more than one turn, a session
// loaded in a new process, API errors, and text in many scripts.
func acpScenarios() []Scenario {
	gem := func(build func() *plan) func(string) *plan {
		return func(cli string) *plan {
			if cli != "gemini" {
				return nil
			}
			return build()
		}
	}
	return []Scenario{
		{Name: "acp-plain-text", Summary: "ACP: a text answer, no tools", plan: gem(func() *plan {
			return &plan{
				description: "ACP (gemini --acp): initialize, session/new, one session/prompt answered with text streamed in two chunks.",
				script:      mock.Script{Turns: []mock.Turn{mock.Text("Hello! ", "How can I help you today?")}},
				procs:       []proc{geminiACP(acpSession{prompts: []string{promptHello}})},
			}
		})},
		{Name: "acp-single-tool", Summary: "ACP: one read-only tool call (no permission asked), then the answer", plan: gem(func() *plan {
			return &plan{
				description: "ACP: read_file of notes.txt (a read-only tool: no permission asked), its tool_call and tool_call_update, then a text answer.",
				files:       map[string]string{"notes.txt": "remember the milk\n"},
				script: mock.Script{Turns: []mock.Turn{
					{Calls: []mock.Call{{Tool: mock.ReadFile, Path: "notes.txt"}}},
					mock.Text("The note says: ", "remember the milk."),
				}},
				procs: []proc{geminiACP(acpSession{prompts: []string{"What does notes.txt say?"}})},
			}
		})},
		{Name: "acp-multi-tool", Summary: "ACP (--yolo): parallel tool calls, then more calls, then the answer", plan: gem(func() *plan {
			p := multiToolPlan("gemini")
			p.description = "ACP with --yolo: text and two parallel calls (read_file, run_shell_command), then write_file, then replace, then a text answer."
			p.procs = []proc{geminiACP(acpSession{prompts: []string{"Inspect notes.txt, list files, create out.txt and then edit it."}}, "--yolo")}
			return p
		})},
		{Name: "acp-tool-error", Summary: "ACP: a tool that fails, then the answer", plan: gem(func() *plan {
			return &plan{
				description: "ACP: read_file of a missing file (the tool_call_update fails), then a text answer.",
				script: mock.Script{Turns: []mock.Turn{
					{Calls: []mock.Call{{Tool: mock.ReadFile, Path: "notes/missing.md"}}},
					mock.Text("The file does not exist."),
				}},
				procs: []proc{geminiACP(acpSession{prompts: []string{"Show me the contents of the missing file."}})},
			}
		})},
		{Name: "acp-permission-allow", Summary: "ACP: session/request_permission answered allow_once", plan: gem(func() *plan {
			return acpPermissionPlan("allow")
		})},
		{Name: "acp-permission-deny", Summary: "ACP: session/request_permission answered reject_once", plan: gem(func() *plan {
			return acpPermissionPlan("deny")
		})},
		{Name: "acp-cancel", Summary: "ACP: session/cancel during a running tool, then a second prompt", plan: gem(func() *plan {
			return &plan{
				description: "ACP with --yolo: a 6 s shell command cancelled with session/cancel one second in (the prompt answers stopReason cancelled), then a second session/prompt answered with text.",
				script: mock.Script{Turns: []mock.Turn{
					{Text: []string{"Running the tests."}, Calls: []mock.Call{shell("sleep 6")}},
					mock.Text("The tests passed."),
					mock.Text("Hello again."),
				}},
				procs: []proc{geminiACP(acpSession{prompts: []string{"Run the end-to-end tests.", promptHello}, cancel: true}, "--yolo")},
			}
		})},
		{Name: "acp-multi-turn", Summary: "ACP: two session/prompt turns in one session", plan: gem(func() *plan {
			return &plan{
				description: "ACP with --yolo: two session/prompt requests in one session, the first with a shell command, each answered with text.",
				script: mock.Script{Turns: []mock.Turn{
					{Calls: []mock.Call{shell("echo first-turn")}},
					mock.Text("The first turn printed ", "first-turn."),
					mock.Text("The second turn's ", "answer."),
				}},
				procs: []proc{geminiACP(acpSession{prompts: []string{"Run `echo first-turn`.", "And now a second answer, please."}}, "--yolo")},
			}
		})},
		{Name: "acp-load", Summary: "ACP: a session, then session/load of it in a new process and another prompt", plan: gem(func() *plan {
			return &plan{
				description: "ACP with --yolo: a session with a shell command, then a second agent process that loads it with session/load (its history replayed as session/update notifications) and answers another prompt.",
				script: mock.Script{Turns: []mock.Turn{
					{Calls: []mock.Call{shell("echo first-turn")}},
					mock.Text("The first turn printed ", "first-turn."),
					mock.Text("We ran `echo first-turn` ", "before."),
				}},
				procs: []proc{
					geminiACP(acpSession{prompts: []string{"Run `echo first-turn`."}}, "--yolo"),
					geminiACP(acpSession{load: true, prompts: []string{"What did we run before?"}}, "--yolo"),
				},
			}
		})},
		{Name: "acp-load-unknown", Summary: "ACP: session/load of a session that does not exist", plan: gem(func() *plan {
			return &plan{
				description: "ACP: session/load of a session id no session has: the JSON-RPC error the agent answers.",
				script:      mock.Script{Turns: []mock.Turn{mock.Text("Hello!")}},
				procs:       []proc{geminiACP(acpSession{load: true, loadID: "0f5e4d3c-2b1a-4f9e-8d7c-6b5a4f3e2d1c", prompts: []string{promptHello}})},
			}
		})},
		{Name: "acp-fs", Summary: "ACP: a client with the fs capability: the agent reads and writes files through the editor", plan: gem(func() *plan {
			return &plan{
				description: "ACP with a client that declares fs.readTextFile and fs.writeTextFile: read_file of notes.txt, then write_file of a new out.txt, which the agent first reads through fs/read_text_file; the client answers Resource not found (-32002), as the ACP libraries say it, and the write fails.",
				files:       map[string]string{"notes.txt": "remember the milk\n"},
				script: mock.Script{Turns: []mock.Turn{
					{Calls: []mock.Call{{Tool: mock.ReadFile, Path: "notes.txt"}}},
					{Calls: []mock.Call{{Tool: mock.WriteFile, Path: "out.txt", Content: "milk\n"}}},
					mock.Text("Copied the note's ", "last word to out.txt."),
				}},
				procs: []proc{geminiACP(acpSession{prompts: []string{"Copy the last word of notes.txt into out.txt."}, fs: true, permission: "allow"})},
			}
		})},
		{Name: "acp-unicode", Summary: "ACP: text in several scripts, emoji and combining marks", plan: gem(func() *plan {
			return &plan{
				description: "ACP: a text answer with multibyte UTF-8 (accented Latin, CJK, an emoji with a skin tone, a combining mark) in three chunks.",
				script:      mock.Script{Turns: []mock.Turn{mock.Text("Grüße, ", "你好, ", "👋🏽 — cafe\u0301.")}},
				procs:       []proc{geminiACP(acpSession{prompts: []string{"Greet me in three languages."}})},
			}
		})},
		acpErrorScenario("acp-api-error-429", 429, "rate limit exceeded (agentconform mock)"),
		acpErrorScenario("acp-api-error-500", 500, "internal server error (agentconform mock)"),
	}
}

// acpAskScenarios are the ACP scenarios again as a client that does not
// start Gemini with --yolo, or declares no fs capability, sees them: the
// permissions Gemini asks then, answered allow_once ("-ask", "-nofs") and
// reject_once ("-ask-deny", "-nofs-deny"). They are the variants the fake
// gemini --acp replays for such a client (fixtures/acpfixtures). The
// scenarios captured with --yolo whose commands Gemini runs unasked
// (acp-multi-turn's and acp-load's echo: captured so, 0.61.0) have none.
func acpAskScenarios(base []Scenario) []Scenario {
	byName := map[string]Scenario{}
	for _, sc := range base {
		byName[sc.Name] = sc
	}
	variant := func(from, name, summary string, change func(*acpSession, *proc)) Scenario {
		b := byName[from]
		return Scenario{Name: name, Summary: summary, plan: func(cli string) *plan {
			p := b.plan(cli)
			if p == nil {
				return nil
			}
			for i := range p.procs {
				pr := &p.procs[i]
				pr.args = slices.DeleteFunc(slices.Clone(pr.args), func(a string) bool { return a == "--yolo" })
				s := *pr.acp
				change(&s, pr)
				pr.acp = &s
			}
			p.description = summary + ". " + strings.Replace(p.description, " with --yolo", "", 1)
			return p
		}}
	}
	var out []Scenario
	for _, from := range []string{"acp-multi-tool", "acp-cancel"} {
		out = append(out,
			variant(from, from+"-ask", from+" without --yolo, every permission Gemini asks answered allow_once",
				func(s *acpSession, _ *proc) { s.permission = "allow" }),
			variant(from, from+"-ask-deny", from+" without --yolo, the permission Gemini asks first answered reject_once",
				func(s *acpSession, _ *proc) { s.permission, s.cancel = "deny", false }))
	}
	// A client without --yolo that picks a mode before its first prompt:
	// what Gemini asks then (evidence for the fake's mode switch; no
	// fixtures of their own).
	for _, m := range []struct{ from, mode string }{
		{"acp-multi-tool", "yolo"}, {"acp-multi-tool", "autoEdit"}, {"acp-cancel", "autoEdit"},
	} {
		out = append(out, variant(m.from, m.from+"-mode-"+strings.ToLower(m.mode),
			m.from+" without --yolo, session/set_mode "+m.mode+" before the first prompt, every permission Gemini asks answered allow_once",
			func(s *acpSession, _ *proc) { s.permission, s.mode = "allow", m.mode }))
	}
	return append(out,
		variant("acp-fs", "acp-fs-nofs", "acp-fs with a client that declares no fs capability, every permission Gemini asks answered allow_once",
			func(s *acpSession, _ *proc) { s.fs, s.permission = false, "allow" }),
		variant("acp-fs", "acp-fs-nofs-deny", "acp-fs with a client that declares no fs capability, the permission Gemini asks first answered reject_once",
			func(s *acpSession, _ *proc) { s.fs, s.permission = false, "deny" }))
}

func acpPermissionPlan(answer string) *plan {
	after := "Created created.txt."
	if answer != "allow" {
		after = "Understood, I won't create it."
	}
	return &plan{
		description: fmt.Sprintf("ACP: a shell command needing approval (touch created.txt): session/request_permission answered %s; then a text answer.", map[string]string{"allow": "allow_once", "deny": "reject_once"}[answer]),
		script: mock.Script{Turns: []mock.Turn{
			{Calls: []mock.Call{shell("touch created.txt")}},
			mock.Text(after),
		}},
		procs: []proc{geminiACP(acpSession{prompts: []string{"Create created.txt."}, permission: answer})},
	}
}

func acpErrorScenario(name string, status int, msg string) Scenario {
	return Scenario{Name: name, Summary: fmt.Sprintf("ACP: the model API answers HTTP %d", status), plan: func(cli string) *plan {
		if cli != "gemini" {
			return nil
		}
		return &plan{
			description: fmt.Sprintf("ACP: every model request fails with HTTP %d (%s): session/prompt answers with a JSON-RPC error; a second prompt fails the same way.", status, msg),
			script:      mock.Script{Turns: []mock.Turn{{Fail: &mock.Failure{Status: status, Message: msg}}}},
			procs:       []proc{geminiACP(acpSession{prompts: []string{promptHello, "Try again, please."}})},
		}
	}}
}

// rpcMessage is one JSON-RPC 2.0 message, in the key order of the ACP
// libraries (jsonrpc, id, method, params / result / error).
type rpcMessage struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  any              `json:"params,omitempty"`
	Result  any              `json:"result,omitempty"`
	Error   any              `json:"error,omitempty"`
}

// acpClient is the driver's side of one ACP connection.
type acpClient struct {
	d       *driver
	nextID  int
	pending map[string]string // request id (JSON text) -> method
}

func (c *acpClient) request(method string, params any) {
	id := json.RawMessage(fmt.Sprint(c.nextID))
	c.pending[string(id)] = method
	c.nextID++
	c.d.send(rpcMessage{JSONRPC: "2.0", ID: &id, Method: method, Params: params})
}

func (c *acpClient) notify(method string, params any) {
	c.d.send(rpcMessage{JSONRPC: "2.0", Method: method, Params: params})
}

func (c *acpClient) respond(id json.RawMessage, result any) {
	if result == nil {
		result = json.RawMessage("null")
	}
	c.d.send(rpcMessage{JSONRPC: "2.0", ID: &id, Result: result})
}

func (c *acpClient) fail(id json.RawMessage, code int, msg string) {
	c.d.send(rpcMessage{JSONRPC: "2.0", ID: &id, Error: map[string]any{"code": code, "message": msg}})
}

// inbound is one line from the agent, decoded.
type inbound struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// runACP runs one agent process of an ACP plan through the recorder and
// plays the editor: initialize, session/new (or session/load), the
// prompts one after the other, answers to the agent's requests, and
// session/cancel when the plan says; then it closes stdin. The recorded
// stdin lines become "in" steps matched by method (client requests, whose
// ids are captured and templated into the responses) or by id (the
// client's answers to the agent's requests).
func (d *driver) runACP(ctx context.Context, bin *Binary, sb *Sandbox, red *redact.Redactor, session string, o Options) (*recorder.Result, Process, error) {
	s := d.p.acp
	lc := liveConfig{argv: append([]string{bin.CLI}, d.p.args...), strace: true}
	if s.cancel {
		lc.interrupt = "session/cancel"
	}
	delay := o.interruptDelay()
	l := startLive(ctx, bin, sb, red, o, lc)
	d.in = &l.in

	c := &acpClient{d: d, pending: map[string]string{}}
	caps := map[string]any{"fs": map[string]any{"readTextFile": s.fs, "writeTextFile": s.fs}, "terminal": false}
	c.request("initialize", map[string]any{"protocolVersion": acpProtocolVersion, "clientCapabilities": caps,
		"clientInfo": map[string]any{"name": "agentconform-capture", "version": "1"}})
	var (
		sessionID   string
		prompt      int
		cancelled   bool
		fsMu        sync.Mutex
		finishInput = l.finish
	)
	sendPrompt := func() {
		c.request("session/prompt", map[string]any{"sessionId": sessionID, "prompt": []any{map[string]any{"type": "text", "text": s.prompts[prompt]}}})
	}
	onLine := func(line string) {
		var m inbound
		if json.Unmarshal([]byte(strings.TrimSpace(line)), &m) != nil {
			return
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // the agent's request
			switch m.Method {
			case "session/request_permission":
				c.respond(m.ID, permissionAnswer(s.permission, m.Params))
				if s.cancel && !cancelled && l.interruptAt == nil && prompt == 0 && s.permission == "allow" {
					// Allowed, the tool runs now: without --yolo Gemini
					// writes no update that it started (acp-cancel-ask).
					l.interruptAt = time.After(delay)
				}
			case "fs/read_text_file", "fs/write_text_file":
				if !s.fs {
					c.fail(m.ID, -32601, "Method not found: "+m.Method)
					return
				}
				fsMu.Lock()
				res, err := acpFS(sb.Project, m.Method, m.Params)
				fsMu.Unlock()
				var nf *notFound
				switch {
				case errors.As(err, &nf):
					// As the ACP libraries say it (RequestError.resourceNotFound).
					c.d.send(rpcMessage{JSONRPC: "2.0", ID: &m.ID, Error: map[string]any{"code": -32002,
						"message": "Resource not found: " + nf.path, "data": map[string]any{"uri": nf.path}}})
				case err != nil:
					c.fail(m.ID, -32603, err.Error())
				default:
					c.respond(m.ID, res)
				}
			default:
				c.fail(m.ID, -32601, "Method not found: "+m.Method)
			}
		case m.Method == "session/update":
			if s.cancel && !cancelled && l.interruptAt == nil && prompt == 0 && toolCallStarted(m.Params) {
				l.interruptAt = time.After(delay)
			}
		case m.Method == "" && len(m.ID) > 0: // a response to the driver
			method := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			failed := len(m.Error) > 0 && string(m.Error) != "null"
			switch method {
			case "initialize":
				if failed {
					finishInput()
					return
				}
				params := map[string]any{"cwd": sb.Project, "mcpServers": []any{}}
				if s.load {
					if s.loadID != "" {
						session = s.loadID
					}
					params["sessionId"] = session
					sessionID = session
					c.request("session/load", params)
				} else {
					c.request("session/new", params)
				}
			case "session/new", "session/load":
				if failed {
					finishInput()
					return
				}
				if method == "session/new" {
					var r struct {
						SessionID string `json:"sessionId"`
					}
					json.Unmarshal(m.Result, &r)
					sessionID = r.SessionID
				}
				l.proc.SessionID, d.rawSession = sessionID, sessionID
				if s.mode != "" {
					c.request("session/set_mode", map[string]any{"sessionId": sessionID, "modeId": s.mode})
				} else {
					sendPrompt()
				}
			case "session/set_mode":
				if failed {
					finishInput()
					return
				}
				sendPrompt()
			case "session/prompt":
				prompt++
				if prompt < len(s.prompts) {
					sendPrompt()
				} else {
					finishInput()
				}
			}
		}
	}
	onCancel := func() {
		cancelled = true
		c.notify("session/cancel", map[string]any{"sessionId": sessionID})
	}
	res, proc, leaks, err := l.drive(o, liveHandlers{line: onLine, interrupt: onCancel})
	if err != nil {
		return nil, proc, err
	}
	if l.strace != "" {
		d.leaks, d.straced = leaks, true
	}
	res.Transcript.Steps = rpcSteps(res.Transcript.Steps)
	return res, proc, nil
}

// isACPCancel reports whether a plan cancels a prompt over ACP: it is
// captured twice, like a signal (mergeCancelled).
func isACPCancel(p *plan) bool {
	return len(p.procs) == 1 && p.procs[0].acp != nil && p.procs[0].acp.cancel
}

// mergeCancelled joins a run left alone (main: the tool completes and the
// turn ends) and a run whose first turn the client cancelled (cut) into
// one transcript, as mergeInterrupted does for a signal: main's steps
// with, right after the line that started the tool, a delay_ms step (how
// long the driver waited before it cancelled) whose case jumps on
// session/cancel to a label holding what cut's agent did after it got the
// cancel (its recorded cancel line kept on the delay step). cut's session
// and tool call ids become main's.
func mergeCancelled(main, cut *oneRun, delay time.Duration) *oneRun {
	k, kc := acpToolStart(main.steps), acpToolStart(cut.steps)
	ci := -1
	for i := kc + 1; kc >= 0 && i < len(cut.steps); i++ {
		if st := cut.steps[i]; st.Op == transcript.OpIn && st.Match["method"] == "session/cancel" {
			ci = i
			break
		}
	}
	out := &oneRun{header: main.header, requests: append(main.requests, cut.requests...),
		leaks: append(main.leaks, cut.leaks...), straced: main.straced || cut.straced}
	mainProc, cutProc := main.procs[0], cut.procs[0]
	mainProc.Interrupt = ""
	out.procs = []Process{mainProc, cutProc}
	if k < 0 || ci < 0 {
		out.steps, out.procs = cut.steps, []Process{cutProc}
		return out
	}
	replace := map[string]string{}
	if cutProc.SessionID != "" && mainProc.SessionID != "" {
		replace[cutProc.SessionID] = mainProc.SessionID
	}
	if a, b := acpToolIDAt(cut.steps, kc), acpToolIDAt(main.steps, k); a != "" && b != "" {
		replace[a] = b
	}
	const label = "cancelled"
	steps := append([]transcript.Step(nil), main.steps[:k+1]...)
	cancelLine := cut.steps[ci].Recorded
	for from, to := range replace {
		cancelLine = strings.ReplaceAll(cancelLine, from, to)
	}
	steps = append(steps, transcript.Step{Op: transcript.OpDelay, DelayMS: delay.Milliseconds(), Recorded: cancelLine,
		Cases: []transcript.Case{{Match: map[string]any{"method": "session/cancel"}, Goto: label}}})
	steps = append(steps, main.steps[k+1:]...)
	steps = append(steps, transcript.Step{Op: transcript.OpLabel, Label: label})
	for _, s := range cut.steps[ci+1:] {
		for from, to := range replace {
			if s.Op == transcript.OpOut || s.Op == transcript.OpErr {
				s.Text = strings.ReplaceAll(s.Text, from, to)
			}
			s.Recorded = strings.ReplaceAll(s.Recorded, from, to)
		}
		steps = append(steps, s)
	}
	out.steps = steps
	return out
}

// acpToolStart is the index of the first step after which a tool call
// runs, or -1: a stdout step announcing it running, or the client's answer
// to a session/request_permission (an allowed call runs from then on,
// announced by no update of its own: acp-cancel-ask).
func acpToolStart(steps []transcript.Step) int {
	for i, s := range steps {
		switch s.Op {
		case transcript.OpIn:
			if i > 0 && isPermissionRequest(steps[i-1]) && s.Match != nil && s.Match["method"] == nil {
				return i
			}
		case transcript.OpOut:
			var m inbound
			if json.Unmarshal([]byte(s.Text), &m) == nil && m.Method == "session/update" && toolCallStarted(m.Params) {
				return i
			}
		}
	}
	return -1
}

// isPermissionRequest reports whether st writes a session/request_permission.
func isPermissionRequest(st transcript.Step) bool {
	var m inbound
	return st.Op == transcript.OpOut && json.Unmarshal([]byte(st.Text), &m) == nil && m.Method == "session/request_permission"
}

// acpToolIDAt is the toolCallId of the tool call that runs after steps[i]
// (acpToolStart): of the update it writes, or of the permission request
// it answers.
func acpToolIDAt(steps []transcript.Step, i int) string {
	if steps[i].Op == transcript.OpIn {
		i--
	}
	return acp.ToolCallID(steps[i].Text)
}

// rpcSteps turns the recorder's raw stdin steps of a JSON-RPC session into
// matches (transcript.RPCConverter) and templates the ids the client chose
// into the responses that echo them.
func rpcSteps(steps []transcript.Step) []transcript.Step {
	conv := transcript.NewRPCConverter()
	for i := range steps {
		switch steps[i].Op {
		case transcript.OpIn:
			if steps[i].Match == nil {
				conv.Expect(&steps[i], steps[i].Text)
			}
		case transcript.OpOut:
			steps[i].Text = conv.Template(steps[i].Text)
		}
	}
	return steps
}

// toolCallStarted reports whether session/update params announce a tool
// call that is running (or waiting for permission).
func toolCallStarted(params json.RawMessage) bool {
	var p struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			Status        string `json:"status"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	u := p.Update
	return u.SessionUpdate == "tool_call" || u.SessionUpdate == "tool_call_update" && u.Status == "in_progress"
}

// permissionAnswer is the result of session/request_permission: the
// first option of kind allow_once (else allow_always) for "allow", of kind
// reject_once (else reject_always) otherwise, and the cancelled outcome
// when no option fits.
func permissionAnswer(permission string, params json.RawMessage) any {
	var p struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	json.Unmarshal(params, &p)
	kinds := []string{"reject_once", "reject_always"}
	if permission == "allow" {
		kinds = []string{"allow_once", "allow_always"}
	}
	for _, k := range kinds {
		for _, o := range p.Options {
			if o.Kind == k {
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": o.OptionID}}
			}
		}
	}
	return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
}

// notFound is a file the agent asked for that does not exist.
type notFound struct{ path string }

func (n *notFound) Error() string { return n.path + " does not exist" }

// acpFS answers fs/read_text_file and fs/write_text_file inside the
// project directory, as an editor serves them from its buffers.
func acpFS(project, method string, params json.RawMessage) (any, error) {
	var p struct {
		Path    string `json:"path"`
		Content string `json:"content"`
		Line    *int   `json:"line"`
		Limit   *int   `json:"limit"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("bad params: %w", err)
	}
	path := filepath.Clean(p.Path)
	if !filepath.IsAbs(path) {
		path = filepath.Join(project, path)
	}
	if rel, err := filepath.Rel(project, path); err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("%s is outside the project", p.Path)
	}
	if method == "fs/write_text_file" {
		if err := os.WriteFile(path, []byte(p.Content), 0o644); err != nil {
			return nil, err
		}
		return map[string]any{}, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &notFound{p.Path}
	}
	if err != nil {
		return nil, err
	}
	text := string(b)
	if p.Line != nil || p.Limit != nil {
		lines := strings.SplitAfter(text, "\n")
		from := 0
		if p.Line != nil && *p.Line > 1 {
			from = min(*p.Line-1, len(lines))
		}
		to := len(lines)
		if p.Limit != nil && from+*p.Limit < to {
			to = from + *p.Limit
		}
		text = strings.Join(lines[from:to], "")
	}
	return map[string]any{"content": text}, nil
}

// ageGeminiSession renames the file Gemini CLI recorded session id in
// (under home's .gemini/tmp/<project>/chats) to the name it would have
// had an hour earlier, so that the session reads as one from an earlier
// run. Gemini CLI names a new session's file after the UTC minute it
// started and the id's first 8 characters (session-2026-11-29T09-35-
// 4d8d1674.jsonl), and its session/load starts a new recording of the
// session it loads before it reads the session back: in the minute the
// session was made, that recording's file is the session's own, whose
// messages it resets, and the load fails with "Invalid session
// identifier" (Gemini CLI 0.61.0, docs/protocols/acp.md#sessions). A
// user's earlier session is rarely from the same minute; a stage that
// primes one and loads it at once is, unless it ages it.
func ageGeminiSession(home, id string) error {
	const geminiMinute = "2006-01-02T15-04" // the file name's UTC minute
	if len(id) < 8 {
		return fmt.Errorf("capture: session id %q is too short to name a Gemini session file", id)
	}
	files, err := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*-"+id[:8]+".json*"))
	if err != nil {
		return fmt.Errorf("capture: the Gemini session files of %s: %w", id, err)
	}
	aged := 0
	for _, f := range files {
		base := filepath.Base(f)
		stamp := strings.TrimPrefix(base, "session-")
		if len(stamp) < len(geminiMinute) {
			continue
		}
		t, err := time.Parse(geminiMinute, stamp[:len(geminiMinute)])
		if err != nil {
			continue
		}
		if !strings.Contains(firstLine(f), `"sessionId":"`+id+`"`) {
			continue // another session with the same first 8 characters
		}
		older := "session-" + t.Add(-time.Hour).Format(geminiMinute) + stamp[len(geminiMinute):]
		if err := os.Rename(f, filepath.Join(filepath.Dir(f), older)); err != nil {
			return fmt.Errorf("capture: ageing the Gemini session file %s: %w", base, err)
		}
		aged++
	}
	if aged == 0 {
		return fmt.Errorf("capture: no Gemini session file of %s under %s", id, filepath.Join(home, ".gemini", "tmp"))
	}
	return nil
}

// firstLine returns the first line of the file at path ("" if unreadable).
func firstLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	return line
}
