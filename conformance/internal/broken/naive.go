package broken

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/reference"
	"github.com/agentconform/agentconform/reference/unified"
)

// The naive adapter drives Claude (one long-lived stream-json process)
// and Codex (one `codex exec --json` process per turn) with plain os/exec,
// and hands out unified events made by the reference translator. Its
// deadlines are short so that a bug that hangs the CLI ends a case in
// seconds: a CLI that writes nothing for naiveIdle is given up on.
const (
	naiveIdle           = 8 * time.Second
	naiveInterruptGrace = 2 * time.Second
	naiveStopGrace      = time.Second
)

// The bugs' limits.
const (
	// turnOutputCap is TurnOutputCap's cap on a turn's output: 8 MiB, as
	// per-turn buffers in adapters have.
	turnOutputCap = 8 << 20
	// sessionOutputCap is SessionOutputCap's cap on what one Claude
	// process writes: more than the two turns of claude/multi-turn
	// (about 16 KB), less than a session of sixteen (about 130 KB).
	sessionOutputCap = 64 << 10
	// warmStartTimeout is how long WarmStartTimeout waits for a later
	// turn's first line.
	warmStartTimeout = time.Second
)

// errOutputCap is the failure of a turn whose output went past a bug's
// cap, as Node's child_process words it.
var errOutputCap = errors.New("stdout maxBuffer length exceeded")

// command is one line of the runner (conformance/HARNESS.md).
type command struct {
	Op         string `json:"op"`
	Agent      string `json:"agent"`
	Prompt     string `json:"prompt"`
	Cwd        string `json:"cwd"`
	Permission string `json:"permission"`
	Resume     string `json:"resume"`
	MaxTurns   int    `json:"max_turns"`
	// PermissionDelayMS is how long the caller takes to decide each
	// permission request.
	PermissionDelayMS int64 `json:"permission_delay_ms"`
}

// naive is the adapter's state. The translator is used by one goroutine
// at a time: a turn's, or the main loop's when no turn runs.
type naive struct {
	bug    Bug
	out    *lines
	stderr io.Writer
	env    []string

	agent   reference.Agent
	cwd     string
	perm    string
	resume  string // the session the start asked to resume
	turns   int    // the caller's turn limit (max_turns), 0 for none
	tr      reference.Translator[unified.Event]
	emitted bool          // any event written
	lastOK  bool          // the last turn succeeded
	lastErr string        // why it did not
	delay   time.Duration // how long the caller takes to answer a permission request
	aborted bool          // WatchdogEndsSession: the watchdog fired
	turnN   int           // turns started

	turnBytes, procBytes int          // what the CLI wrote in the turn, and the Claude process in all
	begun                bool         // the Claude process wrote its system/init
	capped               bool         // TurnOutputCap, SessionOutputCap: past the cap, nothing more is handed on
	pendingPerm          atomic.Int32 // permission requests waiting for the caller's answer

	claude  *cliProc // the Claude process of the session
	dead    error    // why the Claude process is gone, once it is
	reqN    int
	pending []func()        // AnswerAfterCancel's answers not sent yet
	seenMsg map[string]bool // FirstBlockPerMessage: the message ids read
	lastID  string          // MessageIDAsSession: the id of the last line read
}

// noteLastID keeps the id of a line that names itself: a Claude line's
// uuid, a Codex item's id.
func (n *naive) noteLastID(line []byte) {
	var l struct {
		UUID string `json:"uuid"`
		Item struct {
			ID string `json:"id"`
		} `json:"item"`
	}
	if json.Unmarshal(line, &l) != nil {
		return
	}
	switch {
	case l.UUID != "":
		n.lastID = l.UUID
	case l.Item.ID != "":
		n.lastID = l.Item.ID
	}
}

// dropped reports whether the bug drops a line the adapter asked the CLI
// for: a partial message (PartialsDropped), an echo of the user's message
// (ReplayDropped).
func dropped(bug Bug, line []byte) bool {
	if bug != PartialsDropped && bug != ReplayDropped {
		return false
	}
	var l struct {
		Type     string `json:"type"`
		IsReplay bool   `json:"isReplay"`
	}
	if json.Unmarshal(line, &l) != nil {
		return false
	}
	if bug == PartialsDropped {
		return l.Type == "stream_event"
	}
	return l.Type == "user" && l.IsReplay
}

// naiveTurn is a running turn.
type naiveTurn struct {
	interrupts chan struct{}
	cancel     context.CancelFunc
}

func (t *naiveTurn) interrupt() {
	select {
	case t.interrupts <- struct{}{}:
	default:
	}
}

