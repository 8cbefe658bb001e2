package capture

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/transcript"
)

// Drift of the two JSON-RPC surfaces (an ACP agent: Gemini CLI's --acp;
// codex app-server). A capture of either holds both directions: the
// client's lines as in steps (the line it sent kept as "recorded" by ACP
// captures; app-server captures keep what replay matches), the agent's or
// server's as out steps, with the client's request ids templated. The
// comparison follows the paths the capture took (its main path, and each
// branch it recorded: ACP's cancel, the app-server's interrupt) and walks
// the baseline as the fake replays it to a client that sends what the
// capture's client sent: requests matched by method, answers to the
// agent's requests by what they answer (whatever the request's id), a
// line that matches a case (a cancel in a delay's window, an approval's
// decision) taking its branch, turn/interrupt jumping to an app-server
// transcript's "interrupted" branch at its interrupt points
// (appserver.InterruptPoints). Each message is named by what it is
// (rpcKind); per process and direction the sequence of names is compared,
// with the requests left unanswered, the terminal response and the exit,
// and the agent's or server's messages are compared by kind, field and
// enum-like value as the JSON streams are (Shape).

// rpcProto is the JSON-RPC surface a transcript records.
type rpcProto int

const (
	notRPC rpcProto = iota
	protoACP
	protoAppServer
)

// rpcProtoOf tells whether t records a JSON-RPC session, and which.
func rpcProtoOf(t *transcript.Transcript) rpcProto {
	switch {
	case acp.IsTranscript(t):
		return protoACP
	case appserver.IsTranscript(t):
		return protoAppServer
	}
	return notRPC
}

// server names the side that is not the client.
func (p rpcProto) server() string {
	if p == protoACP {
		return "agent"
	}
	return "server"
}

// rpcEvent is one thing the capture's client did: a line it sent, or
// closing stdin.
type rpcEvent struct {
	obj map[string]any
	eof bool
}

// describe names the event for messages.
func (e rpcEvent) describe() string {
	if e.eof {
		return "closing of stdin"
	}
	if m, ok := e.obj["method"].(string); ok {
		return m
	}
	b, _ := json.Marshal(withoutIDs(e.obj))
	return "answer " + clipString(string(b), 100)
}

func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// rpcCapPath is one path through one process of a capture: what the
// client did along it.
type rpcCapPath struct {
	name   string
	events []rpcEvent
}

// rpcBranch is a branch point of a capture's main path: a case of the
// step at (caseIndex >= 0) or the app-server's interrupt (-1).
type rpcBranch struct {
	at, caseIndex int
	label         string
	line          int
}

// rpcCapturePaths lists the paths through process proc of a capture: the
// main path (every in step's line sent, no case of a delay taken, no
// interrupt) and one path per branch point of it, which takes that branch
// and falls through everywhere else.
func rpcCapturePaths(proto rpcProto, proc int, steps []transcript.Step) []rpcCapPath {
	main, branches := rpcWalkCapture(proto, steps, nil)
	paths := []rpcCapPath{{name: fmt.Sprintf("process %d", proc+1), events: main}}
	for _, b := range branches {
		events, _ := rpcWalkCapture(proto, steps, &b)
		name := fmt.Sprintf("process %d via %s (line %d", proc+1, b.label, b.line)
		if b.caseIndex >= 0 {
			name += fmt.Sprintf(", case %d", b.caseIndex+1)
		}
		paths = append(paths, rpcCapPath{name: name + ")", events: events})
	}
	return paths
}

