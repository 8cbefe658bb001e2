package conformance

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Pool bounds the cases that run at once, across every run that shares
// it (Config.Pool): `agentconform run` judges both reference adapters at
// once through one pool, so that the cases that wait on purpose (a CLI
// that stalls until the runner gives up, an interrupt's grace periods, a
// pipe that trickles) wait side by side instead of one run after the
// other. A case with long lines also weighs what the runner holds of them
// while it judges it (caseWeight), and the cases running at once weigh
// at most poolWeight (one heavier case runs alone): two 64 MiB cases at
// once would double the runner's peak memory. A case that cannot start
// does not hold up the others: the next case that can run does.
//
// The cases that wait on purpose (caseWaits: a CLI that stalls or starts
// slowly, an interrupt's grace periods, a pipe that trickles) spend their
// time asleep, so they do not take one of the n slots but one of
// waitSlotsPer*n slots of their own: they all wait at once, each costing
// its wait once, while the busy cases keep the cores.
type Pool struct {
	mu       sync.Mutex
	cond     *sync.Cond
	free     int          // slots free
	waitFree int          // slots for waiting cases free
	weight   int64        // weight of the cases running
	slots    int          // slots of both kinds: how many cases may run at once
	queues   []*caseQueue // the queues of the runs waiting on the pool
}

// waitSlotsPer is how many waiting cases may run per slot of busy ones
// for an adapter the runner knows nothing of (a waiting case costs a few
// milliseconds of CPU over seconds of sleep, but its adapter's start, an
// interpreter's say, costs what a busy case does: more at once would
// starve the busy cases of a 2-core machine).
const waitSlotsPer = 4

// LeanWaitSlots is waitSlotsPer for adapters that start in milliseconds,
// as the reference adapters do (`agentconform run` without --adapter):
// the default run's waiting cases wait about 115 s in all (six watchdogs
// and six long turns of 3 to 4 s, eight slow starts of 2.5 s, the
// interrupt sweep's graces), so 16 waiting slots on 2 cores made a run of
// at least 7 s whatever the cores did, and 32 make one of about 4.
const LeanWaitSlots = 8

// caseWaits reports whether c spends most of its time waiting on purpose
// (a timer of the fake or of the runner), not working: such a case takes
// a waiting slot of the pool. A case with long lines never does.
func caseWaits(c *Case) bool {
	if c.Expect.LineSize >= 1<<20 {
		return false
	}
	if c.Interrupt != nil || c.CloseWhenQuiet > 0 || c.Watchdog || c.Expect.Stall || c.Expect.IgnoresSIGTERM {
		return true
	}
	for _, f := range strings.Split(c.Faults, ";") {
		name, _, _ := strings.Cut(strings.TrimSpace(f), ":")
		switch name {
		case "slicer", "latency", "bandwidth", "start_delay", "stall", "linger", "ignore_signal":
			return true
		}
	}
	return false
}

// poolWeight is the most the cases running at once may weigh: a 64 MiB
// case runs with no other long case beside it. At 192 MiB a Codex or
// Gemini 64 MiB case ran beside a 16 MiB one, and the default run's
// runner peaked at 253 to 297 MB; at 128 MiB it peaks at 250 to 256 MB in
// as much wall time (the long cases share the cores with the short ones,
// not with one another).
const poolWeight = 128 << 20

// caseWeight is about what the runner holds of a case with long lines:
// the CLI's wire copy of the line, and what the adapter makes of it (a
// Claude line comes twice, as text deltas and whole).
func caseWeight(c *Case) int64 {
	if c.Expect.Volume > 0 {
		// Many small lines: the wire's copy (Claude's twice, as deltas
		// and whole), the adapter's events and what both decode to.
		return 12 * int64(c.Expect.Volume)
	}
	if c.Expect.LineSize < 1<<20 {
		return 0
	}
	w := 2 * int64(c.Expect.LineSize)
	if c.Agent == "claude" {
		w *= 2
	}
	return w
}

// NewPool returns a pool of n slots for busy cases and waitSlotsPer*n for
// the cases that wait; n <= 0 means twice the cores.
func NewPool(n int) *Pool { return NewPoolWaiting(n, waitSlotsPer) }

// NewPoolWaiting is NewPool with perSlot slots for waiting cases per slot
// of busy ones (at least 1): LeanWaitSlots for adapters that start in
// milliseconds, whose waiting cases may all wait at once.
func NewPoolWaiting(n, perSlot int) *Pool {
	if n <= 0 {
		n = defaultJobs()
	}
	p := &Pool{free: n, waitFree: max(1, perSlot) * n}
	p.slots = p.free + p.waitFree
	p.cond = sync.NewCond(&p.mu)
	return p
}

// caseQueue is what one run has still to dispatch, in dispatch order.
type caseQueue struct {
	cases  []*Case
	order  []int           // indices into cases
	waits  []bool          // caseWaits of each case
	weight []int64         // caseWeight of each case
	cost   []time.Duration // caseCost of each case
}

