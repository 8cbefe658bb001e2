package fakecli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// observer appends the observation log (fakecli/README.md, "Observation
// log"): one JSON object per line, to a file opened with O_APPEND, so that
// several fake processes can share one log. Records are buffered and
// written, whole, whenever the fake flushes stdout (before every wait and
// at the end), so a write never splits a record and the log is as current
// as what the adapter has seen. A nil observer logs nothing.
type observer struct {
	mu    sync.Mutex
	f     *os.File
	start time.Time
	pid   int
	buf   []byte
}

// obsBuffer is how much the observer buffers before it writes anyway.
const obsBuffer = 64 << 10

func openObserver(path string, start time.Time) (*observer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the observation log (%s): %w", EnvObserve, err)
	}
	return &observer{f: f, start: start, pid: os.Getpid()}, nil
}

// log appends one record of kind with the given key, value pairs, stamped
// with the time since the process started.
func (o *observer) log(kind string, kv ...any) {
	if o == nil {
		return
	}
	o.logAt(time.Since(o.start), kind, kv...)
}

// logAt is log with an explicit time (a stdin line is stamped with when
// it arrived, not when its fate was decided).
func (o *observer) logAt(at time.Duration, kind string, kv ...any) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return
	}
	b := o.buf
	b = append(b, `{"t_ms":`...)
	b = strconv.AppendInt(b, at.Milliseconds(), 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(o.pid), 10)
	b = append(b, `,"kind":`...)
	b = strconv.AppendQuote(b, kind)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		v, err := json.Marshal(kv[i+1])
		if err != nil {
			v, _ = json.Marshal(fmt.Sprint(kv[i+1]))
		}
		b = append(b, ',')
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		b = append(b, v...)
	}
	b = append(b, '}', '\n')
	o.buf = b
	if len(o.buf) >= obsBuffer {
		o.flushLocked()
	}
}

// ObservationWriter appends records to an observation log as the fakes
// do, for a process that stands in for a CLI without being a fake: the
// recording wrapper around a real CLI (package realcli) logs what the
// runner's checks read from the fakes, in the same records.
type ObservationWriter struct{ o *observer }

// OpenObservationLog opens the log at path for appending. Records carry
// pid, the pid the adapter knows the CLI by, and their times are counted
// from start, when that process started.
func OpenObservationLog(path string, pid int, start time.Time) (*ObservationWriter, error) {
	o, err := openObserver(path, start)
	if err != nil {
		return nil, err
	}
	o.pid = pid
	return &ObservationWriter{o: o}, nil
}

// Log appends one record of kind with the given key, value pairs (the
// fields of Observation, by their JSON names; "line" is a stdin record's
// text), stamped with the time since start. It buffers: Flush writes.
func (w *ObservationWriter) Log(kind string, kv ...any) { w.o.log(kind, kv...) }

// LogAt is Log with the record's time given (since start): a stdin line
// is stamped with when it arrived, not when it was found read.
func (w *ObservationWriter) LogAt(at time.Duration, kind string, kv ...any) {
	w.o.logAt(at, kind, kv...)
}

// Flush writes the buffered records, each whole.
func (w *ObservationWriter) Flush() { w.o.flush() }

// Close flushes and closes the log.
func (w *ObservationWriter) Close() { w.o.close() }

// AdapterEnv returns the environment variables whose presence a start
// record reports (names only): those an adapter sets or should think
// about when it starts a CLI.
func AdapterEnv() []string { return append([]string(nil), adapterEnv...) }

// flush writes the buffered records.
func (o *observer) flush() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
}

func (o *observer) flushLocked() {
	if o.f != nil && len(o.buf) > 0 {
		o.f.Write(o.buf) // best effort: the log must never change what the fake does
	}
	o.buf = o.buf[:0]
}

func (o *observer) close() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
	if o.f != nil {
		o.f.Close()
		o.f = nil
	}
}

