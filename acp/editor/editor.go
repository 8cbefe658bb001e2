// Package editor plays the editor, the client of the Agent Client
// Protocol, for an ACP agent under test, and speaks the adapter harness
// protocol (conformance/HARNESS.md) to agentconform's runner: with it,
// `agentconform run --profile acp --adapter 'npx some-acp-agent'` judges
// an ACP agent as it is, with no driver. The runner starts the editor as
// the adapter; the editor starts the agent (whose CLI finds the fakes on
// PATH), and turns the harness commands into ACP: start is initialize,
// session/new and session/prompt; send is the next session/prompt;
// interrupt is session/cancel; close cancels a running turn, closes the
// agent's stdin and waits for it to exit. What the agent sends is handed
// to the runner as native events (each session/update's params, each
// prompt's result); every line of both directions goes to a wire log
// next to the fakes' observation log, which the checks of the acp family
// read (conformance/acp_checks.go).
package editor

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
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/acp"
)

// WireLogName is the file, next to the fakes' observation log
// (AGENTCONFORM_OBSERVE), where the editor writes every line it sent
// and received: {"dir":"in"|"out","t_ms":N,"line":"..."} (in: the editor
// wrote it to the agent's stdin; out: the agent wrote it), and
// {"dir":"meta",...} records of the agent's start and exit.
const WireLogName = "acp-wire.jsonl"

// Protocol is the hello's "protocol": the adapter is this editor, and the
// agent behind it speaks ACP.
const Protocol = "acp"

// Timing of close.
const (
	// CancelWait is how long close waits for a running turn to end after
	// session/cancel.
	CancelWait = 5 * time.Second
	// ExitWait is how long the agent has to exit once its stdin is
	// closed, and again after SIGTERM, before SIGKILL.
	ExitWait = 3 * time.Second
	// Silence is how long the editor waits for a session/prompt's response
	// while the agent writes nothing and uses no CPU, it and every process
	// below it (Linux; elsewhere the editor waits for the runner's
	// deadline): then it sends session/cancel, waits CancelWait more, and
	// gives the turn up, as a person would long before the runner's
	// deadline. An agent busy with a huge line is not silent.
	Silence = 10 * time.Second
)

// Config says which agent to run and what to claim.
type Config struct {
	// Agent is the shell command that starts the ACP agent.
	Agent string
	// Agents are the CLIs the hello claims the agent drives.
	Agents []string
	// WireLog is the wire log's path; "" writes none.
	WireLog string
	// Version goes into the hello.
	Version string
}

// Subcommand is the first argument that makes a program the editor, with
// "--agent" and the agent's command after it: `agentconform acp-editor
// --agent CMD`, and a test binary whose TestMain calls ServeIfAsked.
const Subcommand = "acp-editor"

// Argv is the command line that starts exe as the editor in front of the
// agent command agent (exe: agentconform, or a test binary whose TestMain
// calls ServeIfAsked).
func Argv(exe, agent string) []string { return []string{exe, Subcommand, "--agent", agent} }

// ServeIfAsked makes a test binary the editor when it was started with
// Argv: it runs the editor on the process's stdio and exits. Call it first
// in TestMain (before fakecli.Main).
func ServeIfAsked(version string) {
	if len(os.Args) != 4 || os.Args[1] != Subcommand || os.Args[2] != "--agent" {
		return
	}
	cfg := Config{Agent: os.Args[3], Agents: AgentsOf(os.Args[3]), Version: version,
		WireLog: WireLogFor(os.Getenv("AGENTCONFORM_OBSERVE"))}
	os.Exit(Run(context.Background(), cfg, os.Stdin, os.Stdout, os.Stderr))
}

// WireLogFor is the wire log's path for a case whose fakes log to
// observe ("" when observe is "").
func WireLogFor(observe string) string {
	if observe == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(observe), WireLogName)
}