func runNaive(bug Bug, stdin io.Reader, stdout, stderr io.Writer) error {
	n := &naive{bug: bug, out: &lines{w: stdout}, stderr: stderr, env: os.Environ(), lastOK: true}
	hello := map[string]any{"agentconform": "hello", "profile": "unified", "agents": []string{"claude", "codex"},
		"supports": []string{"multi_turn", "resume", "interrupt", "permission", "max_turns", "permission_delay"}, "name": "agentconform-test-" + string(bug), "version": "test"}
	if bug != NoWatchdog {
		hello["watchdog_ms"] = naiveIdle.Milliseconds()
	}
	n.record(hello)
	cmds := make(chan command)
	go readCommands(stdin, cmds, stderr)
	done := make(chan reference.TurnResult, 1)
	var (
		running  *naiveTurn
		queue    []string
		closing  bool
		startErr error
	)
	for !(closing && running == nil) {
		select {
		case c, ok := <-cmds:
			if !ok {
				cmds, c.Op = nil, "close"
			}
			switch c.Op {
			case "start":
				if n.tr != nil {
					n.turnEnd(false, "start: a session is already running", n.tr.SessionID())
					continue
				}
				if err := n.begin(c); err != nil {
					startErr = err
					n.turnEnd(false, err.Error(), "")
					continue
				}
				running = n.startTurn(c.Prompt, done)
			case "send":
				switch {
				case n.tr == nil:
					n.turnEnd(false, "send before start", "")
				case running != nil:
					queue = append(queue, c.Prompt)
				default:
					running = n.startTurn(c.Prompt, done)
				}
			case "interrupt":
				if running != nil {
					running.interrupt()
				}
			case "close":
				if !closing {
					closing, queue = true, nil
					if running != nil {
						running.cancel() // the caller is gone: stop the CLI
					}
				}
			}
		case res := <-done:
			running = nil
			n.turnEnd(res.OK, res.Error, res.SessionID)
			if len(queue) > 0 && !closing {
				next := queue[0]
				queue = queue[1:]
				running = n.startTurn(next, done)
			}
		}
		if err := n.out.failed(); err != nil {
			n.shutdown()
			return err
		}
	}
	err := n.shutdown()
	if err == nil {
		err = startErr
	}
	if n.tr != nil {
		n.emit(n.tr.EndSession(err))
		if !n.emitted {
			n.emptySession(err)
		}
	}
	end := map[string]any{"agentconform": "end", "ok": err == nil}
	if err != nil {
		end["error"] = err.Error()
	}
	n.record(end)
	return n.out.failed()
}

func readCommands(in io.Reader, cmds chan<- command, stderr io.Writer) {
	defer close(cmds)
	br := bufio.NewReader(in)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var c command
			if jerr := json.Unmarshal(line, &c); jerr != nil {
				fmt.Fprintf(stderr, "naive adapter: ignoring a command that is not JSON: %v\n", jerr)
			} else {
				cmds <- c
			}
		}
		if err != nil {
			return
		}
	}
}

func (n *naive) record(m map[string]any) {
	b, err := json.Marshal(m)
	if err == nil {
		n.out.line(b)
	}
}

func (n *naive) turnEnd(ok bool, msg, sid string) {
	if n.bug == MessageIDAsSession && n.lastID != "" {
		sid = n.lastID
	}
	r := map[string]any{"agentconform": "turn_end", "ok": ok}
	if msg != "" {
		r["error"] = msg
	}
	if sid != "" {
		r["session_id"] = sid
	}
	n.record(r)
}

func (n *naive) emit(evs []unified.Event) {
	for _, ev := range evs {
		b, err := ev.MarshalJSON()
		if err != nil {
			fmt.Fprintf(n.stderr, "naive adapter: %v\n", err)
			continue
		}
		n.out.line(b)
		n.emitted = true
	}
}

// emptySession writes a session's start and end when the CLI never said
// a word (the translator starts a session with the CLI's first event), so
// that the caller still sees the session end.
func (n *naive) emptySession(err error) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	msg := n.lastErr
	if err != nil {
		msg = err.Error()
	}
	reason := unified.ReasonFailed
	if n.lastOK && err == nil {
		reason, msg = unified.ReasonCompleted, ""
	}
	n.emit([]unified.Event{
		&unified.SessionStarted{Base: unified.Base{ID: "naive-1", Timestamp: now}, AgentType: string(n.agent)},
		&unified.SessionEnded{Base: unified.Base{ID: "naive-2", Timestamp: now}, Reason: reason, Error: msg},
	})
}

