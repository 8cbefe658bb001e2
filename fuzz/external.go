package fuzz

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentconform/agentconform/acp/editor"
	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

// ExternalOptions configure an External target.
type ExternalOptions struct {
	// FakeExe is the executable installed as the fake CLIs: the lean
	// agentconform-fake, the agentconform binary, or a test binary whose
	// TestMain calls fakecli.Main. "" means this executable.
	FakeExe string
	// Deadline bounds one execution (the conformance case's timeout); 0
	// means DefaultExternalDeadline.
	Deadline time.Duration
	// Agents restricts the fixtures to the CLIs the adapter drives (nil:
	// all).
	Agents []string
	// SignalInterrupt interrupts with SIGINT instead of the harness's
	// interrupt command.
	SignalInterrupt bool
	// Profile is "acp" when the command starts an Agent Client Protocol
	// agent, which agentconform's editor (acp/editor) drives, as `run
	// --profile acp` does; "" for an adapter of the harness protocol.
	Profile string
	// EditorExe is the executable that plays the editor for an ACP agent
	// (`EditorExe acp-editor --agent CMD`): the agentconform binary, or a
	// test binary whose TestMain calls editor.ServeIfAsked. "" means this
	// executable.
	EditorExe string
}

// ProfileACP is ExternalOptions.Profile for an ACP agent.
const ProfileACP = "acp"

// DefaultExternalDeadline bounds one execution against an external
// adapter.
const DefaultExternalDeadline = 20 * time.Second

// External is a target that runs an adapter command through the
// conformance harness (HARNESS.md) against the fake CLIs, which replay
// the mutated fixture: two processes per execution, the adapter and the
// fake it starts (Codex and Gemini start one per turn).
type External struct {
	// Command is the shell command that starts the adapter.
	Command string
	opts    ExternalOptions
	dir     string // the executions' work directory
	n       atomic.Int64
	x       *conformance.Executor // runs the executions in directories it reuses
	// cfg runs the executions of an ACP agent, whose judges read the
	// editor's wire log in the case's directory, which an Executor
	// empties before it returns.
	cfg conformance.Config
}

// NewExternal prepares an external target; Close removes its files.
func NewExternal(command string, opts ExternalOptions) (*External, error) {
	if strings.TrimSpace(command) == "" {
		return nil, fmt.Errorf("fuzz: no adapter command")
	}
	if opts.FakeExe == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		opts.FakeExe = fakecli.Executable(self)
	}
	if opts.Deadline <= 0 {
		opts.Deadline = DefaultExternalDeadline
	}
	dir, err := conformance.TempDir("agentconform-fuzz-") // a memory file system when there is one: every execution makes and removes a few files
	if err != nil {
		return nil, err
	}
	var a conformance.Adapter
	switch opts.Profile {
	case "":
		a = adapterFor(command)
	case ProfileACP:
		if opts.EditorExe == "" {
			self, err := os.Executable()
			if err != nil {
				return nil, err
			}
			opts.EditorExe = self
		}
		if len(opts.Agents) == 0 {
			opts.Agents = editor.AgentsOf(command)
		}
		a = acpAdapter(opts.EditorExe, command)
	default:
		return nil, fmt.Errorf("fuzz: profile %q: want %q or none", opts.Profile, ProfileACP)
	}
	a.SignalInterrupt = opts.SignalInterrupt
	cfg := conformance.Config{Adapter: a, FakeExe: opts.FakeExe, Seed: 1, Timeout: opts.Deadline, WorkDir: dir}
	x, err := conformance.NewExecutor(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &External{Command: command, opts: opts, dir: dir, x: x, cfg: cfg}, nil
}

// Close removes the target's work directory.
func (e *External) Close() error {
	e.x.Close()
	return os.RemoveAll(e.dir)
}

// Name implements Target.
func (e *External) Name() string { return "external" }

// Agents are the CLIs the target's inputs choose fixtures of.
func (e *External) Agents() []string { return e.opts.Agents }