// Run speaks the harness protocol on stdin and stdout until close, and
// returns the exit status (0, or 1 when the harness input ended without
// close or broke).
func Run(ctx context.Context, cfg Config, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &editor{cfg: cfg, out: stdout, errw: stderr, start: time.Now(), pending: map[string]chan *acp.Message{}}
	if cfg.WireLog != "" {
		f, err := os.OpenFile(cfg.WireLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "[acp-editor] the wire log: %v\n", err)
		} else {
			e.wire = f
			defer f.Close()
		}
	}
	agents := cfg.Agents
	if len(agents) == 0 {
		agents = []string{"claude", "codex", "gemini"}
	}
	e.record(map[string]any{"agentconform": "hello", "profile": "native", "protocol": Protocol, "agents": agents,
		"supports": []string{"multi_turn", "interrupt", "permission", "permission_delay"}, "name": "acp: " + cfg.Agent, "version": cfg.Version})
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var cmd command
		if err := json.Unmarshal(sc.Bytes(), &cmd); err != nil {
			e.logf("a harness line that is not a command: %v", err)
			continue
		}
		switch cmd.Op {
		case "start":
			e.startTurn(func() { e.begin(ctx, cmd) })
		case "send":
			e.waitTurn()
			e.startTurn(func() { e.prompt(cmd.Prompt) })
		case "interrupt":
			e.interrupt()
		case "close":
			e.close()
			return 0
		default:
			e.logf("unknown harness op %q", cmd.Op)
		}
	}
	e.close()
	return 1
}

// command is one harness command.
type command struct {
	Op         string `json:"op"`
	Agent      string `json:"agent"`
	Prompt     string `json:"prompt"`
	Cwd        string `json:"cwd"`
	Model      string `json:"model"`
	Permission string `json:"permission"`
	Resume     string `json:"resume"`
	// PermissionDelayMS is how long the caller takes to decide each
	// permission request (a person in the loop).
	PermissionDelayMS int64 `json:"permission_delay_ms"`
}

// editor is the state of one run.
type editor struct {
	cfg   Config
	start time.Time

	outMu sync.Mutex
	out   io.Writer
	errw  io.Writer
	wire  *os.File

	// The agent and the connection to it.
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	inMu    sync.Mutex
	exited  chan struct{} // closed once the agent exited
	exitHow string
	nextID  int
	pendMu  sync.Mutex
	pending map[string]chan *acp.Message

	session    string
	permission string
	delay      time.Duration // how long the caller takes to answer a permission request
	deciding   atomic.Int32  // permission requests the caller is still deciding

	heardMu sync.Mutex
	heard   time.Time // when the agent last wrote a line

	turnMu    sync.Mutex
	turnDone  chan struct{} // closed when the running turn's goroutine returned
	turnOver  bool          // the running turn wrote its turn_end
	cancelled bool          // session/cancel was sent for the running turn
	// earlyCancel: an interrupt came before the session existed; the
	// session/cancel goes out right after the session's first prompt.
	earlyCancel bool
}

func (e *editor) logf(format string, args ...any) {
	fmt.Fprintf(e.errw, "[acp-editor] "+format+"\n", args...)
}

func (e *editor) ms() int64 { return time.Since(e.start).Milliseconds() }

// record writes one harness line (a record or an event).
func (e *editor) record(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	e.outMu.Lock()
	defer e.outMu.Unlock()
	e.out.Write(append(b, '\n'))
}

// event writes raw JSON (a value from one line of the agent: no newline
// in it) as an event line.
func (e *editor) event(raw json.RawMessage) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.IndexByte(raw, '\n') >= 0 {
		return
	}
	e.outMu.Lock()
	defer e.outMu.Unlock()
	e.out.Write(append(raw[:len(raw):len(raw)], '\n'))
}

// wireLog appends one record to the wire log.
func (e *editor) wireLog(rec map[string]any) {
	if e.wire == nil {
		return
	}
	rec["t_ms"] = e.ms()
	b, _ := json.Marshal(rec)
	e.outMu.Lock()
	defer e.outMu.Unlock()
	e.wire.Write(append(b, '\n'))
}

