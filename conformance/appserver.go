package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	asfixtures "github.com/agentconform/agentconform/fixtures/appserver"
	"github.com/agentconform/agentconform/transcript"
)

// AgentAppServer is the agent of the cases of `codex app-server` clients:
// an adapter that names it in its hello drives `codex app-server`
// (JSON-RPC over stdio) for a start with that agent, and is judged on the
// app-server fixtures (package fixtures/appserver) by the checks of this
// file and the harness-level checks (appServerGeneric). Adapters of
// `codex exec` never get these cases.
const AgentAppServer = "codex-app-server"

// srcAppServer is the protocol reference section of an app-server check.
func srcAppServer(anchor string) string { return "docs/protocols/codex-app-server.md#" + anchor }

// appServerGeneric are the checks of the JSONL streams that judge only
// what any adapter does (its records, its end, the processes it leaves),
// and so apply to app-server cases as they are; the others judge a CLI's
// JSONL stream or invocation and are SKIP there.
var appServerGeneric = []string{"output/hello", "output/valid", "output/records", "lifecycle/reports-success",
	"lifecycle/ends-stream", "lifecycle/reaps-cli", "lifecycle/no-stray-process"}

// appServerSkip says why chk does not judge case c ("" when it does): the
// app-server checks judge only app-server cases, and of the other checks
// only appServerGeneric judge them; likewise for the cases of clients of
// gemini --acp (acpClientSkip).
func appServerSkip(chk *Check, c *Case) string {
	if why := acpClientSkip(chk, c); why != "" {
		return why
	}
	return surfaceSkip(chk, c, AgentAppServer, "/app-server-", appServerGeneric,
		"judges the JSONL streams of the CLIs, not codex app-server", "applies to codex app-server clients only")
}

// surfaceSkip says why chk does not judge c for the clients of one
// JSON-RPC surface, the cases of agent: the checks whose ID holds mark
// judge only those cases, and of the others only generic judge them
// (notMine and onlyMine are the reasons).
func surfaceSkip(chk *Check, c *Case, agent, mark string, generic []string, notMine, onlyMine string) string {
	mine := strings.Contains(chk.ID, mark)
	switch {
	case c.Agent == agent && !mine && !slices.Contains(generic, chk.ID):
		return notMine
	case c.Agent != agent && mine:
		return onlyMine
	}
	return ""
}

// The checks of app-server clients.
var (
	CheckAppServerTurns = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/app-server-turns", "MUST",
		"Every turn the client starts with turn/start is delivered to its caller when the server's turn/completed comes: one turn_end per turn, ok:true for status completed, ok:false for failed, and not a success for interrupted.",
		srcAppServer("turns")),
		Applies: appServerCase(nil), Judge: judgeAppServerTurns})
	CheckAppServerFailure = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/app-server-reports-failure", "MUST",
		"When the app-server dies, stalls or never answers, the client reports the turn failed, not successful.",
		srcAppServer("lifecycle")),
		Applies: appServerCase(func(c *Case) bool { return c.Expect.TurnFails }), Judge: judgeReportedFailure})
	CheckAppServerInterrupt = register(&Check{Family: FamilyInterrupt, Rule: rule("interrupt/app-server-turn-interrupt", "MUST",
		"An interrupt is sent to the server as turn/interrupt for the running turn (not a signal, not a kill), and the turn ends when the server's turn/completed (status interrupted) comes.",
		srcAppServer("interrupt")),
		Applies: appServerCase(func(c *Case) bool { return c.Interrupt != nil }), Judge: judgeAppServerInterrupt})
	CheckAppServerApproval = register(&Check{Family: FamilyControl, Rule: rule("control/app-server-approval", "MUST",
		"Every approval request of the server is answered exactly once, with its id, with the decision of the caller's policy (allow: accept; deny: decline).",
		srcAppServer("approvals")+"; "+srcAppServer("ids")),
		Applies: appServerCase(func(c *Case) bool { return strings.Contains(c.Fixture, "approval") }), Judge: judgeAppServerApproval})
	CheckAppServerRequests = register(&Check{Family: FamilyOutput, Rule: rule("output/app-server-requests", "MUST",
		"The client speaks the server's protocol: initialize first, only methods the server knows, with params, no answer to a request the server did not make or already had answered.",
		srcAppServer("initialize")+"; "+srcAppServer("ids")),
		Applies: appServerCase(nil), Judge: judgeAppServerRequests})
	CheckAppServerResume = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/app-server-resume", "MUST",
		"A start that asks to resume thread X has the client resume X in the app-server it starts: thread/resume with threadId X, its turns on X, no thread/start (a new thread loses the conversation) and no other thread. The resumed thread's turn reaches the caller (a turn_end, ok:true for a turn the server completed). A thread the server does not have is refused (no rollout found for thread id X): the client reports the turn failed, says why, and starts no new thread in its place.",
		srcAppServer("resume")),
		Applies: appServerCase(func(c *Case) bool { return c.Resume != "" }), Judge: judgeAppServerResume})
	CheckAppServerSameThread = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/app-server-same-thread", "MUST",
		"Every later turn of a session runs on the session's thread: in the app-server of the earlier turns, or in a new app-server that resumed the thread by its id (thread/resume); never on a new thread (thread/start), which loses the conversation without the caller knowing.",
		srcAppServer("resume")),
		Applies: appServerCase(func(c *Case) bool { return len(c.Prompts) > 1 }), Judge: judgeAppServerSameThread})
	CheckAppServerRestarts = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/app-server-restarts", "SHOULD",
		"After the app-server died in a turn, the caller's next turn works: the client starts a new app-server, resumes the thread there (thread/resume with the thread id of the first), and the turn's outcome reaches the caller, rather than failing every turn from then on.",
		srcAppServer("lifecycle")+"; "+srcAppServer("resume")),
		Applies: appServerCase(func(c *Case) bool { return c.Expect.NextTurn && c.Expect.CLIDies }), Judge: judgeAppServerRestarts})
	CheckAppServerText = register(&Check{Family: FamilyLossless, Rule: rule("lossless/app-server-text", "MUST",
		"The agent's text reaches the caller whole: per turn, the text of the unified textChunk events is the text of the turn's agentMessage items, multibyte characters included however the bytes were split across reads.",
		srcAppServer("items")+"; "+srcAppServer("framing")),
		Applies: appServerCase(func(c *Case) bool { return !c.Expect.TurnFails && c.Interrupt == nil }), Judge: judgeAppServerText})
)

