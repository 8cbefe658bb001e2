package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/capture/mock"
	"github.com/agentconform/agentconform/recorder"
	"github.com/agentconform/agentconform/redact"
	"github.com/agentconform/agentconform/transcript"
)

// AppServerPrefix begins the name of every scenario that drives
// `codex app-server` (JSON-RPC over stdio) instead of `codex exec --json`.
const AppServerPrefix = "app-server-"

// asProc is one `codex app-server` process of an app-server scenario, as
// an editor drives it: initialize and initialized, thread/start (or
// thread/resume of the previous process's thread), then one turn/start per
// turn, each sent once the previous turn's turn/completed arrived; then
// stdin is closed.
type asProc struct {
	// resume opens the previous process's thread with thread/resume
	// instead of starting one.
	resume bool
	turns  []asTurn
}

// asTurn is one turn of an asProc.
type asTurn struct {
	prompt string
	// approvalPolicy is turn/start's approvalPolicy ("never" when empty:
	// commands run without asking).
	approvalPolicy string
	// decision answers every approval request of the turn ("accept",
	// "decline").
	decision string
	// interrupt sends turn/interrupt once a command starts.
	interrupt bool
}

// appServerScenarios are the scenarios that drive `codex app-server`.
func appServerScenarios() []Scenario {
	one := func(desc string, script mock.Script, files map[string]string, procs ...asProc) func(string) *plan {
		return func(cli string) *plan {
			if cli != "codex" {
				return nil
			}
			return &plan{description: desc, script: script, files: files, appServer: procs}
		}
	}
	turn := func(prompt string) asTurn { return asTurn{prompt: prompt} }
	proc := func(turns ...asTurn) asProc { return asProc{turns: turns} }
	multi := multiToolPlan("codex")
	approval := func(decision, after string) func(string) *plan {
		return one(fmt.Sprintf("codex app-server: a shell command (touch created.txt) under approvalPolicy untrusted: item/commandExecution/requestApproval answered %s.", decision),
			mock.Script{Turns: []mock.Turn{{Calls: []mock.Call{shell("touch created.txt")}}, mock.Text(after)}}, nil,
			proc(asTurn{prompt: "Create created.txt.", approvalPolicy: "untrusted", decision: decision}))
	}
	return []Scenario{
		{Name: AppServerPrefix + "plain-text", Summary: "codex app-server: a text answer, no tools", plan: one(
			"codex app-server: initialize, thread/start, one turn/start answered with text in two chunks.",
			mock.Script{Turns: []mock.Turn{mock.Text("Hello! ", "How can I help you today?")}}, nil, proc(turn(promptHello)))},
		{Name: AppServerPrefix + "single-tool", Summary: "codex app-server: one shell command, then the answer", plan: one(
			"codex app-server: one turn with a shell command (echo hi) run without approval, then a text answer.",
			mock.Script{Turns: []mock.Turn{{Calls: []mock.Call{shell("echo hi")}}, mock.Text("It printed ", "`hi`.")}}, nil, proc(turn(promptEcho)))},
		{Name: AppServerPrefix + "multi-tool", Summary: "codex app-server: reasoning, parallel commands, a file change, the answer", plan: one(
			"codex app-server: "+multi.description, multi.script, multi.files,
			proc(turn("Make greet() end with an exclamation mark, add NOTES.md, remove OLD.txt, and show the result.")))},
		{Name: AppServerPrefix + "tool-error", Summary: "codex app-server: a command that fails, then the answer", plan: one(
			"codex app-server: a shell command that fails (cat of a missing file, exit 1), then a text answer.",
			mock.Script{Turns: []mock.Turn{{Calls: []mock.Call{shell("cat missing-file.txt")}}, mock.Text("The file does not exist.")}}, nil,
			proc(turn("Show me the contents of the missing file.")))},
		{Name: AppServerPrefix + "interrupt", Summary: "codex app-server: a long command interrupted with turn/interrupt", plan: one(
			"codex app-server: a 6 s shell command interrupted with turn/interrupt one second in; the turn completes interrupted, then stdin is closed.",
			mock.Script{Turns: []mock.Turn{{Text: []string{"Running the tests."}, Calls: []mock.Call{shell("sleep 6")}}, mock.Text("The tests passed.")}}, nil,
			proc(asTurn{prompt: "Run the end-to-end tests.", interrupt: true}))},
		{Name: AppServerPrefix + "approval-accept", Summary: "codex app-server: a command approval answered accept", plan: approval("accept", "Created created.txt.")},
		{Name: AppServerPrefix + "approval-decline", Summary: "codex app-server: a command approval answered decline", plan: approval("decline", "Understood, I won't create it.")},
		{Name: AppServerPrefix + "multi-turn", Summary: "codex app-server: two turns on one thread in one process", plan: one(
			"codex app-server: two turn/start requests on one thread in one process, the first with a shell command, the second answered with text.",
			mock.Script{Turns: []mock.Turn{{Calls: []mock.Call{shell("echo first-turn")}}, mock.Text("The first turn printed first-turn."), mock.Text("The second turn's ", "answer.")}}, nil,
			proc(turn("Run `echo first-turn`."), turn("And now a second answer, please.")))},
		{Name: AppServerPrefix + "unicode", Summary: "codex app-server: a text answer with multibyte UTF-8 characters", plan: one(
			"codex app-server: one turn answered with text of two-, three- and four-byte UTF-8 characters in four deltas.",
			mock.Script{Turns: []mock.Turn{mock.Text("Grüße aus Köln — naïve", " café, «ça va?» 日本語の", "テキスト、한국어, emoji 🎉👍🏽", " and √2 ≈ 1.414.")}}, nil,
			proc(turn(promptHello)))},
		{Name: AppServerPrefix + "api-error", Summary: "codex app-server: the model API answers HTTP 401", plan: one(
			"codex app-server: every model request fails with HTTP 401 (invalid api key); the turn completes with status failed.",
			mock.Script{Turns: []mock.Turn{{Fail: &mock.Failure{Status: 401, Message: "invalid api key (agentconform mock)"}}}}, nil,
			proc(turn(promptHello)))},
		{Name: AppServerPrefix + "approval-file-change", Summary: "codex app-server: a file change approval answered accept", plan: one(
			"codex app-server: an apply_patch file change under approvalPolicy untrusted: item/fileChange/requestApproval answered accept.",
			mock.Script{Turns: []mock.Turn{{Calls: []mock.Call{{Name: "apply_patch", Custom: "*** Begin Patch\n*** Add File: NOTES.md\n+remember the milk\n*** End Patch\n"}}}, mock.Text("Added NOTES.md.")}}, nil,
			proc(asTurn{prompt: "Add NOTES.md.", approvalPolicy: "untrusted", decision: "accept"}))},
		{Name: AppServerPrefix + "resume", Summary: "codex app-server: a thread resumed by a second process", plan: one(
			"codex app-server: a turn on a new thread, stdin closed; a second app-server process resumes the thread with thread/resume and runs a second turn.",
			mock.Script{Turns: []mock.Turn{mock.Text("Hello! ", "I'm ready."), mock.Text("Resumed: ", "the second answer.")}}, nil,
			proc(turn(promptHello)), asProc{resume: true, turns: []asTurn{turn("And now a second answer, please.")}})},
	}
}

