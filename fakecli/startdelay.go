package fakecli

import (
	"os"
	"syscall"
	"time"
)

// startDelay keeps the process silent for the start_delay fault's time,
// as a CLI still loading: it reads nothing and writes nothing (Claude's
// initialize goes unanswered until it is over), and a SIGINT, SIGTERM or
// SIGHUP kills it, since no handler is installed yet (the real CLIs,
// signalled that early, die by the signal). It returns when the time has
// passed; a signal ends the process here.
func (p *proc) startDelay() {
	d := p.plan.startDelay()
	if d <= 0 {
		return
	}
	p.obs.flush()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case s := <-p.sigs:
		sig, _ := s.(syscall.Signal)
		p.obs.log("signal", "signal", signalName(sig), "action", "die")
		p.dieSig = sig
		os.Exit(p.finish(128 + int(sig)))
	}
}

// startDelay is Plan.StartDelay on the parsed plan (0 without faults).
func (f *faultPlan) startDelay() time.Duration {
	if f == nil {
		return 0
	}
	return f.p.StartDelay()
}

// startBanner is Plan.StartBanner on the parsed plan (false without
// faults).
func (f *faultPlan) startBanner() bool {
	if f == nil {
		return false
	}
	return f.p.StartBanner()
}
