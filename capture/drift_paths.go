package capture

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

// Drift compares a capture with its baseline along the paths the capture
// took, not along the baseline's main path: a capture of permission-allow
// against the fixture's allow branch (the fixture branches on the
// client's answer), an interrupted run against what the baseline does
// after the same signal at the same point. This file finds those paths:
// capturePaths reads them off a capture (its main path, and one path
// through each of its on_signal branches), each with what the client did
// on the way (stdin lines, closing stdin, the signal), and follow walks a
// baseline process as a fake would replay it to a client doing the same.

// anchor is the point in a process's stdout after which the client did
// something: after the n-th tool start (tool), else after the n-th event
// of kind; n == 0 is the start.
type anchor struct {
	tool bool
	kind string
	n    int
}

func (a anchor) String() string {
	switch {
	case a.n == 0:
		return "at the start"
	case a.tool:
		return fmt.Sprintf("after tool start %d", a.n)
	}
	return fmt.Sprintf("after %s %d", a.kind, a.n)
}

// clientEvent is one thing the client did during a capture.
type clientEvent struct {
	// op is OpIn (a stdin line), OpStdinEOF (stdin closed) or OpOnSignal
	// (signal sent).
	op transcript.Op
	// obj is the stdin line as the capture matched it, completed with the
	// answer the capture's driver gave (a can_use_tool decision); text is
	// a line that is not a JSON object.
	obj  map[string]any
	text string
	// unknownAnswer says the capture does not record how the client
	// answered (a control_response of a scenario not known here).
	unknownAnswer bool
	signal        string
	// where is the anchor of the event; at is how many stdout lines the
	// capture's path had written before it.
	where anchor
	at    int
}

// describe names the event for messages ("the client's ...").
func (e clientEvent) describe() string {
	switch e.op {
	case transcript.OpOnSignal:
		return e.signal
	case transcript.OpStdinEOF:
		return "closing of stdin"
	}
	if e.obj == nil {
		return fmt.Sprintf("stdin line %q", e.text)
	}
	typ, _ := e.obj["type"].(string)
	switch typ {
	case "control_request":
		if r, ok := e.obj["request"].(map[string]any); ok {
			if sub, ok := r["subtype"].(string); ok {
				return "control_request " + sub
			}
		}
	case "control_response":
		if r, ok := e.obj["response"].(map[string]any); ok {
			if inner, ok := r["response"].(map[string]any); ok {
				if b, ok := inner["behavior"].(string); ok {
					return "control_response " + b
				}
			}
			if sub, ok := r["subtype"].(string); ok {
				return "control_response " + sub
			}
		}
	case "":
		return "stdin object " + compactJSON(e.obj)
	}
	return typ + " message"
}

// async reports whether the client's event reaches cli whenever it is
// sent, not when the process reads its next line: signals, and Claude's
// control requests other than initialize (the CLI, and the fake, answer
// those at once, whatever the turn is doing).
func (e clientEvent) async(cli string) bool {
	if e.op == transcript.OpOnSignal {
		return true
	}
	if cli != "claude" || e.op != transcript.OpIn || e.obj == nil || e.obj["type"] != "control_request" {
		return false
	}
	r, _ := e.obj["request"].(map[string]any)
	return r["subtype"] != "initialize"
}

// capPath is one path through one process of a capture.
type capPath struct {
	// name is "process N" for the main path, "process N after SIGINT"
	// for a signal's branch.
	name string
	// steps are the indexes of the steps taken, in the process's steps;
	// outs those of its stdout lines.
	steps, outs []int
	events      []clientEvent
}

// position tracks a path's stdout for anchors.
type position struct {
	cli   string
	tools int
	kinds map[string]int
	last  anchor
	outs  int
}

func newPosition(cli string) *position { return &position{cli: cli, kinds: map[string]int{}} }

// wrote records a stdout line.
func (p *position) wrote(text string) {
	p.outs++
	ev := decodeEvent(text)
	if ev == nil {
		return
	}
	k := kindOf(p.cli, ev)
	p.kinds[k]++
	if toolStarted(p.cli, ev) {
		p.tools++
		p.last = anchor{tool: true, n: p.tools}
		return
	}
	p.last = anchor{kind: k, n: p.kinds[k]}
}

// reached reports whether the stdout written so far includes a.
func (p *position) reached(a anchor) bool {
	switch {
	case a.n == 0:
		return true
	case a.tool:
		return p.tools >= a.n
	}
	return p.kinds[a.kind] >= a.n
}