// stallPause is how long the runner waits on a CLI that stalled before
// it closes the session (the caller gives up); interruptQuiet how long it
// waits before it interrupts.
// The fakes write without delays, and the runner closes only once the
// CLI has gone quiet in its turn, so a fifth of a second is unambiguous:
// at a second, stalled inputs took most of a fuzzing run's time.
//
// giveUpQuiet is how long the caller waits in any other case: a mutation
// can leave a CLI waiting for ever without a stall (a Claude stream whose
// result is dropped keeps its process waiting for the next prompt, and
// the adapter waiting for the result), and a caller gives up then too.
// It is long enough that a slow adapter is never taken for a silent CLI.
const (
	stallPause     = 250 * time.Millisecond
	interruptQuiet = 200 * time.Millisecond
	giveUpQuiet    = 2 * time.Second
)

// Check implements Target: it runs the case as one conformance case and
// judges the observation by the fuzz properties, with the conformance
// checks that implement them.
func (e *External) Check(c Case) *Failure {
	cc, cleanup, err := e.conformanceCase(c)
	if err != nil {
		return failf(PropNoPanic, "the case could not run: %v", err)
	}
	defer cleanup()
	var o *conformance.Observation
	if e.opts.Profile == ProfileACP {
		cfg := e.cfg
		cfg.Keep = true
		o, err = conformance.Exec(context.Background(), cfg, cc)
		if o != nil && o.Dir != "" {
			defer os.RemoveAll(o.Dir)
		}
	} else {
		o, err = e.x.Exec(context.Background(), cc)
	}
	if err != nil {
		return failf(PropNoPanic, "the case could not run: %v", err)
	}
	return e.judge(c, o)
}

// conformanceCase turns a fuzz case into the conformance case the runner
// plays: the transcript (a fixture by name, or a file; delays shorter
// than a stall are dropped, as the in-process targets play them), the
// faults and seed, the interrupt, and a close for a CLI that stalls.
func (e *External) conformanceCase(c Case) (*conformance.Case, func(), error) {
	t := c.Transcript
	agent, prompts := t.Header.CLI, conformance.Prompts(t)
	if appserver.IsTranscript(t) {
		agent, prompts = AgentAppServer, appServerPrompts(t)
	}
	cc := &conformance.Case{ID: "fuzz/" + agent + "/" + t.Header.Scenario, Agent: agent, Faults: c.Faults, Seed: c.Seed,
		Permission: c.Permission, Prompts: prompts, Timeout: e.opts.Deadline}
	if cc.Permission == "" {
		cc.Permission = "allow"
	}
	cleanup := func() {}
	if f, ok := loadedFixtures()[t.Name]; ok && f == t && !hasDelays(t.Steps) {
		cc.Fixture = t.Name
	} else {
		p := filepath.Join(e.dir, fmt.Sprintf("case-%d.jsonl", e.n.Add(1)))
		var buf bytes.Buffer
		tt := *t
		tt.Steps = withoutDelays(t.Steps)
		if err := transcript.Write(&buf, &tt); err != nil {
			return nil, cleanup, err
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			return nil, cleanup, err
		}
		cc.Transcript = p
		cleanup = func() { os.Remove(p) }
	}
	stalls := strings.Contains(c.Faults, "stall") || strings.Contains(c.Faults, "linger") || hasStall(t.Steps)
	if c.Interrupt {
		cc.Interrupt = &conformance.InterruptPlan{Quiet: interruptQuiet}
		cc.Expect.Cancelled = true
	}
	cc.CloseWhenQuiet = giveUpQuiet
	if stalls {
		cc.Expect.Stall, cc.Expect.TurnFails = true, true
		cc.CloseWhenQuiet = stallPause
	}
	return cc, cleanup, nil
}

