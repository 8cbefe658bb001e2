package conformance

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolWeights runs cases of every weight through one pool from two
// runs at once: never more cases than slots, never two that together
// weigh more than poolWeight, and light cases go on while a heavy one
// waits for the weight to free up.
func TestPoolWeights(t *testing.T) {
	var cases []*Case
	for i := 0; i < 6; i++ {
		cases = append(cases, &Case{ID: "heavy", Agent: "claude", Expect: Expect{LineSize: 64 << 20}})
	}
	for i := 0; i < 40; i++ {
		cases = append(cases, &Case{ID: "light", Agent: "codex"}, &Case{ID: "mid", Agent: "codex", Expect: Expect{LineSize: 8 << 20}})
	}
	pool := NewPool(4)
	var running, weight, weighted, lightWhileHeavy atomic.Int64
	var heavyRunning atomic.Bool
	var wg sync.WaitGroup
	for run := 0; run < 2; run++ {
		q := newCaseQueue(cases)
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i, release, ok := pool.next(context.Background(), q)
					if !ok {
						return
					}
					c := q.cases[i]
					if n := running.Add(1); n > 4 {
						t.Errorf("%d cases at once in a pool of 4", n)
					}
					w := caseWeight(c)
					if w > 0 {
						if n := weighted.Add(1); weight.Add(w) > poolWeight && n > 1 {
							t.Errorf("%d cases weighing %d MiB at once", n, weight.Load()>>20)
						}
					}
					if c.ID == "heavy" {
						heavyRunning.Store(true)
					} else if heavyRunning.Load() {
						lightWhileHeavy.Add(1)
					}
					time.Sleep(time.Millisecond)
					if c.ID == "heavy" {
						heavyRunning.Store(false)
					}
					if w > 0 {
						weight.Add(-w)
						weighted.Add(-1)
					}
					running.Add(-1)
					release()
				}
			}()
		}
	}
	wg.Wait()
	if lightWhileHeavy.Load() == 0 {
		t.Errorf("no light case ran beside a heavy one")
	}
}

// TestCaseQueueOrder checks that the longest cases are dispatched first,
// the others in their order.
func TestCaseQueueOrder(t *testing.T) {
	cases := []*Case{
		{ID: "a", Agent: "codex"},
		{ID: "b", Agent: "codex", Interrupt: &InterruptPlan{}},
		{ID: "c", Agent: "claude", Faults: "slicer:max=7,delay_us=300"},
		{ID: "d", Agent: "codex"},
		{ID: "e", Agent: "gemini", Expect: Expect{LineSize: 64 << 20}},
	}
	q := newCaseQueue(cases)
	var got string
	for _, i := range q.order {
		got += cases[i].ID
	}
	if got != "cebad" {
		t.Errorf("dispatch order %s, want cebad", got)
	}
}

// TestPoolStops checks that a run waiting for a slot stops when its
// context is done.
func TestPoolStops(t *testing.T) {
	pool := NewPool(1)
	q := newCaseQueue([]*Case{{ID: "a"}, {ID: "b"}})
	_, release, ok := pool.next(context.Background(), q)
	if !ok {
		t.Fatal("no first case")
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() {
		_, _, ok := pool.next(ctx, q)
		done <- ok
	}()
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Error("a case was handed out after the context was done")
		}
	case <-time.After(time.Minute):
		t.Fatal("next did not return when its context was done")
	}
}

// TestPoolWaitingSlots: every waiting case of a lean pool runs at once
// beside the busy ones, up to LeanWaitSlots per busy slot, and no more;
// NewPool keeps waitSlotsPer.
func TestPoolWaitingSlots(t *testing.T) {
	for _, tc := range []struct {
		pool *Pool
		per  int
	}{{NewPoolWaiting(2, LeanWaitSlots), LeanWaitSlots}, {NewPool(2), waitSlotsPer}} {
		var cases []*Case
		for i := 0; i < 2*tc.per+3; i++ {
			cases = append(cases, &Case{ID: "wait", Agent: "codex", Faults: "stall:after=2"})
		}
		cases = append(cases, &Case{ID: "busy", Agent: "codex"}, &Case{ID: "busy", Agent: "codex"})
		q := newCaseQueue(cases)
		waiting, busy := 0, 0
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			i, _, ok := tc.pool.next(ctx, q) // never released: count what fits at once
			cancel()
			if !ok {
				break
			}
			if caseWaits(q.cases[i]) {
				waiting++
			} else {
				busy++
			}
		}
		if waiting != 2*tc.per || busy != 2 {
			t.Errorf("%d per slot: %d waiting and %d busy cases at once in a pool of 2, want %d and 2", tc.per, waiting, busy, 2*tc.per)
		}
	}
}

// TestPoolLongestFirstAcrossRuns: a run does not take a waiting slot while
// another run sharing the pool has a longer waiting case for it.
func TestPoolLongestFirstAcrossRuns(t *testing.T) {
	pool := NewPoolWaiting(1, 2) // two waiting slots
	var long, short []*Case
	for range 2 {
		long = append(long, &Case{ID: "watchdog", Agent: "codex", Watchdog: true})
	}
	for range 3 {
		short = append(short, &Case{ID: "interrupt", Agent: "codex", Interrupt: &InterruptPlan{}})
	}
	qLong, qShort := newCaseQueue(long), newCaseQueue(short)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, releaseFirst, ok := pool.next(ctx, qLong)
	if !ok {
		t.Fatal("no first long case")
	}
	took := make(chan int, 1)
	go func() {
		i, _, ok := pool.next(ctx, qShort)
		if ok {
			took <- i
		}
	}()
	time.Sleep(50 * time.Millisecond) // let the short run ask first (it must yield all the same)
	if _, _, ok := pool.next(ctx, qLong); !ok {
		t.Fatal("the second long case did not get the last waiting slot: the other run's short case took it")
	}
	select {
	case i := <-took:
		t.Fatalf("a short case (%d) started while a longer one of the other run waited", i)
	default:
	}
	releaseFirst()
	select {
	case <-took: // the long run is done: the short one goes on
	case <-ctx.Done():
		t.Fatal("the short run never got a slot once the long run's cases had theirs")
	}
}