// appServerCase applies a check to app-server cases (those cond accepts).
func appServerCase(cond func(*Case) bool) func(*Case, *Hello) (bool, string) {
	return func(c *Case, _ *Hello) (bool, string) {
		if c.Agent != AgentAppServer {
			return false, "applies to codex app-server clients only"
		}
		if cond != nil && !cond(c) {
			return false, "not this kind of case"
		}
		return true, ""
	}
}

// appServerCases are the cases of app-server clients, when agents names
// AgentAppServer: every app-server fixture a client can run in one
// process, the approval fixture under both policies, the interrupt in its
// window, faults of the pipe and of the protocol, and the starts that
// resume a thread of an earlier process (the resume fixture's second
// process) or one the server does not have.
func appServerCases(agents []string) ([]*Case, error) {
	if !slices.Contains(agents, AgentAppServer) {
		return nil, nil
	}
	names, err := asfixtures.Names()
	if err != nil {
		return nil, err
	}
	var cases []*Case
	byScenario := map[string]*transcript.Transcript{}
	for _, name := range names {
		t, err := asfixtures.Load(name)
		if err != nil {
			return nil, err
		}
		scenario := strings.TrimPrefix(t.Header.Scenario, asfixtures.Prefix)
		byScenario[scenario] = t
		if len(t.Processes()) > 1 {
			continue
		}
		c := &Case{ID: AgentAppServer + "/" + scenario, Agent: AgentAppServer, Fixture: name, Permission: "allow",
			Prompts: appServerPrompts(t), Description: t.Header.Description, CLIVersion: t.Header.CLIVersion}
		switch scenario {
		case "interrupt":
			c.Interrupt = &InterruptPlan{AfterEvents: linesUntilCommand(t)}
			c.Expect.Cancelled = true
		case "approval-decline":
			c.Permission = "deny"
		case "api-error":
			c.Expect.TurnFails = true
		}
		cases = append(cases, c)
		if scenario == "approval-accept" {
			deny := *c
			deny.ID = c.ID + "/policy-deny"
			deny.Permission = "deny"
			deny.Description = "the same session with a deny policy: the client must answer decline"
			cases = append(cases, &deny)
		}
		if scenario == "unicode" {
			cases = append(cases, withSplitCharacters(c))
		}
	}
	if t := byScenario["single-tool"]; t != nil {
		base := AgentAppServer + "/single-tool"
		one := appServerPrompts(t)
		outs := countOut(t.Steps)
		for _, v := range []struct {
			variant, faults, description string
			expect                       Expect
			quiet                        bool
		}{
			{"slicer", "slicer:max=7,delay_us=300", "every stdout line cut into writes of at most 7 bytes, 0.3 ms apart", Expect{}, false},
			{"unknown-method", "unknown_method:after=" + strconv.Itoa(outs/2), "a notification of a method no client knows, in the middle of the turn", Expect{Unknown: true}, false},
			{"unknown-field", "unknown_field", "a field no client knows in one notification", Expect{Unknown: true}, false},
			{"answer-twice", "answer_twice:nth=3", "the server answers turn/start twice (the same id): the second answer names no pending request", Expect{Unknown: true}, false},
			{"killed", "die:signal=SIGKILL,after=" + strconv.Itoa(outs-3), "the server is killed by SIGKILL before the turn completes", Expect{TurnFails: true}, false},
			{"stall", "stall:after=" + strconv.Itoa(outs-3), "the server stops writing before the turn completes and stays alive; the runner closes", Expect{TurnFails: true, Stall: true}, true},
		} {
			c := &Case{ID: base + "/" + v.variant, Agent: AgentAppServer, Fixture: t.Name, Faults: v.faults, Permission: "allow",
				Prompts: one, Expect: v.expect, Description: v.description, CLIVersion: t.Header.CLIVersion}
			if v.quiet {
				c.CloseWhenQuiet = 500e6 // 500 ms
			}
			cases = append(cases, c)
		}
		// No case leaves turn/start unanswered (fault answer_never): the
		// server answers it at once, before the turn's notifications
		// (docs/protocols/codex-app-server.md#turns), so a client that
		// waits for that answer, with a timeout of its own, is right to.
		//
		// An interrupt where the fixture has no interrupted branch: the
		// fake answers turn/interrupt as the server does, from the turn's
		// own lines.
		at := linesUntilCommand(t)
		cases = append(cases, &Case{ID: base + "/interrupt-while-running", Agent: AgentAppServer, Fixture: t.Name,
			Faults: "stall:after=" + strconv.Itoa(at), Permission: "allow", Prompts: one, CLIVersion: t.Header.CLIVersion,
			Interrupt: &InterruptPlan{AfterEvents: at}, Expect: Expect{Cancelled: true, Stall: true},
			Description: fmt.Sprintf("interrupt once the command started (the server stalls after its line %d)", at)})
	}
	if t := byScenario["resume"]; t != nil && byScenario["plain-text"] != nil && len(t.Processes()) > 1 {
		cases = append(cases, appServerResumeCases(t, byScenario["plain-text"])...)
	}
	return cases, nil
}

