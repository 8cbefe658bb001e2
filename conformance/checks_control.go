package conformance

import (
	"fmt"
	"strings"
)

// srcClaudePermAnswers is what the CLI makes of each answer to
// can_use_tool.
const srcClaudePermAnswers = "docs/protocols/claude.md#permission-answers"

// The control family.
var (
	CheckCanUseTool = register(&Check{Family: FamilyControl, Rule: rule("control/can-use-tool", "MUST",
		"Every can_use_tool request is answered exactly once, with its request_id and an answer the CLI accepts that carries the decision the permission policy implies (an answer the CLI refuses denies the tool).", srcClaudeCtl+"; "+srcClaudePermAnswers),
		Applies: agentIs("claude"), Judge: judgeCanUseTool})
	CheckEnvelope = register(&Check{Family: FamilyControl, Rule: rule("control/interrupt-envelope", "MUST",
		"Where Claude reads stream-json on stdin and the adapter interrupts with a control message, it is sent inside the control_request envelope: a bare {\"subtype\":\"interrupt\"} is silently ignored by the CLI. (SIGINT and SIGTERM interrupt it too; a case whose interrupt was never sent has no envelope to judge.)", srcClaudeInt+"; "+srcClaudeStreamSignals),
		Applies: func(c *Case, h *Hello) (bool, string) {
			if c.Agent != "claude" || c.Interrupt == nil {
				return false, "applies to Claude interrupt cases only"
			}
			return needs("interrupt", func(*Case) bool { return true })(c, h)
		}, Judge: judgeEnvelope})
	CheckAfterCancel = register(&Check{Family: FamilyControl, Rule: rule("control/no-response-after-cancel", "MUST",
		"No control_response is sent for a request the CLI withdrew with control_cancel_request.", srcClaudeCancel),
		Applies: agentIs("claude"), Judge: judgeAfterCancel})
)

func judgeCanUseTool(o *Observation) Outcome {
	type req struct {
		pid      int
		id       string
		canceled bool
	}
	var reqs []req
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if l.Obj == nil {
				continue
			}
			switch l.Obj["type"] {
			case "control_request":
				if str(l.Obj, "request", "subtype") == "can_use_tool" {
					reqs = append(reqs, req{pid: l.PID, id: str(l.Obj, "request_id")})
				}
			case "control_cancel_request":
				for i := range reqs {
					if reqs[i].id == str(l.Obj, "request_id") {
						reqs[i].canceled = true
					}
				}
			}
		}
	}
	if len(reqs) == 0 {
		return pass()
	}
	type answer struct {
		behavior, text string
	}
	answers := map[string][]answer{}
	for _, s := range o.stdinLines() {
		if s.obj == nil || s.obj["type"] != "control_response" {
			continue
		}
		id := str(s.obj, "response", "request_id")
		answers[id] = append(answers[id], answer{str(s.obj, "response", "response", "behavior"), s.rec.Text})
	}
	for _, r := range reqs {
		got := answers[r.id]
		switch {
		case r.canceled:
			continue
		case len(got) == 0:
			return failf("a control_response for can_use_tool "+r.id, "no answer: the CLI waits forever")
		case len(got) > 1:
			var bs []string
			for _, a := range got {
				bs = append(bs, a.behavior)
			}
			return failf("exactly one answer for "+r.id, "%d answers (%s)", len(got), strings.Join(bs, ", "))
		}
		if out, judged := judgeDecision(o, r.pid, r.id, got[0].text); judged {
			if !out.OK {
				return out
			}
			continue
		}
		if got[0].behavior != o.Case.Permission {
			return failf(fmt.Sprintf("behavior %q (policy %s)", o.Case.Permission, o.Case.Permission), "behavior %q", got[0].behavior)
		}
	}
	return pass()
}

