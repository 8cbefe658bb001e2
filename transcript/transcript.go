// Package transcript defines agentconform's cassette format: one recorded
// interaction with a CLI, both directions, with timing. A transcript is a
// JSONL file: a header line, then one step per line (a stdout line to write,
// a stdin line to wait for, a delay, what a signal does from here on, the
// end). The fake CLIs replay transcripts; the recorder writes them; the
// fixtures are transcripts.
//
// Plain stdout captures (what `claude -p ... > log.jsonl` gives) and the
// dir/t_ms/line capture files in testdata/captures load too: see Load.
package transcript

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Format is the value of the header's "transcript" field.
const Format = "agentconform/v1"

// Header is the first line of a transcript.
type Header struct {
	// Format is always "agentconform/v1".
	Format string `json:"transcript"`
	// CLI is "claude", "codex" or "gemini".
	CLI string `json:"cli"`
	// CLIVersion is the version of the CLI that was recorded (or imitated).
	CLIVersion string `json:"cli_version"`
	// Scenario names what the transcript shows ("single-tool").
	Scenario string `json:"scenario,omitempty"`
	// Description says the same in a sentence.
	Description string `json:"description,omitempty"`
	// Argv is the recorded invocation, argv[0] first. Informative: the fakes
	// accept any invocation their CLI's flag grammar accepts.
	Argv []string `json:"argv,omitempty"`
	// Env lists the names (never the values) of the environment variables
	// the recorded client set.
	Env []string `json:"env,omitempty"`
	// Cwd is the working directory, usually the placeholder "<cwd>".
	Cwd string `json:"cwd,omitempty"`
	// SessionID is the session (Claude, Gemini) or thread (Codex) id the
	// transcript's events carry, so a fake can keep it for resume.
	SessionID string `json:"session_id,omitempty"`
	// Source says where the transcript came from: "captured" (a real CLI
	// against a mock model), "recorded" (agentconform record) or
	// "synthesized" (written by hand after docs/protocols).
	Source string `json:"source,omitempty"`
}

// Op names what a step does. Exactly one op key is set per step line.
type Op string

// The ops, one per step line.
const (
	// OpOut writes Text and a newline to stdout.
	OpOut Op = "out"
	// OpErr writes Text and a newline to stderr.
	OpErr Op = "err"
	// OpIn waits for the next stdin line and matches it: a JSON object
	// against Match (a subset match), or raw text against Text.
	OpIn Op = "in"
	// OpStdinEOF waits until stdin is closed.
	OpStdinEOF Op = "stdin_eof"
	// OpDelay sleeps for DelayMS (scaled by the replay timing). With Cases,
	// a stdin line that matches one of them during the sleep ends it and
	// the replay continues at that case's label (Capture stores values of
	// that line): the window in which a client may, but need not, send
	// something (Claude's control_request interrupt during a tool).
	OpDelay Op = "delay_ms"
	// OpLabel marks a place that Goto, Cases and OnSignal can jump to.
	OpLabel Op = "label"
	// OpGoto jumps to Label.
	OpGoto Op = "goto"
	// OpOnSignal sets what a signal does from this step on.
	OpOnSignal Op = "on_signal"
	// OpNextProcess ends one process's part of a multi-process transcript
	// (Codex and Gemini resume): the next process of the session replays
	// from the following step.
	OpNextProcess Op = "next_process"
	// OpExit ends the process with Code.
	OpExit Op = "exit"
	// OpExitSignal ends the process by killing itself with Signal.
	OpExitSignal Op = "exit_signal"
)

var ops = []Op{OpOut, OpErr, OpIn, OpStdinEOF, OpDelay, OpLabel, OpGoto, OpOnSignal, OpNextProcess, OpExit, OpExitSignal}

// Step is one line of a transcript after the header.
type Step struct {
	// Line is the step's 1-based line number in its file, and Offset the
	// byte offset of that line, for messages.
	Line   int   `json:"-"`
	Offset int64 `json:"-"`
	// Op is what the step does.
	Op Op `json:"-"`
	// T is the time of the step in milliseconds since the process started,
	// as recorded; nil when not recorded. Replay sleeps until T (scaled)
	// before the step, unless timing is "fast".
	T *int64 `json:"t,omitempty"`

	// Text is the line for OpOut and OpErr (without the newline), and the
	// expected raw line for OpIn on a text stdin. It may hold any bytes,
	// invalid UTF-8 included (fault injection does that).
	Text string `json:"-"`
	// NoNewline writes an OpOut or OpErr line without its terminating
	// newline ("newline": false in the file), as a CLI that dies mid-line does.
	// (A line that is not valid UTF-8 is stored base64-encoded with
	// "base64": true, so that every byte survives.)
	NoNewline bool `json:"-"`
	// Match is the expected JSON object for OpIn: every key it has must be
	// present with an equal value (recursively; strings may hold {{name}}
	// templates filled from captures).
	Match map[string]any `json:"-"`
	// Capture names values of the matched stdin object (by JSON pointer) to
	// fill {{name}} templates in later steps, e.g. {"req": "/request_id"}
	// (OpIn, and OpDelay with Cases).
	Capture map[string]string `json:"capture,omitempty"`
	// Cases choose where to go after an OpIn matched, by further matching
	// the same stdin object; the first case that matches wins, and no match
	// falls through to the next step. On OpDelay, a stdin line matching a
	// case during the delay jumps to it; without one the delay runs out and
	// the replay falls through.
	Cases []Case `json:"cases,omitempty"`
	// Optional makes OpIn skip itself when stdin is at EOF.
	Optional bool `json:"optional,omitempty"`
	// Recorded is, on an OpIn step of a recording, the stdin line the
	// recorded client sent, byte for byte ("recorded" in the file); on an
	// OpDelay step with Cases, the line that ended the delay when it was
	// recorded. It is informative: replay matches Match (or Text), which
	// keeps only what any client must send (a JSON-RPC request's method,
	// where the client picks the id); a validator reads both directions of
	// the session from it.
	Recorded string `json:"-"`

	// DelayMS is the delay of OpDelay.
	DelayMS int64 `json:"-"`
	// Label is the name of OpLabel and the target of OpGoto.
	Label string `json:"-"`
	// OnSignal maps signal names ("SIGINT", "SIGTERM") to actions:
	// "ignore", "exit:N", "die" (die by that signal), "goto:LABEL", or
	// "default" (the CLI's own behaviour, which the fake knows).
	OnSignal map[string]string `json:"-"`
	// Code is the exit status of OpExit.
	Code int `json:"-"`
	// Signal is the signal of OpExitSignal ("SIGTERM", "SIGKILL").
	Signal string `json:"-"`
}