// appServerResumeCases are the cases of threads across processes: an
// app-server killed in the first turn, whose thread the next turn resumes
// in a new process; and the starts that resume a thread: one an earlier
// process kept (the resume fixture's thread, its first turn done, under
// resumeID; a younger thread of the same directory beside it), whose next
// turn is the fixture's second process; and one no process kept (the
// server refuses it: no rollout found), on plain-text.
func appServerResumeCases(resume, plain *transcript.Transcript) []*Case {
	seeds := []fakecli.SessionSeed{
		{CLI: "codex", ID: resumeID, Fixture: resume.Name, Next: 1, Title: "the thread to resume", Age: time.Hour},
		{CLI: "codex", ID: decoyID, Fixture: resume.Name, Next: 1, Title: "a later thread", Age: time.Minute},
	}
	both := append(appServerPartPrompts(resume, 0), appServerPartPrompts(resume, 1)...)
	return []*Case{
		{ID: AgentAppServer + "/resume/killed-then-turn", Agent: AgentAppServer, Fixture: resume.Name, Permission: "allow", Prompts: both,
			Faults: "die:signal=SIGKILL,after=" + strconv.Itoa(countOut(resume.Steps)-3), FaultsFirstOnly: true, CLIVersion: resume.Header.CLIVersion,
			Expect:      Expect{TurnFails: true, NextTurn: true, CLIDies: true},
			Description: "the app-server is killed by SIGKILL before the first turn completes; the caller's next turn must work: a new app-server that resumes the thread of the first (thread/resume) runs it"},
		{ID: AgentAppServer + "/resume", Agent: AgentAppServer, Fixture: resume.Name, Permission: "allow",
			Prompts: appServerPartPrompts(resume, 1), Resume: resumeID, Sessions: seeds, CLIVersion: resume.Header.CLIVersion,
			Description: "start by resuming a thread an earlier app-server process ran a turn on: the client must send thread/resume with its id in the app-server it starts and run the turn on it (a younger thread of the same directory is kept too)"},
		{ID: AgentAppServer + "/plain-text/resume-unknown", Agent: AgentAppServer, Fixture: plain.Name, Permission: "allow",
			Prompts: appServerPrompts(plain), Resume: unknownID, Sessions: seeds[1:], CLIVersion: plain.Header.CLIVersion,
			Expect:      Expect{TurnFails: true, UnknownSession: true},
			Description: "start by resuming a thread the server does not have (no rollout found for thread id): the client must report the failure, not start a new thread in its place"},
	}
}