// capturePaths reads the paths of process proc (0-based) of a capture:
// its main path (no signal taken; in steps consume what the client sent
// and follow the case it matches, if any) and, for every signal an
// on_signal step on the main path sends to a label or to an exit, the
// path that takes it there.
func capturePaths(h transcript.Header, proc int, steps []transcript.Step) []capPath {
	main, branches := walkCapture(h, proc, steps, -1, "")
	paths := []capPath{main}
	seen := map[string]int{}
	for _, b := range branches {
		p, _ := walkCapture(h, proc, steps, b.at, b.signal)
		seen[b.signal]++
		if seen[b.signal] > 1 {
			p.name += fmt.Sprintf(" (%d)", seen[b.signal])
		}
		paths = append(paths, p)
	}
	return paths
}

// branchPoint is an on_signal step of the main path and a signal it acts on.
type branchPoint struct {
	at     int
	signal string
}

// walkCapture walks a capture's process: along its main path, or, when
// signal is set, along the main path to the on_signal step at index at,
// then where that step sends signal. It returns the path and the branch
// points of the main path.
func walkCapture(h transcript.Header, proc int, steps []transcript.Step, at int, signal string) (capPath, []branchPoint) {
	p := capPath{name: fmt.Sprintf("process %d", proc+1)}
	if signal != "" {
		p.name += " after " + signal
	}
	labels := transcript.Labels(steps)
	pos := newPosition(h.CLI)
	var branches []branchPoint
	seen := map[int]bool{}
	for i := 0; i >= 0 && i < len(steps) && !seen[i]; i++ {
		seen[i] = true
		st := steps[i]
		p.steps = append(p.steps, i)
		switch st.Op {
		case transcript.OpOut:
			p.outs = append(p.outs, i)
			pos.wrote(st.Text)
		case transcript.OpIn:
			e := inEvent(h, proc, steps, i, pos)
			p.events = append(p.events, e)
			if j, ok := caseTaken(st, e, labels); ok {
				i = j - 1
			}
		case transcript.OpStdinEOF:
			p.events = append(p.events, clientEvent{op: transcript.OpStdinEOF, where: pos.last, at: pos.outs})
		case transcript.OpGoto:
			j, ok := labels[st.Label]
			if !ok {
				return p, branches
			}
			i = j - 1
		case transcript.OpOnSignal:
			for _, sig := range sortedKeys(st.OnSignal) {
				if !branching(st.OnSignal[sig]) {
					continue
				}
				if signal == "" {
					branches = append(branches, branchPoint{at: i, signal: sig})
				} else if i == at && sig == signal {
					p.events = append(p.events, clientEvent{op: transcript.OpOnSignal, signal: sig, where: pos.last, at: pos.outs})
					action := st.OnSignal[sig]
					if target, ok := strings.CutPrefix(action, "goto:"); ok {
						j, ok := labels[target]
						if !ok {
							return p, branches
						}
						i = j - 1
						continue
					}
					// exit:N or die: the process ends here.
					return p, branches
				}
			}
		case transcript.OpExit, transcript.OpExitSignal, transcript.OpNextProcess:
			return p, branches
		}
	}
	return p, branches
}

// branching reports whether an on_signal action makes a path of its own.
func branching(action string) bool {
	return strings.HasPrefix(action, "goto:") || strings.HasPrefix(action, "exit:") || action == "die"
}

// inEvent is the client's stdin line of the capture's in step i: the
// object it matched, completed with what the capture's driver answered
// when it is a control_response (the recorder keeps only its request id).
func inEvent(h transcript.Header, proc int, steps []transcript.Step, i int, pos *position) clientEvent {
	st := steps[i]
	e := clientEvent{op: transcript.OpIn, where: pos.last, at: pos.outs}
	if st.Match == nil {
		e.text = st.Text
		return e
	}
	e.obj = deepCopy(st.Match).(map[string]any)
	if e.obj["type"] != "control_response" {
		return e
	}
	resp, _ := e.obj["response"].(map[string]any)
	if resp == nil || resp["subtype"] != nil {
		return e
	}
	id, _ := resp["request_id"].(string)
	answer, ok := driverAnswer(h, proc, requestOf(steps[:i], id))
	if !ok {
		e.unknownAnswer = true
		return e
	}
	for k, v := range answer {
		resp[k] = v
	}
	return e
}

