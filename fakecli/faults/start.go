package faults

import (
	"strconv"
	"time"
)

// StartDelay returns how long the process stays silent when it starts
// (the start_delay fault), and records the fault; 0 when the plan has
// none. The fake calls it once, as soon as its start is logged: for that
// long it reads nothing, writes nothing and answers nothing (not even
// Claude's initialize), and a signal kills it, as it kills a CLI still
// loading (no handler is installed yet).
func (p *Plan) StartDelay() time.Duration {
	if p == nil {
		return 0
	}
	var d time.Duration
	for _, f := range p.faults {
		if f.def.name != "start_delay" {
			continue
		}
		ms := f.ints["ms"]
		d += time.Duration(ms) * time.Millisecond
		p.record(f, "silent for the first "+(time.Duration(ms)*time.Millisecond).String()+" of the process, before it reads or writes anything",
			"ms", strconv.FormatInt(ms, 10))
	}
	return d
}

// StartBanner reports whether the plan's steps begin with a start-up
// banner (the banner fault at its first line, where Steps puts it): the
// fake writes that step before it reads or answers anything, as a real
// CLI prints its banner before its first answer.
func (p *Plan) StartBanner() bool {
	if p == nil {
		return false
	}
	for _, f := range p.faults {
		if f.def.name == "banner" && f.ints["at"] == 1 {
			return true
		}
	}
	return false
}
