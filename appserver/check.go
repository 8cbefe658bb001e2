package appserver

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/transcript"
)

var printer = message.NewPrinter(language.English)

// src is the protocol reference section a rule enforces.
func src(anchor string) string { return "docs/protocols/codex-app-server.md#" + anchor }

// The rules a session log is judged by.
var (
	RuleMessage = &finding.Rule{ID: "appserver/message", Level: finding.Must, Source: src("framing"),
		Requirement: "Every line is one JSON-RPC message: a JSON object that is a request (method and id), a notification (method, no id) or a response (id and result or error)."}
	RuleSchema = &finding.Rule{ID: "appserver/schema", Level: finding.Must, Source: src("schemas"),
		Requirement: "Every message matches the JSON Schema Codex generates for its method (`codex app-server generate-json-schema`)."}
	RuleUnknownMethod = &finding.Rule{ID: "appserver/unknown-method", Level: finding.Drift, Source: src("schemas"),
		Requirement: "A method the generated schemas do not name is drift: a newer or older Codex, or an experimental method."}
	RuleIDReused = &finding.Rule{ID: "appserver/id-reused", Level: finding.Must, Source: src("ids"),
		Requirement: "A request id is not used again while the request it named is still unanswered (per direction)."}
	RuleResponseUnmatched = &finding.Rule{ID: "appserver/response-unmatched", Level: finding.Must, Source: src("ids"),
		Requirement: "Every response answers a request of the other side that is still unanswered: no id is answered twice, none that was never asked."}
	RuleRequestUnanswered = &finding.Rule{ID: "appserver/request-unanswered", Level: finding.Must, Source: src("ids"),
		Requirement: "The server answers every request of the client before it exits."}
	RuleServerRequestUnanswered = &finding.Rule{ID: "appserver/server-request-unanswered", Level: finding.Must, Source: src("approvals"),
		Requirement: "The client answers every request of the server (approvals) while its turn runs: an unanswered approval stalls the turn for good."}
	RuleTurnCompleted = &finding.Rule{ID: "appserver/turn-completed", Level: finding.Must, Source: src("turns"),
		Requirement: "Every turn that turn/start began ends with exactly one turn/completed (status completed, interrupted or failed) before the server exits."}
	RuleTurnOrder = &finding.Rule{ID: "appserver/turn-order", Level: finding.Must, Source: src("turns"),
		Requirement: "Item notifications name a turn that has started and not yet completed; turn/completed comes once per turn."}
	RuleItemCompleted = &finding.Rule{ID: "appserver/item-completed", Level: finding.Should, Source: src("items"),
		Requirement: "In a turn that completes normally every item/started has its item/completed before turn/completed (an interrupted turn may leave a running command without one)."}
	RuleInitializeFirst = &finding.Rule{ID: "appserver/initialize-first", Level: finding.Must, Source: src("initialize"),
		Requirement: "The client's first request is initialize, sent once per connection."}
	// RuleOneSide records that a log holds the server's lines alone (its
	// stdout, as a user tees it): what needs the client's lines is not
	// judged (ServerOnlyNotJudged).
	RuleOneSide = &finding.Rule{ID: "appserver/log/server-only", Level: finding.Info, Source: src("one-direction-logs"),
		Requirement: "A log of the server's lines alone is judged on what one direction shows: framing, the schema of the server's notifications and requests and of its errors, turns and items."}
)

// ServerOnlyNotJudged are the rules a log of the server's lines alone
// cannot be judged by: each needs what the client sent (the requests the
// server's responses answer, the client's answers to the server's
// requests, its initialize).
var ServerOnlyNotJudged = []*finding.Rule{RuleIDReused, RuleResponseUnmatched, RuleRequestUnanswered, RuleServerRequestUnanswered, RuleInitializeFirst}

// Rules lists every rule, for catalogues.
func Rules() []*finding.Rule {
	return []*finding.Rule{RuleMessage, RuleSchema, RuleUnknownMethod, RuleIDReused, RuleResponseUnmatched, RuleRequestUnanswered,
		RuleServerRequestUnanswered, RuleTurnCompleted, RuleTurnOrder, RuleItemCompleted, RuleInitializeFirst, RuleOneSide}
}

