package sequence

import (
	"strings"

	"github.com/agentconform/agentconform/finding"
)

// unified checks the unified event model (docs/protocols/unified.md#events): one
// session from sessionStarted to sessionEnded, tools paired by toolId,
// every event with a unique id and the session's sessionId.
//
// Event ids are checked for uniqueness against the most recent 4096 ids,
// which keeps memory flat on endless streams.
type unified struct {
	seen         bool
	started      place
	startedNoted bool
	ended        place
	endedNoted   bool
	sid          string
	sidAt        place
	ids          recent[place]
	tools        calls
	last         place
}

func newUnified() *unified { return &unified{} }

// Observe checks one event.
func (u *unified) Observe(ev Event, report func(finding.Finding)) {
	if ev.Obj == nil {
		return
	}
	typ, _ := str(ev.Obj, "type")
	switch typ {
	case "sessionStarted", "textChunk", "toolStarted", "toolProgress",
		"toolCompleted", "fileChanged", "turnCompleted", "sessionEnded":
	default:
		return
	}
	p := at(ev)
	u.seen, u.last = true, p
	u.eventID(ev, report)
	u.session(ev, report)
	if u.ended.line > 0 && !u.endedNoted {
		u.endedNoted = true
		report(p.finding(UnifiedEndedLast, "/type",
			"%s after sessionEnded at line %d: sessionEnded is the last event", typ, u.ended.line))
	}
	if typ == "sessionStarted" {
		if u.started.line > 0 {
			report(p.finding(UnifiedStartedOnce, "",
				"second sessionStarted (the first was at line %d)", u.started.line))
			return
		}
		u.started = p
		return
	}
	if u.started.line == 0 && !u.startedNoted {
		u.startedNoted = true
		report(p.finding(UnifiedStartedFirst, "/type", "%s before sessionStarted", typ))
	}
	switch typ {
	case "toolStarted":
		u.toolStarted(ev, report)
	case "toolProgress":
		u.toolProgress(ev, report)
	case "toolCompleted":
		u.toolCompleted(ev, report)
	case "sessionEnded":
		u.sessionEnded(ev, report)
	}
}

func (u *unified) eventID(ev Event, report func(finding.Finding)) {
	id, ok := str(ev.Obj, "id")
	if !ok || id == "" {
		return
	}
	p := at(ev)
	if prev, dup := u.ids.get(id); dup {
		report(p.finding(UnifiedEventIDUnique, "/id",
			"event id %s repeats the id of the event at line %d", quote(id), prev.line))
		return
	}
	u.ids.put(strings.Clone(id), p)
}

func (u *unified) session(ev Event, report func(finding.Finding)) {
	sid, ok := str(ev.Obj, "sessionId")
	if !ok {
		return
	}
	if u.sidAt.line == 0 {
		u.sid, u.sidAt = strings.Clone(sid), at(ev)
		return
	}
	if sid != u.sid {
		f := at(ev).finding(UnifiedSessionConstant, "/sessionId",
			"sessionId %s differs from %s, first seen at line %d", quote(sid), quote(u.sid), u.sidAt.line)
		f.Expected, f.Actual = u.sid, sid
		report(f)
	}
}

func (u *unified) toolStarted(ev Event, report func(finding.Finding)) {
	id, ok := str(ev.Obj, "toolId")
	if !ok || id == "" {
		return
	}
	p := at(ev)
	switch prev := u.tools.use(id, p); prev.state {
	case callOpen, callAnswered, callFailed, callAbandoned:
		report(p.finding(UnifiedToolIDUnique, "/toolId",
			"toolStarted toolId %s repeats the toolStarted at line %d", quote(id), prev.use.line))
	case callEarly:
		report(prev.res.finding(UnifiedToolStartedFirst, "/toolId",
			"toolCompleted for %s comes before its toolStarted at line %d", quote(id), p.line))
	}
}

func (u *unified) toolProgress(ev Event, report func(finding.Finding)) {
	id, ok := str(ev.Obj, "toolId")
	if !ok || id == "" {
		return
	}
	p := at(ev)
	switch prev := u.tools.get(id); prev.state {
	case callOpen:
	case callAnswered, callFailed:
		report(p.finding(UnifiedToolNoProgressAfterCompleted, "/toolId",
			"toolProgress for %s after its toolCompleted at line %d", quote(id), prev.res.line))
	case callEarly:
		report(p.finding(UnifiedToolNoProgressAfterCompleted, "/toolId",
			"toolProgress for %s after a toolCompleted at line %d", quote(id), prev.res.line))
	default:
		report(p.finding(UnifiedToolKnown, "/toolId",
			"toolProgress names toolId %s, which no earlier toolStarted has", quote(id)))
	}
}

func (u *unified) toolCompleted(ev Event, report func(finding.Finding)) {
	id, ok := str(ev.Obj, "toolId")
	if !ok || id == "" {
		return
	}
	p := at(ev)
	prev, full := u.tools.result(id, p, false)
	switch {
	case full:
		report(p.finding(UnifiedToolKnown, "/toolId",
			"toolCompleted names toolId %s, which no earlier toolStarted has", quote(id)))
	case prev.state == callAnswered || prev.state == callFailed:
		report(p.finding(UnifiedToolCompletedOnce, "/toolId",
			"second toolCompleted for %s (the toolStarted at line %d completed at line %d)", quote(id), prev.use.line, prev.res.line))
	case prev.state == callEarly:
		report(p.finding(UnifiedToolCompletedOnce, "/toolId",
			"second toolCompleted for %s (an earlier one at line %d)", quote(id), prev.res.line))
	}
}

func (u *unified) sessionEnded(ev Event, report func(finding.Finding)) {
	p := at(ev)
	if u.ended.line > 0 {
		return // reported as an event after sessionEnded
	}
	u.ended = p
	reason, _ := str(ev.Obj, "reason")
	u.closeTools(p, reason != "completed" && reason != "", report)
}

func (u *unified) closeTools(p place, forgive bool, report func(finding.Finding)) {
	var unanswered func(string, place)
	if !forgive {
		unanswered = func(id string, s place) {
			report(s.finding(UnifiedToolCompleted, "/toolId",
				"toolStarted %s got no toolCompleted before sessionEnded at line %d", quote(id), p.line))
		}
	}
	u.tools.closeTurn(unanswered, func(id string, r place) {
		report(r.finding(UnifiedToolKnown, "/toolId",
			"toolCompleted names toolId %s, but no toolStarted with that id came before line %d", quote(id), p.line))
	})
}

// End reports a session that never ended.
func (u *unified) End(report func(finding.Finding)) {
	if !u.seen || u.ended.line > 0 {
		return
	}
	report(u.last.finding(UnifiedTruncated, "",
		"the stream ends without sessionEnded (%d tool(s) still running)", u.tools.pending()))
	u.closeTools(u.last, true, report)
}