// acpAdapter is an ACP agent behind agentconform's editor, as `run
// --profile acp` judges it: the editor is the adapter, and starts the
// agent (a shell command, its relative paths made absolute).
func acpAdapter(editorExe, agent string) conformance.Adapter {
	argv := editor.Argv(editorExe, conformance.ResolveCommand(agent, ""))
	return conformance.Adapter{Name: agent, Reproduce: agent, Profile: ProfileACP, Command: func(ctx context.Context) *exec.Cmd {
		return exec.CommandContext(ctx, argv[0], argv[1:]...)
	}}
}

// appServerPrompts are an app-server transcript's prompts: one per
// turn/start its first process takes before its first branch (as the
// conformance cases count them; the fake takes any prompt's text).
func appServerPrompts(t *transcript.Transcript) []string {
	n := 0
	for _, s := range t.Processes()[0] {
		if s.Op == transcript.OpLabel && n > 0 {
			break
		}
		if s.Op == transcript.OpIn && s.Match != nil && s.Match["method"] == "turn/start" {
			n++
		}
	}
	out := []string{"Please do what the fixture " + t.Header.Scenario + " shows."}
	for i := 2; i <= n; i++ {
		out = append(out, fmt.Sprintf("prompt %d of %s", i, t.Header.Scenario))
	}
	return out
}

// adapterFor starts the command directly when it is a plain list of
// words, and through /bin/sh -c otherwise: the shell costs a millisecond
// of every execution.
func adapterFor(command string) conformance.Adapter {
	a := conformance.ShellAdapter(command)
	if strings.ContainsAny(command, "'\"\\$`!*?[](){};&|<>~#=\n") {
		return a
	}
	words := strings.Fields(command)
	if len(words) == 0 {
		return a
	}
	path, err := exec.LookPath(words[0])
	if err != nil {
		return a
	}
	a.Command = func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, path, words[1:]...)
		cmd.Args[0] = words[0]
		return cmd
	}
	return a
}

func hasDelays(steps []transcript.Step) bool {
	for _, s := range steps {
		if s.Op == transcript.OpDelay && s.DelayMS < stallMS {
			return true
		}
	}
	return false
}

func hasStall(steps []transcript.Step) bool {
	for _, s := range steps {
		if s.Op == transcript.OpDelay && s.DelayMS >= stallMS {
			return true
		}
	}
	return false
}

// withoutDelays drops the delay steps shorter than a stall.
func withoutDelays(steps []transcript.Step) []transcript.Step {
	out := make([]transcript.Step, 0, len(steps))
	for _, s := range steps {
		if s.Op == transcript.OpDelay && s.DelayMS < stallMS {
			continue
		}
		out = append(out, s)
	}
	return out
}

