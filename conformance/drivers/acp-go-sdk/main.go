// Command driver is a harness driver (conformance/HARNESS.md) around
// github.com/coder/acp-go-sdk, the Agent Client Protocol SDK for Go: a Go
// program that drives `gemini --experimental-acp` with the SDK's
// ClientSideConnection, as the SDK's own Gemini example does. It hands the
// runner every session/update the SDK delivers and each prompt's result
// (profile "native"), answers permission requests by the caller's policy,
// cancels with session/cancel, and resumes with session/load. It is built
// from its own module, so that the SDK is no dependency of agentconform's.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

const sdkPath = "github.com/coder/acp-go-sdk"

// out serialises the driver's lines: the SDK delivers session updates on
// its own goroutine while a turn's result comes on another.
var out = struct {
	sync.Mutex
	w *bufio.Writer
}{w: bufio.NewWriter(os.Stdout)}

func write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		logf("an event that does not marshal: %v", err)
		return
	}
	out.Lock()
	out.w.Write(append(b, '\n'))
	out.w.Flush()
	out.Unlock()
}

func record(kind string, fields map[string]any) {
	fields["agentconform"] = kind
	write(fields)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[driver] "+format+"\n", args...)
}

// command is one line of the runner (HARNESS.md).
type command struct {
	Op         string `json:"op"`
	Agent      string `json:"agent"`
	Prompt     string `json:"prompt"`
	Cwd        string `json:"cwd"`
	Permission string `json:"permission"`
	Resume     string `json:"resume"`
}

// client is the SDK's Client: what the agent asks of the editor.
type client struct {
	d *driver
}

func (c client) SessionUpdate(ctx context.Context, n acp.SessionNotification) error {
	write(n)
	return nil
}

// RequestPermission answers by the caller's policy: an allow option for
// "allow", a reject option otherwise; cancelled once the caller cancelled
// the turn, as the protocol asks of a client.
func (c client) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	if c.d.cancelled() {
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
	}
	want := []acp.PermissionOptionKind{acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways}
	if c.d.permission == "allow" {
		want = []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways}
	}
	for _, k := range want {
		for _, o := range p.Options {
			if o.Kind == k {
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: o.OptionId}}}, nil
			}
		}
	}
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
}

var errNoCapability = errors.New("this client declared no such capability")

func (client) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, errNoCapability
}

func (client) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, errNoCapability
}

func (client) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, errNoCapability
}

func (client) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, errNoCapability
}

func (client) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, errNoCapability
}

func (client) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, errNoCapability
}

func (client) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, errNoCapability
}

// driver holds the one agent process and its session.
type driver struct {
	permission string
	agent      *exec.Cmd
	stdin      io.WriteCloser
	conn       *acp.ClientSideConnection
	session    acp.SessionId

	mu     sync.Mutex
	turn   chan struct{} // closed when the running turn has ended; nil between turns
	cancel bool          // the running turn was cancelled
	given  bool          // the running turn was given up (close), its turn_end written
}

func (d *driver) cancelled() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cancel
}

// start starts the agent, opens (or loads) the session and runs the first
// turn.
func (d *driver) start(cmd command) {
	if cmd.Agent != "" && cmd.Agent != "gemini-acp" {
		turnEnd(false, "failed", "this driver drives gemini-acp, not "+cmd.Agent, "")
		return
	}
	d.permission = cmd.Permission
	bin := os.Getenv("GEMINI_EXECUTABLE")
	if bin == "" {
		bin = "gemini"
	}
	d.agent = exec.Command(bin, "--experimental-acp")
	d.agent.Stderr = os.Stderr
	var err error
	if d.stdin, err = d.agent.StdinPipe(); err == nil {
		var stdout io.Reader
		if stdout, err = d.agent.StdoutPipe(); err == nil {
			if err = d.agent.Start(); err == nil {
				d.conn = acp.NewClientSideConnection(client{d}, d.stdin, stdout)
			}
		}
	}
	if err != nil {
		turnEnd(false, "failed", "starting the agent: "+err.Error(), "")
		return
	}
	cwd := cmd.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	ctx := context.Background()
	if _, err := d.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{}}}); err != nil {
		turnEnd(false, "failed", "initialize: "+err.Error(), "")
		return
	}
	if cmd.Resume != "" {
		d.session = acp.SessionId(cmd.Resume)
		if _, err := d.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: d.session, Cwd: cwd, McpServers: []acp.McpServer{}}); err != nil {
			write(map[string]any{"error": err.Error()})
			turnEnd(false, "failed", "session/load: "+err.Error(), string(d.session))
			return
		}
	} else {
		s, err := d.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
		if err != nil {
			write(map[string]any{"error": err.Error()})
			turnEnd(false, "failed", "session/new: "+err.Error(), "")
			return
		}
		d.session = s.SessionId
	}
	d.prompt(cmd.Prompt)
}

