package reference

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// claudeDriver runs Claude Code as the SDKs do: one long-lived process,
// stream-json on stdin and stdout, the control protocol for initialize,
// permission prompts and interrupts (docs/protocols/claude.md#control, #interrupt).
type claudeDriver struct {
	cfg  Config
	ctx  context.Context
	p    *proc
	tag  string // random part of our request ids
	reqN int
	// sessionID is the session id the CLI announced ("" until it has):
	// a turn after the process died starts it again, resuming that.
	sessionID func() string
	// begun is set once the current process wrote its system/init: it
	// runs a session (one that writes a result before it refused the
	// session asked for).
	begun bool

	mu      sync.Mutex
	perms   map[string]permState // can_use_tool requests by request_id
	deadErr error                // set once the process is gone
}

// permState is where a permission request stands.
type permState int

const (
	permPending permState = iota
	permAnswered
	permCancelled
)

// startClaude starts the CLI and sends initialize. sessionID reports the
// session the CLI announced, for a restart.
func startClaude(ctx context.Context, cfg Config, sessionID func() string) (*claudeDriver, error) {
	var tag [4]byte
	_, _ = rand.Read(tag[:])
	d := &claudeDriver{cfg: cfg, ctx: ctx, tag: hex.EncodeToString(tag[:]), perms: map[string]permState{}, sessionID: sessionID}
	if err := d.launch(cfg); err != nil {
		return nil, err
	}
	return d, nil
}

// launch starts a CLI process with cfg's arguments and sends initialize.
func (d *claudeDriver) launch(cfg Config) error {
	path, err := cfg.executable()
	if err != nil {
		return err
	}
	p, err := startProc(procSpec{name: "claude", path: path, args: claudeArgs(cfg), dir: cfg.Cwd, env: cfg.environ(), stdin: true, stderr: cfg.Stderr})
	if err != nil {
		return err
	}
	d.p, d.begun = p, false
	context.AfterFunc(d.ctx, func() { p.stop(cfg.stopGrace()) })
	// The first line need not be initialize (docs/protocols/claude.md#stdin), but the
	// SDKs send it, and hooks or MCP servers would need it. A failure
	// here shows up as the first turn's failure.
	_ = d.request("initialize", nil)
	return nil
}

// restart starts the CLI again after its process died, resuming the
// session it had announced, so that the caller's next turn works.
func (d *claudeDriver) restart() error {
	sid := ""
	if d.sessionID != nil {
		sid = d.sessionID()
	}
	d.mu.Lock()
	dead := d.deadErr
	d.mu.Unlock()
	if !d.begun {
		// The process began no session: it refused the one asked for
		// (a result before its system/init, then an exit status: an
		// unknown id), which the next process must not ask for again, or
		// it died before it began, and the next asks for it once more.
		// Without one asked for, a new session starts.
		sid = d.cfg.Resume
		if refused(d.p.exitErr()) {
			d.cfg.Resume, sid = "", ""
		}
	}
	cfg := d.cfg
	cfg.Resume = sid
	if err := d.launch(cfg); err != nil {
		return fmt.Errorf("claude: starting it again to resume session %q after %v: %w", sid, dead, err)
	}
	d.mu.Lock()
	d.deadErr = nil
	d.perms = map[string]permState{}
	d.mu.Unlock()
	return nil
}

// request sends a control_request of ours.
func (d *claudeDriver) request(subtype string, fields map[string]any) error {
	d.mu.Lock()
	d.reqN++
	id := "req_" + strconv.Itoa(d.reqN) + "_" + d.tag
	d.mu.Unlock()
	req := map[string]any{"subtype": subtype}
	for k, v := range fields {
		req[k] = v
	}
	return d.write(map[string]any{"type": "control_request", "request_id": id, "request": req})
}

func (d *claudeDriver) write(v any) error {
	b, err := marshalNoEscape(v)
	if err != nil {
		return fmt.Errorf("claude: encoding a stdin line: %w", err)
	}
	return d.p.writeLine(b)
}

// userMessage is a user turn as the SDKs write it.
func userMessage(prompt string) map[string]any {
	return map[string]any{
		"type":               "user",
		"session_id":         "",
		"message":            map[string]any{"role": "user", "content": prompt},
		"parent_tool_use_id": nil,
	}
}

func (d *claudeDriver) dead() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.deadErr
}

