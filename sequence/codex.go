package sequence

import (
	"strings"

	"github.com/agentconform/agentconform/finding"
)

// codexLifecycle are the item types that are started before they complete
// (docs/protocols/codex.md#items). agent_message, reasoning and error items only ever
// complete; unknown item types are not judged.
var codexLifecycle = map[string]bool{
	"command_execution": true, "file_change": true, "mcp_tool_call": true,
	"web_search": true, "todo_list": true, "collab_tool_call": true,
}

// codexItem is what is known about an item id.
type codexItem struct {
	typ       string
	start     place // where it was started (or first seen)
	completed place // zero while open
}

// codex checks `codex exec --json` stdout: one process, one thread, one
// turn (docs/protocols/codex.md#turn-order).
//
// Items are paired by item.id, whichever of web_search's two "id" keys the
// decoder kept: started, updated and completed all carry the same pair.
// A thread.started after the turn ended is reported, then taken as the
// start of another process's output (item ids restart at item_0).
type codex struct {
	seen        bool
	thread      place // zero until thread.started
	threadNoted bool  // the missing thread.started was reported
	phase       turnPhase
	turnAt      place // turn.started of the current turn
	endAt       place // turn.completed/turn.failed that ended it
	afterNoted  bool  // a line after the turn's end was reported
	earlyNoted  bool  // an item before turn.started was reported
	open        map[string]codexItem
	done        recent[codexItem]
	last        place
}

func newCodex() *codex { return &codex{} }

// Observe checks one event.
func (c *codex) Observe(ev Event, report func(finding.Finding)) {
	if ev.Obj == nil {
		return
	}
	typ, _ := str(ev.Obj, "type")
	switch typ {
	case "thread.started", "turn.started", "turn.completed", "turn.failed",
		"item.started", "item.updated", "item.completed", "error":
	default:
		return
	}
	p := at(ev)
	c.seen, c.last = true, p
	if typ == "thread.started" {
		c.threadStarted(ev, report)
		return
	}
	if c.thread.line == 0 && !c.threadNoted {
		c.threadNoted = true
		report(p.finding(CodexThreadFirst, "/type",
			"%s before thread.started: thread.started is the first line of a process", typ))
	}
	switch typ {
	case "turn.started":
		c.turnStarted(ev, report)
	case "turn.completed", "turn.failed":
		c.turnEnded(ev, typ, report)
	case "item.started", "item.updated", "item.completed":
		c.item(ev, typ, report)
	case "error":
		c.afterEnd(ev, typ, report) // error is not terminal, and not allowed after the end
	}
}

func (c *codex) threadStarted(ev Event, report func(finding.Finding)) {
	p := at(ev)
	if c.thread.line == 0 {
		c.thread = p
		return
	}
	report(p.finding(CodexThreadOnce, "",
		"second thread.started (the first was at line %d): thread.started comes once per process", c.thread.line))
	if c.phase == turnClosed {
		// Another process's output follows; its item ids start over.
		c.thread, c.phase, c.afterNoted, c.earlyNoted = p, noTurn, false, false
		c.open = nil
		c.done.reset()
	}
}

// afterEnd reports the first line that follows the turn's terminal event.
func (c *codex) afterEnd(ev Event, typ string, report func(finding.Finding)) {
	if c.phase != turnClosed || c.afterNoted {
		return
	}
	c.afterNoted = true
	report(at(ev).finding(CodexNothingAfterTurnEnd, "/type",
		"%s after the turn ended at line %d: the terminal event is the last line of a process", typ, c.endAt.line))
}

func (c *codex) turnStarted(ev Event, report func(finding.Finding)) {
	p := at(ev)
	switch c.phase {
	case turnOpen:
		report(p.finding(CodexTurnClosed, "",
			"turn.started while the turn started at line %d has neither turn.completed nor turn.failed", c.turnAt.line))
	case turnClosed:
		report(p.finding(CodexOneTurn, "",
			"second turn in one process (the first ended at line %d): codex exec runs one turn per process", c.endAt.line))
	}
	c.phase, c.turnAt, c.afterNoted, c.earlyNoted = turnOpen, p, false, false
}

func (c *codex) turnEnded(ev Event, typ string, report func(finding.Finding)) {
	p := at(ev)
	switch c.phase {
	case noTurn:
		report(p.finding(CodexTurnStartedFirst, "/type",
			"%s without turn.started", typ))
	case turnClosed:
		c.afterEnd(ev, typ, report)
		return
	}
	if typ == "turn.completed" && obj(ev.Obj, "usage") == nil {
		report(p.finding(CodexTurnUsage, "/usage", "turn.completed without a usage object"))
	}
	// The CLI completes the running plan itself at turn end; any other
	// item (a command left running in the background) may stay open.
	for _, e := range sorted(c.openStarts()) {
		if it := c.open[e.id]; it.typ == "todo_list" {
			report(p.finding(CodexTodoListClosedAtTurnEnd, "",
				"%s ends the turn while the todo_list item %s (started at line %d) was never completed", typ, quote(e.id), it.start.line))
		}
	}
	c.open = nil
	c.phase, c.endAt = turnClosed, p
}