// Case is one branch of an OpIn step.
type Case struct {
	// Match is a subset the stdin object must contain.
	Match map[string]any `json:"match"`
	// Goto is the label to continue at.
	Goto string `json:"goto"`
}

// Transcript is a parsed cassette.
type Transcript struct {
	Header Header
	Steps  []Step
	// Name is where the transcript came from (a file path or fixture name).
	Name string
}

// Processes splits the steps at OpNextProcess into the part each process of
// a multi-process session replays. A transcript without OpNextProcess is one
// process.
func (t *Transcript) Processes() [][]Step {
	var out [][]Step
	start := 0
	for i, s := range t.Steps {
		if s.Op == OpNextProcess {
			out = append(out, t.Steps[start:i])
			start = i + 1
		}
	}
	return append(out, t.Steps[start:])
}

// Labels maps every label to the index of its step within steps.
func Labels(steps []Step) map[string]int {
	m := map[string]int{}
	for i, s := range steps {
		if s.Op == OpLabel {
			m[s.Label] = i
		}
	}
	return m
}

// MarshalJSON writes a step as its transcript line.
func (s Step) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if s.T != nil {
		m["t"] = *s.T
	}
	switch s.Op {
	case OpOut, OpErr:
		if utf8.ValidString(s.Text) {
			m[string(s.Op)] = s.Text
		} else {
			// JSON strings hold only Unicode: keep the exact bytes.
			m[string(s.Op)] = base64.StdEncoding.EncodeToString([]byte(s.Text))
			m["base64"] = true
		}
		if s.NoNewline {
			m["newline"] = false
		}
	case OpIn:
		if s.Match != nil {
			m["in"] = s.Match
		} else {
			m["in"] = s.Text
		}
		if len(s.Capture) > 0 {
			m["capture"] = s.Capture
		}
		if len(s.Cases) > 0 {
			m["cases"] = s.Cases
		}
		if s.Optional {
			m["optional"] = true
		}
		if s.Recorded != "" {
			m["recorded"] = s.Recorded
		}
	case OpStdinEOF, OpNextProcess:
		m[string(s.Op)] = true
	case OpDelay:
		m["delay_ms"] = s.DelayMS
		if len(s.Capture) > 0 {
			m["capture"] = s.Capture
		}
		if len(s.Cases) > 0 {
			m["cases"] = s.Cases
		}
		if s.Recorded != "" {
			m["recorded"] = s.Recorded
		}
	case OpLabel:
		m["label"] = s.Label
	case OpGoto:
		m["goto"] = s.Label
	case OpOnSignal:
		m["on_signal"] = s.OnSignal
	case OpExit:
		m["exit"] = s.Code
	case OpExitSignal:
		m["exit_signal"] = s.Signal
	default:
		return nil, fmt.Errorf("transcript: step with unknown op %q", s.Op)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// signalActions are the OnSignal action forms, for validation messages.
const signalActions = `"ignore", "default", "die", "exit:N" or "goto:LABEL"`

// checkSignalAction validates one OnSignal action.
func checkSignalAction(a string) error {
	switch {
	case a == "ignore", a == "default", a == "die":
		return nil
	case strings.HasPrefix(a, "exit:"):
		var n int
		if _, err := fmt.Sscanf(a, "exit:%d", &n); err != nil || n < 0 || n > 255 {
			return fmt.Errorf("%q: exit status must be 0..255", a)
		}
		return nil
	case strings.HasPrefix(a, "goto:") && len(a) > 5:
		return nil
	}
	return fmt.Errorf("%q is not a signal action (want %s)", a, signalActions)
}

// knownSignals are the signals transcripts may name.
var knownSignals = map[string]bool{"SIGINT": true, "SIGTERM": true, "SIGHUP": true, "SIGKILL": true, "SIGQUIT": true, "SIGPIPE": true, "SIGUSR1": true, "SIGUSR2": true}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