// IsAppServer reports whether a scenario drives `codex app-server`.
func IsAppServer(name string) bool { return strings.HasPrefix(name, AppServerPrefix) }

// captureAppServer runs an app-server plan: every process against one
// mock, trap and sandbox, each driven by an asDriver through the recorder,
// their steps joined by next_process, the client's JSON-RPC lines turned
// into matches (transcript.JSONRPCSteps).
//
// A plan that interrupts a turn is captured twice, as the signal
// scenarios are: the main path is a run left alone (the command
// completes), and a label "interrupted" holds what the second run did
// from its turn/interrupt request on (the request, the server's answer,
// the interrupted turn/completed, the exit), with the second run's thread
// and turn ids made the first run's.
func captureAppServer(ctx context.Context, bin *Binary, sc Scenario, p *plan, o Options) (*Result, error) {
	start := time.Now()
	interrupts := false
	plain := make([]asProc, len(p.appServer))
	for i, ap := range p.appServer {
		plain[i] = asProc{resume: ap.resume, turns: append([]asTurn(nil), ap.turns...)}
		for j := range plain[i].turns {
			interrupts = interrupts || plain[i].turns[j].interrupt
			plain[i].turns[j].interrupt = false
		}
	}
	once := func(procs []asProc) func() (*appServerRun, error) {
		return func() (*appServerRun, error) { return appServerOnce(ctx, bin, sc, p, procs, o) }
	}
	var run *appServerRun
	var err error
	if interrupts {
		// Done before the interrupted run: the plain run alone.
		run, _, err = twice(ctx, once(plain), once(p.appServer), mergeAppServerInterrupt)
	} else {
		run, err = once(plain)()
	}
	if err != nil {
		return nil, err
	}
	steps, err := transcript.JSONRPCSteps(run.steps)
	if err != nil {
		return nil, fmt.Errorf("capture: %s/%s: %w", bin.CLI, sc.Name, err)
	}
	if len(run.procs) > 0 {
		run.header.SessionID = run.procs[0].SessionID
	}
	return newResult(bin, sc, p, &run.oneRun, steps, start), ctx.Err()
}