// openStarts returns the open items with where they started.
func (c *codex) openStarts() map[string]place {
	m := make(map[string]place, len(c.open))
	for id, it := range c.open {
		m[id] = it.start
	}
	return m
}

func (c *codex) item(ev Event, typ string, report func(finding.Finding)) {
	p := at(ev)
	it := obj(ev.Obj, "item")
	id, ok := str(it, "id")
	if !ok || id == "" {
		return
	}
	itype, _ := str(it, "type")
	switch c.phase {
	case turnClosed:
		c.afterEnd(ev, typ, report)
	case noTurn:
		warning := typ == "item.completed" && itype == "error"
		if !warning && !c.earlyNoted {
			c.earlyNoted = true
			report(p.finding(CodexTurnStartedFirst, "/type",
				"%s (%s) before turn.started: only error warnings may precede it", typ, itype))
		}
	}
	const idPtr = "/item/id"
	prevOpen, isOpen := c.open[id]
	prevDone, isDone := c.done.get(id)
	switch {
	case isOpen:
		if itype != "" && prevOpen.typ != "" && itype != prevOpen.typ {
			f := p.finding(CodexItemTypeStable, "/item/type",
				"%s for %s has item type %s, but it started as %s at line %d", typ, quote(id), quote(itype), quote(prevOpen.typ), prevOpen.start.line)
			f.Expected, f.Actual = prevOpen.typ, itype
			report(f)
		}
	case isDone && typ == "item.updated":
		report(p.finding(CodexItemNoUpdateAfterCompleted, idPtr,
			"item.updated for %s after its item.completed at line %d", quote(id), prevDone.completed.line))
		return
	case isDone && typ == "item.completed":
		report(p.finding(CodexItemCompletedOnce, idPtr,
			"second item.completed for %s (the first was at line %d)", quote(id), prevDone.completed.line))
		return
	}
	switch typ {
	case "item.started":
		switch {
		case isOpen:
			report(p.finding(CodexItemIDUnique, idPtr,
				"item.started for %s, which already started at line %d", quote(id), prevOpen.start.line))
		case isDone:
			report(p.finding(CodexItemIDUnique, idPtr,
				"item.started for %s, which already completed at line %d", quote(id), prevDone.completed.line))
		default:
			c.setOpen(id, codexItem{typ: strings.Clone(itype), start: p})
		}
	case "item.updated":
		if !isOpen {
			c.notStarted(ev, typ, id, itype, report)
			c.setOpen(id, codexItem{typ: strings.Clone(itype), start: p})
		}
	case "item.completed":
		start := p
		if isOpen {
			start = prevOpen.start
			delete(c.open, id)
		} else {
			c.notStarted(ev, typ, id, itype, report)
		}
		c.done.put(strings.Clone(id), codexItem{typ: strings.Clone(itype), start: start, completed: p})
	}
}

func (c *codex) setOpen(id string, it codexItem) {
	if c.open == nil {
		c.open = make(map[string]codexItem)
	}
	c.open[strings.Clone(id)] = it
}

// notStarted reports an update or completion of a lifecycle item that was
// never started.
//
// A file_change may begin with item.updated: the exec JSONL processor
// writes a patch update that comes before the change's start as
// item.updated, and the start after it as item.updated too
// (FileChangePatchUpdated and already_started_file_change in
// codex-rs/exec/src/event_processor_with_jsonl_output.rs).
func (c *codex) notStarted(ev Event, typ, id, itype string, report func(finding.Finding)) {
	if !codexLifecycle[itype] || (itype == "file_change" && typ == "item.updated") {
		return
	}
	report(at(ev).finding(CodexItemStartedFirst, "/item/id",
		"%s for %s item %s without item.started", typ, itype, quote(id)))
}

// End reports a stream that stopped before the turn's terminal event.
func (c *codex) End(report func(finding.Finding)) {
	if !c.seen || c.phase == turnClosed {
		return
	}
	report(c.last.finding(CodexTruncated, "",
		"the stream ends without turn.completed or turn.failed (%d item(s) left open); this is how a real Codex run looks after SIGINT (exit 1) or SIGTERM (143)",
		len(c.open)))
}