// Observation is one record of the observation log. Which fields are set
// depends on Kind (fakecli/README.md, "Observation log"):
//
//	start           CLI, Argv, Env, Cwd, Transcript, StdinTTY, PPID
//	flags_error     Message, ExitCode
//	session         Session, Resumed
//	session_error   Message, ExitCode, Session, Reason
//	stdin           Text (the raw line), Matched / MatchedStep
//	stdin_closed    (nothing more)
//	stdin_unread    (nothing more: this CLI reads no stdin, as codex exec
//	                resume with a prompt argument)
//	stdin_closed_unread (nothing more: the client closed stdin, and the
//	                process ended before it read to the end; only the
//	                wrapper around a real CLI logs it, package realcli)
//	signal          Signal, Action
//	fault           Fault, Params, Detail
//	out, err        Bytes, Step
//	protocol_error  Message
//	exit            Code, or Signal when the process died by a signal
type Observation struct {
	// TMS is the time of the record in milliseconds since the process
	// started; PID the process's id.
	TMS  int64  `json:"t_ms"`
	PID  int    `json:"pid"`
	Kind string `json:"kind"`

	CLI        string   `json:"cli,omitempty"`
	Argv       []string `json:"argv,omitempty"`
	Env        []string `json:"env,omitempty"`
	Cwd        string   `json:"cwd,omitempty"`
	Transcript string   `json:"transcript,omitempty"`
	StdinTTY   bool     `json:"stdin_tty,omitempty"`
	// PPID is the parent process of a start record's process: the one
	// that gets its exit status.
	PPID int `json:"ppid,omitempty"`
	// SID is the session of a start record's process, where its writer
	// logs it (the wrapper around a real CLI does): the runner tells the
	// processes a real CLI's tools start in sessions of their own from the
	// CLI's.
	SID int `json:"sid,omitempty"`

	Message  string `json:"message,omitempty"`
	ExitCode int    `json:"exit_code,omitempty"`

	// Session is the session (thread) id a session record's process runs
	// its turn in, or the id a session_error record's process refused;
	// Resumed says the session existed before the process started (a
	// resume), Reason why the id was refused ("not_found", "in_use").
	Session string `json:"session,omitempty"`
	Resumed bool   `json:"resumed,omitempty"`
	Reason  string `json:"reason,omitempty"`

	// Text is a stdin record's raw line (its "line" field).
	Text string `json:"-"`
	// Matched says what took a stdin line: "step" (then MatchedStep is the
	// transcript line of the step), "control" (Claude's control layer),
	// "prompt" (read as the prompt), "ignored", "malformed", "unmatched",
	// "rejected" (an app-server request answered with an error),
	// "refused" (an app-server thread/resume of a thread the store does
	// not hold), "resumed" (thread/resume of the thread the app-server
	// runs)
	// or "unread" (still unread when the process ended).
	Matched     string `json:"-"`
	MatchedStep int    `json:"-"`

	Signal string `json:"signal,omitempty"`
	Action string `json:"action,omitempty"`

	Fault  string            `json:"fault,omitempty"`
	Params map[string]string `json:"params,omitempty"`
	Detail string            `json:"detail,omitempty"`

	// Bytes is how many bytes an out or err record wrote; Step the
	// transcript line of the step (its "line" field; 0 for a line the fake
	// synthesized, such as an interrupt's result).
	Bytes int `json:"bytes,omitempty"`
	Step  int `json:"-"`

	// Code is the exit status of an exit record that has one.
	Code *int `json:"code,omitempty"`

	// RequestID, ToolUseID and Decision are a permission record's: the
	// can_use_tool request a client answered, its tool, and what the CLI
	// made of the answer ("allow", "deny", "interrupt", or "refused" for
	// an answer the CLI does not accept; Message then holds its reason,
	// or a deny's message).
	RequestID string `json:"request_id,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	Decision  string `json:"decision,omitempty"`
}

// UnmarshalJSON decodes a record, sorting out "line" (a string on stdin
// records, a step's line number on out and err records) and "matched" (a
// step's line number or a word).
func (o *Observation) UnmarshalJSON(b []byte) error {
	type plain Observation
	var aux struct {
		*plain
		Line    json.RawMessage `json:"line"`
		Matched json.RawMessage `json:"matched"`
	}
	aux.plain = (*plain)(o)
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if len(aux.Line) > 0 {
		if aux.Line[0] == '"' {
			if err := json.Unmarshal(aux.Line, &o.Text); err != nil {
				return fmt.Errorf("observation line: %w", err)
			}
		} else if err := json.Unmarshal(aux.Line, &o.Step); err != nil {
			return fmt.Errorf("observation line: %w", err)
		}
	}
	if len(aux.Matched) > 0 {
		if aux.Matched[0] == '"' {
			if err := json.Unmarshal(aux.Matched, &o.Matched); err != nil {
				return fmt.Errorf("observation matched: %w", err)
			}
		} else {
			if err := json.Unmarshal(aux.Matched, &o.MatchedStep); err != nil {
				return fmt.Errorf("observation matched: %w", err)
			}
			o.Matched = "step"
		}
	}
	return nil
}

// ReadObservations parses an observation log. A torn last line (a process
// killed mid-write) is skipped; any other undecodable line is an error.
func ReadObservations(r io.Reader) ([]Observation, error) {
	var out []Observation
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if t := bytes.TrimSpace(line); len(t) > 0 {
				var o Observation
				if uerr := json.Unmarshal(t, &o); uerr != nil {
					return out, fmt.Errorf("observation log line %d: %w", n, uerr)
				}
				out = append(out, o)
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("reading the observation log: %w", err)
		}
	}
}

// adapterEnv are the environment variables whose presence the start record
// reports (names only, never values): those an adapter sets or should
// think about when it starts a CLI.
var adapterEnv = []string{
	// Claude Code and its SDKs.
	"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_AGENT_SDK_VERSION", "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK",
	"CLAUDE_CODE_STREAM_CLOSE_TIMEOUT", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "CLAUDE_CODE_USE_BEDROCK",
	"CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY",
	"ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "MAX_THINKING_TOKENS", "IS_SANDBOX",
	"CLAUDE_CODE_BUBBLEWRAP", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS",
	"DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER", "DISABLE_ERROR_REPORTING",
	// Codex.
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY", "CODEX_HOME", "CODEX_INTERNAL_ORIGINATOR_OVERRIDE",
	"CODEX_SANDBOX", "RUST_LOG",
	// Gemini.
	"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GOOGLE_CLOUD_PROJECT",
	"GOOGLE_CLOUD_LOCATION", "GOOGLE_GEMINI_BASE_URL", "GEMINI_CLI_NO_RELAUNCH", "GEMINI_MODEL", "GEMINI_SANDBOX",
	"GEMINI_SYSTEM_MD",
	// Process environment.
	"HOME", "PATH", "PWD", "TMPDIR", "LANG", "TERM", "NO_COLOR", "FORCE_COLOR", "CI", "NODE_OPTIONS",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
}

// logStart writes the start record, then sits out the start_delay fault.
func (p *proc) logStart(transcriptName string) {
	if p.obs == nil {
		return
	}
	var env []string
	for _, k := range adapterEnv {
		if p.env(k) != "" {
			env = append(env, k)
		}
	}
	cwd, _ := os.Getwd()
	argv := append([]string{p.cli}, p.args...)
	p.obs.log("start", "cli", p.cli, "argv", argv, "env", env, "cwd", cwd, "transcript", transcriptName, "stdin_tty", p.stdinTTY, "ppid", os.Getppid())
	// From here the process is in the log: a slow start (start_delay)
	// passes now, so that a process killed while it loads is seen.
	p.startDelay()
}