func (e *editor) turnEnd(ok bool, reason, errText string) {
	// The turn is over once its turn_end is out: a close that follows it
	// is no close during a turn.
	e.turnMu.Lock()
	e.turnOver = true
	e.turnMu.Unlock()
	rec := map[string]any{"agentconform": "turn_end", "ok": ok, "session_id": e.session}
	if errText != "" {
		rec["error"] = errText
	}
	if reason != "" {
		rec["reason"] = reason
	}
	e.record(rec)
}

// startTurn runs a turn in the background; waitTurn waits for it.
func (e *editor) startTurn(run func()) {
	done := make(chan struct{})
	e.turnMu.Lock()
	e.turnDone, e.cancelled, e.turnOver, e.earlyCancel = done, false, false, false
	e.turnMu.Unlock()
	go func() {
		defer close(done)
		run()
	}()
}

func (e *editor) waitTurn() {
	e.turnMu.Lock()
	done := e.turnDone
	e.turnMu.Unlock()
	if done != nil {
		<-done
	}
}

// running reports whether a turn is running.
func (e *editor) running() bool {
	e.turnMu.Lock()
	defer e.turnMu.Unlock()
	if e.turnDone == nil || e.turnOver {
		return false
	}
	select {
	case <-e.turnDone:
		return false
	default:
		return true
	}
}

// begin starts the agent, initializes it, opens a session and runs the
// first turn.
func (e *editor) begin(ctx context.Context, c command) {
	e.permission = c.Permission
	e.delay = time.Duration(c.PermissionDelayMS) * time.Millisecond
	if err := e.spawn(ctx, c.Cwd); err != nil {
		e.turnEnd(false, "failed", err.Error())
		return
	}
	caps := map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false}
	resp, err := e.call(acp.MethodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": caps,
		"clientInfo": map[string]any{"name": "agentconform", "version": e.cfg.Version}})
	if err == nil && resp.Error != nil {
		err = rpcError(resp.Error)
	}
	if err != nil {
		e.turnEnd(false, "failed", "initialize: "+err.Error())
		return
	}
	cwd := c.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	resp, err = e.call(acp.MethodSessionNew, map[string]any{"cwd": cwd, "mcpServers": []any{}})
	if err == nil && resp.Error != nil {
		err = rpcError(resp.Error)
	}
	if err != nil {
		e.turnEnd(false, "failed", "session/new: "+err.Error())
		return
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(resp.Result, &r)
	e.session = r.SessionID
	if c.Model != "" {
		e.logf("model %q asked for: ACP has no standard way to pick it; left to the agent", c.Model)
	}
	e.prompt(c.Prompt)
}

// prompt runs one turn: session/prompt, its result handed on.
func (e *editor) prompt(text string) {
	if e.stdin == nil || e.session == "" {
		e.turnEnd(false, "failed", "no session to prompt")
		return
	}
	resp, err := e.call(acp.MethodSessionPrompt, map[string]any{"sessionId": e.session,
		"prompt": []any{map[string]any{"type": "text", "text": text}}})
	if err != nil {
		e.turnEnd(false, "failed", err.Error())
		return
	}
	if resp.Error != nil {
		b, _ := json.Marshal(map[string]any{"error": resp.Error})
		e.event(b)
		e.turnEnd(false, "failed", rpcError(resp.Error).Error())
		return
	}
	e.event(resp.Result)
	var r struct {
		StopReason string `json:"stopReason"`
	}
	json.Unmarshal(resp.Result, &r)
	switch r.StopReason {
	case acp.StopEndTurn:
		e.turnEnd(true, "completed", "")
	case acp.StopCancelled:
		e.turnEnd(false, "cancelled", "stopReason cancelled")
	case "max_turn_requests":
		e.turnEnd(false, "max_turns", "stopReason max_turn_requests")
	default:
		e.turnEnd(false, "failed", "stopReason "+r.StopReason)
	}
}