// rpcWalkCapture walks a capture's process along its main path, or
// taking branch take once; it returns the client's events and the main
// path's branch points.
func rpcWalkCapture(proto rpcProto, steps []transcript.Step, take *rpcBranch) ([]rpcEvent, []rpcBranch) {
	labels := transcript.Labels(steps)
	var interrupts map[int]bool
	if proto == protoAppServer {
		interrupts = appserver.InterruptPoints(steps)
	}
	ids := 0
	var events []rpcEvent
	var branches []rpcBranch
	seen := map[int]bool{}
	jump := func(label string) int {
		if j, ok := labels[label]; ok {
			return j
		}
		return len(steps)
	}
	for pc := 0; pc >= 0 && pc < len(steps) && !seen[pc]; {
		seen[pc] = true
		st := steps[pc]
		here := take != nil && take.at == pc
		switch st.Op {
		case transcript.OpIn, transcript.OpDelay:
			for k, c := range st.Cases {
				if take == nil {
					branches = append(branches, rpcBranch{at: pc, caseIndex: k, label: c.Goto, line: st.Line})
				}
			}
			if here && take.caseIndex >= 0 {
				obj := mergeMatch(clientObj(proto, st, &ids), st.Cases[take.caseIndex].Match)
				events = append(events, rpcEvent{obj: obj})
				pc = jump(take.label)
				continue
			}
			if st.Op == transcript.OpIn {
				obj := clientObj(proto, st, &ids)
				events = append(events, rpcEvent{obj: obj})
				if j, ok := rpcCaseTaken(st, obj, labels); ok {
					pc = j
					continue
				}
			}
		case transcript.OpStdinEOF:
			events = append(events, rpcEvent{eof: true})
		case transcript.OpGoto:
			pc = jump(st.Label)
			continue
		case transcript.OpExit, transcript.OpExitSignal, transcript.OpNextProcess:
			return events, branches
		}
		if interrupts[pc] {
			if take == nil {
				branches = append(branches, rpcBranch{at: pc, caseIndex: -1, label: appserver.InterruptLabel, line: st.Line})
			} else if here && take.caseIndex < 0 {
				pc = jump(take.label)
				continue
			}
		}
		pc++
	}
	return events, branches
}

// clientObj is the line the client sent at an in step (or the line that
// ended a delay, recorded on it): the recorded line when there is one,
// else the match, with an id made up (1, 2, ... per process) for a
// request whose id the step captures.
func clientObj(proto rpcProto, st transcript.Step, ids *int) map[string]any {
	if st.Recorded != "" {
		if obj := decodeEvent(st.Recorded); obj != nil {
			return obj
		}
	}
	obj := map[string]any{}
	if st.Match != nil {
		obj = deepCopy(st.Match).(map[string]any)
	}
	if _, ok := obj["method"]; ok {
		for _, ptr := range st.Capture {
			if _, has := obj["id"]; ptr == "/id" && !has {
				*ids++
				obj["id"] = json.Number(fmt.Sprint(*ids))
			}
		}
	}
	if proto == protoACP {
		obj["jsonrpc"] = "2.0"
	}
	return obj
}

// mergeMatch writes a case's match over a client line: what a client that
// takes the case sends (an error replaces a result, and the other way).
func mergeMatch(obj map[string]any, match map[string]any) map[string]any {
	obj = deepCopy(obj).(map[string]any)
	if _, ok := match["error"]; ok {
		delete(obj, "result")
	}
	if _, ok := match["result"]; ok {
		delete(obj, "error")
	}
	var merge func(dst, src map[string]any)
	merge = func(dst, src map[string]any) {
		for k, v := range src {
			if sm, ok := v.(map[string]any); ok {
				if dm, ok := dst[k].(map[string]any); ok {
					merge(dm, sm)
					continue
				}
			}
			dst[k] = deepCopy(v)
		}
	}
	merge(obj, match)
	if e, ok := obj["error"].(map[string]any); ok && len(e) == 0 {
		obj["error"] = map[string]any{"code": json.Number("-32603"), "message": "an error of the client"}
	}
	return obj
}

// rpcMatches reports whether a client line satisfies a JSON-RPC in step's
// match (or a case's): a match with a method takes a request or
// notification of that method, one without (an answer to the other
// side's request, matched by its id) takes an answer, whatever its id;
// every other member must be contained, templates aside.
func rpcMatches(match, obj map[string]any) bool {
	if obj == nil {
		return false
	}
	m := map[string]any{}
	for k, v := range match {
		if k != "id" {
			m[k] = v
		}
	}
	_, wantMethod := match["method"]
	_, hasMethod := obj["method"]
	if _, answer := match["id"]; answer && !wantMethod && hasMethod {
		return false
	}
	ok, _ := transcript.Match(withoutIDs(m), obj, nil)
	return ok
}

// rpcCaseTaken is where the first case of st that obj matches goes.
func rpcCaseTaken(st transcript.Step, obj map[string]any, labels map[string]int) (int, bool) {
	for _, c := range st.Cases {
		if rpcMatches(c.Match, obj) {
			j, ok := labels[c.Goto]
			return j, ok
		}
	}
	return 0, false
}

// rpcLine is one message of a followed path.
type rpcLine struct {
	client bool
	obj    map[string]any // nil when the line is not a JSON object
	step   int            // the step that wrote it (the agent's or server's lines)
}