// died records that the process is gone, with why.
func (d *claudeDriver) died(err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.deadErr == nil {
		d.deadErr = err
	}
	return d.deadErr
}

func (d *claudeDriver) turn(ctx context.Context, prompt string, interrupts <-chan struct{}, feed feedFunc) TurnEnd {
	if d.dead() != nil {
		if err := d.restart(); err != nil {
			return TurnEnd{Err: err}
		}
	}
	if err := d.write(userMessage(prompt)); err != nil {
		return TurnEnd{Err: d.gone(feed, err)}
	}
	interrupted := false
	var grace <-chan time.Time
	done := ctx.Done()
	watch := newStallWatch(d.cfg.StallTimeout, d.p)
	defer watch.stop()
	for {
		select {
		case l, ok := <-d.p.lines:
			if !ok {
				return TurnEnd{Interrupted: interrupted, Err: d.gone(feed, errors.New("claude exited before the turn's result"))}
			}
			d.control(l.data)
			if !d.begun && bytes.Contains(l.data, []byte(`"init"`)) && isInit(l.data) {
				d.begun = true
			}
			term, err := feed(l)
			d.p.touch() // a line that took long to handle is no silence of the CLI's
			if err != nil {
				return TurnEnd{Interrupted: interrupted, Err: d.gone(feed, err)}
			}
			if term {
				if !d.begun && d.p.waitExit(d.cfg.stopGrace()) {
					// A result before the session began: the CLI refused
					// the session asked for (an unknown --resume) and
					// exits; the next turn starts it again (restart).
					d.died(fmt.Errorf("claude exited after a turn that began no session (%v)", d.p.exitErr()))
				}
				return TurnEnd{Interrupted: interrupted}
			}
		case <-interrupts:
			if !interrupted {
				interrupted = true
				if err := d.request("interrupt", nil); err != nil {
					d.cfg.logf("claude: sending interrupt: %v", err)
				}
				t := time.NewTimer(d.cfg.interruptGrace())
				defer t.Stop()
				grace = t.C
			}
		case <-watch.C:
			if d.permPending() {
				d.p.touch() // the CLI waits for our answer, not the other way round
				continue
			}
			if interrupted || !watch.stalled(d.p) {
				continue
			}
			d.p.stop(d.cfg.stopGrace())
			return TurnEnd{TimedOut: true, Err: d.gone(feed, watch.err(Claude))}
		case <-grace:
			d.p.stop(d.cfg.stopGrace())
			err := fmt.Errorf("claude did not end the turn within %s of the interrupt; stopped it", d.cfg.interruptGrace())
			return TurnEnd{Interrupted: true, Err: d.gone(feed, err)}
		case <-done:
			timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
			d.p.stop(d.cfg.stopGrace())
			err := fmt.Errorf("claude: turn stopped: %w", ctx.Err())
			return TurnEnd{Interrupted: !timedOut, TimedOut: timedOut, Err: d.gone(feed, err)}
		}
	}
}

// permPending reports whether a can_use_tool request waits for its answer.
func (d *claudeDriver) permPending() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, st := range d.perms {
		if st == permPending {
			return true
		}
	}
	return false
}

// gone handles the end of the process during a turn: it reads what is
// left of stdout, waits for the exit (stopping the CLI if it lingers), and
// records the process as dead. The error is the exit status if it says
// more than why.
func (d *claudeDriver) gone(feed feedFunc, why error) error {
	d.p.closeStdin()
	for l := range d.drainLines() {
		_, _ = feed(l)
	}
	if !d.p.waitExit(d.cfg.stopGrace()) {
		d.p.stop(d.cfg.stopGrace())
	}
	d.p.waitStderr(d.cfg.stopGrace())
	err := why
	if xerr := d.p.exitErr(); xerr != nil {
		err = fmt.Errorf("%w (%v)", why, xerr)
	}
	return d.died(err)
}

// drainLines yields the lines still to come until stdout closes, or for at
// most the stop grace period.
func (d *claudeDriver) drainLines() <-chan outLine {
	out := make(chan outLine)
	go func() {
		defer close(out)
		t := time.NewTimer(d.cfg.stopGrace())
		defer t.Stop()
		for {
			select {
			case l, ok := <-d.p.lines:
				if !ok {
					return
				}
				out <- l
			case <-t.C:
				d.p.abandon()
				return
			}
		}
	}()
	return out
}

