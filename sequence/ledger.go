package sequence

import (
	"slices"
	"strings"
)

// recentWindow is how many no-longer-pending ids a ledger remembers. It
// bounds memory on unbounded streams; a duplicate that comes further back
// than this is not detected.
const recentWindow = 4096

// earlyCap bounds how many results-without-a-call a ledger holds while it
// waits to see whether the call comes later. Past it, such results are
// reported as unknown at once.
const earlyCap = 4096

// recent is a bounded map from id to V that forgets its oldest entries
// first. It remembers ids that are closed (answered, completed, cancelled)
// so that a repeat can be recognised without keeping every id of the
// stream.
type recent[V any] struct {
	m    map[string]recentEntry[V]
	ring []recentKey
	next int
	seq  uint64
}

type recentEntry[V any] struct {
	v   V
	seq uint64
}

type recentKey struct {
	id  string
	seq uint64
}

// get returns the value remembered for id.
func (r *recent[V]) get(id string) (V, bool) {
	e, ok := r.m[id]
	return e.v, ok
}

// put remembers id with v, replacing any earlier value and evicting the
// oldest entry when the window is full.
func (r *recent[V]) put(id string, v V) {
	if r.m == nil {
		r.m = make(map[string]recentEntry[V])
		r.ring = make([]recentKey, 0, 64)
	}
	r.seq++
	if len(r.ring) < recentWindow {
		r.ring = append(r.ring, recentKey{id, r.seq})
	} else {
		old := r.ring[r.next]
		if e, ok := r.m[old.id]; ok && e.seq == old.seq {
			delete(r.m, old.id)
		}
		r.ring[r.next] = recentKey{id, r.seq}
		r.next = (r.next + 1) % recentWindow
	}
	r.m[id] = recentEntry[V]{v, r.seq}
}

// del forgets id. Its ring slot stays and is skipped on eviction.
func (r *recent[V]) del(id string) { delete(r.m, id) }

// reset forgets everything.
func (r *recent[V]) reset() { *r = recent[V]{} }

// callState is where a call (a tool use, a tool start) stands in its
// lifecycle.
type callState int

const (
	callNone      callState = iota // never seen
	callOpen                       // use seen, result pending
	callEarly                      // result seen, use not (yet) seen
	callAnswered                   // use and result seen
	callFailed                     // use and a result marked as an error
	callAbandoned                  // use seen, its turn ended without a result
)

// call is what a ledger knows about one id.
type call struct {
	state callState
	use   place // where the use (start) was, if seen
	res   place // where the (first) result was, if seen
}

// calls pairs uses with results by id. Pending uses and early results are
// kept until the turn that holds them ends; closed calls are remembered in
// a bounded window.
type calls struct {
	open  map[string]place
	early map[string]place
	done  recent[call]
}

// get returns what is known about id.
func (c *calls) get(id string) call {
	if p, ok := c.open[id]; ok {
		return call{state: callOpen, use: p}
	}
	if p, ok := c.early[id]; ok {
		return call{state: callEarly, res: p}
	}
	if d, ok := c.done.get(id); ok {
		return d
	}
	return call{}
}

// use records a use of id at p and returns what was known before. When the
// id was new it is now pending; when a result came first (callEarly) the
// call is now answered; otherwise (a repeat) nothing changes and the caller
// decides what a repeat means.
func (c *calls) use(id string, p place) call {
	prev := c.get(id)
	switch prev.state {
	case callNone:
		if c.open == nil {
			c.open = make(map[string]place)
		}
		c.open[strings.Clone(id)] = p
	case callEarly:
		delete(c.early, id)
		c.done.put(strings.Clone(id), call{state: callAnswered, use: p, res: prev.res})
	}
	return prev
}

// reopen makes id pending again at p (a retried call that reuses its id).
func (c *calls) reopen(id string, p place) {
	c.done.del(id)
	delete(c.early, id)
	if c.open == nil {
		c.open = make(map[string]place)
	}
	c.open[strings.Clone(id)] = p
}

// result records a result for id at p and returns what was known before.
// A pending or abandoned use becomes answered (failed when failed is set);
// an unknown id is held as early until the turn ends, or, when too many are
// held, left unrecorded (the returned state is callNone and full is true).
// A repeat changes nothing.
func (c *calls) result(id string, p place, failed bool) (prev call, full bool) {
	prev = c.get(id)
	st := callAnswered
	if failed {
		st = callFailed
	}
	switch prev.state {
	case callOpen:
		delete(c.open, id)
		c.done.put(strings.Clone(id), call{state: st, use: prev.use, res: p})
	case callAbandoned:
		c.done.put(strings.Clone(id), call{state: st, use: prev.use, res: p})
	case callNone:
		if len(c.early) >= earlyCap {
			return prev, true
		}
		if c.early == nil {
			c.early = make(map[string]place)
		}
		c.early[strings.Clone(id)] = p
	}
	return prev, false
}

// pending returns how many uses await a result.
func (c *calls) pending() int { return len(c.open) }

// oldestOpen returns the pending use that came first.
func (c *calls) oldestOpen() (string, place) {
	var id string
	var best place
	for k, p := range c.open {
		if id == "" || p.line < best.line {
			id, best = k, p
		}
	}
	return id, best
}

// pendingIDs is one id with its place, for reporting in line order.
type pendingID struct {
	id string
	at place
}

// sorted returns the entries of m ordered by line, so that reports are
// deterministic.
func sorted(m map[string]place) []pendingID {
	out := make([]pendingID, 0, len(m))
	for id, p := range m {
		out = append(out, pendingID{id, p})
	}
	slices.SortFunc(out, func(a, b pendingID) int {
		if a.at.line != b.at.line {
			return a.at.line - b.at.line
		}
		return strings.Compare(a.id, b.id) // several calls in one line
	})
	return out
}

// closeTurn ends the turn that holds the pending uses and early results:
// each pending use is passed to unanswered (in line order) and remembered
// as abandoned, each early result is passed to unknown and forgotten.
// Either callback may be nil.
func (c *calls) closeTurn(unanswered, unknown func(id string, p place)) {
	for _, e := range sorted(c.open) {
		if unanswered != nil {
			unanswered(e.id, e.at)
		}
		c.done.put(e.id, call{state: callAbandoned, use: e.at})
	}
	c.open = nil // drop the buckets too: a huge turn must not pin memory
	for _, e := range sorted(c.early) {
		if unknown != nil {
			unknown(e.id, e.at)
		}
	}
	c.early = nil
}

// reset forgets everything (a new process in the same stream).
func (c *calls) reset() { *c = calls{} }