// rpcWalked is a process followed along a capture's path.
type rpcWalked struct {
	lines []rpcLine
	// exit is how the process ended ("0", "SIGTERM", "(none)").
	exit string
	// problem says where the transcript cannot follow the path.
	problem string
}

// rpcFollow walks the steps of one process as the fake replays them to a
// client that does what events say.
func rpcFollow(proto rpcProto, steps []transcript.Step, events []rpcEvent) rpcWalked {
	var w rpcWalked
	if len(steps) == 0 {
		w.problem = "the baseline has no such process"
		return w
	}
	labels := transcript.Labels(steps)
	var interrupts map[int]bool
	interruptAt := -1
	if proto == protoAppServer {
		interrupts = appserver.InterruptPoints(steps)
		if j, ok := labels[appserver.InterruptLabel]; ok {
			interruptAt = j
		}
	}
	vars := transcript.Vars{}
	next := 0
	interrupting := func(pc int) bool {
		return interruptAt > pc && next < len(events) && !events[next].eof && events[next].obj["method"] == "turn/interrupt"
	}
	end := func(exit string) {
		w.exit = exit
		for ; next < len(events); next++ {
			if !events[next].eof {
				w.problem = fmt.Sprintf("the baseline ends (exit %s) before the client's %s", exit, events[next].describe())
				return
			}
		}
	}
	take := func(st transcript.Step) {
		obj := deepCopy(events[next].obj).(map[string]any)
		next++
		if id, ok := st.Match["id"]; ok {
			if _, m := st.Match["method"]; !m {
				obj["id"] = id // the answer answers this transcript's request
			}
		}
		for name, ptr := range st.Capture {
			if v, ok := transcript.Lookup(obj, ptr); ok {
				vars[name] = v
			}
		}
		w.lines = append(w.lines, rpcLine{client: true, obj: obj})
	}
	limit := 4*len(steps) + 4*len(events) + 16
	for pc, n := 0, 0; ; n++ {
		if pc < 0 || pc >= len(steps) {
			end("(none)")
			return w
		}
		if n > limit {
			w.problem = "the baseline loops without end"
			return w
		}
		st := steps[pc]
		switch st.Op {
		case transcript.OpOut:
			w.lines = append(w.lines, rpcLine{obj: decodeEvent(vars.Fill(st.Text)), step: pc})
		case transcript.OpIn:
			if next >= len(events) || events[next].eof {
				if st.Optional {
					break
				}
				what := "sent nothing more"
				if next < len(events) {
					what = "closed stdin"
				}
				w.problem = fmt.Sprintf("the baseline waits for %s at line %d; the client %s", expectedRPC(st), st.Line, what)
				return w
			}
			if !rpcMatches(st.Match, events[next].obj) {
				if interrupting(pc) {
					pc = interruptAt
					continue
				}
				w.problem = fmt.Sprintf("the baseline expects %s at line %d; the client sent %s", expectedRPC(st), st.Line, events[next].describe())
				return w
			}
			take(st)
			if j, ok := rpcCaseTaken(st, w.lines[len(w.lines)-1].obj, labels); ok {
				pc = j
				continue
			}
		case transcript.OpDelay:
			if next < len(events) && !events[next].eof {
				if j, ok := rpcCaseTaken(st, events[next].obj, labels); ok {
					take(st)
					pc = j
					continue
				}
			}
		case transcript.OpStdinEOF:
			if next >= len(events) || !events[next].eof {
				if interrupting(pc) {
					pc = interruptAt
					continue
				}
				what := "never closed it"
				if next < len(events) {
					what = "sent " + events[next].describe() + " first"
				}
				w.problem = fmt.Sprintf("the baseline waits for the end of stdin at line %d; the client %s", st.Line, what)
				return w
			}
			next++
		case transcript.OpGoto:
			j, ok := labels[st.Label]
			if !ok {
				w.problem = fmt.Sprintf("the baseline's goto at line %d names a missing label %q", st.Line, st.Label)
				return w
			}
			pc = j
			continue
		case transcript.OpExit:
			end(fmt.Sprint(st.Code))
			return w
		case transcript.OpExitSignal:
			end(st.Signal)
			return w
		case transcript.OpNextProcess:
			end("(none)")
			return w
		}
		if interrupts[pc] && interrupting(pc) {
			pc = interruptAt
			continue
		}
		pc++
	}
}

// expectedRPC describes what an in step waits for.
func expectedRPC(st transcript.Step) string {
	if m, ok := st.Match["method"].(string); ok {
		return m
	}
	if st.Match == nil {
		return fmt.Sprintf("the stdin line %q", st.Text)
	}
	return "an answer like " + compactJSON(withoutIDs(st.Match))
}

