package sequence

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/agentconform/agentconform/finding"
)

// cycleIDs is how many distinct ids a synthetic stream cycles through: more
// than the ledgers remember, so a reused id is never a duplicate.
const cycleIDs = recentWindow + 1000

// unifiedEvent builds the n-th event of an endless, valid unified stream:
// sessionStarted, then toolStarted, toolProgress, toolCompleted, textChunk
// over and over. Event ids are unique; toolIds cycle through cycleIDs.
func unifiedEvent(n int) map[string]any {
	m := map[string]any{"id": "e" + strconv.Itoa(n), "sessionId": "S", "timestamp": "2026-01-01T00:00:00Z"}
	if n == 0 {
		m["type"], m["agentType"] = "sessionStarted", "claude"
		return m
	}
	tool := "t" + strconv.Itoa(((n-1)/4)%cycleIDs)
	switch (n - 1) % 4 {
	case 0:
		m["type"], m["toolId"], m["toolName"] = "toolStarted", tool, "shell"
	case 1:
		m["type"], m["toolId"], m["progress"] = "toolProgress", tool, 0.5
	case 2:
		m["type"], m["toolId"], m["success"] = "toolCompleted", tool, true
	default:
		m["type"], m["content"] = "textChunk", "chunk"
	}
	return m
}

// codexEvent builds the n-th event of an endless, valid Codex turn:
// thread.started, turn.started, then command items started and completed.
func codexEvent(n int) map[string]any {
	switch n {
	case 0:
		return map[string]any{"type": "thread.started", "thread_id": "01a1fb3a"}
	case 1:
		return map[string]any{"type": "turn.started"}
	}
	k := n - 2
	item := map[string]any{"id": "item_" + strconv.Itoa((k/2)%cycleIDs), "type": "command_execution", "command": "ls"}
	if k%2 == 0 {
		return map[string]any{"type": "item.started", "item": item}
	}
	return map[string]any{"type": "item.completed", "item": item}
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestMemoryBounded pushes a million events through a checker and checks
// that the heap it holds does not grow with the stream: memory is bounded
// by what is pending, not by what went by.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a million events")
	}
	const events = 1_000_000
	for _, tc := range []struct {
		dialect string
		gen     func(int) map[string]any
	}{
		{"unified", unifiedEvent},
		{"codex", codexEvent},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			c, _ := New(tc.dialect, Options{})
			findings := 0
			report := func(f finding.Finding) {
				if findings < 5 {
					t.Errorf("unexpected finding: %v", f)
				}
				findings++
			}
			feed := func(from, to int) {
				for n := from; n < to; n++ {
					c.Observe(Event{Line: n + 1, Offset: int64(n) * 100, Len: 99, Obj: tc.gen(n)}, report)
				}
			}
			feed(0, events/10)
			base := heapAlloc()
			feed(events/10, events)
			after := heapAlloc()
			runtime.KeepAlive(c)
			grew := int64(after) - int64(base)
			t.Logf("%s: heap %d KiB after %d events, %d KiB after %d (growth %d KiB)",
				tc.dialect, base/1024, events/10, after/1024, events, grew/1024)
			if grew > 1<<20 {
				t.Errorf("heap grew by %d KiB over %d events; want it flat", grew/1024, events-events/10)
			}
			if after > 16<<20 {
				t.Errorf("heap is %d MiB after %d events; want a few MiB at most", after>>20, events)
			}
			if findings > 0 {
				t.Errorf("%d findings on a valid stream", findings)
			}
		})
	}
}

// benchEvents runs b.N events from a pre-built cycle through a checker and
// reports throughput. Events are decoded up front so that only the checker
// is measured.
func benchEvents(b *testing.B, dialect string, prefix, cycle []map[string]any) {
	c, err := New(dialect, Options{})
	if err != nil {
		b.Fatal(err)
	}
	findings := 0
	report := func(f finding.Finding) {
		if findings == 0 {
			b.Errorf("unexpected finding: %v", f)
		}
		findings++
	}
	for i, m := range prefix {
		c.Observe(Event{Line: i + 1, Obj: m}, report)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		line := len(prefix) + i + 1
		c.Observe(Event{Line: line, Offset: int64(line) * 100, Len: 99, Obj: cycle[i%len(cycle)]}, report)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkClaude(b *testing.B) {
	var cycle []map[string]any
	for k := 0; k < cycleIDs; k++ {
		id := fmt.Sprintf("toolu_%d", k)
		for _, l := range []string{cInit, cUse(id), cRes(id), cText, cResult} {
			cycle = append(cycle, decode(b, l)[0].Obj)
		}
	}
	benchEvents(b, "claude", nil, cycle)
}

func BenchmarkCodex(b *testing.B) {
	var cycle []map[string]any
	for n := 2; n < 2+2*cycleIDs; n++ {
		cycle = append(cycle, codexEvent(n))
	}
	benchEvents(b, "codex", []map[string]any{codexEvent(0), codexEvent(1)}, cycle)
}

func BenchmarkUnified(b *testing.B) {
	// Event ids must stay unique within the window, so the cycle is longer
	// than the window in events too.
	var cycle []map[string]any
	for n := 1; n <= 4*cycleIDs; n++ {
		cycle = append(cycle, unifiedEvent(n))
	}
	benchEvents(b, "unified", []map[string]any{unifiedEvent(0)}, cycle)
}