// rpcError renders a JSON-RPC error as the agent sent it.
func rpcError(er *acp.Error) error {
	msg := er.Message
	if len(er.Data) > 0 && string(er.Data) != "null" {
		msg += " " + string(er.Data)
	}
	return fmt.Errorf("%s (JSON-RPC error %d)", msg, er.Code)
}

// spawn starts the agent in dir. A simple command is exec'd by the shell,
// so that the process the editor signals is the agent itself. The agent's
// stdout is a pipe of the editor's own: the agent's exit is known when the
// process ends, whoever else (a CLI it left behind) still holds the pipe.
func (e *editor) spawn(ctx context.Context, dir string) error {
	line := e.cfg.Agent
	if !strings.ContainsAny(line, ";&|<>$`()\n\\") {
		line = "exec " + line
	}
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Dir = dir
	cmd.Stderr = e.errw
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return fmt.Errorf("starting the agent (%s): %w", e.cfg.Agent, err)
	}
	pw.Close()
	e.cmd, e.stdin = cmd, in
	e.exited = make(chan struct{})
	e.wireLog(map[string]any{"dir": "meta", "event": "start", "pid": cmd.Process.Pid, "command": e.cfg.Agent})
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer pr.Close()
		e.read(pr)
	}()
	go func() {
		err := cmd.Wait()
		// What the agent wrote before it exited is dispatched first (a
		// response in flight); a pipe a leftover process holds open is
		// not waited for.
		select {
		case <-read:
		case <-time.After(500 * time.Millisecond):
		}
		how := "exit 0"
		code := 0
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					how = "killed by " + ws.Signal().String()
					code = -1
				} else {
					code = ee.ExitCode()
					how = fmt.Sprintf("exit %d", code)
				}
			} else {
				how = err.Error()
			}
		}
		e.exitHow = how
		e.wireLog(map[string]any{"dir": "meta", "event": "exit", "code": code, "how": how})
		close(e.exited)
	}()
	return nil
}

// read dispatches the agent's stdout lines until EOF.
func (e *editor) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			e.heardMu.Lock()
			e.heard = time.Now()
			e.heardMu.Unlock()
			line = bytes.TrimSuffix(line, []byte("\n"))
			e.wireLog(map[string]any{"dir": "out", "line": string(line)})
			e.dispatch(line)
		}
		if err != nil {
			return
		}
	}
}

// dispatch handles one line of the agent.
func (e *editor) dispatch(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	m, err := acp.Decode(line)
	if err != nil {
		e.logf("the agent wrote a line that is not a JSON-RPC message (%v): %.200s", err, line)
		return
	}
	switch m.Kind {
	case acp.Response:
		e.pendMu.Lock()
		ch := e.pending[m.IDKey()]
		delete(e.pending, m.IDKey())
		e.pendMu.Unlock()
		if ch == nil {
			e.logf("a response to no request of the editor: %.200s", line)
			return
		}
		ch <- m
	case acp.Notification:
		if m.Method == acp.MethodSessionUpdate && len(m.Params) > 0 {
			e.event(m.Params)
		}
	case acp.Request:
		e.answer(m)
	}
}

// answer answers a request of the agent: session/request_permission by
// the harness policy (cancelled once the turn was cancelled, as the
// protocol requires); anything else (the editor offers no file system and
// no terminal) with "Method not found".
func (e *editor) answer(m *acp.Message) {
	if m.Method != acp.MethodRequestPermission {
		e.send(message{JSONRPC: "2.0", ID: m.ID, Error: map[string]any{"code": acp.CodeMethodNotFound,
			"message": `"Method not found": ` + m.Method, "data": map[string]any{"method": m.Method}}})
		return
	}
	if e.delay > 0 {
		// The caller takes its time to decide, as a person does; the
		// editor goes on reading meanwhile.
		e.deciding.Add(1)
		time.AfterFunc(e.delay, func() {
			e.answerPermission(m)
			e.heardMu.Lock()
			e.heard = time.Now() // the agent's silence counts from the answer
			e.heardMu.Unlock()
			e.deciding.Add(-1)
		})
		return
	}
	e.answerPermission(m)
}

