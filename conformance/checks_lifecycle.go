package conformance

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/fakecli"
)

// The lifecycle family.
var (
	CheckReportsFailure = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/reports-failure", "MUST",
		"When the CLI fails (exits mid-line, exits without a terminal event, exits non-zero, is killed, reports an API error, stalls), the adapter reports failure, not success.", srcTurnEnd+"; "+srcTurnReasons),
		Applies: needs("", func(c *Case) bool { return c.Expect.TurnFails }), Judge: judgeReportsFailure})
	CheckReportsSuccess = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/reports-success", "MUST",
		"When the CLI completes the turn, the adapter reports success (noise such as a banner or a stderr flood is no failure).", srcTurnEnd),
		Applies: needs("", normalCase), Judge: judgeReportsSuccess})
	CheckEnds = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/ends-stream", "MUST",
		"Whatever the CLI does, the adapter ends its stream properly: the profile's terminal event (unified sessionEnded, shim result) and its end record.", srcRecords+"; "+srcShimErrors),
		Applies: always, Judge: judgeEndsStream})
	CheckEndingDelivered = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/ending-delivered", "MUST",
		"A turn the adapter reports successful handed its caller the end of that turn: its terminal event (unified turnCompleted, shim result, the CLI's own terminal event where a native adapter hands on the CLI's events), or else its final text (a native adapter with its own view of the stream, a text or JSON answer). A reader that stops early (a scanner closed under it, its error never checked) loses exactly this.", srcEnding),
		Applies: always, Judge: judgeEndingDelivered})
	CheckReaps = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/reaps-cli", "MUST",
		"No CLI process outlives the adapter: judged after the adapter exits and its CLIs have had a second to follow (five for a real CLI), before the runner kills anything.", srcLeftovers),
		Applies: always, Judge: judgeReapsCLI})
	CheckNoStray = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/no-stray-process", "MUST",
		"No other process the adapter started (a wrapper, a server, a daemon, a grandchild in a new session) outlives it: judged as lifecycle/reaps-cli is.", srcLeftovers),
		Applies: always, Judge: judgeNoStray})
)

// IntactLineLimit is the line size up to which every line the CLI writes
// must reach the caller intact, and the turn succeed. Above it an adapter
// may fail the turn instead, with an error that names the size or its
// limit (the Python Claude SDK's default buffer is 1 MiB; the CLIs write
// lines of many MiB when a tool reads a large file).
const IntactLineLimit = 1 << 20

// sizeError reports whether err is a clear error about a line of size
// bytes over the adapter's limit, which is allowed above IntactLineLimit.
func sizeError(size int, err string) bool {
	return size > IntactLineLimit && (strings.Contains(err, strconv.Itoa(size)) || mentionsSize(err))
}

func judgeReportsFailure(o *Observation) Outcome {
	if ts := o.cliTurns(); o.Case.Expect.StreamOnly && len(ts) > 0 && !o.streams() {
		return Outcome{Skip: true, Actual: fmt.Sprintf("the adapter asked the CLI for %s output, where this failure (no terminal event) cannot be seen", ts[0].format)}
	}
	ends := o.TurnEnds()
	if len(ends) == 0 {
		return failf("turn_end ok:false", "no turn_end at all")
	}
	for _, r := range ends {
		if !r.OK {
			return pass()
		}
	}
	if o.Case.Expect.NextTurn && cliNeverFailed(o) {
		// The turn that fails is a later process of the session (or a
		// later turn of it): an adapter that did not continue the
		// session never ran it. lifecycle/same-session judges that.
		return Outcome{Skip: true, Actual: "the CLI completed every turn it ran and exited 0: the failing turn of the session never ran"}
	}
	// A long-lived CLI (Claude) may fail only when it exits, after its
	// turns completed: then the end record must say so, if the CLI had
	// exited when the adapter wrote it. One that exits only once the
	// adapter is gone (its stdin closes with it) tells no one.
	if end, ok := o.End(); ok && !end.OK {
		return pass()
	}
	if o.Case.Agent == "claude" && allTurnsCompleted(o) {
		for _, s := range o.FakeStarts() {
			if formatOf(o.Case.Agent, s.Argv) == formatNone {
				continue
			}
			if o.FakeAtEnd != nil && !exitedIn(o.FakeAtEnd, s.PID) {
				return Outcome{Skip: true, Actual: "every turn completed, and the CLI failed only after the adapter had reported the session over"}
			}
			if s.PPID != 0 && o.AdapterPID != 0 && s.PPID != o.AdapterPID {
				// Only a process's parent gets its exit status: an adapter
				// that runs the CLI through another process (an ACP
				// agent) learns nothing of an exit after the last turn.
				return Outcome{Skip: true, Actual: "every turn completed, and the CLI's exit status after them went to its parent, not the adapter"}
			}
		}
	}
	return failf("turn_end ok:false, or end ok:false when the CLI failed after its turns", "ok:true everywhere: the failure was reported as success")
}