// Dir is the direction of a message.
type Dir int

// The directions.
const (
	// FromClient is what the client writes on the server's stdin.
	FromClient Dir = iota
	// FromServer is what the server writes on its stdout.
	FromServer
)

// String names the side: "client" or "server".
func (d Dir) String() string {
	if d == FromClient {
		return "client"
	}
	return "server"
}

// EventKind is what an Event is.
type EventKind int

// The kinds of Event.
const (
	// EvMessage is one line of either side.
	EvMessage EventKind = iota
	// EvStdinClosed is the client closing the server's stdin.
	EvStdinClosed
	// EvExit is the server's exit: the end of one process.
	EvExit
	// EvEnd is the end of a log (a wire copy, a tee of stdout) that does
	// not record the server's exit: it is judged as the exit is, in words
	// that say the log ended.
	EvEnd
)

// Event is one thing that happened in a session, located in its log.
type Event struct {
	Kind EventKind
	Dir  Dir
	// Text is the line as written (templates filled, for transcripts).
	Text string
	// Line and Offset locate the event in the log file.
	Line   int
	Offset int64
	// Msg is the decoded message (EvMessage; nil to decode Text).
	Msg *transcript.RPCMessage
	// Partial marks a client message that a transcript holds only as a
	// match (the fields a replay requires): it is not judged by schema.
	Partial bool
	// Exit is how the server ended at an EvExit of a transcript: its exit
	// code ("0") or the signal it died of; "" when the path reached no
	// exit step.
	Exit string
}

// pending is an unanswered request.
type pending struct {
	method string
	line   int
	offset int64
}

// turnState is one turn the server began.
type turnState struct {
	line      int
	offset    int64
	started   bool
	completed bool
	open      map[string]int // item id -> line of its item/started
}

// Checker judges the events of one session, one process at a time.
type Checker struct {
	// Schema judges each message; nil skips schema checks.
	Schema *Schema
	// File names the log in findings.
	File string
	// Report receives each finding.
	Report func(finding.Finding)
	// ServerOnly says the log holds the server's lines alone (its stdout):
	// the rules that need the client's lines (ServerOnlyNotJudged) are
	// not judged, a response is judged only when it is an error (every
	// error has one schema; a result's schema depends on the request it
	// answers), and a turn begins at its turn/started.
	ServerOnly bool

	clientPending map[string]pending // client requests awaiting the server
	serverPending map[string]pending // server requests awaiting the client
	turns         map[string]*turnState
	turnOrder     []string
	sawRequest    bool
	initialized   bool
	stdinClosed   bool
}

// Reset starts a new process (a new connection): ids and turns are per
// connection.
func (c *Checker) Reset() {
	c.clientPending = map[string]pending{}
	c.serverPending = map[string]pending{}
	c.turns = map[string]*turnState{}
	c.turnOrder = nil
	c.sawRequest, c.initialized, c.stdinClosed = false, false, false
}

// report hands on a finding at ev: where (ev's line and offset, ptr in
// its message), what is wrong (msg) and what was expected.
func (c *Checker) report(r *finding.Rule, ev Event, ptr, msg, expected string) {
	if c.Report != nil {
		c.Report(finding.Finding{Rule: r, File: c.File, Line: ev.Line, Offset: ev.Offset, Pointer: ptr, Message: msg, Expected: expected})
	}
}

// Event judges one event.
func (c *Checker) Event(ev Event) {
	if c.clientPending == nil {
		c.Reset()
	}
	switch ev.Kind {
	case EvStdinClosed:
		c.stdinClosed = true
		return
	case EvExit, EvEnd:
		c.exit(ev)
		c.Reset()
		return
	}
	m := ev.Msg
	if m == nil {
		var err error
		if m, err = transcript.ParseRPC([]byte(ev.Text)); err != nil {
			c.report(RuleMessage, ev, "", fmt.Sprintf("%s line is not a JSON-RPC message: %v", ev.Dir, err), "a JSON object that is a request, a notification or a response")
			return
		}
	}
	switch m.Kind {
	case transcript.RPCRequest:
		c.request(ev, m)
	case transcript.RPCNotification:
		c.schema(ev, m, "notification", m.Method, m.Obj)
		if ev.Dir == FromServer {
			c.notification(ev, m)
		}
	default:
		c.response(ev, m)
	}
}