// appServerPrompts are a fixture's prompts, as its userMessage items
// carry them, one per turn/start of its first process.
func appServerPrompts(t *transcript.Transcript) []string {
	return appServerPartPrompts(t, 0)
}

// appServerPartPrompts are the prompts of one process part of a fixture.
func appServerPartPrompts(t *transcript.Transcript, part int) []string {
	var out []string
	want := false
	for _, s := range t.Processes()[part] {
		switch {
		case s.Op == transcript.OpLabel:
			want = false
			if len(out) > 0 && s.Label != "" {
				return out // a branch: the main path's prompts are in
			}
		case s.Op == transcript.OpIn && s.Match != nil && s.Match["method"] == "turn/start":
			want = true
		case s.Op == transcript.OpOut && want && strings.Contains(s.Text, `"type":"userMessage"`):
			m, err := transcript.ParseRPC([]byte(s.Text))
			if err != nil {
				continue
			}
			if text, ok := transcript.Lookup(m.Obj, "/params/item/content/0/text"); ok {
				if str, ok := text.(string); ok {
					out = append(out, str)
					want = false
				}
			}
		}
	}
	if len(out) == 0 {
		out = []string{"Please do what the fixture " + t.Header.Scenario + " shows."}
	}
	return out
}

// linesUntilCommand counts the stdout lines up to the first commandExecution
// item/started: where the interrupt fixture's window begins.
func linesUntilCommand(t *transcript.Transcript) int {
	n := 0
	for _, s := range t.Steps {
		if s.Op != transcript.OpOut {
			continue
		}
		n++
		if strings.Contains(s.Text, `"method":"item/started"`) && strings.Contains(s.Text, `"type":"commandExecution"`) {
			return n
		}
	}
	return n
}

// rpcLine is one JSON-RPC message the server wrote, or the client sent.
type rpcLine struct {
	msg *transcript.RPCMessage
	raw []byte
}

// serverLines are the JSON-RPC messages the fake app-servers wrote, in
// order (lines that are not messages left out).
func (o *Observation) serverLines() []rpcLine {
	var out []rpcLine
	for _, w := range o.Wire {
		for _, l := range bytes.Split(w.Bytes, []byte("\n")) {
			l = bytes.TrimSuffix(l, []byte("\r"))
			if m, err := transcript.ParseRPC(l); err == nil {
				out = append(out, rpcLine{msg: m, raw: l})
			}
		}
	}
	return out
}

// completedTurns are the turn/completed notifications the server wrote:
// each turn's status, in order.
func (o *Observation) completedTurns() []string {
	var out []string
	for _, l := range o.serverLines() {
		if l.msg.Kind == transcript.RPCNotification && l.msg.Method == "turn/completed" {
			st, _ := transcript.Lookup(l.msg.Obj, "/params/turn/status")
			s, _ := st.(string)
			out = append(out, s)
		}
	}
	return out
}