// requestOf finds the control_request with id among the stdout lines of
// steps (the last one wins).
func requestOf(steps []transcript.Step, id string) map[string]any {
	for i := len(steps) - 1; i >= 0; i-- {
		st := steps[i]
		if st.Op != transcript.OpOut || !strings.Contains(st.Text, id) {
			continue
		}
		ev := decodeEvent(st.Text)
		if ev != nil && ev["type"] == "control_request" && ev["request_id"] == id {
			r, _ := ev["request"].(map[string]any)
			return r
		}
	}
	return nil
}

// driverAnswer is the response a capture's driver gave to the CLI's
// control request req in process proc of the capture's scenario; false
// when the scenario is not one of ours, the request is unknown, or the
// scenario answers with lines of its own (scenario_control.go), which may
// be several for one request.
func driverAnswer(h transcript.Header, proc int, req map[string]any) (map[string]any, bool) {
	if req == nil {
		return nil, false
	}
	scs, err := Select([]string{h.Scenario})
	if err != nil || len(scs) != 1 {
		return nil, false
	}
	p := scs[0].plan(h.CLI)
	if p == nil || proc >= len(p.procs) || p.procs[proc].reply != nil {
		return nil, false
	}
	return controlAnswer(p.procs[proc].permission, req), true
}

// deepCopy copies decoded JSON.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, c := range x {
			m[k] = deepCopy(c)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, c := range x {
			a[i] = deepCopy(c)
		}
		return a
	}
	return v
}

// walked is a baseline process followed along a capture's path.
type walked struct {
	// outs index the stdout lines written.
	outs []int
	// exit is how the process ended ("0", "SIGTERM", "(none)"); "" when
	// the walk was left to the fake (see stopped) or failed.
	exit string
	// stopped is the index of the client event from which on the baseline
	// leaves the process to the fake (an on_signal "default", a Claude
	// control request it scripts no step for), or -1; note says why.
	stopped int
	note    string
	// problem says where the baseline cannot follow the capture (it exits
	// before the client's signal, expects another stdin line, ...).
	problem string
}

// follower replays a baseline process to a client that does what a
// capture's client did.
type follower struct {
	cli    string
	steps  []transcript.Step
	events []clientEvent
	labels map[string]int
	onSig  map[string]string
	pos    *position
	next   int // the next client event
	pc     int
	w      walked
	done   bool
	// withhold is what the fake leaves out of the baseline for this
	// client; answered holds the tool_use ids of the can_use_tool
	// requests the client answered, and asking the one last written.
	withhold fakeRules
	answered map[string]bool
	asking   string
}

// fakeRules are the lines of a Claude transcript the fake writes only for
// some invocations (fakecli/README.md), for the capture's invocation.
type fakeRules struct {
	claude bool
	// partial: stream_event lines and the system/status "requesting" are
	// written only with --include-partial-messages; states:
	// system/session_state_changed only when the client asks for them.
	partial, states bool
}

// rulesFor reads the capture's invocation.
func rulesFor(h transcript.Header) fakeRules {
	r := fakeRules{claude: h.CLI == "claude"}
	for _, a := range h.Argv {
		if a == "--include-partial-messages" {
			r.partial = true
		}
	}
	for _, name := range h.Env {
		if name == "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS" || name == "CLAUDE_CODE_SDK_READS_SESSION_STATE" {
			r.states = true
		}
	}
	return r
}

// withheld reports whether the fake leaves a baseline stdout line out for
// this client: Claude's partial messages and session state events when
// the client did not ask for them, and a system/permission_denied for a
// tool whose can_use_tool request the client answered (the real CLI
// writes one only for a denial decided without asking). It notes the tool
// a can_use_tool request asks about, for the answer that follows.
func (f *follower) withheld(text string) bool {
	if !f.withhold.claude {
		return false
	}
	ev := decodeEvent(text)
	if ev == nil {
		return false
	}
	switch ev["type"] {
	case "stream_event":
		return !f.withhold.partial
	case "system":
		switch ev["subtype"] {
		case "status":
			return ev["status"] == "requesting" && !f.withhold.partial
		case "session_state_changed":
			return !f.withhold.states
		case "permission_denied":
			id, _ := ev["tool_use_id"].(string)
			return id != "" && f.answered[id]
		}
	case "control_request":
		if r, ok := ev["request"].(map[string]any); ok && r["subtype"] == "can_use_tool" {
			f.asking, _ = r["tool_use_id"].(string)
		}
	}
	return false
}

