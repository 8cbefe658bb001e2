package fakecli

import (
	"fmt"
	"io"

	"github.com/agentconform/agentconform/transcript"
)

// faultPlan is a parsed fault spec (package fakecli/faults); nil injects
// nothing.
type faultPlan struct{}

// appliedFault is one applied fault, for the observation log.
type appliedFault struct {
	Fault  string
	Params map[string]string
	Detail string
}

// parseFaults parses AGENTCONFORM_FAULTS.
func parseFaults(spec string, seed int64) (*faultPlan, error) {
	return nil, fmt.Errorf("fault injection is not built into this binary (spec %q)", spec)
}

// steps rewrites one process part before replay (event and line faults).
func (f *faultPlan) steps(cli string, steps []transcript.Step) []transcript.Step { return steps }

// stdout wraps stdout with the byte-level faults; end is called when a
// fault ends the process.
func (f *faultPlan) stdout(w io.Writer, end func(code int)) io.Writer { return w }

// applied lists what was applied so far.
func (f *faultPlan) applied() []appliedFault { return nil }