// begin sets the session up; for Claude it starts the CLI.
func (n *naive) begin(c command) error {
	agent, err := reference.ParseAgent(c.Agent)
	if err != nil {
		return err
	}
	if agent == reference.Gemini {
		return errors.New("the naive adapter drives claude and codex only")
	}
	n.agent, n.cwd, n.perm, n.resume, n.turns = agent, c.Cwd, c.Permission, c.Resume, c.MaxTurns
	n.delay = time.Duration(c.PermissionDelayMS) * time.Millisecond
	perm, err := reference.ParsePermission(c.Permission)
	if err != nil {
		return err
	}
	n.tr, err = reference.NewUnified(agent, reference.Options{Cwd: c.Cwd, Permission: perm, Sandbox: n.sandbox()})
	if err != nil {
		return err
	}
	if agent != reference.Claude {
		return nil
	}
	return n.launchClaude(c.Resume)
}

// launchClaude starts Claude (resuming session resume, if set) and sends
// initialize.
func (n *naive) launchClaude(resume string) error {
	args := []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
	if n.bug == ClaudeNoVerbose {
		args = slices.DeleteFunc(args, func(a string) bool { return a == "--verbose" })
	}
	if n.perm != "" {
		args = append(args, "--permission-prompt-tool", "stdio")
	}
	if resume != "" {
		args = append(args, "--resume="+resume)
	}
	if n.turns > 0 && n.bug != MaxTurnsDropped {
		args = append(args, "--max-turns", strconv.Itoa(n.turns))
	}
	switch n.bug {
	case PartialsDropped:
		args = append(args, "--include-partial-messages")
	case ReplayDropped:
		args = append(args, "--replay-user-messages")
	}
	var err error
	if n.claude, err = n.startCLI("claude", args, true); err != nil {
		return err
	}
	n.procBytes, n.begun = 0, false
	// The SDKs begin with initialize; so does this adapter.
	n.reqN++
	return n.claude.writeJSON(map[string]any{"type": "control_request", "request_id": "naive_" + strconv.Itoa(n.reqN),
		"request": map[string]any{"subtype": "initialize"}})
}

// restartClaude starts Claude again after its process died, resuming the
// session (RestartNewSession: a new one; NoRestart: not at all), so that
// the caller's next turn works.
func (n *naive) restartClaude() error {
	sid := n.tr.SessionID()
	if !n.begun {
		// The process began no session: it refused the one asked for
		// (an unknown --resume: it exited with a status), which the next
		// must not ask for again (StickyResume: it does), or it died
		// before it began.
		sid = n.resume
		if refusedExit(n.claude) && n.bug != StickyResume {
			n.resume, sid = "", ""
		}
		if err := n.launchClaude(sid); err != nil {
			return fmt.Errorf("starting claude again after %v: %w", n.dead, err)
		}
		n.dead = nil
		return nil
	}
	if n.bug == NoRestart || sid == "" {
		return n.dead
	}
	if n.bug == RestartNewSession {
		sid = ""
	}
	if err := n.launchClaude(sid); err != nil {
		return fmt.Errorf("starting claude again after %v: %w", n.dead, err)
	}
	n.dead = nil
	return nil
}

func (n *naive) sandbox() string {
	if n.agent != reference.Codex {
		return ""
	}
	if n.perm == "deny" {
		return "read-only"
	}
	return "workspace-write"
}

func (n *naive) startTurn(prompt string, done chan<- reference.TurnResult) *naiveTurn {
	ctx, cancel := context.WithCancel(context.Background())
	t := &naiveTurn{interrupts: make(chan struct{}, 1), cancel: cancel}
	n.turnN++
	n.turnBytes, n.capped = 0, false
	go func() {
		defer cancel()
		if n.aborted {
			// WatchdogEndsSession: the session's abort fired once, and
			// every turn since shares it.
			done <- reference.TurnResult{Error: "the session was aborted (its watchdog fired)", SessionID: n.tr.SessionID()}
			return
		}
		n.emit(n.tr.BeginTurn(prompt))
		if n.bug == HumanPrompt {
			prompt = "Human: " + prompt
		}
		var end reference.TurnEnd
		if n.agent == reference.Claude {
			end = n.claudeTurn(ctx, prompt, t.interrupts)
		} else {
			end = n.codexTurn(ctx, prompt, t.interrupts)
		}
		if n.capped && end.Err == nil {
			end.Err = errOutputCap
		}
		evs, res := n.tr.EndTurn(end)
		n.emit(evs)
		n.lastOK, n.lastErr = res.OK, res.Error
		done <- res
	}()
	return t
}