// answerPermission answers session/request_permission by the harness
// policy, or cancelled once the turn was cancelled.
func (e *editor) answerPermission(m *acp.Message) {
	e.turnMu.Lock()
	cancelled := e.cancelled
	e.turnMu.Unlock()
	outcome := map[string]any{"outcome": "cancelled"}
	if !cancelled {
		var p struct {
			Options []struct {
				OptionID string `json:"optionId"`
				Kind     string `json:"kind"`
			} `json:"options"`
		}
		json.Unmarshal(m.Params, &p)
		kinds := []string{"reject_once", "reject_always"}
		if e.permission == "allow" {
			kinds = []string{"allow_once", "allow_always"}
		}
	pick:
		for _, k := range kinds {
			for _, o := range p.Options {
				if o.Kind == k {
					outcome = map[string]any{"outcome": "selected", "optionId": o.OptionID}
					break pick
				}
			}
		}
	}
	e.send(message{JSONRPC: "2.0", ID: m.ID, Result: map[string]any{"outcome": outcome}})
}

// message is one JSON-RPC message the editor sends, its keys in the order
// the ACP libraries write them.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   any             `json:"error,omitempty"`
}

// send writes one message to the agent.
func (e *editor) send(v message) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.inMu.Lock()
	defer e.inMu.Unlock()
	if e.stdin == nil {
		return errors.New("the agent's stdin is closed")
	}
	e.wireLog(map[string]any{"dir": "in", "line": string(b)})
	if _, err := e.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing to the agent: %w", err)
	}
	return nil
}

// call sends a request and waits for its response, or for the agent to
// exit.
func (e *editor) call(method string, params any) (*acp.Message, error) {
	e.pendMu.Lock()
	id := e.nextID
	e.nextID++
	raw := json.RawMessage(fmt.Sprint(id))
	ch := make(chan *acp.Message, 1)
	e.pending[acp.IDKey(raw)] = ch
	e.pendMu.Unlock()
	if err := e.send(message{JSONRPC: "2.0", ID: raw, Method: method, Params: params}); err != nil {
		return nil, err
	}
	if method == acp.MethodSessionPrompt {
		e.turnMu.Lock()
		early := e.earlyCancel
		e.earlyCancel = false
		e.turnMu.Unlock()
		if early {
			if err := e.send(message{JSONRPC: "2.0", Method: acp.MethodSessionCancel, Params: map[string]any{"sessionId": e.session}}); err != nil {
				e.logf("session/cancel: %v", err)
			}
		}
	}
	var silence <-chan time.Time
	if method == acp.MethodSessionPrompt {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		silence = t.C
	}
	var cancelAt time.Time
	var cpu uint64
	for {
		select {
		case m := <-ch:
			return m, nil
		case <-e.exited:
			select {
			case m := <-ch:
				return m, nil
			default:
			}
			return nil, fmt.Errorf("the agent exited (%s) before it answered %s", e.exitHow, method)
		case <-silence:
			if ticks, ok := treeCPU(e.cmd.Process.Pid); !ok {
				continue // cannot tell idle from busy: the runner's deadline decides
			} else if ticks != cpu || e.deciding.Load() > 0 {
				cpu = ticks
				e.heardMu.Lock()
				e.heard = time.Now() // busy, or waiting for the caller's answer: not silent
				e.heardMu.Unlock()
			}
			e.heardMu.Lock()
			quiet := time.Since(e.heard)
			e.heardMu.Unlock()
			switch {
			case cancelAt.IsZero() && quiet >= Silence:
				e.logf("the agent has written nothing and used no CPU for %v while session/prompt waits: session/cancel", quiet.Round(time.Second))
				e.wireLog(map[string]any{"dir": "meta", "event": "silent", "ms": quiet.Milliseconds()})
				cancelAt = time.Now()
				e.interrupt()
			case !cancelAt.IsZero() && time.Since(cancelAt) >= CancelWait:
				e.wireLog(map[string]any{"dir": "meta", "event": "gave_up"})
				e.pendMu.Lock()
				delete(e.pending, acp.IDKey(raw))
				e.pendMu.Unlock()
				return nil, fmt.Errorf("no response to session/prompt: the agent wrote nothing and used no CPU for %v, then did not answer session/cancel within %v", Silence, CancelWait)
			}
		}
	}
}

