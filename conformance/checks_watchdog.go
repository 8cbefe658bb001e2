package conformance

import (
	"fmt"
	"strconv"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// The adapter's own watchdog: a CLI that hangs in a turn (alive, silent) is
// the adapter's to notice. Elsewhere the runner closes a stalled case
// itself, like a caller that gives up, which hides an adapter with no
// watchdog; the watchdog cases leave the CLI to the adapter.

// DefaultStallAfter is the watchdog time lifecycle/watchdog assumes of an
// adapter that declares none (Config.StallAfter, `run --stall-after`):
// short, so that the default run stays fast. The fake stalls for a day.
const DefaultStallAfter = 5 * time.Second

// MinStallAfter is the shortest watchdog time `run --stall-after` takes: a
// watchdog must outwait a CLI that is slow to start within reason (the
// slow-start cases keep it silent for slowStart), or it fails the turns
// of a healthy CLI.
const MinStallAfter = 3 * time.Second

// watchdogGrace is how long past the watchdog time the runner waits for
// the adapter to report the stalled turn before it gives up and closes:
// the 5-second SIGKILL grace common in SDKs (an adapter may stop the CLI
// before it reports) plus a 2-second margin, as for an interrupt.
const watchdogGrace = interruptDeadline

// srcWatchdog is the source of lifecycle/watchdog.
const srcWatchdog = "docs/protocols/unified.md#watchdog"

// CheckWatchdog judges the watchdog cases.
var CheckWatchdog = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/watchdog", "SHOULD",
	"A CLI that goes silent in a turn (alive, writing nothing) is noticed by the adapter itself: once the CLI has written nothing for the adapter's watchdog time (the watchdog_ms of its hello, else the run's --stall-after, 5 s by default), the adapter reports the turn failed (turn_end ok:false, reason failed when it gives reasons) and stops the CLI, within 7 seconds more (a 5-second SIGKILL grace and a margin), before its caller gives up. Without a watchdog, a caller that waits for the turn waits for ever on a hung CLI.", srcWatchdog),
	Applies: needs("", func(c *Case) bool { return c.Watchdog }), Judge: judgeWatchdog})

// watchdogCase is the case of one agent that leaves a stalled CLI to the
// adapter's watchdog.
func watchdogCase(agent string, prompts []string) *Case {
	base := agent + "/single-tool"
	return &Case{ID: base + "/watchdog", Agent: agent, Fixture: base, Faults: "stall:after=2", Permission: "allow", Prompts: prompts,
		Watchdog: true, Expect: Expect{TurnFails: true, Stall: true},
		Description: "the CLI stops writing after two lines and stays alive, and the runner does not close: the adapter's own watchdog reports the turn failed and stops the CLI"}
}

// StallAfter sets the watchdog time lifecycle/watchdog assumes of an
// adapter whose hello declares none (Config.StallAfter).
func StallAfter(d time.Duration) Option { return func(c *Config) { c.StallAfter = d } }

// stallAfter is the watchdog time the runner waits for: the one the
// adapter declares in its hello, else cfg.StallAfter.
func stallAfter(cfg *Config, h *Hello) time.Duration {
	if h != nil && h.WatchdogMS > 0 {
		return time.Duration(h.WatchdogMS) * time.Millisecond
	}
	if cfg.StallAfter > 0 {
		return cfg.StallAfter
	}
	return DefaultStallAfter
}

// watchdogConfig is the configuration a watchdog case runs with: cfg, with
// StallAfter the adapter's declared watchdog time (from its probe's hello)
// when it declares one, so that the case's deadline leaves room for it.
func watchdogConfig(cfg *Config, c *Case, h *Hello) *Config {
	if !c.Watchdog || h == nil || h.WatchdogMS <= 0 {
		return cfg
	}
	wc := *cfg
	wc.StallAfter = stallAfter(cfg, h)
	return &wc
}

// watchdogTimeout is the deadline of case c: timeout, or for a watchdog
// case at least the watchdog time, its grace and 15 seconds to start the
// turn and end the case.
func watchdogTimeout(cfg *Config, c *Case, timeout time.Duration) time.Duration {
	if !c.Watchdog {
		return timeout
	}
	return max(timeout, stallAfter(cfg, nil)+watchdogGrace+15*time.Second)
}

// watchdog gives up on a watchdog case as a caller would: once the CLI has
// been silent for the watchdog time and watchdogGrace more with no
// turn_end, it closes (the adapter must then stop the CLI, as on any close).
func (d *driver) watchdog() {
	if !d.c.Watchdog {
		return
	}
	after := stallAfter(d.cfg, d.o.Hello)
	d.o.StallAfter = after
	if d.closed || d.turnEnds > 0 || d.o.GaveUp {
		return
	}
	last := d.cli.grew
	if last.IsZero() {
		last = d.cliUp
	}
	if last.IsZero() || time.Since(last) < after+watchdogGrace {
		return // the CLI has not started, or has not been silent long enough
	}
	d.o.GaveUp = true
	d.o.FakeAtGiveUp = snapshotLog(d.observe)
	d.send("close", nil)
}