// judge maps the conformance checks onto the fuzz properties.
func (e *External) judge(c Case, o *conformance.Observation) *Failure {
	switch {
	case o.StartErr != nil:
		return failf(PropNoPanic, "the case could not run: the adapter did not start: %v", o.StartErr)
	case o.TimedOut:
		return failf(PropDeadline, "the adapter was still running after %s (the case's deadline); killed", e.opts.Deadline)
	case o.Crashed():
		how := fmt.Sprintf("exit %d", o.ExitCode)
		if o.ExitSignal != "" {
			how = "killed by " + o.ExitSignal
		}
		return failf(PropNoPanic, "the adapter died (%s) without its end record; stderr: %s", how, clip(lastLines(string(o.Stderr), 8), 800))
	}
	appServer := o.Case.Agent == AgentAppServer
	acpAgent := o.Hello != nil && o.Hello.Protocol == editor.Protocol
	if f := judgeChecks(o, PropValid, conformance.CheckHello, conformance.CheckValid); f != nil {
		return f
	}
	if f := judgeChecks(o, PropEnds, conformance.CheckRecords, conformance.CheckEnds); f != nil {
		return f
	}
	switch {
	case appServer:
		// The client speaks the server's protocol.
		if f := judgeChecks(o, PropValid, conformance.CheckAppServerRequests); f != nil {
			return f
		}
	case acpAgent:
		// The agent speaks ACP, and finishes every tool call it starts.
		if f := judgeChecks(o, PropValid, conformance.CheckACPProtocol, conformance.CheckACPToolFinal); f != nil {
			return f
		}
	}
	if f := judgeOutcome(c, o); f != nil {
		return f
	}
	if appServer {
		if f := judgeServerRequests(o); f != nil {
			return f
		}
	}
	profile := ""
	if o.Hello != nil {
		profile = o.Hello.Profile
	}
	if profile == "unified" || profile == "shim" {
		var input []byte
		for _, w := range o.Wire {
			input = append(input, w.Bytes...)
		}
		evs := make([]decoded, 0, len(o.Events))
		for _, ev := range o.Events {
			if appServer {
				// An app-server client's sessionId is the thread's once
				// it has read the answer to thread/start; before that
				// (a session closed or interrupted early) the unified
				// events still need one, and a placeholder is all there
				// is. Tool ids (the server's item ids) are judged.
				obj := map[string]any{}
				for k, v := range ev.Obj {
					if k != "sessionId" {
						obj[k] = v
					}
				}
				evs = append(evs, decoded{raw: ev.Raw, obj: obj})
				continue
			}
			evs = append(evs, decoded{raw: ev.Raw, obj: ev.Obj})
		}
		if f := checkIDs(profile, evs, input); f != nil {
			return f
		}
	}
	if losslessApplies(c) {
		// Content-neutral faults, or none, on a session the CLI completes:
		// the conformance lossless checks (the reference translation of
		// the bytes the fakes wrote; for the app-server, the text of its
		// agentMessage items; for an ACP agent, the CLI's text in its
		// agent_message_chunk updates) apply.
		checks := []*conformance.Check{conformance.CheckLosslessText, conformance.CheckLosslessTools, conformance.CheckLosslessUsage}
		switch {
		case appServer:
			checks = []*conformance.Check{conformance.CheckAppServerText}
		case acpAgent:
			checks = []*conformance.Check{conformance.CheckLosslessEvents, conformance.CheckACPText}
		case profile == "native":
			checks = []*conformance.Check{conformance.CheckLosslessEvents}
		}
		for _, chk := range checks {
			if ok, _ := chk.Applies(o.Case, o.Hello); !ok && (appServer || acpAgent) {
				continue
			}
			if out := chk.Judge(o); !out.OK && !out.Info && !out.Skip {
				return failf(PropLossless, "%s: expected %s; %s\n%s", chk.ID, out.Expected, out.Actual, clip(out.Diff, 3000))
			}
		}
	}
	return judgeChecks(o, PropReaped, conformance.CheckReaps, conformance.CheckNoStray)
}

// judgeChecks runs conformance checks that apply to the case and returns
// the first that fails as a failure of prop.
func judgeChecks(o *conformance.Observation, prop string, checks ...*conformance.Check) *Failure {
	for _, chk := range checks {
		if ok, _ := chk.Applies(o.Case, o.Hello); !ok {
			continue
		}
		if out := chk.Judge(o); !out.OK && !out.Info && !out.Skip {
			return failf(prop, "%s: expected %s; %s", chk.ID, out.Expected, out.Actual)
		}
	}
	return nil
}

// losslessApplies says whether the lossless checks judge a case: only
// content-neutral faults (or none), no JSON-RPC edits, no interrupt or
// stall, and a fixture
// the CLI completes (as conformance judges them: not after an API error or
// max turns, where the error texts of unfinished tools legitimately differ).
func losslessApplies(c Case) bool {
	if c.Interrupt || hasStall(c.Transcript.Steps) || (c.Faults != "" && c.Base == nil) || c.Edits != "" {
		return false
	}
	switch c.Transcript.Header.Scenario {
	case "api-error", "max-turns", "app-server-api-error":
		return false
	}
	return true
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
