package realcli

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// What the wrapper reads of the real CLI's output, so that its log says
// what a fake's says of the same run: the session a process runs its turn
// in, and an invocation the CLI refused (its flags, or the session it was
// asked to resume). The words are the CLIs' own, as the fakes write them
// (fakecli/flags_*.go, fakecli/sessions.go, each citing the captures).

// sessionOf returns the session (thread) id a stream line of cli
// announces, or "": Claude's system/init, Codex's thread.started,
// Gemini's init.
func sessionOf(cli string, line []byte) string {
	var key, typ []byte
	switch cli {
	case "claude":
		typ, key = []byte(`"subtype":"init"`), []byte(`"type":"system"`)
	case "codex":
		typ, key = []byte(`"type":"thread.started"`), nil
	case "gemini":
		typ, key = []byte(`"type":"init"`), nil
	}
	if len(line) > 1<<20 || !bytes.Contains(line, typ) || key != nil && !bytes.Contains(line, key) {
		return ""
	}
	var ev struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		SessionID string `json:"session_id"`
		ThreadID  string `json:"thread_id"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &ev) != nil {
		return ""
	}
	switch {
	case cli == "claude" && ev.Type == "system" && ev.Subtype == "init":
		return ev.SessionID
	case cli == "codex" && ev.Type == "thread.started":
		return ev.ThreadID
	case cli == "gemini" && ev.Type == "init":
		return ev.SessionID
	}
	return ""
}

// resumeAsked returns the session id an invocation of cli asks to
// resume ("" for none): claude --resume/-r ID, codex exec resume ID,
// gemini --resume/-r ID.
func resumeAsked(cli string, args []string) string {
	for i, a := range args {
		switch cli {
		case "claude", "gemini":
			if v, ok := strings.CutPrefix(a, "--resume="); ok {
				return v
			}
			if (a == "--resume" || a == "-r") && i+1 < len(args) {
				return args[i+1]
			}
		case "codex":
			if a == "resume" && i > 0 {
				for _, b := range args[i+1:] {
					if !strings.HasPrefix(b, "-") {
						return b
					}
				}
			}
		}
	}
	return ""
}

// record is one observation record to log: its kind and fields.
type record struct {
	kind string
	kv   []any
}

// The real CLIs' words for a session they refuse.
var (
	claudeNoConversation = regexp.MustCompile(`No conversation found with session ID: (\S+)`)
	claudeInUse          = regexp.MustCompile(`Error: Session ID (\S+) is already in use\.`)
	codexNoRollout       = regexp.MustCompile(`no rollout found for thread id (\S+)`)
	geminiNoSession      = regexp.MustCompile(`Error resuming session: (No previous sessions found|Invalid session identifier "([^"]*)")`)
)

// refusals returns the records that say why a CLI that exited with code
// (not 0) refused its invocation: a session_error for a session it could
// not resume or create, a flags_error for arguments its grammar rejects.
// None when the CLI ran and failed otherwise.
func refusals(cli string, args []string, code int, s *summary) []record {
	tail := s.StderrTail
	sessionErr := func(reason, id, msg string) []record {
		return []record{{"session_error", []any{"message", msg, "exit_code", code, "session", id, "reason", reason}}}
	}
	switch cli {
	case "claude":
		if m := claudeNoConversation.FindStringSubmatch(tail); m != nil {
			return sessionErr("not_found", m[1], m[0])
		}
		if m := claudeInUse.FindStringSubmatch(tail); m != nil {
			return sessionErr("in_use", m[1], m[0])
		}
	case "codex":
		if m := codexNoRollout.FindStringSubmatch(tail); m != nil {
			return sessionErr("not_found", m[1], lineOf(tail, m[0]))
		}
	case "gemini":
		if m := geminiNoSession.FindStringSubmatch(tail); m != nil {
			return sessionErr("not_found", resumeAsked(cli, args), m[0])
		}
	}
	if s.StdoutLines > 0 {
		return nil // it ran (and failed otherwise)
	}
	if msg := flagsError(cli, code, tail); msg != "" {
		return []record{{"flags_error", []any{"message", msg, "exit_code", code}}}
	}
	return nil
}

// flagsError returns the line in which cli rejects its arguments, or "":
// commander's "error: ..." and Claude's own "Error: ... requires ..."
// (exit 1), clap's "error: ..." (Codex, exit 2), yargs' "Unknown
// argument", "Not enough arguments following", "Invalid values"
// (Gemini, exit 1).
func flagsError(cli string, code int, tail string) string {
	for _, l := range strings.Split(tail, "\n") {
		l = strings.TrimSpace(l)
		switch cli {
		case "claude":
			if code == 1 && (strings.HasPrefix(l, "error: ") || strings.HasPrefix(l, "Error: ")) {
				return l
			}
		case "codex":
			if code == 2 && strings.HasPrefix(l, "error: ") {
				return l
			}
		case "gemini":
			for _, p := range []string{"Unknown argument", "Not enough arguments following", "Invalid values", "Missing required argument"} {
				if strings.HasPrefix(l, p) {
					return l
				}
			}
		}
	}
	return ""
}

// lineOf returns the line of text holding sub.
func lineOf(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return sub
}

// resumeWatch follows a JSON-RPC client's thread/resume requests to codex
// app-server and the server's answers, so that a thread the server
// refuses is logged as a fake logs it: a session_error ("no rollout found
// for thread id X", or an id that is no thread id at all).
type resumeWatch struct {
	mu      sync.Mutex
	pending map[string]string // request id -> the thread asked for
}

// client notes a line the client sent.
func (w *resumeWatch) client(line []byte) {
	if !bytes.Contains(line, []byte(`"thread/resume"`)) || len(line) > 1<<20 {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ThreadID string `json:"threadId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "thread/resume" || len(m.ID) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		w.pending = map[string]string{}
	}
	w.pending[string(m.ID)] = m.Params.ThreadID
}

// server returns the session_error a line the server sent reports, if it
// refuses a thread/resume.
func (w *resumeWatch) server(line []byte) []record {
	w.mu.Lock()
	n := len(w.pending)
	w.mu.Unlock()
	if n == 0 || !bytes.Contains(line, []byte(`"error"`)) || len(line) > 1<<20 {
		return nil
	}
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil || m.Error == nil {
		return nil
	}
	w.mu.Lock()
	thread, ok := w.pending[string(m.ID)]
	delete(w.pending, string(m.ID))
	w.mu.Unlock()
	if !ok {
		return nil
	}
	return []record{{"session_error", []any{"message", m.Error.Message, "session", thread, "reason", "not_found"}}}
}

// codexTextSession is the line in which Codex, asked for human-readable
// output (exec without --json), names its thread on stderr.
var codexTextSession = regexp.MustCompile(`(?m)^session id: ([0-9a-fA-F-]{36})\s*$`)

// stderrSession returns the session a CLI's stderr so far announces:
// Codex's "session id: X" header of exec without --json; "" for none.
func stderrSession(cli string, stderr []byte) string {
	if cli != "codex" {
		return ""
	}
	if m := codexTextSession.FindSubmatch(stderr); m != nil {
		return string(m[1])
	}
	return ""
}