// follow walks the process steps of a baseline as a fake replays it to a
// client that does what events say: stdin lines are taken by in steps
// (their cases choose the branch), closing stdin by stdin_eof steps, and
// a signal (or one of Claude's control requests) is delivered once the
// stdout it followed in the capture has been written, at the next step
// that takes time, where the on_signal action in force decides.
func follow(h transcript.Header, steps []transcript.Step, events []clientEvent) walked {
	f := &follower{cli: h.CLI, steps: steps, events: events, labels: transcript.Labels(steps),
		onSig: map[string]string{}, pos: newPosition(h.CLI), w: walked{stopped: -1},
		withhold: rulesFor(h), answered: map[string]bool{}}
	limit := 4*len(steps) + 4*len(events) + 16
	for n := 0; !f.done; n++ {
		if f.pc < 0 || f.pc >= len(steps) {
			f.end("(none)")
			break
		}
		if n > limit {
			f.fail("the baseline loops without end")
			break
		}
		f.step()
	}
	return f.w
}

// end ends the walk with an exit; a client event other than closing stdin
// still to come is a difference.
func (f *follower) end(exit string) {
	f.done = true
	f.w.exit = exit
	for ; f.next < len(f.events); f.next++ {
		if e := f.events[f.next]; e.op != transcript.OpStdinEOF {
			f.w.problem = fmt.Sprintf("the baseline ends (exit %s) before the client's %s (%s)", exit, e.describe(), e.where)
			return
		}
	}
}

// leave ends the walk where the baseline leaves the process to the fake.
func (f *follower) leave(i int, why string) {
	f.done = true
	f.w.stopped, f.w.note = i, why
}

// unscripted leaves the walk at the client's event i, which the fake
// answers itself.
func (f *follower) unscripted(i int) {
	e := f.events[i]
	f.leave(i, fmt.Sprintf("the baseline scripts no step for the client's %s (%s): the fake answers it itself", e.describe(), e.where))
}

func (f *follower) fail(why string) {
	f.done = true
	f.w.problem = why
}

// signal delivers the next client event, a signal; it reports whether the
// walk goes on at the current step (the signal was ignored).
func (f *follower) signal() bool {
	e := f.events[f.next]
	f.next++
	action, ok := f.onSig[e.signal]
	switch {
	case !ok || action == "default":
		f.leave(f.next-1, fmt.Sprintf("the baseline leaves %s (%s) to the fake's default", e.signal, e.where))
	case action == "ignore":
		return true
	case action == "die":
		f.end(e.signal)
	case strings.HasPrefix(action, "exit:"):
		f.end(strings.TrimPrefix(action, "exit:"))
	default:
		target := strings.TrimPrefix(action, "goto:")
		j, ok := f.labels[target]
		if !ok {
			f.fail(fmt.Sprintf("the baseline's on_signal %s goes to a missing label %q", e.signal, target))
			break
		}
		f.pc = j
	}
	return false
}

// step runs the step at pc.
func (f *follower) step() {
	st := f.steps[f.pc]
	instant := st.Op == transcript.OpOnSignal || st.Op == transcript.OpLabel || st.Op == transcript.OpGoto
	if !instant && f.next < len(f.events) {
		e := f.events[f.next]
		if e.async(f.cli) && f.pos.reached(e.where) {
			switch {
			case e.op == transcript.OpOnSignal:
				if !f.signal() {
					return
				}
			case st.Op != transcript.OpIn || !lineMatches(st, e):
				f.unscripted(f.next)
				return
			}
		}
	}
	switch st.Op {
	case transcript.OpOut:
		if !f.withheld(st.Text) {
			f.w.outs = append(f.w.outs, f.pc)
			f.pos.wrote(st.Text)
		}
	case transcript.OpGoto:
		j, ok := f.labels[st.Label]
		if !ok {
			f.fail(fmt.Sprintf("the baseline's goto at line %d names a missing label %q", st.Line, st.Label))
			return
		}
		f.pc = j
		return
	case transcript.OpOnSignal:
		for k, v := range st.OnSignal {
			f.onSig[k] = v
		}
	case transcript.OpIn:
		if !f.in(st) {
			return
		}
	case transcript.OpStdinEOF:
		if !f.eof(st) {
			return
		}
	case transcript.OpExit:
		f.end(fmt.Sprint(st.Code))
		return
	case transcript.OpExitSignal:
		f.end(st.Signal)
		return
	case transcript.OpNextProcess:
		f.end("(none)")
		return
	}
	f.pc++
}