// promptOfTurns maps each turn the servers completed (completedTurns'
// order) to the caller's prompt it ran: the turn's id is the one the
// server answered the client's turn/start with, and that request's input
// holds the prompt. A turn that never completed (its server died) has no
// entry, so the turns after it still meet their own turn_end; a turn whose
// request names no prompt left takes the next prompt in order.
func (o *Observation) promptOfTurns() []int {
	type key struct {
		pid int
		id  string
	}
	input := map[key]string{} // turn/start request -> its text
	for _, r := range o.Fake {
		if r.Kind != "stdin" {
			continue
		}
		if m, err := transcript.ParseRPC([]byte(r.Text)); err == nil && m.Kind == transcript.RPCRequest && m.Method == "turn/start" {
			t, _ := transcript.Lookup(m.Obj, "/params/input/0/text")
			input[key{r.PID, m.ID}], _ = t.(string)
		}
	}
	text := map[string]string{} // turn id -> the prompt text that started it
	var done []string           // completed turn ids, in order
	for _, w := range o.Wire {
		for _, l := range bytes.Split(w.Bytes, []byte("\n")) {
			m, err := transcript.ParseRPC(bytes.TrimSuffix(l, []byte("\r")))
			if err != nil {
				continue
			}
			switch {
			case m.Kind == transcript.RPCResponse:
				if id, ok := transcript.Lookup(m.Obj, "/result/turn/id"); ok {
					if ids, ok := id.(string); ok {
						text[ids] = input[key{w.PID, m.ID}]
					}
				}
			case m.Kind == transcript.RPCNotification && m.Method == "turn/completed":
				id, _ := transcript.Lookup(m.Obj, "/params/turn/id")
				ids, _ := id.(string)
				done = append(done, ids)
			}
		}
	}
	out := make([]int, len(done))
	next := 0
	for i, id := range done {
		j := next
		if t := text[id]; t != "" {
			for k := next; k < len(o.Case.Prompts); k++ {
				if strings.Contains(t, o.Case.Prompts[k]) {
					j = k
					break
				}
			}
		}
		out[i] = j
		next = j + 1
	}
	return out
}

func judgeAppServerTurns(o *Observation) Outcome {
	turns := o.completedTurns()
	ends := o.TurnEnds()
	if len(turns) == 0 {
		return Outcome{Skip: true, Actual: "the server completed no turn (the client started none, or the server failed first)"}
	}
	prompt := o.promptOfTurns()
	if last := prompt[len(prompt)-1]; len(ends) <= last {
		return failf(fmt.Sprintf("a turn_end for each of the %d turns the server completed", len(turns)),
			"%d turn_end record(s): a turn the server completed was never delivered", len(ends))
	}
	for n, st := range turns {
		i := prompt[n]
		r := ends[i]
		switch st {
		case "completed":
			if !r.OK {
				return failf("turn_end ok:true for a turn completed", "turn %d: ok:false, error %q", i+1, clip(r.Error, 200))
			}
		case "failed":
			if r.OK {
				return failf("turn_end ok:false for a turn failed", "turn %d: ok:true", i+1)
			}
		case "interrupted":
			if r.OK && r.Reason != "cancelled" {
				return failf("turn_end ok:false or reason cancelled for an interrupted turn", "turn %d: ok:true, reason %q", i+1, r.Reason)
			}
		}
	}
	return pass()
}

// judgeReportedFailure passes when some turn_end (or the end record) says
// ok:false: the clients of codex app-server and of gemini --acp must
// report a server or agent that died, stalled or never answered.
func judgeReportedFailure(o *Observation) Outcome {
	ends := o.TurnEnds()
	if len(ends) == 0 {
		return failf("turn_end ok:false", "no turn_end at all")
	}
	for _, r := range ends {
		if !r.OK {
			return pass()
		}
	}
	if end, ok := o.End(); ok && !end.OK {
		return pass()
	}
	return failf("turn_end ok:false (or end ok:false)", "ok:true everywhere: the failure was reported as success")
}

// clientLines are the stdin lines the fakes logged, decoded.
func (o *Observation) clientLines(log []fakecli.Observation) []clientLine {
	var out []clientLine
	for _, r := range log {
		if r.Kind != "stdin" {
			continue
		}
		m, _ := transcript.ParseRPC([]byte(r.Text))
		out = append(out, clientLine{msg: m, text: r.Text, matched: r.Matched, tms: r.TMS})
	}
	return out
}

// clientLine is one stdin line of the fake app-server and what took it.
type clientLine struct {
	msg     *transcript.RPCMessage // nil when not a message
	text    string
	matched string
	tms     int64
}

func judgeAppServerInterrupt(o *Observation) Outcome {
	log := o.Fake
	if o.FakeAtGiveUp != nil {
		log = o.FakeAtGiveUp
	} else if o.FakeAtTurnEnd != nil {
		log = o.FakeAtTurnEnd
	}
	var sent, signalled bool
	for _, r := range log {
		switch r.Kind {
		case "signal":
			if !sent {
				signalled = true
			}
		case "stdin":
			if m, err := transcript.ParseRPC([]byte(r.Text)); err == nil && m.Kind == transcript.RPCRequest && m.Method == "turn/interrupt" {
				sent = true
			}
		}
	}
	switch {
	case signalled && !sent:
		return failf("turn/interrupt to the server", "the server got a signal instead: the interrupt killed the app-server, with every thread of it")
	case !sent && o.GaveUp:
		return failf("turn/interrupt to the server", "no turn/interrupt, and no turn_end within the interrupt deadline (the runner gave up)")
	case !sent:
		return failf("turn/interrupt to the server", "no turn/interrupt request reached the server")
	}
	for _, st := range o.completedTurns() {
		if st == "interrupted" {
			ends := o.TurnEnds()
			if len(ends) == 0 {
				return failf("a turn_end for the interrupted turn", "none")
			}
			return pass()
		}
	}
	return failf("the server's turn/completed (status interrupted) before the turn ends", "the server never completed the turn interrupted: the client stopped it some other way")
}