// controlLine is a control message from the CLI.
type controlLine struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Request   struct {
		Subtype   string          `json:"subtype"`
		ToolName  string          `json:"tool_name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
	} `json:"request"`
}

// control answers the CLI's control requests: can_use_tool with the
// permission policy (exactly once, never after its cancel), anything else
// with the error the SDKs give for subtypes they do not handle.
func (d *claudeDriver) control(line []byte) {
	if !mentionsControl(line) {
		return
	}
	var c controlLine
	if json.Unmarshal(line, &c) != nil || c.RequestID == "" {
		return
	}
	switch c.Type {
	case "control_cancel_request":
		d.mu.Lock()
		if st, ok := d.perms[c.RequestID]; !ok || st == permPending {
			d.perms[c.RequestID] = permCancelled
		}
		d.mu.Unlock()
	case "control_request":
		if c.Request.Subtype != "can_use_tool" {
			d.respondError(c.RequestID, "Unsupported control request subtype: "+c.Request.Subtype)
			return
		}
		req := PermissionRequest{RequestID: c.RequestID, ToolName: c.Request.ToolName, Input: c.Request.Input, ToolUseID: c.Request.ToolUseID}
		d.mu.Lock()
		if _, seen := d.perms[c.RequestID]; seen {
			d.mu.Unlock()
			return // a repeated request is answered once
		}
		d.perms[c.RequestID] = permPending
		d.mu.Unlock()
		if d.cfg.CanUseTool == nil {
			d.answer(req, d.cfg.Permission.decide())
			return
		}
		go func() { d.answer(req, d.cfg.CanUseTool(d.ctx, req)) }()
	}
}

// answer sends the decision unless the request was cancelled or answered.
func (d *claudeDriver) answer(req PermissionRequest, dec PermissionDecision) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.perms[req.RequestID] != permPending {
		return
	}
	d.perms[req.RequestID] = permAnswered
	err := d.write(map[string]any{
		"type": "control_response",
		"response": map[string]any{
			"subtype":    "success",
			"request_id": req.RequestID,
			"response":   permissionResponse(req, dec),
		},
	})
	if err != nil {
		d.cfg.logf("claude: answering %s: %v", req.RequestID, err)
	}
}

func (d *claudeDriver) respondError(id, msg string) {
	err := d.write(map[string]any{
		"type":     "control_response",
		"response": map[string]any{"subtype": "error", "request_id": id, "error": msg},
	})
	if err != nil {
		d.cfg.logf("claude: answering %s: %v", id, err)
	}
}

// close ends the session the way the Python SDK does: close stdin, wait,
// then SIGTERM, wait, SIGKILL. What the CLI writes meanwhile (informational
// messages after the last result) is read and dropped.
func (d *claudeDriver) close(ctx context.Context, lastOK bool) error {
	if err := d.dead(); err != nil {
		return err
	}
	d.p.closeStdin()
	d.p.abandon()
	grace := d.cfg.stopGrace()
	exited := d.p.waitExit(grace)
	if !exited {
		d.p.stop(grace)
	}
	d.p.waitStderr(grace)
	err := d.p.exitErr()
	switch {
	case !exited:
		return fmt.Errorf("claude did not exit within %s of its stdin closing; stopped it", grace)
	case err != nil && !lastOK && IsExitError(err):
		return nil // the status reports the failed (or interrupted) last turn
	}
	return err
}

// mentionsControl reports whether line holds "control_", as bytes.Contains
// does, but looks for its underscore, which text seldom holds, where
// bytes.Contains looks for its 'c', which text often does: every stdout
// line goes through here, a 64 MiB one too. Where underscores are common
// it hands the rest of the line to bytes.Contains.
func mentionsControl(line []byte) bool {
	const word = "control"
	for i, n := 0, 0; ; n++ {
		j := bytes.IndexByte(line[i:], '_')
		if j < 0 {
			return false
		}
		i += j
		if i >= len(word) && string(line[i-len(word):i]) == word {
			return true
		}
		i++
		if n >= 64 && n*64 > i {
			// (Every underscore before i has been looked at.)
			return bytes.Contains(line[max(i-len(word), 0):], []byte(word+"_"))
		}
	}
}

// isInit reports whether a stdout line is Claude's system/init, which
// begins a session's turn.
func isInit(line []byte) bool {
	var l struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
	}
	return json.Unmarshal(line, &l) == nil && l.Type == "system" && l.Subtype == "init"
}
