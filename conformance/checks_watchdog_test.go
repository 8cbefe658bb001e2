package conformance

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/conformance/internal/broken"
	"github.com/agentconform/agentconform/fakecli"
)

// TestJudgeWatchdog checks the watchdog's judge on what a stalled turn
// leaves: each way of getting it wrong fails, with the reason, and the
// right one passes. (TestBrokenAdapters and the reference batteries run
// it on real adapters.)
func TestJudgeWatchdog(t *testing.T) {
	code := 143
	start := fakecli.Observation{Kind: "start", PID: 10, Argv: []string{"codex", "exec", "--json", "hi"}}
	probe := fakecli.Observation{Kind: "start", PID: 9, Argv: []string{"codex", "--version"}}
	probeExit := fakecli.Observation{Kind: "exit", PID: 9, Code: new(int)}
	term := fakecli.Observation{Kind: "signal", PID: 10, Signal: "SIGTERM", Action: "default"}
	exit := fakecli.Observation{Kind: "exit", PID: 10, Code: &code}
	obs := func(ends []Record, closeAt time.Duration, gaveUp bool, log ...fakecli.Observation) *Observation {
		o := &Observation{Case: &Case{Agent: "codex", Watchdog: true}, StallAfter: 5 * time.Second, GaveUp: gaveUp,
			Sent: []Sent{{Op: "start"}}, Fake: append([]fakecli.Observation{probe, probeExit, start}, log...)}
		o.FakeAtTurnEnd = o.Fake
		if closeAt > 0 {
			o.Sent = append(o.Sent, Sent{Op: "close", At: closeAt})
		}
		o.Records = append([]Record{{Kind: "hello"}}, ends...)
		return o
	}
	failed := Record{Kind: "turn_end", At: 5200 * time.Millisecond, Reason: ReasonFailed, Error: "codex wrote nothing for 5s"}
	for _, tc := range []struct {
		name string
		o    *Observation
		want string // "" passes; else a piece of Actual
	}{
		{"reported and stopped", obs([]Record{failed}, 0, false, term, exit), ""},
		{"reported, no reason, killed outright", obs([]Record{{Kind: "turn_end", At: time.Second}}, 0, false,
			fakecli.Observation{Kind: "exit", PID: 10, Signal: "SIGKILL", Action: killedOutright}), ""},
		{"no watchdog: the runner gave up", obs([]Record{{Kind: "turn_end", At: 13 * time.Second, Reason: ReasonCancelled}}, 12*time.Second, true, term, exit),
			"no turn_end before the runner gave up"},
		{"no turn_end at all", obs(nil, 12*time.Second, true), "no turn_end at all"},
		{"reported a success", obs([]Record{{Kind: "turn_end", OK: true, Reason: ReasonCompleted}}, 0, false, exit), "ok:true"},
		{"reported cancelled", obs([]Record{{Kind: "turn_end", Reason: ReasonCancelled}}, 0, false, term, exit), `reason "cancelled"`},
		{"left running (a probe's exit is no evidence)", obs([]Record{failed}, 0, false), "left running"},
	} {
		out := judgeWatchdog(tc.o)
		switch {
		case tc.want == "" && !out.OK:
			t.Errorf("%s: %s (expected %s)", tc.name, out.Actual, out.Expected)
		case tc.want != "" && (out.OK || !strings.Contains(out.Actual, tc.want)):
			t.Errorf("%s: ok %v, actual %q; want a failure saying %q", tc.name, out.OK, out.Actual, tc.want)
		}
	}
	// No CLI ran: other checks say why.
	o := &Observation{Case: &Case{Agent: "codex", Watchdog: true}}
	if out := judgeWatchdog(o); !out.Skip {
		t.Errorf("no CLI ran: %+v, want SKIP", out)
	}
	// The declared watchdog time is what the runner waited for.
	o = obs(nil, 20*time.Second, true)
	o.Hello, o.StallAfter = &Hello{WatchdogMS: 12000}, 12*time.Second
	if out := judgeWatchdog(o); !strings.Contains(out.Expected, "watchdog_ms of its hello, 12s") || strings.Contains(out.Actual, "declares it") {
		t.Errorf("declared watchdog: %+v", out)
	}
}

// TestWatchdogTimes checks which watchdog time a case waits for, and that
// its deadline leaves room for it.
func TestWatchdogTimes(t *testing.T) {
	if MinStallAfter <= slowStart || DefaultStallAfter < MinStallAfter {
		t.Errorf("MinStallAfter %v must outwait a slow start (%v), and the default (%v) respect it", MinStallAfter, slowStart, DefaultStallAfter)
	}
	cfg := &Config{Timeout: 20 * time.Second}
	if got := stallAfter(cfg, nil); got != DefaultStallAfter {
		t.Errorf("default: %v", got)
	}
	cfg.StallAfter = 2 * time.Second
	if got := stallAfter(cfg, &Hello{}); got != 2*time.Second {
		t.Errorf("--stall-after: %v", got)
	}
	h := &Hello{WatchdogMS: 90000}
	if got := stallAfter(cfg, h); got != 90*time.Second {
		t.Errorf("declared: %v", got)
	}
	c := &Case{Watchdog: true}
	wc := watchdogConfig(cfg, c, h)
	if wc.StallAfter != 90*time.Second || cfg.StallAfter != 2*time.Second {
		t.Errorf("watchdogConfig: %v (and the original %v)", wc.StallAfter, cfg.StallAfter)
	}
	if got := watchdogTimeout(wc, c, cfg.Timeout); got < 90*time.Second+watchdogGrace {
		t.Errorf("deadline %v leaves no room for a 90 s watchdog", got)
	}
	if got := watchdogTimeout(wc, &Case{}, cfg.Timeout); got != cfg.Timeout {
		t.Errorf("deadline of another case: %v", got)
	}
	if watchdogConfig(cfg, &Case{}, h) != cfg {
		t.Error("watchdogConfig changed another case's configuration")
	}
}

// TestLongTurnLines replays the turn of each long-turn case, without its
// pauses, through the reference adapter and counts the lines the fake
// writes: longTurnLines must hold them, or the turn is not the quarter
// longer than the watchdog time that makes the case catch a watchdog that
// times the turn.
func TestLongTurnLines(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Adapter: testAdapter(t, broken.ReferenceUnified), FakeExe: exe, WorkDir: t.TempDir()}
	for _, agent := range []string{"claude", "codex", "gemini"} {
		c := *pickCases(t, agent+"/multi-tool/long-turn")[0]
		if !c.LongTurn || c.Faults != longTurnFaults(agent, DefaultStallAfter) {
			t.Errorf("%s: LongTurn %v, faults %q", c.ID, c.LongTurn, c.Faults)
		}
		c.Faults = ""
		o, err := Exec(context.Background(), cfg, &c)
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for _, w := range o.Wire {
			lines += bytes.Count(w.Bytes, []byte("\n"))
		}
		if lines != longTurnLines[agent] {
			t.Errorf("%s: the fake wrote %d lines; longTurnLines says %d", c.ID, lines, longTurnLines[agent])
		}
		lc := longTurnCase(&Config{}, &c, &Hello{WatchdogMS: 3500})
		gap, _ := strconv.Atoi(strings.TrimPrefix(lc.Faults, "latency:ms="))
		if total := time.Duration(gap*lines) * time.Millisecond; total < 3500*time.Millisecond*5/4 || gap*4 > 3500 {
			t.Errorf("%s at a 3.5 s watchdog: %s, %d lines, %v in all", c.ID, lc.Faults, lines, total)
		}
	}
}
