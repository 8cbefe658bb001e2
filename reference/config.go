package reference

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Config says how to run a CLI for a session.
type Config struct {
	// Agent is the CLI to run.
	Agent Agent
	// Executable is the CLI's path. "" means the first of the agent's
	// variables in Env that is set (AGENTCONFORM_CLAUDE, then
	// CLAUDE_CODE_EXECUTABLE; likewise for CODEX and GEMINI), else the
	// agent's name looked up in Env's PATH.
	Executable string
	// Cwd is the CLI's working directory ("" is the caller's).
	Cwd string
	// Model is passed to the CLI when set.
	Model string
	// Permission is what to answer when the CLI asks to use a tool:
	// Claude gets --permission-prompt-tool stdio and the answer; Gemini
	// runs with -y (allow) or --approval-mode default (deny); Codex runs
	// in the workspace-write (allow) or read-only (deny) sandbox unless
	// Sandbox says otherwise.
	Permission Permission
	// CanUseTool, when set, decides Claude's permission requests instead
	// of Permission's fixed answer. It may block; a request the CLI
	// withdraws (control_cancel_request) is never answered.
	CanUseTool func(ctx context.Context, req PermissionRequest) PermissionDecision
	// PartialMessages makes Claude stream text as it is generated
	// (--include-partial-messages: stream_event deltas, handed out as
	// partial text chunks); without it each text block comes whole.
	PartialMessages bool
	// Resume is a session id to continue.
	Resume string
	// MaxTurns, when set, is the caller's turn limit: Claude gets
	// --max-turns N and stops a turn after N model requests
	// (docs/protocols/claude.md#max-turns). Codex exec and headless Gemini
	// have no such flag; they ignore it.
	MaxTurns int
	// Sandbox is Codex's --sandbox value; "" derives it from Permission.
	Sandbox string
	// ExtraArgs are appended to the CLI's arguments (before a Codex
	// resume subcommand and the prompt).
	ExtraArgs []string
	// Env is the CLI's environment; nil means this process's.
	Env []string
	// Stderr receives the CLI's stderr as it comes; nil discards it (the
	// end of it is kept for error messages either way).
	Stderr io.Writer
	// Logf receives diagnostics (lines skipped as undecodable); nil
	// discards them.
	Logf func(format string, args ...any)

	// TurnTimeout bounds each turn; 0 means no bound beyond the context.
	TurnTimeout time.Duration
	// StallTimeout is the watchdog: a turn whose CLI writes nothing, on
	// stdout or stderr, for this long (while it is not waiting for a
	// permission answer) is stopped, the CLI with it, and reported failed.
	// 0 means no watchdog.
	StallTimeout time.Duration
	// InterruptGrace is how long a CLI has to end an interrupted turn
	// before it is stopped (Claude) or sent the next signal (Codex and
	// Gemini: SIGINT, then SIGTERM); 0 means 5 s.
	InterruptGrace time.Duration
	// StopGrace is how long a CLI has to exit after SIGTERM (or Claude
	// after stdin is closed) before the next step; 0 means 5 s, the SDKs'
	// value.
	StopGrace time.Duration

	// Clock stamps events (see Options); nil means time.Now.
	Clock func() time.Time
	// NewID makes event ids (see Options); nil means random ones.
	NewID func() string
}

const defaultGrace = 5 * time.Second

func (c Config) interruptGrace() time.Duration {
	if c.InterruptGrace > 0 {
		return c.InterruptGrace
	}
	return defaultGrace
}

func (c Config) stopGrace() time.Duration {
	if c.StopGrace > 0 {
		return c.StopGrace
	}
	return defaultGrace
}

func (c Config) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// sandbox is Codex's effective --sandbox value ("" for none).
func (c Config) sandbox() string {
	if c.Sandbox != "" {
		return c.Sandbox
	}
	switch c.Permission {
	case PermissionAllow:
		return "workspace-write"
	case PermissionDeny:
		return "read-only"
	}
	return ""
}

// TranslatorOptions are the Options a translator for this session gets.
func (c Config) TranslatorOptions() Options {
	o := Options{Clock: c.Clock, NewID: c.NewID, Cwd: c.Cwd, Model: c.Model, Permission: c.Permission}
	if c.Agent == Codex {
		o.Sandbox = c.sandbox()
	}
	return o
}

// environ is the CLI's environment. CLAUDECODE is removed, as the SDKs
// do, so that a CLI started from inside Claude Code does not think it is
// nested.
func (c Config) environ() []string {
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "CLAUDECODE=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// executableVars are the variables naming each CLI (conformance/HARNESS.md).
var executableVars = map[Agent][]string{
	Claude: {"AGENTCONFORM_CLAUDE", "CLAUDE_CODE_EXECUTABLE"},
	Codex:  {"AGENTCONFORM_CODEX", "CODEX_EXECUTABLE"},
	Gemini: {"AGENTCONFORM_GEMINI", "GEMINI_EXECUTABLE"},
}

// ErrNotFound is returned when the CLI's executable cannot be found.
var ErrNotFound = errors.New("executable not found")

// executable resolves the CLI's path.
func (c Config) executable() (string, error) {
	if c.Executable != "" {
		return c.Executable, nil
	}
	env := c.environ()
	for _, name := range executableVars[c.Agent] {
		if v := lookupEnv(env, name); v != "" {
			return v, nil
		}
	}
	name := string(c.Agent)
	for _, dir := range filepath.SplitList(lookupEnv(env, "PATH")) {
		if dir == "" {
			dir = "."
		}
		for _, cand := range candidates(filepath.Join(dir, name)) {
			if isExecutable(cand) {
				return cand, nil
			}
		}
	}
	return "", fmt.Errorf("%s: %w in PATH or %s", name, ErrNotFound, strings.Join(executableVars[c.Agent], ", "))
}

func candidates(p string) []string {
	if runtime.GOOS == "windows" {
		return []string{p + ".exe", p + ".cmd", p}
	}
	return []string{p}
}

func isExecutable(p string) bool {
	info, err := os.Stat(p)
	if err != nil || info.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || info.Mode()&0o111 != 0
}

// lookupEnv finds name in env (the last entry wins, as for exec).
func lookupEnv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}