func judgeReportsSuccess(o *Observation) Outcome {
	ends := o.TurnEnds()
	if len(ends) == 0 {
		return failf("turn_end ok:true", "no turn_end at all")
	}
	for i, r := range ends {
		if !r.OK && !sizeError(o.Case.Expect.LineSize, r.Error) {
			return failf("turn_end ok:true for every turn", "turn %d: ok:false, error %q", i+1, clip(r.Error, 200))
		}
	}
	return pass()
}

func judgeEndsStream(o *Observation) Outcome {
	if _, ok := o.End(); !ok {
		return failf("an end record", "none (records: %s)", recordKinds(o))
	}
	if o.Hello == nil {
		return pass()
	}
	want := ""
	switch o.Hello.Profile {
	case "unified":
		want = "sessionEnded"
	case "shim":
		want = "result"
	}
	if want == "" {
		return pass()
	}
	for i := len(o.Events) - 1; i >= 0; i-- {
		if o.Events[i].Obj["type"] == want {
			return pass()
		}
	}
	return failf("a "+want+" event before end", "none: the caller's UI keeps spinning")
}

func judgeReapsCLI(o *Observation) Outcome {
	return leftoverOutcome(o, true, "no CLI process left running when the adapter has exited")
}

func judgeNoStray(o *Observation) Outcome {
	return leftoverOutcome(o, false, "no process of the adapter's left running when it has exited")
}

func leftoverOutcome(o *Observation, cli bool, expected string) Outcome {
	var left []string
	for _, l := range o.Leftover {
		if l.Tool {
			continue // a real CLI's tool's, in a session of its own: out of the adapter's reach
		}
		if l.CLI != cli {
			continue
		}
		where := ""
		if o.Real != nil && l.Session > 0 {
			where = fmt.Sprintf(" (session %d, group %d, environment: %s", l.Session, l.Group, firstNonEmpty(l.Env, "not read"))
			if l.Sessions != "" {
				where += "; sessions: " + l.Sessions
			}
			where += ")"
		}
		left = append(left, fmt.Sprintf("pid %d%s: %s", l.PID, where, clip(strings.Join(l.Argv, " "), 300)))
	}
	if len(left) > 0 {
		return failf(expected, "still running %s after the adapter exited: %s", exitGraceOf(o.Real != nil), strings.Join(left, "; "))
	}
	return pass()
}

func judgeEndingDelivered(o *Observation) Outcome {
	turns := o.cliTurns()
	for i, r := range o.TurnEnds() {
		if !r.OK || i >= len(turns) {
			continue
		}
		t := turns[i]
		evs := o.EventsOfTurn(i)
		final := ""
		switch t.format {
		case formatStream:
			term := terminalOf(o.Case.Agent, t.lines)
			if term == nil || terminalFailed(term.Obj) {
				continue // the CLI did not complete it: lifecycle/reports-failure judges that
			}
			want, handsOn := terminalWanted(o, t.lines, evs, term)
			if want != "" {
				return failf(fmt.Sprintf("turn %d, reported successful, handed on its ending: %s", i+1, want),
					"no %s among the turn's %d events: the end of the turn never reached the caller", want, len(evs))
			}
			if o.Hello != nil && o.Hello.Profile == "native" && !handsOn {
				// An adapter with its own view of the stream has no
				// terminal event to hand on: its ending is the final text.
				final = finalText(o.Case.Agent, t.lines)
			}
		default:
			if !t.ok {
				continue
			}
			final = t.answer
		}
		if final != "" && !buildIndex(evs).hasAtom(final) {
			return failf(fmt.Sprintf("turn %d, reported successful, handed on its final text", i+1),
				"the turn's final text %q is not in its %d events: the end of the turn was lost", clip(final, 200), len(evs))
		}
	}
	return pass()
}

