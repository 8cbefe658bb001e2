package fakecli

import (
	"io"

	"github.com/agentconform/agentconform/fakecli/faults"
	"github.com/agentconform/agentconform/transcript"
)

// faultPlan is the parsed AGENTCONFORM_FAULTS (package fakecli/faults);
// nil injects nothing.
type faultPlan struct {
	p *faults.Plan
}

// appliedFault is one applied fault, for the observation log.
type appliedFault = faults.Applied

// parseFaults parses AGENTCONFORM_FAULTS; an empty spec gives nil.
func parseFaults(spec string, seed int64) (*faultPlan, error) {
	p, err := faults.Parse(spec, seed)
	if err != nil || p == nil {
		return nil, err
	}
	return &faultPlan{p: p}, nil
}

// steps rewrites one process part before replay (event and line faults).
func (f *faultPlan) steps(cli string, steps []transcript.Step) []transcript.Step {
	if f == nil {
		return steps
	}
	return f.p.Steps(cli, steps)
}

// rawStdout marks the writer handed to the fault writers, so the fake can
// tell whether they wrapped it.
type rawStdout struct{ w io.Writer }

func (r *rawStdout) Write(b []byte) (int, error) { return r.w.Write(b) }

// stdout wraps stdout with the byte-level faults; end is called when a
// fault ends the process. ok is false when there are none (the fake then
// buffers stdout).
func (f *faultPlan) stdout(w io.Writer, end func(code int)) (out io.Writer, ok bool) {
	if f == nil {
		return w, false
	}
	raw := &rawStdout{w}
	out = f.p.Stdout(raw, end)
	if r, same := out.(*rawStdout); same && r == raw {
		return w, false
	}
	return out, true
}

// applied lists what was applied so far.
func (f *faultPlan) applied() []appliedFault {
	if f == nil {
		return nil
	}
	return f.p.Applied()
}