func judgeAppServerApproval(o *Observation) Outcome {
	var requests []rpcLine
	for _, l := range o.serverLines() {
		if l.msg.Kind == transcript.RPCRequest && strings.HasSuffix(l.msg.Method, "/requestApproval") {
			requests = append(requests, l)
		}
	}
	if policy := clientApprovalPolicy(o); policy != "untrusted" {
		return Outcome{Skip: true, Actual: fmt.Sprintf("the client set approvalPolicy %s: Codex asks no approval for this command then (it was captured asking under untrusted; run on the real app-server under the client's policy, it ran the command unasked), so no user of the client meets this exchange", policy)}
	}
	if len(requests) == 0 {
		return Outcome{Skip: true, Actual: "the server asked for no approval (the turn did not get that far)"}
	}
	answers := map[string][]clientLine{}
	for _, cl := range o.clientLines(o.Fake) {
		if cl.msg != nil && (cl.msg.Kind == transcript.RPCResponse || cl.msg.Kind == transcript.RPCError) {
			answers[cl.msg.ID] = append(answers[cl.msg.ID], cl)
		}
	}
	want := map[string]bool{"accept": true, "acceptForSession": true}
	wantWord := "accept"
	if o.Case.Permission == "deny" {
		want = map[string]bool{"decline": true, "cancel": true}
		wantWord = "decline"
	}
	for _, rq := range requests {
		got := answers[rq.msg.ID]
		switch {
		case len(got) == 0:
			return failf("one answer to the "+rq.msg.Method+" request (id "+rq.msg.ID+")", "none: the turn waits for ever")
		case len(got) > 1:
			return failf("one answer to the "+rq.msg.Method+" request (id "+rq.msg.ID+")", "%d answers", len(got))
		}
		if got[0].msg.Kind == transcript.RPCError {
			return failf("a decision ("+wantWord+") for the "+rq.msg.Method+" request", "an error answer: %s", clip(got[0].text, 200))
		}
		d, _ := transcript.Lookup(got[0].msg.Obj, "/result/decision")
		if s, _ := d.(string); !want[s] {
			b, _ := json.Marshal(d)
			return failf("decision "+wantWord+" (the policy is "+o.Case.Permission+")", "decision %s", b)
		}
	}
	return pass()
}

func judgeAppServerRequests(o *Observation) Outcome {
	var bad []string
	for _, r := range o.Fake {
		if r.Kind == "stdin" && (r.Matched == "rejected" || r.Matched == "unmatched" || r.Matched == "malformed") {
			bad = append(bad, fmt.Sprintf("%s (%s)", clip(r.Text, 120), r.Matched))
		}
	}
	for _, r := range o.Fake {
		if r.Kind == "protocol_error" && !strings.Contains(r.Message, "stdin closed") {
			bad = append(bad, r.Message)
		}
	}
	if len(bad) > 0 {
		return failf("every request one the server knows and accepts, every answer to a pending request", "%s", strings.Join(bad[:min(len(bad), 5)], "; "))
	}
	return pass()
}

func judgeAppServerText(o *Observation) Outcome {
	if o.Hello == nil || o.Hello.Profile != "unified" {
		return Outcome{Skip: true, Actual: "judged on the unified profile's textChunk events only"}
	}
	// The server's text per turn: its completed agentMessage items.
	var want []string
	cur := ""
	for _, l := range o.serverLines() {
		if l.msg.Kind != transcript.RPCNotification {
			continue
		}
		switch l.msg.Method {
		case "item/completed":
			if typ, _ := transcript.Lookup(l.msg.Obj, "/params/item/type"); typ == "agentMessage" {
				text, _ := transcript.Lookup(l.msg.Obj, "/params/item/text")
				s, _ := text.(string)
				cur += s
			}
		case "turn/completed":
			want = append(want, cur)
			cur = ""
		}
	}
	for i, w := range want {
		got := ""
		for _, ev := range o.EventsOfTurn(i) {
			if ev.Obj["type"] == "textChunk" && ev.Obj["role"] != "user" {
				s, _ := ev.Obj["content"].(string)
				got += s
			}
		}
		if got != w {
			return Outcome{Expected: fmt.Sprintf("turn %d's text: %q", i+1, clip(w, 300)), Actual: fmt.Sprintf("%q", clip(got, 300))}
		}
	}
	return pass()
}

