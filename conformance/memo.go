package conformance

import (
	"sync"

	"github.com/agentconform/agentconform/conformance/oracle"
)

// observationMemo holds what several checks derive from one observation
// alike (the wire cut into lines, the lossless summaries), each made on
// first use.
type observationMemo struct {
	linesOnce sync.Once
	lines     [][]WireLine

	summariesOnce sync.Once
	want, got     summary
	err           error

	modelOnce sync.Once
	model     *oracle.Session
	modelErr  error

	indexOnce sync.Once
	index     *infoIndex

	turnsOnce sync.Once
	turns     []turnWire

	acpOnce sync.Once
	acp     *acpWire // the ACP editor's wire log (checks_acp.go)
}

// memoMu guards the creation of an observation's memo.
var memoMu sync.Mutex

// memoized returns the observation's memo, made on first use.
func (o *Observation) memoized() *observationMemo {
	memoMu.Lock()
	defer memoMu.Unlock()
	if o.memo == nil {
		o.memo = &observationMemo{}
	}
	return o.memo
}