// terminalWanted names the terminal event the adapter must have handed on
// in a turn's events ("" when it did, or when its profile has none to
// hand on): unified turnCompleted, shim result, and for a native adapter
// that hands on the CLI's own events (handsOn: one of its events has a
// type the CLI wrote in that turn) the CLI's terminal event.
func terminalWanted(o *Observation, lines []WireLine, evs []Event, term *WireLine) (want string, handsOn bool) {
	has := func(typ string) bool {
		for _, e := range evs {
			if e.Obj["type"] == typ {
				return true
			}
		}
		return false
	}
	if o.Hello == nil {
		return "", false
	}
	switch o.Hello.Profile {
	case "unified":
		if !has("turnCompleted") {
			return "turnCompleted", false
		}
	case "shim":
		if !has("result") {
			return "result", false
		}
	case "native":
		handsOn = passesOnCLIEvents(evs, lines)
		if typ := str(term.Obj, "type"); handsOn && !has(typ) {
			return "the CLI's " + typ, true
		}
	}
	return "", handsOn
}

// terminalOf returns the turn's terminal event: Claude and Gemini result,
// Codex turn.completed or turn.failed; nil if the CLI wrote none.
func terminalOf(agent string, lines []WireLine) *WireLine {
	for i := len(lines) - 1; i >= 0; i-- {
		l := &lines[i]
		if l.Obj == nil {
			continue
		}
		switch str(l.Obj, "type") {
		case "result":
			if agent != "codex" {
				return l
			}
		case "turn.completed", "turn.failed":
			if agent == "codex" {
				return l
			}
		}
	}
	return nil
}

// terminalFailed reports whether a terminal event says the turn failed.
func terminalFailed(obj map[string]any) bool {
	if obj["type"] == "turn.failed" {
		return true
	}
	if isErr, _ := obj["is_error"].(bool); isErr {
		return true
	}
	return str(obj, "status") == "error"
}

// finalText returns the turn's final answer: the text the CLI sent after
// its last tool event (Claude's last assistant text, Codex's last agent
// message, Gemini's assistant deltas after its last tool).
func finalText(agent string, lines []WireLine) string {
	var b strings.Builder
	for _, l := range lines {
		if l.Obj == nil {
			continue
		}
		switch agent {
		case "claude":
			if l.Obj["type"] != "assistant" {
				if l.Obj["type"] == "user" {
					b.Reset()
				}
				continue
			}
			msg, _ := l.Obj["message"].(map[string]any)
			blocks, _ := msg["content"].([]any)
			for _, bl := range blocks {
				m, _ := bl.(map[string]any)
				switch m["type"] {
				case "text":
					b.WriteString(str(m, "text"))
				case "tool_use":
					b.Reset()
				}
			}
		case "codex":
			item, _ := l.Obj["item"].(map[string]any)
			if item == nil || l.Obj["type"] != "item.completed" {
				continue
			}
			if item["type"] == "agent_message" {
				b.Reset()
				b.WriteString(str(item, "text"))
			} else if item["type"] != "reasoning" {
				b.Reset()
			}
		case "gemini":
			switch str(l.Obj, "type") {
			case "message":
				if l.Obj["role"] == "assistant" {
					b.WriteString(str(l.Obj, "content"))
				}
			case "tool_use", "tool_result":
				b.Reset()
			}
		}
	}
	return b.String()
}

// exitedIn reports whether log holds an exit record of pid.
func exitedIn(log []fakecli.Observation, pid int) bool {
	for _, r := range log {
		if r.PID == pid && r.Kind == "exit" {
			return true
		}
	}
	return false
}

// allTurnsCompleted reports whether every turn the CLIs ran ended with a
// terminal event that says it succeeded.
func allTurnsCompleted(o *Observation) bool {
	ts := o.cliTurns()
	for _, t := range ts {
		if t.format != formatStream {
			return false
		}
		if term := terminalOf(o.Case.Agent, t.lines); term == nil || terminalFailed(term.Obj) {
			return false
		}
	}
	return len(ts) > 0
}