// clientRequest is a request the client sent an app-server: its method
// and the thread it names ("" for none).
type clientRequest struct {
	method, thread string
}

// clientRequests are the requests the client sent the fake app-servers,
// in order.
func (o *Observation) clientRequests() []clientRequest {
	var out []clientRequest
	for _, cl := range o.clientLines(o.Fake) {
		if cl.msg == nil || cl.msg.Kind != transcript.RPCRequest {
			continue
		}
		th, _ := transcript.Lookup(cl.msg.Obj, "/params/threadId")
		s, _ := th.(string)
		out = append(out, clientRequest{method: cl.msg.Method, thread: s})
	}
	return out
}

func judgeAppServerResume(o *Observation) Outcome {
	want := o.Case.Resume
	var resumes []string
	for _, r := range o.clientRequests() {
		switch {
		case r.method == "thread/start":
			return failf("thread/resume of "+want, "thread/start: the client started a new thread instead of (or beside) the one asked for, and the conversation is lost")
		case r.method == "thread/resume" && !strings.EqualFold(r.thread, want):
			what := "thread/resume of " + r.thread
			if strings.EqualFold(r.thread, decoyID) {
				what += " (the most recent thread of the directory, not the one asked for)"
			}
			return failf("thread/resume of "+want, "%s", what)
		case r.method == "thread/resume":
			resumes = append(resumes, r.thread)
		case r.method == "turn/start" && len(resumes) == 0:
			return failf("thread/resume of "+want+" before the turn", "turn/start on %q with no thread/resume before it", r.thread)
		case r.method == "turn/start" && !strings.EqualFold(r.thread, want):
			return failf("the turn on thread "+want, "turn/start on %q", r.thread)
		}
	}
	if len(resumes) == 0 {
		return failf("thread/resume of "+want, "the client never asked an app-server to resume it")
	}
	var refusal string
	for _, r := range o.Fake {
		if r.Kind == "session_error" && strings.EqualFold(r.Session, want) {
			refusal = r.Message
		}
	}
	ends := o.TurnEnds()
	if !o.Case.Expect.UnknownSession {
		if refusal != "" {
			return failf("the server resumes "+want, "the server refused it: %s", clip(refusal, 200))
		}
		turns := o.completedTurns()
		switch {
		case len(turns) == 0:
			return failf("the caller's turn run on the resumed thread", "the server completed no turn on it: the prompt never reached the thread")
		case len(ends) == 0:
			return failf("a turn_end for the resumed thread's turn", "none: the outcome never reached the caller")
		case turns[0] == "completed" && !ends[0].OK:
			return failf("turn_end ok:true for the turn the server completed on the resumed thread", "ok:false, error %q", clip(ends[0].Error, 200))
		}
		return pass()
	}
	if refusal == "" {
		return Outcome{Skip: true, Actual: "the server did not refuse the thread (nothing to judge)"}
	}
	for _, e := range ends {
		if e.OK {
			return failf("turn_end ok:false: the server refused the thread", "turn_end ok:true: a thread the server does not have was reported resumed")
		}
	}
	end, ended := o.End()
	if len(ends) == 0 && !(ended && !end.OK) {
		return failf("turn_end ok:false (or end ok:false)", "no failure reported: the caller never learns the thread is gone")
	}
	extra := []string{end.Error}
	for _, e := range ends {
		extra = append(extra, e.Error)
	}
	hay := errorHaystack(o.EventsOfTurn(0), extra)
	if !hay.tellsNotFound(want) && !hay.holds([]string{foldText(refusal)}) {
		return failf(fmt.Sprintf("the server's refusal %q handed to the caller", clip(refusal, 200)),
			"not in the turn's events, its turn_end or end errors: the user never learns why the turn failed")
	}
	return pass()
}