// appServerRun is one capture of an app-server plan's processes, its
// client lines still raw. turnIDs are the turns the server started.
type appServerRun struct {
	oneRun
	turnIDs []string
}

// appServerOnce runs procs against a fresh mock, trap and sandbox.
func appServerOnce(ctx context.Context, bin *Binary, sc Scenario, p *plan, procs []asProc, o Options) (*appServerRun, error) {
	env, err := openRun(bin, sc.Name, p, o, mockOpenAIKey)
	if err != nil {
		return nil, err
	}
	defer env.close()
	sb, red := env.sb, env.red
	run := &appServerRun{}
	thread := ""
	for i, ap := range procs {
		d := &asDriver{p: ap, thread: thread, cwd: sb.Project}
		rec, proc, err := d.run(ctx, bin, sb, red, o)
		if err != nil {
			return nil, fmt.Errorf("capture: %s/%s process %d: %w", bin.CLI, sc.Name, i+1, err)
		}
		proc.SessionID = red.String(d.thread)
		run.procs = append(run.procs, proc)
		for _, id := range d.turnIDs {
			run.turnIDs = append(run.turnIDs, red.String(id))
		}
		if i == 0 {
			run.header = rec.Transcript.Header
		} else {
			run.steps = append(run.steps, transcript.Step{Op: transcript.OpNextProcess})
		}
		run.steps = append(run.steps, rec.Transcript.Steps...)
		thread = d.thread
		if ctx.Err() != nil {
			break
		}
	}
	hideHostname(run.steps)
	run.requests = env.requests()
	run.leaks = env.tr.hits()
	return run, nil
}

// mergeAppServerInterrupt joins a run left alone (main) and a run whose
// turn was interrupted (cut): main's steps, then the label "interrupted"
// and cut's steps from its turn/interrupt request on, its thread and turn
// ids replaced by main's. Both runs are single-process.
func mergeAppServerInterrupt(main, cut *appServerRun) *appServerRun {
	k := -1
	for i, s := range cut.steps {
		if s.Op == transcript.OpIn && strings.Contains(s.Text, `"method":"turn/interrupt"`) {
			k = i
			break
		}
	}
	out := &appServerRun{oneRun: oneRun{header: main.header, requests: append(main.requests, cut.requests...),
		leaks: append(main.leaks, cut.leaks...)}, turnIDs: main.turnIDs}
	out.procs = append(append([]Process(nil), main.procs...), cut.procs...)
	if k < 0 || len(main.procs) == 0 || len(cut.procs) == 0 {
		out.steps, out.procs = cut.steps, cut.procs
		return out
	}
	repl := []string{}
	if a, b := cut.procs[0].SessionID, main.procs[0].SessionID; a != "" && b != "" {
		repl = append(repl, a, b)
	}
	for i := 0; i < len(cut.turnIDs) && i < len(main.turnIDs); i++ {
		repl = append(repl, cut.turnIDs[i], main.turnIDs[i])
	}
	r := strings.NewReplacer(repl...)
	steps := append([]transcript.Step(nil), main.steps...)
	// The main run's own end (stdin closed, exit) stays: the branch has
	// its own.
	steps = append(steps, transcript.Step{Op: transcript.OpLabel, Label: appserver.InterruptLabel})
	for _, s := range cut.steps[k:] {
		s.Text = r.Replace(s.Text)
		steps = append(steps, s)
	}
	out.steps = steps
	return out
}

// asDriver plays the editor on one `codex app-server` process.
type asDriver struct {
	p   asProc
	cwd string
	// thread is the thread id: the one to resume on entry, the one the
	// server reported on return.
	thread string
	// turnIDs are the turns the server started, in order.
	turnIDs []string

	in     *stdinLines
	mu     sync.Mutex
	nextID int
	// pending maps the ids of the driver's requests to their methods.
	pending map[int]string
}

// request sends a JSON-RPC request and returns its id.
func (d *asDriver) request(method string, params any) int {
	d.mu.Lock()
	d.nextID++
	id := d.nextID
	d.pending[id] = method
	d.mu.Unlock()
	d.write(map[string]any{"id": id, "method": method, "params": params})
	return id
}

// write sends one JSON-RPC message.
func (d *asDriver) write(v any) { d.in.send(v) }

