package fuzz

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/transcript"
)

// judgeOutcome judges PropOutcome: one turn_end per turn the runner
// started (fewer is PropEnds, output/records); for an app-server client,
// a turn_end for each turn the server completed, as its status says
// (lifecycle/app-server-turns), where the session's notifications are the
// fixture's (no JSON-RPC edits: a turn/completed dropped, renamed or
// written twice is no turn a client can be held to); for an ACP agent,
// every session/prompt answered exactly once, with stopReason cancelled
// after session/cancel (acp/prompt-answered, acp/cancelled).
func judgeOutcome(c Case, o *conformance.Observation) *Failure {
	turns := 0
	for _, s := range o.Sent {
		if s.Op == "start" || s.Op == "send" {
			turns++
		}
	}
	if ends := o.TurnEnds(); len(ends) > turns {
		return failf(PropOutcome, "%d turn_end records for %d turns started: a turn was reported more than once", len(ends), turns)
	}
	if o.Case.Agent == AgentAppServer && c.Edits == "" && !closedInTurn(o) {
		if f := judgeChecks(o, PropOutcome, conformance.CheckAppServerTurns); f != nil {
			return f
		}
	}
	if o.Case.Agent == AgentAppServer && c.Edits == "" && onlyInterrupt(c) && interrupted(o) && serverWrote(o, "turn/started") {
		// The caller's interrupt and nothing else, sent once the server's
		// turn had started: it goes to the server as turn/interrupt, and
		// the turn ends with the server's turn/completed (interrupted).
		if f := judgeChecks(o, PropOutcome, conformance.CheckAppServerInterrupt); f != nil {
			return f
		}
	}
	return judgeChecks(o, PropOutcome, conformance.CheckACPPromptAnswered, conformance.CheckACPCancelled)
}

// onlyInterrupt reports whether a case's only mutation is the caller's
// interrupt (its stall).
func onlyInterrupt(c Case) bool {
	if !c.Interrupt {
		return false
	}
	for _, item := range splitSpec(c.Faults) {
		if name, _, _ := strings.Cut(item, ":"); strings.TrimSpace(name) != "stall" {
			return false
		}
	}
	return true
}

// interrupted reports whether the runner interrupted a turn (it does not
// when the turn ends before the CLI goes quiet).
func interrupted(o *conformance.Observation) bool {
	for _, s := range o.Sent {
		if s.Op == "interrupt" {
			return true
		}
	}
	return false
}

// closedInTurn reports whether the runner sent close while a turn was
// still running (the caller gave up on a session gone quiet): the client
// then reports the turn as it stood, whatever the server writes after.
func closedInTurn(o *conformance.Observation) bool {
	turns := 0
	for _, s := range o.Sent {
		switch s.Op {
		case "start", "send":
			turns++
		case "close":
			ended := 0
			for _, r := range o.TurnEnds() {
				if r.At <= s.At {
					ended++
				}
			}
			return ended < turns
		}
	}
	return false
}

// waitedMS is how long a server must have gone on living after writing a
// request, the last thing it wrote, for an answer that never came to
// count as left unanswered: a server the faults kill right after writing
// it gave the client no time. The runner closes a session that has been
// quiet for two seconds, so a request left unanswered is waited on for
// longer.
const waitedMS = 1000

// judgeServerRequests judges PropAnswered on an app-server session: every
// request the server wrote (approvals, and what the edits made of them)
// is answered by the client once, with its id; a request the server
// waited on at least waitedMS for with no answer is left unanswered; an
// approval is answered with a decision of the caller's policy (allow:
// accept or acceptForSession; deny: decline or cancel), not an error.
func judgeServerRequests(o *conformance.Observation) *Failure {
	type answer struct {
		msg  *transcript.RPCMessage
		text string
	}
	answers := map[int]map[string][]answer{}
	lastOut, exitAt := map[int]int64{}, map[int]int64{}
	for _, r := range o.Fake {
		switch r.Kind {
		case "stdin":
			m, err := transcript.ParseRPC([]byte(r.Text))
			if err != nil || (m.Kind != transcript.RPCResponse && m.Kind != transcript.RPCError) {
				continue
			}
			if answers[r.PID] == nil {
				answers[r.PID] = map[string][]answer{}
			}
			answers[r.PID][m.ID] = append(answers[r.PID][m.ID], answer{m, r.Text})
		case "out":
			lastOut[r.PID] = r.TMS
		case "exit":
			exitAt[r.PID] = r.TMS
		}
	}
	for _, w := range o.Wire {
		lines := bytes.Split(bytes.TrimRight(w.Bytes, "\r\n"), []byte("\n"))
		for i, l := range lines {
			m, err := transcript.ParseRPC(bytes.TrimSuffix(l, []byte("\r")))
			if err != nil || m.Kind != transcript.RPCRequest {
				continue
			}
			got := answers[w.PID][m.ID]
			what := fmt.Sprintf("the server's %s request (id %s)", m.Method, m.ID)
			switch {
			case len(got) > 1:
				return failf(PropAnswered, "%s was answered %d times: %s", what, len(got), clip(got[1].text, 200))
			case len(got) == 0:
				if i != len(lines)-1 {
					continue // the server went on without waiting for it
				}
				end, exited := exitAt[w.PID]
				if exited && end-lastOut[w.PID] < waitedMS {
					continue // the server ended right after writing it
				}
				waited := "until the session was closed"
				if exited {
					waited = fmt.Sprintf("%d ms, until the session was closed", end-lastOut[w.PID])
				}
				return failf(PropAnswered, "%s was never answered: the server waited for it %s (a JSON-RPC peer answers every request, one it does not know with the error -32601)", what, waited)
			}
			if !strings.HasSuffix(m.Method, "/requestApproval") {
				continue
			}
			if got[0].msg.Kind == transcript.RPCError {
				return failf(PropAnswered, "%s was answered with an error, not a decision: %s", what, clip(got[0].text, 200))
			}
			d, _ := transcript.Lookup(got[0].msg.Obj, "/result/decision")
			dec, _ := d.(string)
			want := map[string]bool{"accept": true, "acceptForSession": true}
			if o.Case.Permission == "deny" {
				want = map[string]bool{"decline": true, "cancel": true}
			}
			if !want[dec] {
				return failf(PropAnswered, "%s was answered with decision %q; the caller's policy is %s", what, dec, o.Case.Permission)
			}
		}
	}
	return nil
}

// serverWrote reports whether the app-server wrote a whole notification
// of method.
func serverWrote(o *conformance.Observation, method string) bool {
	for _, w := range o.Wire {
		for _, l := range bytes.SplitAfter(w.Bytes, []byte("\n")) {
			if !bytes.HasSuffix(l, []byte("\n")) || !bytes.Contains(l, []byte(method)) {
				continue
			}
			if m, err := transcript.ParseRPC(bytes.TrimRight(l, "\r\n")); err == nil && m.Kind == transcript.RPCNotification && m.Method == method {
				return true
			}
		}
	}
	return false
}