// feed translates one stdout line. The error is a turn's failure: a last
// line cut mid-way, or (StrictTypes) something unknown.
func (n *naive) feed(l outLine) error {
	if n.bug == MessageIDAsSession {
		n.noteLastID(l.data)
	}
	n.turnBytes += len(l.data) + 1
	n.procBytes += len(l.data) + 1
	switch {
	case n.bug == TurnOutputCap && n.turnBytes > turnOutputCap, n.bug == SessionOutputCap && n.agent == reference.Claude && n.procBytes > sessionOutputCap:
		// The bug: past the cap the output is no longer kept, and the
		// turn fails when it ends. The lines are still read (the turn's
		// end is seen), their events never handed on.
		n.capped = true
	}
	if n.capped {
		_, err := n.tr.Line(l.data)
		if err != nil && l.partial {
			return fmt.Errorf("%s: output ended in the middle of a line: %w", n.agent, err)
		}
		return nil
	}
	if n.agent == reference.Claude && !n.begun && isClaudeInit(l.data) {
		n.begun = true
	}
	if dropped(n.bug, l.data) {
		return nil
	}
	var strict error
	if n.bug == StrictTypes && n.agent == reference.Codex {
		strict = strictCheck(l.data)
	}
	var err error
	switch {
	case n.agent == reference.Claude && (n.bug == ResultTextOnly || n.bug == ThinkingAsText || n.bug == FirstBlockPerMessage):
		if n.seenMsg == nil {
			n.seenMsg = map[string]bool{}
		}
		for _, line := range claudeQuirkLines(n.bug, l.data, n.seenMsg) {
			var evs []unified.Event
			evs, err = n.tr.Line(line)
			n.emit(evs)
		}
	default:
		var evs []unified.Event
		evs, err = n.tr.Line(l.data)
		n.emit(evs)
	}
	if err != nil && l.partial {
		return fmt.Errorf("%s: output ended in the middle of a line: %w", n.agent, err)
	}
	return strict
}

// Codex's event types and top-level fields, as StrictTypes knows them.
var (
	codexTypes = []string{"thread.started", "turn.started", "turn.completed", "turn.failed", "item.started", "item.updated", "item.completed", "error"}
	codexKeys  = []string{"type", "thread_id", "item", "usage", "error", "message"}
)

func strictCheck(line []byte) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	var typ string
	json.Unmarshal(m["type"], &typ)
	if !slices.Contains(codexTypes, typ) {
		return fmt.Errorf("codex: unknown event type %q", typ)
	}
	for k := range m {
		if !slices.Contains(codexKeys, k) {
			return fmt.Errorf("codex: unknown field %q in %s", k, typ)
		}
	}
	if raw, ok := m["item"]; ok {
		var item struct {
			Type string `json:"type"`
		}
		json.Unmarshal(raw, &item)
		if !slices.Contains(codexItemTypes, item.Type) {
			return fmt.Errorf("codex: unknown item type %q", item.Type)
		}
	}
	return nil
}

// codexItemTypes are the item types StrictTypes knows.
var codexItemTypes = []string{"agent_message", "reasoning", "command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list", "error"}