// clientRequestsByProcess are the requests the client sent each fake
// app-server, by process, in the order the processes started.
func (o *Observation) clientRequestsByProcess() [][]clientRequest {
	var order []int
	index := map[int]int{}
	for _, r := range o.Fake {
		if r.Kind == "start" && slices.Contains(r.Argv, "app-server") {
			index[r.PID] = len(order)
			order = append(order, r.PID)
		}
	}
	out := make([][]clientRequest, len(order))
	for _, r := range o.Fake {
		i, ok := index[r.PID]
		if r.Kind != "stdin" || !ok {
			continue
		}
		m, err := transcript.ParseRPC([]byte(r.Text))
		if err != nil || m.Kind != transcript.RPCRequest {
			continue
		}
		th, _ := transcript.Lookup(m.Obj, "/params/threadId")
		id, _ := th.(string)
		out[i] = append(out[i], clientRequest{method: m.Method, thread: id})
	}
	return out
}

func judgeAppServerSameThread(o *Observation) Outcome {
	want, turns := "", 0
	for p, reqs := range o.clientRequestsByProcess() {
		for _, r := range reqs {
			if r.method != "turn/start" {
				continue
			}
			turns++
			switch {
			case want == "":
				want = r.thread
			case !strings.EqualFold(r.thread, want):
				what := "turn/start on thread " + r.thread
				if p > 0 {
					what += fmt.Sprintf(" in app-server process %d", p+1)
				}
				return failf("every later turn on thread "+want+" (the first turn's)", "%s: a new thread, the conversation lost", what)
			}
		}
	}
	if turns < 2 {
		return Outcome{Skip: true, Actual: "no later turn reached an app-server"}
	}
	return pass()
}

func judgeAppServerRestarts(o *Observation) Outcome {
	procs := o.clientRequestsByProcess()
	ends := o.TurnEnds()
	lastErr := ""
	if len(ends) > 0 && !ends[len(ends)-1].OK {
		lastErr = fmt.Sprintf(" (its turn_end: ok:false, %q)", clip(ends[len(ends)-1].Error, 200))
	}
	if len(procs) < 2 {
		return failf("a new app-server for the next turn", "the client started none: the next turn never reached a server%s", lastErr)
	}
	first := ""
	for _, r := range procs[0] {
		if r.method == "turn/start" {
			first = r.thread
			break
		}
	}
	resumed := false
	for _, reqs := range procs[1:] {
		for _, r := range reqs {
			if r.method == "thread/resume" && strings.EqualFold(r.thread, first) {
				resumed = true
			}
		}
	}
	if !resumed {
		return failf("thread/resume of "+first+" (the first app-server's thread) in the new app-server", "no such thread/resume: the next turn ran on another thread, or on none%s", lastErr)
	}
	turns := o.completedTurns()
	switch {
	case len(turns) == 0:
		return failf("the next turn run by the new app-server", "the server completed no turn: the prompt never reached the resumed thread%s", lastErr)
	case len(ends) == 0:
		return failf("turn_end ok:true for the next turn, which the new app-server completed", "no turn_end")
	case !ends[len(ends)-1].OK:
		return failf("turn_end ok:true for the next turn, which the new app-server completed", "ok:false, error %q", clip(ends[len(ends)-1].Error, 200))
	}
	return pass()
}

// clientApprovalPolicy is the approvalPolicy a client of codex app-server
// ran its turns under: the last one its thread/start or turn/start
// params named, else a config override on its command line (-c
// approval_policy=...), else "unset" (the server's default, which asks no
// approval for a command in the workspace).
func clientApprovalPolicy(o *Observation) string {
	policy := ""
	for _, cl := range o.clientLines(o.Fake) {
		if cl.msg == nil || cl.msg.Kind != transcript.RPCRequest || (cl.msg.Method != "thread/start" && cl.msg.Method != "turn/start") {
			continue
		}
		if p, _ := transcript.Lookup(cl.msg.Obj, "/params/approvalPolicy"); p != nil {
			if s, ok := p.(string); ok {
				policy = s
			} else if b, err := json.Marshal(p); err == nil {
				policy = string(b)
			}
		}
	}
	if policy != "" {
		return policy
	}
	for _, s := range o.FakeStarts() {
		for i, a := range s.Argv {
			v := a
			if (a == "-c" || a == "--config") && i+1 < len(s.Argv) {
				v = s.Argv[i+1]
			}
			if k, val, ok := strings.Cut(v, "="); ok && strings.TrimSpace(k) == "approval_policy" {
				policy = strings.Trim(strings.TrimSpace(val), `"'`)
			}
		}
	}
	if policy == "" {
		return "unset"
	}
	return policy
}