// judgeDecision judges an answer to can_use_tool request id of process
// pid by what the CLI made of it, as the fake logged it (a permission
// record): an answer the CLI refuses denies the tool whatever the policy,
// and a deny with interrupt true ends the turn. judged is false when the
// fake logged no decision (a fake older than the record, a replay without
// the request).
func judgeDecision(o *Observation, pid int, id, line string) (out Outcome, judged bool) {
	for _, r := range o.Fake {
		if r.Kind != "permission" || r.PID != pid || r.RequestID != id {
			continue
		}
		policy := o.Case.Permission
		want := fmt.Sprintf(`an answer the CLI accepts that %ss the tool: {"behavior":"allow","updatedInput":<the input>} or {"behavior":"deny","message":"..."} (policy %s)`, policy, policy)
		switch {
		case r.Decision == "refused":
			return failf(want, "the CLI refused the answer %s and denied the tool, telling the model %q", clip(line, 240), clip(r.Message, 240)), true
		case r.Decision == "interrupt" && policy == "deny":
			return failf(want, "a deny with interrupt true (%s): the CLI aborted the whole turn instead of going on without the tool", clip(line, 240)), true
		case r.Decision == "interrupt" && policy != "deny", r.Decision != policy:
			return failf(want, "the CLI took the answer %s as %s", clip(line, 240), r.Decision), true
		}
		return pass(), true
	}
	return Outcome{}, false
}

// judgeEnvelope judges the interrupt an adapter wrote on a stream-json
// Claude's stdin. Only an envelope sent is judged: a case whose interrupt
// the runner never got to send, or an adapter that interrupted by a signal
// the CLI honours in stream-json mode too (SIGINT, SIGTERM; or a kill),
// sent none, and the interrupt family judges whether the turn was
// interrupted at all. Nothing at all reaching the CLI fails here as it
// fails there.
func judgeEnvelope(o *Observation) Outcome {
	if !interruptSent(o) {
		return Outcome{Skip: true, Actual: "the runner never got to send its interrupt (the turn ended first): no envelope to judge"}
	}
	if !streamJSONInput(o) {
		return Outcome{Skip: true, Actual: "the adapter runs claude without --input-format stream-json: its interrupt is a signal, which interrupt/passed-on judges"}
	}
	log := o.interruptLog()
	for _, s := range stdinLinesOf(log) {
		if s.obj == nil {
			continue
		}
		switch kind := interruptLine(s.obj); kind {
		case "envelope":
			return pass()
		case "":
		default:
			return failf(`{"type":"control_request","request_id":...,"request":{"subtype":"interrupt"}}`, "%s %s, which the CLI does not take for an interrupt", kind, clip(s.rec.Text, 240))
		}
	}
	for _, r := range log {
		switch {
		case r.Kind == "signal" && (r.Signal == "SIGINT" || r.Signal == "SIGTERM"):
			return Outcome{Skip: true, Actual: "no control request: the adapter interrupted by " + r.Signal + ", which Claude honours with stream-json input too (" + srcClaudeStreamSignals + "); interrupt/passed-on judges it"}
		case r.Kind == "exit" && r.Action == killedOutright:
			return Outcome{Skip: true, Actual: "no control request: the adapter killed the CLI (SIGKILL); interrupt/passed-on judges it"}
		}
	}
	return failf("a control_request interrupt on the CLI's stdin (or SIGINT or SIGTERM, which the CLI honours too)", "none arrived")
}

// interruptLine says what a line on Claude's stdin is as an interrupt:
// "envelope" for the control request, "a bare" for {"subtype":"interrupt"}
// without it, "a control_request with its subtype outside request" for an
// envelope that lost its request member, "" for anything else.
func interruptLine(obj map[string]any) string {
	typ, _ := obj["type"].(string)
	switch {
	case typ == "control_request" && str(obj, "request", "subtype") == "interrupt":
		return "envelope"
	case typ == "" && obj["subtype"] == "interrupt":
		return "a bare"
	case typ == "control_request" && obj["subtype"] == "interrupt":
		return "a control_request with its subtype outside request"
	}
	return ""
}

func judgeAfterCancel(o *Observation) Outcome {
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if l.Obj == nil || l.Obj["type"] != "control_cancel_request" {
				continue
			}
			id := str(l.Obj, "request_id")
			for _, s := range o.stdinLines() {
				if s.obj != nil && s.rec.PID == l.PID && s.obj["type"] == "control_response" && str(s.obj, "response", "request_id") == id && s.rec.TMS > l.TMS {
					return failf("no response to withdrawn request "+id, "a control_response for it came %d ms after the cancel", s.rec.TMS-l.TMS)
				}
			}
		}
	}
	return pass()
}

// streamJSONInput reports whether a Claude process of the case reads
// stream-json on stdin (the control protocol exists only there).
func streamJSONInput(o *Observation) bool {
	for _, st := range o.FakeStarts() {
		for i, a := range st.Argv {
			if a == "--input-format=stream-json" || a == "--input-format" && i+1 < len(st.Argv) && st.Argv[i+1] == "stream-json" {
				return true
			}
		}
	}
	return false
}