// claudeTurn sends the prompt to the session's Claude process and reads
// up to the turn's result.
func (n *naive) claudeTurn(ctx context.Context, prompt string, interrupts <-chan struct{}) reference.TurnEnd {
	if n.dead != nil {
		if err := n.restartClaude(); err != nil {
			return reference.TurnEnd{Err: err}
		}
	}
	p := n.claude
	user := map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": prompt}}
	if err := p.writeJSON(user); err != nil {
		return reference.TurnEnd{Err: n.claudeGone(err)}
	}
	interrupted := false
	var grace <-chan time.Time
	idle := p.idle()
	defer idle.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return reference.TurnEnd{Interrupted: interrupted, Err: n.claudeGone(errors.New("claude exited before the turn's result"))}
			}
			n.control(p, l.data)
			err := n.feed(l)
			p.touch()
			if err != nil {
				return reference.TurnEnd{Interrupted: interrupted, Err: n.claudeGone(err)}
			}
			if n.bug == ResultPrefix && !bytes.HasPrefix(l.data, []byte(`{"type":"result"`)) {
				continue
			}
			if n.tr.Terminal() {
				if !n.begun && p.wait(naiveStopGrace) {
					// A result before the session began: the CLI refused
					// the session asked for, and exits.
					n.claudeGone(errors.New("claude refused the session and exited"))
				}
				if len(n.pending) > 0 {
					// Done with the turn, the "user" answers what was
					// asked, a moment later.
					time.Sleep(50 * time.Millisecond)
					for _, answer := range n.pending {
						answer()
					}
					n.pending = nil
				}
				return reference.TurnEnd{Interrupted: interrupted}
			}
		case <-interrupts:
			if interrupted {
				continue
			}
			interrupted = true
			grace = time.After(naiveInterruptGrace)
			if n.bug == SigtermInterrupt {
				// The process ends with the turn; the next turn resumes
				// the session in a new one (claudeGone, restartClaude).
				p.signal(syscall.SIGTERM)
				continue
			}
			n.reqN++
			id := "naive_" + strconv.Itoa(n.reqN)
			req := map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{"subtype": "interrupt"}}
			switch n.bug {
			case BareInterrupt:
				req = map[string]any{"subtype": "interrupt"}
			case EnvelopeNoRequest:
				req = map[string]any{"type": "control_request", "request_id": id, "subtype": "interrupt"}
			}
			if err := p.writeJSON(req); err != nil {
				fmt.Fprintf(n.stderr, "naive adapter: interrupt: %v\n", err)
			}
		case <-grace:
			n.stop(p)
			return reference.TurnEnd{Interrupted: true, Err: n.claudeGone(errors.New("claude did not end the interrupted turn; stopped it"))}
		case <-idle.C:
			if n.pendingPerm.Load() > 0 && n.bug != WatchdogCountsPermission {
				p.touch() // the CLI waits for the caller's answer, not the other way round
				continue
			}
			if n.bug == NoWatchdog || !p.stalled() {
				continue
			}
			if n.bug == WatchdogNoStop {
				// The bug: the turn is given up on, the CLI left as it is.
				return reference.TurnEnd{TimedOut: true, Err: fmt.Errorf("claude wrote nothing for %s", naiveIdle)}
			}
			n.aborted = n.bug == WatchdogEndsSession
			n.release(p)
			return reference.TurnEnd{TimedOut: true, Err: n.claudeGone(fmt.Errorf("claude wrote nothing for %s; stopped it", naiveIdle))}
		case <-ctx.Done():
			n.stop(p)
			return reference.TurnEnd{Interrupted: true, Err: n.claudeGone(errors.New("closed during the turn; stopped claude"))}
		}
	}
}

// claudeGone records that the Claude process is gone (reading what is
// left of its stdout) and returns why, with how it exited.
func (n *naive) claudeGone(why error) error {
	p := n.claude
	p.closeStdin()
	for l := range p.rest(naiveStopGrace) {
		n.feed(l)
	}
	if !p.wait(naiveStopGrace) {
		n.stop(p)
	}
	n.reapGroup(p)
	if xerr := p.exitErr(); xerr != nil {
		why = fmt.Errorf("%w (%v)", why, xerr)
	}
	n.dead = why
	return why
}

// control answers Claude's control requests: can_use_tool by the
// permission policy, anything else with an error.
func (n *naive) control(p *cliProc, line []byte) {
	if !bytes.Contains(line, []byte(`"control_request"`)) {
		return
	}
	var c struct {
		Type      string `json:"type"`
		RequestID string `json:"request_id"`
		Request   struct {
			Subtype string          `json:"subtype"`
			Input   json.RawMessage `json:"input"`
		} `json:"request"`
	}
	if json.Unmarshal(line, &c) != nil || c.Type != "control_request" {
		return
	}
	var resp map[string]any
	switch c.Request.Subtype {
	case "can_use_tool":
		decision := map[string]any{"behavior": "deny", "message": "denied by the adapter's policy"}
		if n.perm == "allow" {
			input := c.Request.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			decision = map[string]any{"behavior": "allow", "updatedInput": input}
		}
		switch {
		case n.bug == AllowNoInput && n.perm == "allow":
			decision = map[string]any{"behavior": "allow"}
		case n.bug == DenyNoMessage && n.perm != "allow":
			decision = map[string]any{"behavior": "deny"}
		}
		resp = map[string]any{"subtype": "success", "request_id": c.RequestID, "response": decision}
	default:
		resp = map[string]any{"subtype": "error", "request_id": c.RequestID, "error": "Unsupported control request subtype: " + c.Request.Subtype}
	}
	answer := func() {
		if err := p.writeJSON(map[string]any{"type": "control_response", "response": resp}); err != nil {
			fmt.Fprintf(n.stderr, "naive adapter: answering %s: %v\n", c.RequestID, err)
		}
	}
	switch {
	case c.Request.Subtype != "can_use_tool":
		answer()
	case n.delay > 0:
		// The caller takes its time to decide, as a person does.
		n.pendingPerm.Add(1)
		time.AfterFunc(n.delay, func() {
			answer()
			p.touch()
			n.pendingPerm.Add(-1)
		})
	case n.bug == DoubleAnswer:
		answer()
		answer()
	case n.bug == AnswerAfterCancel:
		// Asked of a slow user: answered a second later, or when the
		// turn ends, withdrawn or not.
		var once sync.Once
		do := func() { once.Do(answer) }
		time.AfterFunc(time.Second, do)
		n.pending = append(n.pending, do)
	default:
		answer()
	}
}