// prompt runs one turn in the background; its turn_end follows its result.
func (d *driver) prompt(text string) {
	done := make(chan struct{})
	d.mu.Lock()
	d.turn, d.cancel, d.given = done, false, false
	d.mu.Unlock()
	go func() {
		defer close(done)
		res, err := d.conn.Prompt(context.Background(), acp.PromptRequest{SessionId: d.session, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		d.mu.Lock()
		d.turn = nil
		given := d.given
		d.mu.Unlock()
		if given {
			return // reported when the caller closed
		}
		if err != nil {
			write(map[string]any{"error": err.Error()})
			turnEnd(false, "failed", err.Error(), string(d.session))
			return
		}
		write(res)
		switch res.StopReason {
		case acp.StopReasonEndTurn:
			turnEnd(true, "completed", "", string(d.session))
		case acp.StopReasonCancelled:
			turnEnd(false, "cancelled", "cancelled", string(d.session))
		case acp.StopReasonMaxTurnRequests:
			turnEnd(false, "max_turns", "stop reason max_turn_requests", string(d.session))
		default:
			turnEnd(false, "failed", "stop reason "+string(res.StopReason), string(d.session))
		}
	}()
}

// running returns the running turn's done channel (nil between turns).
func (d *driver) running() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.turn
}

// interrupt cancels the running turn with session/cancel.
func (d *driver) interrupt() {
	d.mu.Lock()
	running := d.turn != nil
	if running {
		d.cancel = true
	}
	d.mu.Unlock()
	if !running || d.conn == nil {
		logf("interrupt: no running turn; ignored")
		return
	}
	if err := d.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: d.session}); err != nil {
		logf("session/cancel: %v", err)
	}
}

// close ends a running turn (cancel, then 10 s for its result), closes the
// agent's stdin and gives it 3 s to exit, then SIGTERM, then SIGKILL.
func (d *driver) close() {
	if t := d.running(); t != nil {
		d.interrupt()
		select {
		case <-t:
		case <-time.After(10 * time.Second):
			logf("close: the cancelled turn has no result after 10 s")
			d.mu.Lock()
			d.given = true
			d.mu.Unlock()
			turnEnd(false, "cancelled", "the caller closed the session during the turn", string(d.session))
		}
	}
	if d.agent == nil || d.agent.Process == nil {
		return
	}
	d.stdin.Close()
	exited := make(chan struct{})
	go func() { d.agent.Wait(); close(exited) }()
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			d.agent.Process.Signal(sig)
		}
		select {
		case <-exited:
			return
		case <-time.After(3 * time.Second):
		}
	}
}

func turnEnd(ok bool, reason, errText, session string) {
	f := map[string]any{"ok": ok, "reason": reason, "session_id": session}
	if !ok {
		f["error"] = errText
	}
	record("turn_end", f)
}

func sdkVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == sdkPath {
				return m.Version
			}
		}
	}
	return "unknown"
}

func main() {
	record("hello", map[string]any{"profile": "native", "agents": []string{"gemini-acp"},
		"supports": []string{"multi_turn", "resume", "interrupt", "permission"},
		"name":     "acp-go-sdk", "version": sdkVersion()})
	d := &driver{}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	go func() {
		for range sigs {
			d.interrupt()
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 64<<20)
	started := false
	for in.Scan() {
		var cmd command
		if err := json.Unmarshal(in.Bytes(), &cmd); err != nil || cmd.Op == "" {
			logf("ignoring a command line that is not a command: %.200s", in.Text())
			continue
		}
		switch cmd.Op {
		case "start":
			if started {
				logf("start: a session was already started; ignored")
				continue
			}
			started = true
			d.start(cmd)
		case "send":
			if t := d.running(); t != nil {
				<-t
			}
			if d.session == "" {
				turnEnd(false, "failed", "no session to send to", "")
				continue
			}
			d.prompt(cmd.Prompt)
		case "interrupt":
			d.interrupt()
		case "close":
			d.close()
			record("end", map[string]any{"ok": true})
			return
		default:
			logf("unknown op %q; ignored", cmd.Op)
		}
	}
	logf("stdin ended without close; closing")
	d.close()
	record("end", map[string]any{"ok": true})
}