// in runs an in step; it reports whether the walk goes on at the next
// step (false: it jumped, waits on, or ended).
func (f *follower) in(st transcript.Step) bool {
	if f.next >= len(f.events) {
		if st.Optional {
			return true
		}
		f.fail(fmt.Sprintf("the baseline waits for %s at line %d; the client sent nothing more", expected(st), st.Line))
		return false
	}
	e := f.events[f.next]
	switch {
	case e.op == transcript.OpOnSignal:
		// The client signals while the process waits for stdin.
		f.signal()
		return false
	case e.op == transcript.OpStdinEOF:
		if st.Optional {
			return true
		}
		f.fail(fmt.Sprintf("the baseline waits for %s at line %d; the client closed stdin", expected(st), st.Line))
		return false
	case !lineMatches(st, e):
		if st.Optional {
			return true
		}
		if e.async(f.cli) {
			f.unscripted(f.next)
			return false
		}
		f.fail(fmt.Sprintf("the baseline expects %s at line %d; the client sent its %s", expected(st), st.Line, e.describe()))
		return false
	}
	f.next++
	if e.obj != nil && e.obj["type"] == "control_response" && f.asking != "" {
		f.answered[f.asking] = true
		f.asking = ""
	}
	if len(st.Cases) > 0 && e.unknownAnswer {
		f.w.note = fmt.Sprintf("the capture does not record the client's %s, on which the baseline branches at line %d: its fall-through path was compared", e.describe(), st.Line)
	}
	if j, ok := caseTaken(st, e, f.labels); ok {
		f.pc = j
		return false
	}
	return true
}

// eof runs a stdin_eof step: signals that come first are delivered; a
// stdin line that comes first is a difference. It reports whether the
// walk goes on at the next step.
func (f *follower) eof(st transcript.Step) bool {
	for f.next < len(f.events) && f.events[f.next].op != transcript.OpStdinEOF {
		e := f.events[f.next]
		switch {
		case e.op == transcript.OpOnSignal:
			if !f.signal() {
				return false
			}
		case e.async(f.cli):
			f.unscripted(f.next)
			return false
		default:
			f.fail(fmt.Sprintf("the baseline waits for the end of stdin at line %d; the client sent its %s first", st.Line, e.describe()))
			return false
		}
	}
	if f.next >= len(f.events) {
		f.fail(fmt.Sprintf("the baseline waits for the end of stdin at line %d; the client never closed it", st.Line))
		return false
	}
	f.next++
	return true
}

// expected describes what an in step waits for.
func expected(st transcript.Step) string {
	if st.Match == nil {
		return fmt.Sprintf("the stdin line %q", st.Text)
	}
	return "a stdin line like " + compactJSON(st.Match)
}

// lineMatches reports whether the client's line satisfies an in step,
// ignoring request ids (each side's are its own) and unfilled templates.
// A text in step takes any text line: the words are data.
func lineMatches(st transcript.Step, e clientEvent) bool {
	if e.op != transcript.OpIn {
		return false
	}
	if st.Match == nil {
		return e.obj == nil
	}
	if e.obj == nil {
		return false
	}
	ok, _ := transcript.Match(withoutIDs(st.Match), e.obj, nil)
	return ok
}

// caseTaken is where the first matching case of st sends the line, if one
// does.
func caseTaken(st transcript.Step, e clientEvent, labels map[string]int) (int, bool) {
	for _, c := range st.Cases {
		if e.obj == nil {
			return 0, false
		}
		if ok, _ := transcript.Match(withoutIDs(c.Match), e.obj, nil); ok {
			j, ok := labels[c.Goto]
			return j, ok
		}
	}
	return 0, false
}

// withoutIDs copies a match pattern without its request ids and template
// strings.
func withoutIDs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, c := range x {
			if k == "request_id" {
				continue
			}
			if s, ok := c.(string); ok && strings.Contains(s, "{{") {
				continue
			}
			m[k] = withoutIDs(c)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, c := range x {
			a[i] = withoutIDs(c)
		}
		return a
	}
	return v
}

// compactJSON renders v as JSON on one line, for messages.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