// codexTurn runs one `codex exec` process for the turn.
func (n *naive) codexTurn(ctx context.Context, prompt string, interrupts <-chan struct{}) reference.TurnEnd {
	args := []string{"exec", "--json", "--skip-git-repo-check"}
	if n.bug == CodexFullAuto {
		args = append(args, "--full-auto")
	}
	args = append(args, "-s", n.sandbox())
	id := n.tr.SessionID()
	asked := id == "" && n.resume != ""
	if id == "" {
		id = n.resume
	}
	if id != "" {
		if n.bug == ResumeLast {
			args = append(args, "resume", "--last")
		} else {
			args = append(args, "resume", id)
		}
	}
	args = append(args, prompt)
	p, err := n.startCLI("codex", args, n.bug == CodexStdinOpen)
	if err != nil {
		return reference.TurnEnd{Err: err}
	}
	var (
		end      reference.TurnEnd
		turnErr  error
		escalate <-chan time.Time
		stage    int
		done     = ctx.Done()
	)
	idle := p.idle()
	defer idle.Stop()
	warm, started := n.bug == WarmStartTimeout && n.turnN > 1, time.Now()
	// Once the CLI has exited, what it left in its group is killed and
	// stdout gets a moment to end.
	exited := p.exited
	var eofGrace <-chan time.Time
	// stopNow ends the process at once: SIGKILL, or with SigtermOnly
	// SIGTERM and no waiting for it.
	stopNow := func() bool {
		if n.bug == SigtermOnly {
			p.signal(syscall.SIGTERM)
			return false
		}
		p.signal(syscall.SIGKILL)
		return true
	}
loop:
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				break loop
			}
			if err := n.feed(l); err != nil && turnErr == nil {
				turnErr = err
			}
			p.touch()
		case <-interrupts:
			if end.Interrupted {
				continue
			}
			end.Interrupted = true
			if n.bug == SigtermOnly {
				p.signal(syscall.SIGTERM)
			} else {
				p.signal(syscall.SIGINT)
			}
			escalate = time.After(naiveInterruptGrace)
		case <-escalate:
			switch {
			case n.bug == SigtermOnly:
				// It had its SIGTERM: give up on it.
				return reference.TurnEnd{Interrupted: true, Err: errors.New("codex did not stop after SIGTERM; gave up waiting")}
			case stage == 0:
				stage = 1
				p.signal(syscall.SIGTERM)
				escalate = time.After(naiveStopGrace)
			default:
				p.signal(syscall.SIGKILL)
				escalate = nil
			}
		case <-exited:
			exited = nil
			n.reapGroup(p)
			eofGrace = time.After(naiveStopGrace)
		case <-eofGrace:
			if len(p.lines) > 0 || !p.quiet(naiveStopGrace) {
				// Still reading what the CLI wrote before it exited.
				eofGrace = time.After(naiveStopGrace / 4)
				continue
			}
			break loop
		case <-idle.C:
			if warm && !end.TimedOut && !p.wrote.Load() && time.Since(started) > warmStartTimeout {
				// WarmStartTimeout: a later turn's CLI must start at once.
				end.TimedOut = true
				stopNow()
				return reference.TurnEnd{TimedOut: true, Err: fmt.Errorf("codex wrote nothing %s after it started; gave up", warmStartTimeout)}
			}
			if n.bug == NoWatchdog || end.TimedOut || !p.stalled() {
				continue
			}
			n.aborted = n.bug == WatchdogEndsSession
			if n.bug == WatchdogNoStop {
				return reference.TurnEnd{TimedOut: true, Err: fmt.Errorf("codex wrote nothing for %s", naiveIdle)}
			}
			end.TimedOut = true
			if !stopNow() {
				return reference.TurnEnd{TimedOut: true, Err: fmt.Errorf("codex wrote nothing for %s; sent SIGTERM and gave up", naiveIdle)}
			}
		case <-done:
			done = nil
			end.Interrupted = true
			if !stopNow() {
				return reference.TurnEnd{Interrupted: true, Err: errors.New("closed during the turn; sent codex SIGTERM and gave up")}
			}
		}
	}
	if !p.wait(naiveStopGrace) {
		if !stopNow() {
			return reference.TurnEnd{Interrupted: end.Interrupted, Err: errors.New("codex did not exit; gave up waiting")}
		}
		p.wait(0)
	}
	n.reapGroup(p)
	if asked && n.tr.SessionID() == "" && !end.Interrupted && !end.TimedOut && refusedExit(p) && n.bug != StickyResume {
		// The CLI refused the session the start named (an unknown
		// id): the next turn starts a session of its own.
		n.resume = ""
	}
	switch xerr := p.exitErr(); {
	case end.TimedOut:
		end.Err = fmt.Errorf("codex wrote nothing for %s; killed it", naiveIdle)
	case xerr != nil:
		end.Err = xerr
	case turnErr != nil:
		end.Err = turnErr
	}
	return end
}

