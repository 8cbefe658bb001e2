package reference

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// turnProcDriver runs Codex and Gemini: one process per turn, stdin closed
// (Codex reads it to EOF before it starts), the next turn resumed by the
// session id the previous one reported. An interrupt is SIGINT to the
// process group, then SIGTERM, then SIGKILL, each after a grace period.
type turnProcDriver struct {
	cfg       Config
	path      string
	sessionID func() string
	turns     int
	last      error // how the last turn's process ended, unless the adapter stopped it
}

// refused reports whether a CLI process that announced no session ended
// by refusing to run: it exited with a status of its own, not by a signal
// (the CLIs refuse an unknown session so: Claude and Codex exit 1, Gemini
// 42).
func refused(xerr error) bool {
	var xe *ExitError
	return errors.As(xerr, &xe) && xe.Signal == "" && xe.Code != 0
}

func newTurnProcDriver(cfg Config, sessionID func() string) (*turnProcDriver, error) {
	path, err := cfg.executable()
	if err != nil {
		return nil, err
	}
	return &turnProcDriver{cfg: cfg, path: path, sessionID: sessionID}, nil
}

// spec is the process of one turn.
func (d *turnProcDriver) spec(prompt string) procSpec {
	resume := d.sessionID()
	if resume == "" {
		resume = d.cfg.Resume
	}
	spec := procSpec{name: string(d.cfg.Agent), path: d.path, dir: d.cfg.Cwd, env: d.cfg.environ(), stderr: d.cfg.Stderr}
	switch d.cfg.Agent {
	case Codex:
		args, viaStdin := codexArgs(d.cfg, resume, prompt)
		spec.args = args
		if viaStdin {
			spec.input = prompt
		}
	case Gemini:
		spec.args = geminiArgs(d.cfg, resume, prompt)
	}
	return spec
}

func (d *turnProcDriver) turn(ctx context.Context, prompt string, interrupts <-chan struct{}, feed feedFunc) TurnEnd {
	d.turns++
	asked := d.sessionID() == "" && d.cfg.Resume != "" // the turn resumes the session the caller asked for
	defer func() {
		if asked && d.sessionID() == "" && refused(d.last) {
			// The CLI refused it (an unknown or expired id): the next
			// turn starts a session of its own instead of the same
			// refusal (codex.md#session-resume, gemini.md#session-resume).
			d.cfg.Resume = ""
		}
	}()
	p, err := startProc(d.spec(prompt))
	if err != nil {
		return TurnEnd{Err: err}
	}
	defer p.abandon()
	var (
		end      TurnEnd
		stallErr error // set when the watchdog stopped the CLI
		cutErr   error
		escalate <-chan time.Time
		stage    int // signals sent after the interrupt: 0 SIGINT, 1 SIGTERM, 2 SIGKILL
		done     = ctx.Done()
	)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	arm := func(dur time.Duration) {
		timer.Reset(dur)
		escalate = timer.C
	}
	watch := newStallWatch(d.cfg.StallTimeout, p)
	defer watch.stop()
loop:
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				break loop
			}
			if _, err := feed(l); err != nil {
				cutErr = err
			}
			p.touch() // a line that took long to handle is no silence of the CLI's
		case <-interrupts:
			if !end.Interrupted {
				end.Interrupted = true
				p.signal(syscall.SIGINT)
				arm(d.cfg.interruptGrace())
			}
		case <-escalate:
			escalate = nil
			switch stage {
			case 0:
				stage = 1
				p.signal(syscall.SIGTERM)
				arm(d.cfg.stopGrace())
			default:
				stage = 2
				p.signal(syscall.SIGKILL)
			}
		case <-watch.C:
			if end.Interrupted || end.TimedOut || !watch.stalled(p) {
				continue
			}
			end.TimedOut, stallErr = true, watch.err(d.cfg.Agent)
			go p.stop(d.cfg.stopGrace())
		case <-done:
			done = nil
			end.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
			end.Interrupted = end.Interrupted || !end.TimedOut
			go p.stop(d.cfg.stopGrace())
		}
	}
	// stdout is closed: the CLI is exiting (or left a child holding the
	// pipe, which reap deals with). Do not wait for ever.
	if !p.waitExit(d.cfg.stopGrace()) {
		p.stop(d.cfg.stopGrace())
	}
	p.waitStderr(d.cfg.stopGrace())
	xerr := p.exitErr()
	d.last = xerr
	if end.Interrupted || end.TimedOut {
		d.last = nil // stopped by the adapter: no refusal of the CLI's
	}
	switch {
	case stallErr != nil:
		end.Err = stallErr
	case end.TimedOut:
		end.Err = fmt.Errorf("%s: turn stopped: %w", d.cfg.Agent, context.DeadlineExceeded)
	case xerr != nil:
		end.Err = xerr
	case cutErr != nil:
		end.Err = cutErr
	}
	return end
}

// close has nothing to release: each turn's process is already reaped.
func (d *turnProcDriver) close(context.Context, bool) error { return nil }
