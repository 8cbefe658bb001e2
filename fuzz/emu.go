package fuzz

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/fakecli/faults"
	"github.com/agentconform/agentconform/transcript"
)

// stallMS is the shortest delay step that counts as a stall (the stall
// fault writes a 24-hour one; fixtures' own delays are seconds long and are
// played as if they had passed).
const stallMS = 3600 * 1000

// emu plays one process part of a transcript the way a fake CLI would,
// without a process: it walks the steps along the path a client with the
// case's permission policy takes, writes stdout lines through the plan's
// writer faults, and records what a reader of the pipe would see. It stops
// at a stall, where the caller decides what happens (an interrupt resumes
// it with the CLI's SIGINT action).
type emu struct {
	cli        string
	steps      []transcript.Step
	labels     map[string]int
	vars       transcript.Vars
	permission string
	pc         int // next step
	budget     int // steps left before the walk is declared looping

	w    io.Writer // stdout through the writer faults
	rec  *recorder
	sig  string // the SIGINT action in force ("goto:x", "exit:N", "default", ...)
	done bool   // the process has ended

	// How it ended: code, or death by signal; stalled when it stopped at a
	// stall and is waiting.
	code    int
	signal  string
	stalled bool
	cut     bool // limit_data ended the output
	lines   int  // stdout lines written so far

	line []byte // the line being written (writers do not keep it)
}

// recorder keeps every stdout write, as the reading end of a pipe sees it.
type recorder struct {
	all    []byte
	chunks [][2]int // [start, end) of each write in all
	next   int      // chunks handed out so far
}

func (r *recorder) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	start := len(r.all)
	r.all = append(r.all, b...)
	r.chunks = append(r.chunks, [2]int{start, len(r.all)})
	return len(b), nil
}

// take returns the writes not handed out yet.
func (r *recorder) take(each func(chunk []byte)) {
	for ; r.next < len(r.chunks); r.next++ {
		c := r.chunks[r.next]
		each(r.all[c[0]:c[1]])
	}
}

// newEmu prepares one process part. plan may be nil.
func newEmu(cli string, part []transcript.Step, plan *faults.Plan, permission string) *emu {
	steps := plan.Steps(cli, part)
	size := 0
	for _, s := range steps {
		size += len(s.Text) + 1
	}
	e := &emu{cli: cli, steps: steps, labels: transcript.Labels(steps), vars: transcript.Vars{}, permission: permission,
		budget: 100000, rec: &recorder{all: make([]byte, 0, size)}}
	e.w = plan.Stdout(e.rec, func(code int) {
		e.done, e.cut, e.code = true, true, code
	})
	return e
}

// run walks until the process ends or stalls.
func (e *emu) run() {
	e.stalled = false
	for !e.done && e.pc < len(e.steps) {
		if e.budget--; e.budget < 0 {
			// A goto loop without output: a real fake would spin; end it.
			e.done, e.code = true, 1
			return
		}
		s := e.steps[e.pc]
		e.pc++
		switch s.Op {
		case transcript.OpOut:
			e.line = append(e.line[:0], e.vars.Fill(s.Text)...)
			if !s.NoNewline {
				e.line = append(e.line, '\n')
			}
			e.w.Write(e.line)
			e.lines++
		case transcript.OpIn:
			for name := range s.Capture {
				e.vars[name] = "fuzz-" + name
			}
			if len(s.Cases) > 0 {
				e.branch(s.Cases)
			}
		case transcript.OpDelay:
			if s.DelayMS >= stallMS {
				e.stalled = true
				return
			}
		case transcript.OpGoto:
			e.jump(s.Label)
		case transcript.OpOnSignal:
			if a, ok := s.OnSignal["SIGINT"]; ok {
				e.sig = a
			}
		case transcript.OpExit:
			e.done, e.code = true, s.Code
		case transcript.OpExitSignal:
			e.done, e.signal = true, s.Signal
		}
	}
	e.done = true
}

// branch takes the case the client's answer selects: the one that goes
// to the label named after the permission policy, else none (fall
// through), as a fake whose stdin matched no case.
func (e *emu) branch(cases []transcript.Case) {
	for _, c := range cases {
		if c.Goto == e.permission {
			e.jump(c.Goto)
			return
		}
	}
}

func (e *emu) jump(label string) {
	if i, ok := e.labels[label]; ok {
		e.pc = i
	} else {
		e.done, e.code = true, 1
	}
}

// interrupt resumes a stalled process the way its SIGINT action says: a
// goto continues there, exit:N exits, anything else ends it as the CLI's
// default does (Codex and Gemini exit 130; Claude's default answer is
// beyond this model, so the output simply ends).
func (e *emu) interrupt() {
	if !e.stalled {
		return
	}
	e.stalled = false
	switch a := e.sig; {
	case strings.HasPrefix(a, "goto:"):
		e.jump(strings.TrimPrefix(a, "goto:"))
		e.run()
	case strings.HasPrefix(a, "exit:"):
		n, _ := strconv.Atoi(strings.TrimPrefix(a, "exit:"))
		e.done, e.code = true, n
	case a == "ignore":
		e.stalled = true // still waiting; the caller gives up
	default:
		e.done, e.code = true, 130
		if e.cli == "claude" {
			e.code = 0
		}
	}
}

// stop ends a stalled process as a driver that gives up does.
func (e *emu) stop() {
	if !e.done {
		e.done, e.stalled, e.signal = true, false, "SIGKILL"
	}
}

// exitErr is the error a driver sees for how the process ended, nil for
// a clean exit 0.
func (e *emu) exitErr() error {
	switch {
	case e.signal != "":
		return fmt.Errorf("%s: killed by %s", e.cli, e.signal)
	case e.code != 0:
		return fmt.Errorf("%s: exited with status %d", e.cli, e.code)
	}
	return nil
}