// stop ends a process: stdin closed, SIGTERM, then SIGKILL (with
// SigtermOnly, SIGTERM and a wait, then nothing).
func (n *naive) stop(p *cliProc) {
	p.closeStdin()
	p.signal(syscall.SIGTERM)
	if p.wait(naiveStopGrace) || n.bug == SigtermOnly {
		return
	}
	p.signal(syscall.SIGKILL)
	p.wait(0)
}

// release stops a Claude the adapter gives up on as the SDKs end one:
// stdin closed, a grace to exit, then stop's signals.
func (n *naive) release(p *cliProc) {
	p.closeStdin()
	if !p.wait(naiveStopGrace) {
		n.stop(p)
	}
}

// shutdown releases the CLI at the end of the session: Claude's stdin is
// closed and the process given time to exit.
func (n *naive) shutdown() error {
	p := n.claude
	if p == nil {
		return nil
	}
	if n.dead != nil {
		return n.dead
	}
	if n.bug == KillClaude {
		p.signal(syscall.SIGTERM)
		if !p.wait(naiveStopGrace) {
			p.signal(syscall.SIGKILL)
			p.wait(0)
		}
		return nil // it was told to die: how it died says nothing
	}
	p.closeStdin()
	defer n.reapGroup(p)
	if !p.wait(2 * naiveStopGrace) {
		n.stop(p)
		if n.bug == SigtermOnly && !p.wait(-1) {
			return errors.New("claude did not exit after SIGTERM; gave up waiting")
		}
		return errors.New("claude did not exit when its stdin closed; stopped it")
	}
	if err := p.exitErr(); err != nil && n.lastOK {
		return err
	}
	return nil
}

// cliProc is one CLI process in its own process group: stdout read line
// by line (with no limit, or Scanner64K's), stderr passed on to the
// adapter's (or, StderrUndrained, to a pipe nobody reads).
type cliProc struct {
	name     string
	cmd      *exec.Cmd
	lines    chan outLine
	exited   chan struct{}
	err      error
	lastRead atomic.Int64 // UnixNano of the last read from stdout
	wrote    atomic.Bool  // anything was read from stdout

	stdinMu sync.Mutex
	stdin   io.WriteCloser
	// stderrR is the unread end of StderrUndrained's pipe, kept so that
	// it is not closed (and the CLI does not get EPIPE instead of
	// blocking).
	stderrR *os.File
}

// outLine is one stdout line; partial marks a last line without newline.
type outLine struct {
	data    []byte
	partial bool
}

func (n *naive) startCLI(name string, args []string, stdin bool) (*cliProc, error) {
	path, err := n.executable(name)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Env = n.cwd, n.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &cliProc{name: name, cmd: cmd, lines: make(chan outLine, 64), exited: make(chan struct{})}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	defer outW.Close()
	cmd.Stdout = outW
	if n.bug == StderrUndrained {
		errR, errW, err := os.Pipe()
		if err != nil {
			outR.Close()
			return nil, fmt.Errorf("starting %s: %w", name, err)
		}
		defer errW.Close()
		cmd.Stderr, p.stderrR = errW, errR
	} else {
		cmd.Stderr = n.stderr
	}
	if stdin {
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			outR.Close()
			return nil, fmt.Errorf("starting %s: %w", name, err)
		}
	}
	if err := cmd.Start(); err != nil {
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p.lastRead.Store(time.Now().UnixNano())
	go p.read(&progress{r: outR, at: &p.lastRead, wrote: &p.wrote}, outR, n.bug)
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// executable finds a CLI as HARNESS.md says: AGENTCONFORM_<NAME>, then
// PATH.
func (n *naive) executable(name string) (string, error) {
	if v := os.Getenv("AGENTCONFORM_" + strings.ToUpper(name)); v != "" {
		return v, nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("finding %s: %w", name, err)
	}
	return path, nil
}

// progress notes the time of every read, for the idle timer.
type progress struct {
	r     io.Reader
	at    *atomic.Int64
	wrote *atomic.Bool
}

func (pr *progress) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.at.Store(time.Now().UnixNano())
	if n > 0 && pr.wrote != nil {
		pr.wrote.Store(true)
	}
	return n, err
}