// interrupt sends session/cancel for the running turn.
func (e *editor) interrupt() {
	if !e.running() {
		e.logf("interrupt: no running turn; ignored")
		return
	}
	if e.session == "" {
		// The turn is starting (initialize or session/new pending): an
		// editor's user may cancel then, and the cancel must not be lost.
		e.turnMu.Lock()
		e.cancelled, e.earlyCancel = true, true
		e.turnMu.Unlock()
		e.logf("interrupt before the session exists: session/cancel follows its session/prompt")
		return
	}
	e.turnMu.Lock()
	e.cancelled = true
	e.turnMu.Unlock()
	if err := e.send(message{JSONRPC: "2.0", Method: acp.MethodSessionCancel, Params: map[string]any{"sessionId": e.session}}); err != nil {
		e.logf("session/cancel: %v", err)
	}
}

// close ends the run: a running turn is cancelled (and waited for, a
// while), the agent's stdin closed, the agent waited for (SIGTERM, then
// SIGKILL, if it does not exit), then the end record.
func (e *editor) close() {
	during := e.running()
	if during {
		e.logf("close during a turn: session/cancel, then closing the agent's stdin")
		e.interrupt()
		e.turnMu.Lock()
		done := e.turnDone
		e.turnMu.Unlock()
		select {
		case <-done:
		case <-time.After(CancelWait):
			e.logf("the turn did not end within %v of session/cancel", CancelWait)
		}
	}
	if e.cmd != nil {
		e.inMu.Lock()
		if e.stdin != nil {
			e.stdin.Close()
			e.stdin = nil
		}
		e.inMu.Unlock()
		e.wireLog(map[string]any{"dir": "meta", "event": "stdin_closed"})
		if !e.waitExit(ExitWait) {
			e.logf("the agent did not exit within %v of its stdin closing: SIGTERM", ExitWait)
			e.wireLog(map[string]any{"dir": "meta", "event": "signal", "signal": "SIGTERM"})
			e.cmd.Process.Signal(syscall.SIGTERM)
			if !e.waitExit(ExitWait) {
				e.logf("the agent did not exit on SIGTERM: SIGKILL")
				e.wireLog(map[string]any{"dir": "meta", "event": "signal", "signal": "SIGKILL"})
				e.cmd.Process.Kill()
				<-e.exited
			}
		}
	}
	if during {
		e.waitTurn()
		e.record(map[string]any{"agentconform": "end", "ok": false, "error": "closed during a turn"})
		return
	}
	e.record(map[string]any{"agentconform": "end", "ok": true})
}

func (e *editor) waitExit(d time.Duration) bool {
	select {
	case <-e.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// AgentsOf guesses which CLIs an agent command drives from its words
// (claude-agent-acp drives claude, codex-acp codex, gemini --acp is
// Gemini CLI itself): every CLI named in it, or all three.
func AgentsOf(command string) []string {
	var out []string
	low := strings.ToLower(command)
	for _, cli := range []string{"claude", "codex", "gemini"} {
		if strings.Contains(low, cli) {
			out = append(out, cli)
		}
	}
	if len(out) == 0 {
		return []string{"claude", "codex", "gemini"}
	}
	return out
}