// newCaseQueue orders the cases longest first (by caseCost; ties by their
// order), so that the long waits start at once and overlap the rest. What
// the pool asks of a case at every dispatch is worked out here once.
func newCaseQueue(cases []*Case) *caseQueue {
	q := &caseQueue{cases: cases, order: make([]int, len(cases)), waits: make([]bool, len(cases)), weight: make([]int64, len(cases)), cost: make([]time.Duration, len(cases))}
	for i, c := range cases {
		q.order[i] = i
		q.waits[i], q.weight[i], q.cost[i] = caseWaits(c), caseWeight(c), caseCost(c)
	}
	sort.SliceStable(q.order, func(a, b int) bool { return q.cost[q.order[a]] > q.cost[q.order[b]] })
	return q
}

// next takes the first case of q that can run now, with its slots (given
// back by release), waiting while none can; ok is false once q is empty or
// ctx is done. The runs that share the pool take turns longest first: a
// run does not take a slot while another run's case that could have it is
// expected to take longer (without that, one run's short interrupt cases
// filled the waiting slots while the other's 4-second watchdog and long
// turns waited a second for them, and ended the run a second late).
func (p *Pool) next(ctx context.Context, q *caseQueue) (i int, release func(), ok bool) {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.queues, q) {
		p.queues = append(p.queues, q)
	}
	for {
		if ctx.Err() != nil || len(q.order) == 0 {
			p.leave(q)
			return 0, nil, false
		}
		var yielded [2]bool // the slot kinds (busy, waiting) a longer case of another run goes first on
		for k, i := range q.order {
			kind, slots := 0, &p.free
			if q.waits[i] {
				kind, slots = 1, &p.waitFree
			}
			w := q.weight[i]
			if yielded[kind] || *slots == 0 || !p.fits(w) {
				continue
			}
			if p.longerElsewhere(q, q.waits[i], q.cost[i]) {
				yielded[kind] = true
				continue
			}
			q.order = append(q.order[:k], q.order[k+1:]...)
			*slots--
			p.weight += w
			if len(q.order) == 0 {
				p.leave(q)
			}
			if p.free > 0 || p.waitFree > 0 {
				p.cond.Broadcast() // the other runs may take what is left
			}
			return i, func() {
				p.mu.Lock()
				*slots++
				p.weight -= w
				p.cond.Broadcast()
				p.mu.Unlock()
			}, true
		}
		p.cond.Wait()
	}
}

// fits reports whether a case of weight w may start beside the running
// ones (one heavier than poolWeight runs with no other weighted case).
func (p *Pool) fits(w int64) bool {
	return w == 0 || p.weight == 0 || p.weight+w <= poolWeight
}

// longerElsewhere reports whether another run's queue would take a case
// of the same kind (waiting or busy) now whose cost is above cost: its
// first case of that kind that fits.
func (p *Pool) longerElsewhere(q *caseQueue, waits bool, cost time.Duration) bool {
	for _, r := range p.queues {
		if r == q {
			continue
		}
		for _, j := range r.order {
			if r.waits[j] != waits || !p.fits(r.weight[j]) {
				continue
			}
			if r.cost[j] > cost {
				return true
			}
			break
		}
	}
	return false
}

// leave takes q out of the queues the pool orders across runs (it is
// empty, or its run stopped: its cases no longer go first).
func (p *Pool) leave(q *caseQueue) {
	if k := slices.Index(p.queues, q); k >= 0 {
		p.queues = slices.Delete(p.queues, k, k+1)
		p.cond.Broadcast()
	}
}

// caseCost is a rough guess of how long a case takes on a quiet machine,
// only to order the cases, longest first: a watchdog's silence, a CLI
// that never starts (the adapter's close grace), a long turn, a slow
// start, a trickling pipe or a long line take seconds, a grace period a
// few tenths, a plain case a few hundredths. The longest waits set the
// run's length unless they start first.
func caseCost(c *Case) time.Duration {
	base := 50 * time.Millisecond
	lines := 16 // about the stdout lines of a fixture's turn
	if c.Agent == "claude" {
		base *= 2 // partial messages: twice the lines
		lines = 60
	}
	if c.Watchdog {
		return 6 * time.Second // the default watchdog time and its grace
	}
	if c.CloseWhenQuiet > 0 && c.Expect.Stall {
		return c.CloseWhenQuiet + 5*time.Second // and the adapter's close grace
	}
	for _, f := range strings.Split(c.Faults, ";") {
		name, params, _ := strings.Cut(strings.TrimSpace(f), ":")
		switch name {
		case "start_delay":
			return min(faultMS(params), 6000)*time.Millisecond + base
		case "latency":
			return time.Duration(lines)*faultMS(params)*time.Millisecond + base
		case "slicer":
			return 60 * base
		case "bandwidth":
			return 15 * base
		}
	}
	switch {
	case c.Expect.LineSize >= 32<<20:
		// Seconds of work, started after the long waits, when fewer
		// cases run beside it: what the runner holds of them adds to
		// what it holds of the line.
		return 2 * time.Second
	case c.Expect.LineSize >= 4<<20:
		return 6 * base
	case c.Interrupt != nil, c.CloseWhenQuiet > 0, c.Expect.Stall:
		return 8 * base
	}
	return base
}

// faultMS is the ms parameter of a fault's parameters ("ms=300,line=2").
func faultMS(params string) time.Duration {
	for _, kv := range strings.Split(params, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "ms="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return time.Duration(n)
			}
		}
	}
	return 0
}