// idle ticks while a turn waits for the CLI; the turn gives up when
// stalled says so.
func (p *cliProc) idle() *time.Ticker {
	p.touch()
	return time.NewTicker(100 * time.Millisecond)
}

// touch notes that the adapter handled output (or started waiting).
func (p *cliProc) touch() { p.lastRead.Store(time.Now().UnixNano()) }

// quiet reports whether nothing was read from the CLI's stdout, and no
// line handled, for d.
func (p *cliProc) quiet(d time.Duration) bool {
	return time.Since(time.Unix(0, p.lastRead.Load())) >= d
}

// stalled reports whether the CLI has written nothing for naiveIdle and
// nothing read is waiting to be handled.
func (p *cliProc) stalled() bool {
	return len(p.lines) == 0 && time.Since(time.Unix(0, p.lastRead.Load())) > naiveIdle
}

// read splits stdout (r, reading f) into lines.
func (p *cliProc) read(r io.Reader, f *os.File, bug Bug) {
	defer close(p.lines)
	defer f.Close()
	if bug == ChunkLines {
		// The bug: every read split on newlines by itself; a line that
		// spans two reads becomes two pieces, each dropped as not JSON.
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			for _, piece := range bytes.Split(buf[:n], []byte("\n")) {
				if json.Valid(piece) {
					p.lines <- outLine{data: bytes.Clone(piece)}
				}
			}
			if err != nil {
				return
			}
		}
	}
	if bug == Scanner64K {
		// The bug: bufio.Scanner's default 64 KiB token limit, and its
		// error never looked at.
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.lines <- outLine{data: bytes.Clone(sc.Bytes())}
		}
		return
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			partial := !bytes.HasSuffix(b, []byte("\n"))
			b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
			p.lines <- outLine{data: b, partial: partial}
		}
		if err != nil {
			return
		}
	}
}

// rest yields the lines still to come, for at most d.
func (p *cliProc) rest(d time.Duration) <-chan outLine {
	out := make(chan outLine)
	go func() {
		defer close(out)
		t := time.NewTimer(d)
		defer t.Stop()
		for {
			select {
			case l, ok := <-p.lines:
				if !ok {
					return
				}
				out <- l
			case <-t.C:
				return
			}
		}
	}()
	return out
}

func (p *cliProc) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.stdin == nil {
		return fmt.Errorf("%s: stdin is closed", p.name)
	}
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing to %s: %w", p.name, err)
	}
	return nil
}

func (p *cliProc) closeStdin() {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.stdin != nil {
		p.stdin.Close()
		p.stdin = nil
	}
}

// signal sends sig to the process group, unless the process is reaped.
func (p *cliProc) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
	default:
		syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// reapGroup kills what is left of the CLI's process group once the CLI
// has exited.
func (n *naive) reapGroup(p *cliProc) {
	if p.wait(-1) {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// wait waits up to d for the process to exit (0: until it does; < 0: not
// at all) and reports whether it did.
func (p *cliProc) wait(d time.Duration) bool {
	switch {
	case d == 0:
		<-p.exited
		return true
	case d < 0:
		select {
		case <-p.exited:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitErr says how the process ended: nil for status 0.
func (p *cliProc) exitErr() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	if p.err != nil {
		return fmt.Errorf("%s: %w", p.name, p.err)
	}
	return nil
}

// isClaudeInit reports whether a stdout line is Claude's system/init.
func isClaudeInit(line []byte) bool {
	if !bytes.Contains(line, []byte(`"init"`)) {
		return false
	}
	var l struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
	}
	return json.Unmarshal(line, &l) == nil && l.Type == "system" && l.Subtype == "init"
}

// refusedExit reports whether p exited with a status of its own, not 0
// and not by a signal: how the CLIs refuse a session they do not have.
func refusedExit(p *cliProc) bool {
	if !p.wait(-1) || p.cmd.ProcessState == nil {
		return false
	}
	st := p.cmd.ProcessState
	return st.Exited() && st.ExitCode() != 0
}
