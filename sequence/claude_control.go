package sequence

import (
	"strings"

	"github.com/agentconform/agentconform/finding"
)

// control pairs Claude Code control requests with their responses and
// cancels. The envelope is the same in both directions: the client sends
// requests on stdin that the CLI answers on stdout, and the CLI sends
// requests on stdout (can_use_tool, hook_callback, …) that the client
// answers on stdin. A cancel comes from the side that sent the request.
//
// With both directions in view (a transcript) every request is pending
// until answered or cancelled. With one direction only, the answer to a
// request is on the other, unseen stream, so only what one side can break
// is checked: unique request ids, at most one response per id, and cancels
// naming a request that was seen.
type control struct {
	both  bool
	sides [2]ctlSide // indexed by the Direction the requests travel in
}

// ctlSide is the bookkeeping for the requests of one sender.
type ctlSide struct {
	open map[string]ctlPending // with both: requests awaiting an answer
	seen recent[ctlRec]        // closed requests; without both, every request seen
}

type ctlPending struct {
	at      place
	subtype string
}

type ctlState int

const (
	ctlSent ctlState = iota
	ctlAnswered
	ctlCancelled
)

// ctlRec is what is remembered about a request that is not pending.
type ctlRec struct {
	state ctlState
	req   place // the request (zero when it was never seen)
	at    place // the answer or cancel
}

// other returns the opposite direction.
func other(d Direction) Direction {
	if d == In {
		return Out
	}
	return In
}

// side returns the bookkeeping for requests that travel in direction d.
func (c *control) side(d Direction) *ctlSide {
	if d == In {
		return &c.sides[1]
	}
	return &c.sides[0]
}

// request records a control_request travelling in ev.Dir.
func (c *control) request(ev Event, report func(finding.Finding)) {
	id, ok := str(ev.Obj, "request_id")
	if !ok || id == "" {
		return
	}
	s := c.side(ev.Dir)
	p := at(ev)
	if prev, ok := s.open[id]; ok {
		report(p.finding(ClaudeControlRequestUnique, "/request_id",
			"control_request on %s repeats request_id %s of the request at line %d", ev.Dir, quote(id), prev.at.line))
		return
	}
	if prev, ok := s.seen.get(id); ok && prev.req.line > 0 {
		report(p.finding(ClaudeControlRequestUnique, "/request_id",
			"control_request on %s repeats request_id %s of the request at line %d", ev.Dir, quote(id), prev.req.line))
		return
	}
	subtype, _ := str(obj(ev.Obj, "request"), "subtype")
	if c.both {
		if s.open == nil {
			s.open = make(map[string]ctlPending)
		}
		s.open[strings.Clone(id)] = ctlPending{at: p, subtype: strings.Clone(subtype)}
		return
	}
	s.seen.put(strings.Clone(id), ctlRec{state: ctlSent, req: p})
}

// response records a control_response travelling in ev.Dir; it answers a
// request that travelled the other way.
func (c *control) response(ev Event, report func(finding.Finding)) {
	id, ok := str(obj(ev.Obj, "response"), "request_id")
	if !ok || id == "" {
		return
	}
	const ptr = "/response/request_id"
	reqDir := other(ev.Dir)
	s := c.side(reqDir)
	p := at(ev)
	if req, ok := s.open[id]; ok {
		delete(s.open, id)
		s.seen.put(strings.Clone(id), ctlRec{state: ctlAnswered, req: req.at, at: p})
		return
	}
	prev, known := s.seen.get(id)
	switch {
	case known && prev.state == ctlAnswered:
		report(p.finding(ClaudeControlResponseOnce, ptr,
			"second control_response for request_id %s (the first was at line %d)", quote(id), prev.at.line))
	case known && prev.state == ctlCancelled:
		report(p.finding(ClaudeControlNoResponseAfterCancel, ptr,
			"control_response for request_id %s after the control_cancel_request at line %d withdrew the request; the Python SDK writes no response after a cancel", quote(id), prev.at.line))
	case c.both:
		report(p.finding(ClaudeControlResponsePending, ptr,
			"control_response on %s answers request_id %s, but no pending control_request with that id was written to %s before it", ev.Dir, quote(id), reqDir))
		s.seen.put(strings.Clone(id), ctlRec{state: ctlAnswered, at: p})
	default:
		s.seen.put(strings.Clone(id), ctlRec{state: ctlAnswered, req: prev.req, at: p})
	}
}

// cancel records a control_cancel_request travelling in ev.Dir; it
// withdraws a request its sender sent in the same direction.
func (c *control) cancel(ev Event, report func(finding.Finding)) {
	id, ok := str(ev.Obj, "request_id")
	if !ok || id == "" {
		return
	}
	s := c.side(ev.Dir)
	p := at(ev)
	if req, ok := s.open[id]; ok {
		delete(s.open, id)
		s.seen.put(strings.Clone(id), ctlRec{state: ctlCancelled, req: req.at, at: p})
		return
	}
	prev, known := s.seen.get(id)
	switch {
	case known && prev.state == ctlCancelled:
		report(p.finding(ClaudeControlCancelPending, "/request_id",
			"control_cancel_request for request_id %s, which the cancel at line %d already withdrew", quote(id), prev.at.line))
	case known && prev.state == ctlAnswered:
		// The answer crossed the cancel in flight; nothing is left pending.
	case known && prev.state == ctlSent:
		s.seen.put(strings.Clone(id), ctlRec{state: ctlCancelled, req: prev.req, at: p})
	default:
		report(p.finding(ClaudeControlCancelPending, "/request_id",
			"control_cancel_request on %s names request_id %s, but no control_request with that id was sent on %s before it", ev.Dir, quote(id), ev.Dir))
	}
}

// end reports, when both directions were seen, the requests that were
// never answered nor cancelled.
func (c *control) end(report func(finding.Finding)) {
	if !c.both {
		return
	}
	for _, d := range []Direction{In, Out} {
		s := c.side(d)
		ids := make(map[string]place, len(s.open))
		for id, r := range s.open {
			ids[id] = r.at
		}
		for _, e := range sorted(ids) {
			sub := s.open[e.id].subtype
			if sub == "" {
				sub = "?"
			}
			answerer := "the CLI"
			if d == Out {
				answerer = "the client"
			}
			report(e.at.finding(ClaudeControlRequestAnswered, "/request_id",
				"control_request %s (subtype %s) on %s was never answered by %s nor cancelled", quote(e.id), sub, d, answerer))
		}
		s.open = nil
	}
}