func (c *Checker) request(ev Event, m *transcript.RPCMessage) {
	mine, other := c.clientPending, "client"
	if ev.Dir == FromServer {
		mine, other = c.serverPending, "server"
	}
	if p, ok := mine[m.ID]; ok && !c.ServerOnly {
		c.report(RuleIDReused, ev, "/id", fmt.Sprintf("the %s reuses id %s while its %s request of line %d is unanswered", other, m.ID, p.method, p.line), "an id no unanswered request of the "+other+" has")
	}
	if ev.Dir == FromClient {
		if !c.sawRequest && m.Method != "initialize" {
			c.report(RuleInitializeFirst, ev, "/method", fmt.Sprintf("the client's first request is %s, not initialize", m.Method), "initialize first")
		} else if c.sawRequest && m.Method == "initialize" {
			c.report(RuleInitializeFirst, ev, "/method", "the client sends initialize a second time on one connection", "initialize once per connection")
		}
		c.sawRequest = true
	}
	mine[m.ID] = pending{method: m.Method, line: ev.Line, offset: ev.Offset}
	c.schema(ev, m, "request", m.Method, m.Obj)
}

func (c *Checker) response(ev Event, m *transcript.RPCMessage) {
	theirs, asker := c.serverPending, "server"
	if ev.Dir == FromServer {
		theirs, asker = c.clientPending, "client"
	}
	if c.ServerOnly {
		// The request it answers is not in the log: only an error's
		// object has a schema of its own.
		if m.Kind == transcript.RPCError && c.Schema != nil && c.Schema.errorObj != nil {
			for _, pr := range check(c.Schema.errorObj, m.Obj["error"], "/error") {
				c.report(RuleSchema, ev, pr.Pointer, fmt.Sprintf("an error of the server: %s", pr.Message), "an error object valid under the schema (code, message)")
			}
		}
		return
	}
	p, ok := theirs[m.ID]
	if !ok {
		c.report(RuleResponseUnmatched, ev, "/id", fmt.Sprintf("the %s answers id %s, which names no unanswered request of the %s (answered twice, or never asked)", ev.Dir, m.ID, asker), "the id of an unanswered request of the "+asker)
		return
	}
	delete(theirs, m.ID)
	if m.Kind == transcript.RPCError {
		if c.Schema != nil && c.Schema.errorObj != nil && !ev.Partial {
			for _, pr := range check(c.Schema.errorObj, m.Obj["error"], "/error") {
				c.report(RuleSchema, ev, pr.Pointer, fmt.Sprintf("the error answering %s: %s", p.method, pr.Message), "an error object valid under the schema (code, message)")
			}
		}
		return
	}
	if c.Schema != nil && !ev.Partial {
		if sc, ok := c.Schema.responses[p.method]; ok {
			for _, pr := range check(sc, m.Obj["result"], "/result") {
				c.report(RuleSchema, ev, pr.Pointer, fmt.Sprintf("the result of %s: %s", p.method, pr.Message), "a result valid under the schema of "+p.method+"'s response")
			}
		}
	}
	if ev.Dir != FromServer {
		return
	}
	switch p.method {
	case "initialize":
		c.initialized = true
	case "turn/start":
		res, _ := m.Obj["result"].(map[string]any)
		t, _ := res["turn"].(map[string]any)
		if id, _ := t["id"].(string); id != "" {
			c.turn(id, ev)
		}
	}
}

// turn returns the state of the turn id, making it at ev when new.
func (c *Checker) turn(id string, ev Event) *turnState {
	t, ok := c.turns[id]
	if !ok {
		t = &turnState{line: ev.Line, offset: ev.Offset, open: map[string]int{}}
		c.turns[id] = t
		c.turnOrder = append(c.turnOrder, id)
	}
	return t
}