func judgeWatchdog(o *Observation) Outcome {
	after := o.StallAfter
	if after <= 0 {
		after = stallAfter(&Config{}, o.Hello)
	}
	whose := "the run's --stall-after"
	if o.Hello != nil && o.Hello.WatchdogMS > 0 {
		whose = "the watchdog_ms of its hello"
	}
	expected := fmt.Sprintf("turn_end ok:false within %s of the CLI's last output (%s, %s, plus %s to stop the CLI)", after+watchdogGrace, whose, after, watchdogGrace)
	if len(o.FakeStarts()) == 0 {
		return Outcome{Skip: true, Actual: "no CLI process ran: the adapter never started the turn"}
	}
	closeAt := time.Duration(-1)
	for _, s := range o.Sent {
		if s.Op == "close" {
			closeAt = s.At
			break
		}
	}
	ends := o.TurnEnds()
	if len(ends) == 0 || o.GaveUp && closeAt >= 0 && ends[0].At > closeAt {
		hint := ""
		if whose != "the watchdog_ms of its hello" {
			hint = " (an adapter whose watchdog waits longer declares it, watchdog_ms in its hello, or is run with --stall-after)"
		}
		if len(ends) == 0 {
			return failf(expected, "no turn_end at all%s", hint)
		}
		return failf(expected, "no turn_end before the runner gave up on the CLI, silent for %s, and closed (at %.3fs): the adapter has no watchdog of its own%s", after+watchdogGrace, closeAt.Seconds(), hint)
	}
	first := ends[0]
	if first.OK {
		return failf("turn_end ok:false", "turn_end ok:true: the turn the CLI never finished was reported a success")
	}
	if first.Reason != "" && first.Reason != ReasonFailed {
		return failf("turn_end reason failed (the adapter's own time limit)", "reason %q (error %q)", first.Reason, clip(first.Error, 200))
	}
	log := o.FakeAtTurnEnd
	if log == nil {
		log = o.Fake
	}
	if how := stoppedEvidence(o, log); how == "" {
		return failf("the adapter stops the CLI it gave up on (a signal, a kill, or Claude's interrupt) before it reports the turn, or at once after",
			"turn_end ok:false came, but the CLI was left running: it got no signal and had not exited %s after the turn_end", settleAfterTurnEnd)
	}
	return pass()
}

// stoppedEvidence says what in log shows that the CLI was stopped ("" if
// nothing does): an interrupt's evidence, or the exit of a CLI process.
func stoppedEvidence(o *Observation, log []fakecli.Observation) string {
	if ev := interruptEvidence(o, log); ev != "" {
		return ev
	}
	turns := map[int]bool{} // the processes that ran a turn, not a --version probe
	for _, s := range o.FakeStarts() {
		if formatOf(o.Case.Agent, s.Argv) != formatNone {
			turns[s.PID] = true
		}
	}
	for _, r := range log {
		if r.Kind == "exit" && turns[r.PID] {
			if r.Code != nil {
				return "exit " + strconv.Itoa(*r.Code)
			}
			return "killed by " + r.Signal
		}
	}
	return ""
}

// ReferenceStallAfter is the watchdog time the reference adapters run with
// in `agentconform run` unless --stall-after sets one: MinStallAfter, half
// a second more than a slow-start case keeps the CLI silent (slowStart),
// which leaves a loaded machine hundreds of times what a fake takes to
// start. The watchdog cases last as long as it, and the long-turn cases a
// quarter longer (longTurnFaults): they are the run's longest cases, so
// a short one keeps the run short.
const ReferenceStallAfter = MinStallAfter

// ReferenceGrace is how long the reference adapters in `agentconform run`
// give a CLI to end an interrupted turn (and a turn its caller closes),
// to exit after its stdin closes, and again after SIGTERM: the fakes do
// at once what they do at all, and a CLI that hangs at its start (a case
// of its own) would otherwise hold its case for the adapter's default 5 s.
const ReferenceGrace = 2 * time.Second

// ReferenceArgs are the flags the reference adapter runs with for profile
// (unified or shim) in `agentconform run`, with a watchdog of stallAfter.
func ReferenceArgs(profile string, stallAfter time.Duration) []string {
	return []string{"--profile", profile, "--stall-timeout", stallAfter.String(), "--interrupt-grace", ReferenceGrace.String(), "--stop-grace", ReferenceGrace.String()}
}