// rpcKind names a message by what it is, from side's point of view
// ("agent", "server" or "client"): "agent notification
// session/update:tool_call (in_progress)", "server notification
// item/started:commandExecution", "server notification turn/completed
// (interrupted)", "agent request session/request_permission", "agent
// result of session/prompt (end_turn)", "agent error of session/prompt
// (-32603)", "client result of session/request_permission (selected
// allow_once)", "client result of item/commandExecution/requestApproval
// (decline)". asked is the request a response answers (nil when it
// answers none the path holds).
func rpcKind(side string, obj map[string]any, asked map[string]any) string {
	if obj == nil {
		return side + " line that is not a JSON object"
	}
	method, _ := obj["method"].(string)
	_, hasID := obj["id"]
	if method != "" {
		kind := side + " notification " + method
		if hasID {
			kind = side + " request " + method
		}
		params, _ := obj["params"].(map[string]any)
		switch method {
		case acp.MethodSessionUpdate:
			u, _ := params["update"].(map[string]any)
			if s, ok := u["sessionUpdate"].(string); ok {
				kind += ":" + s
			}
			if s, ok := u["status"].(string); ok {
				kind += " (" + s + ")"
			}
		case "item/started", "item/completed":
			it, _ := params["item"].(map[string]any)
			if s, ok := it["type"].(string); ok {
				kind += ":" + s
			}
		case "turn/completed":
			t, _ := params["turn"].(map[string]any)
			if s, ok := t["status"].(string); ok {
				kind += " (" + s + ")"
			}
		}
		return kind
	}
	of := "an unknown request"
	if asked != nil {
		of, _ = asked["method"].(string)
	}
	if e, ok := obj["error"].(map[string]any); ok {
		return fmt.Sprintf("%s error of %s (%v)", side, of, e["code"])
	}
	kind := side + " result of " + of
	r, _ := obj["result"].(map[string]any)
	switch {
	case r["stopReason"] != nil:
		kind += fmt.Sprintf(" (%v)", r["stopReason"])
	case r["decision"] != nil:
		d := r["decision"]
		if m, ok := d.(map[string]any); ok {
			for k := range m {
				d = k // a decision with data: named by its variant
			}
		}
		kind += fmt.Sprintf(" (%v)", d)
	case r["outcome"] != nil:
		o, _ := r["outcome"].(map[string]any)
		kind += fmt.Sprintf(" (%v", o["outcome"])
		if id, ok := o["optionId"]; ok {
			kind += " " + optionKind(asked, id)
		}
		kind += ")"
	}
	return kind
}

// optionKind is the kind of the option a permission answer chose, from
// the request's options (the option's id when the request names none).
func optionKind(asked map[string]any, id any) string {
	params, _ := asked["params"].(map[string]any)
	opts, _ := params["options"].([]any)
	for _, o := range opts {
		om, _ := o.(map[string]any)
		if om["optionId"] == id {
			if k, ok := om["kind"].(string); ok {
				return k
			}
		}
	}
	return fmt.Sprint(id)
}

// rpcEnumKeys are enumKeys and the enum-like fields of the JSON-RPC
// surfaces.
var rpcEnumKeys = func() map[string]bool {
	m := map[string]bool{"sessionUpdate": true, "stopReason": true, "outcome": true, "optionId": true, "itemsView": true, "source": true}
	for k := range enumKeys {
		m[k] = true
	}
	return m
}()

// rpcFreeForm are freeForm and the data-carrying fields of the JSON-RPC
// surfaces (a tool call's raw input and output).
var rpcFreeForm = func() map[string]bool {
	m := map[string]bool{"rawInput": true, "rawOutput": true}
	for k := range freeForm {
		m[k] = true
	}
	return m
}()