func (c *Checker) notification(ev Event, m *transcript.RPCMessage) {
	params, _ := m.Obj["params"].(map[string]any)
	turnID := func() string {
		if s, _ := params["turnId"].(string); s != "" {
			return s
		}
		t, _ := params["turn"].(map[string]any)
		s, _ := t["id"].(string)
		return s
	}
	switch m.Method {
	case "turn/started":
		if id := turnID(); id != "" {
			t := c.turn(id, ev)
			if t.completed {
				c.report(RuleTurnOrder, ev, "/params/turn/id", fmt.Sprintf("turn %s starts after its turn/completed", id), "turn/started before turn/completed")
			}
			t.started = true
		}
	case "turn/completed":
		id := turnID()
		if id == "" {
			return
		}
		t := c.turn(id, ev)
		if t.completed {
			c.report(RuleTurnOrder, ev, "/params/turn/id", fmt.Sprintf("a second turn/completed for turn %s", id), "one turn/completed per turn")
			return
		}
		t.completed = true
		status := ""
		if tt, ok := params["turn"].(map[string]any); ok {
			status, _ = tt["status"].(string)
		}
		if status == "completed" && len(t.open) > 0 {
			ids := make([]string, 0, len(t.open))
			for k := range t.open {
				ids = append(ids, k)
			}
			sort.Strings(ids)
			c.report(RuleItemCompleted, ev, "/params/turn", fmt.Sprintf("turn %s completes with item(s) %s started (line %d) and never completed", id, strings.Join(ids, ", "), t.open[ids[0]]), "item/completed of every started item before turn/completed")
		}
	case "item/started", "item/completed":
		id := turnID()
		item, _ := params["item"].(map[string]any)
		itemID, _ := item["id"].(string)
		if id == "" || itemID == "" {
			return
		}
		t, ok := c.turns[id]
		if !ok || t.completed {
			what := "an unknown turn"
			if ok {
				what = "a turn that already completed"
			}
			c.report(RuleTurnOrder, ev, "/params/turnId", fmt.Sprintf("%s of item %s names %s (%s)", m.Method, itemID, what, id), "a turn that has started and not completed")
			return
		}
		if m.Method == "item/started" {
			t.open[itemID] = ev.Line
		} else {
			delete(t.open, itemID)
		}
	}
}

// exit ends a process (or the log): what is still unanswered or running
// now stays so.
func (c *Checker) exit(ev Event) {
	ended := fmt.Sprintf("the server exited (line %d)", ev.Line)
	if ev.Kind == EvEnd {
		ended = fmt.Sprintf("the log ends (line %d)", ev.Line)
	}
	if !c.ServerOnly {
		for _, id := range sortedKeys(c.clientPending) {
			p := c.clientPending[id]
			c.report(RuleRequestUnanswered, Event{Line: p.line, Offset: p.offset}, "/id",
				fmt.Sprintf("the client's %s request (id %s) was never answered: %s", p.method, id, ended), "a response from the server")
		}
		for _, id := range sortedKeys(c.serverPending) {
			p := c.serverPending[id]
			c.report(RuleServerRequestUnanswered, Event{Line: p.line, Offset: p.offset}, "/id",
				fmt.Sprintf("the server's %s request (id %s) was never answered before %s", p.method, id, ended), "an answer from the client")
		}
	}
	for _, id := range c.turnOrder {
		t := c.turns[id]
		if !t.completed {
			c.report(RuleTurnCompleted, Event{Line: t.line, Offset: t.offset}, "",
				fmt.Sprintf("turn %s has no turn/completed: %s", id, ended), "turn/completed (completed, interrupted or failed)")
		}
	}
}

// schema judges a message against the bundle.
func (c *Checker) schema(ev Event, m *transcript.RPCMessage, kind, method string, obj map[string]any) {
	if c.Schema == nil {
		return
	}
	sc, ok := c.Schema.pick(ev.Dir == FromServer, kind, method)
	if !ok {
		c.report(RuleUnknownMethod, ev, "/method", fmt.Sprintf("the %s's %s %q is not in the Codex %s schemas", ev.Dir, kind, method, c.Schema.Version), "a method of the "+ev.Dir.String()+" the schemas name")
		return
	}
	if ev.Partial {
		return // a transcript's match: only what the replay requires
	}
	for _, pr := range check(sc, obj, "") {
		c.report(RuleSchema, ev, pr.Pointer, fmt.Sprintf("%s %s: %s", method, kind, pr.Message), "a "+kind+" valid under the schema of "+method)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