// run starts `codex app-server` through the recorder and drives it.
func (d *asDriver) run(ctx context.Context, bin *Binary, sb *Sandbox, red *redact.Redactor, o Options) (*recorder.Result, Process, error) {
	l := startLive(ctx, bin, sb, red, o, liveConfig{argv: []string{bin.CLI, "app-server"}})
	d.in = &l.in
	d.pending = map[int]string{}
	delay := o.interruptDelay()
	d.request("initialize", map[string]any{
		"clientInfo":   map[string]any{"name": "agentconform_capture", "title": "agentconform capture", "version": "1.0.0"},
		"capabilities": map[string]any{"experimentalApi": false},
	})
	var (
		turn        = -1
		turnID      string
		interrupted bool
	)
	startTurn := func() {
		turn++
		if turn >= len(d.p.turns) {
			l.finish()
			return
		}
		t := d.p.turns[turn]
		policy := t.approvalPolicy
		if policy == "" {
			policy = "never"
		}
		interrupted = false
		d.request("turn/start", map[string]any{
			"threadId":       d.thread,
			"input":          []any{map[string]any{"type": "text", "text": t.prompt, "text_elements": []any{}}},
			"approvalPolicy": policy,
		})
	}
	onLine := func(line string) {
		msg := decodeEvent(line)
		if msg == nil {
			return
		}
		method, _ := msg["method"].(string)
		id, hasID := msg["id"]
		switch {
		case method != "" && hasID: // a request from the server
			d.answer(id, method, turn)
		case method != "": // a notification
			params, _ := msg["params"].(map[string]any)
			switch method {
			case "turn/started":
				if t, ok := params["turn"].(map[string]any); ok {
					turnID, _ = t["id"].(string)
					d.turnIDs = append(d.turnIDs, turnID)
				}
			case "item/started":
				item, _ := params["item"].(map[string]any)
				if turn >= 0 && turn < len(d.p.turns) && d.p.turns[turn].interrupt && !interrupted && l.interruptAt == nil && item["type"] == "commandExecution" {
					l.interruptAt = time.After(delay)
				}
			case "turn/completed":
				l.interruptAt = nil
				startTurn()
			}
		case hasID: // a response to one of ours
			n, _ := id.(float64)
			d.mu.Lock()
			m := d.pending[int(n)]
			delete(d.pending, int(n))
			d.mu.Unlock()
			result, _ := msg["result"].(map[string]any)
			switch m {
			case "initialize":
				d.write(map[string]any{"method": "initialized"})
				if d.p.resume {
					d.request("thread/resume", map[string]any{"threadId": d.thread})
				} else {
					d.request("thread/start", map[string]any{"cwd": d.cwd, "sandbox": "workspace-write"})
				}
			case "thread/start", "thread/resume":
				if th, ok := result["thread"].(map[string]any); ok {
					if s, _ := th["id"].(string); s != "" {
						d.thread = s
					}
				}
				if msg["error"] != nil {
					l.finish()
					return
				}
				startTurn()
			case "turn/start":
				if msg["error"] != nil {
					l.finish()
				}
			}
		}
	}
	onInterrupt := func() {
		interrupted = true
		l.proc.Interrupt = "turn/interrupt"
		d.request("turn/interrupt", map[string]any{"threadId": d.thread, "turnId": turnID})
	}
	res, proc, _, err := l.drive(o, liveHandlers{line: onLine, interrupt: onInterrupt})
	return res, proc, err
}

// answer answers a request from the server: an approval with the turn's
// decision, anything else with a JSON-RPC error (method not found), as a
// client that does not implement it does.
func (d *asDriver) answer(id any, method string, turn int) {
	decision := "decline"
	if turn >= 0 && turn < len(d.p.turns) && d.p.turns[turn].decision != "" {
		decision = d.p.turns[turn].decision
	}
	switch method {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval":
		d.write(map[string]any{"id": id, "result": map[string]any{"decision": decision}})
	default:
		d.write(map[string]any{"id": id, "error": map[string]any{"code": -32601, "message": "agentconform capture does not implement " + method}})
	}
}

// hideHostname replaces this machine's name where the app-server reports
// it (remoteControl/status/changed's serverName) with "host": it names
// the machine the capture ran on, and nothing replays differently for it.
func hideHostname(steps []transcript.Step) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return
	}
	q, _ := json.Marshal(host)
	from := `"serverName":` + string(q)
	for i := range steps {
		if steps[i].Op == transcript.OpOut && strings.Contains(steps[i].Text, from) {
			steps[i].Text = strings.ReplaceAll(steps[i].Text, from, `"serverName":"host"`)
		}
	}
}