// addRPC adds one followed path of process proc: the agent's or server's
// messages to the kinds, fields and values (each step once), and, when the
// path is compared, per direction the sequence of kinds, with the requests
// left unanswered, the terminal response and the exit.
func (s *Shape) addRPC(proto rpcProto, proc int, name string, w rpcWalked, compared bool) {
	server := proto.server()
	asked := map[string]map[string]map[string]any{"client": {}, server: {}} // side -> id -> request
	var order = map[string][]string{"client": nil, server: nil}
	var requests []string // "side request M", in order, for those left unanswered
	open := map[string]map[string]int{"client": {}, server: {}}
	terminal := ""
	for _, l := range w.lines {
		side, other := server, "client"
		if l.client {
			side, other = "client", server
		}
		var req map[string]any
		if l.obj != nil {
			id := idKeyOf(l.obj["id"])
			_, isMethod := l.obj["method"]
			_, hasID := l.obj["id"]
			switch {
			case isMethod && hasID:
				asked[side][id] = l.obj
				open[side][id] = len(requests)
				requests = append(requests, fmt.Sprintf("%s request %v", side, l.obj["method"]))
			case hasID:
				req = asked[other][id]
				if i, ok := open[other][id]; ok {
					requests[i] = ""
					delete(open[other], id)
				}
				delete(asked[other], id)
			}
		}
		k := rpcKind(side, l.obj, req)
		if !l.client {
			if key := [2]int{proc, l.step}; !s.seen[key] {
				s.seen[key] = true
				s.Kinds[k]++
				if s.Fields[k] == nil {
					s.Fields[k] = map[string]bool{}
				}
				if l.obj != nil {
					s.walk(k, l.obj, "", 0)
				}
			}
		}
		if strings.Contains(k, " of "+acp.MethodSessionPrompt) || strings.Contains(k, " turn/completed") {
			terminal = k
		}
		o := order[side]
		if len(o) > 0 && o[len(o)-1] == k {
			continue
		}
		o = append(o, k)
		if n := len(o); n >= 4 && o[n-1] == o[n-3] && o[n-2] == o[n-4] {
			o = o[:n-2]
		}
		order[side] = o
	}
	if !compared {
		return
	}
	var unanswered []string
	for _, r := range requests {
		if r != "" {
			unanswered = append(unanswered, r)
		}
	}
	for _, side := range []string{server, "client"} {
		p := PathShape{Name: name + ", " + side + "'s messages", Order: order[side]}
		if side == server {
			p.Exit, p.Unanswered, p.Terminal = w.exit, unanswered, terminal
			if p.Terminal == "" {
				p.Terminal = "(none)"
			}
		}
		s.Paths = append(s.Paths, p)
	}
}

// idKeyOf is an id's canonical text (1 and 1.0 alike, 1 and "1" not).
func idKeyOf(v any) string {
	b, _ := json.Marshal(v)
	return acp.IDKey(b)
}

// newRPCShape is a Shape with the JSON-RPC surfaces' enum-like and
// free-form fields.
func newRPCShape() *Shape {
	s := newShape()
	s.enum, s.free = rpcEnumKeys, rpcFreeForm
	return s
}

// AlongRPC is Along for the JSON-RPC surfaces: it walks base along every
// path capt took (see above) and returns the shapes of both on those
// paths. Where base cannot follow (it waits for another line, ends
// before the client is done, has no such process), a Change of What
// "path" says so and the path's sequences are not compared. A nil base
// (no fixture) has no process to follow; a nil capt took no path.
func AlongRPC(base, capt *transcript.Transcript) (b, c *Shape) {
	b, c = newRPCShape(), newRPCShape()
	if capt == nil {
		return b, c
	}
	proto := rpcProtoOf(capt)
	var baseProcs [][]transcript.Step
	if base != nil {
		baseProcs = base.Processes()
	}
	captProcs := capt.Processes()
	for pi, proc := range captProcs {
		var bsteps []transcript.Step
		if pi < len(baseProcs) {
			bsteps = baseProcs[pi]
		}
		for _, p := range rpcCapturePaths(proto, pi, proc) {
			cw := rpcFollow(proto, proc, p.events)
			bw := rpcFollow(proto, bsteps, p.events)
			compared := bw.problem == "" && cw.problem == ""
			switch {
			case cw.problem != "":
				b.Problems = append(b.Problems, Change{What: "path", How: "changed", Path: p.name, New: "the capture does not follow its own path: " + cw.problem})
			case bw.problem != "":
				b.Problems = append(b.Problems, Change{What: "path", How: "changed", Path: p.name, New: bw.problem})
			}
			b.addRPC(proto, pi, p.name, bw, compared)
			c.addRPC(proto, pi, p.name, cw, compared)
		}
	}
	if len(baseProcs) > len(captProcs) {
		b.Problems = append(b.Problems, Change{What: "path", How: "changed", Path: fmt.Sprintf("process %d", len(captProcs)+1),
			New: fmt.Sprintf("the baseline has %d processes, the capture %d", len(baseProcs), len(captProcs))})
	}
	return b, c
}
