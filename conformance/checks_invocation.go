package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/fakecli"
)

// The invocation family.
var (
	CheckFlags = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/flags", "MUST",
		"Every CLI invocation is accepted by the real CLI's flag grammar.", srcInvocation),
		Applies: always, Judge: judgeFlags})
	CheckStdinEOF = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/stdin-closed", "MUST",
		"Codex and Gemini get their stdin closed: they read it to EOF before they start (except codex exec resume with a prompt argument, which reads no stdin).", srcCodexInv+"; "+srcGeminiStdin),
		Applies: agentIs("codex", "gemini"), Judge: judgeStdinClosed})
	CheckClaudeStdin = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/claude-stdin", "MUST",
		"A single-turn Claude run closes stdin after the result; a multi-turn run keeps one process and its stdin open until the last result.", srcClaudeStdin),
		Applies: func(c *Case, h *Hello) (bool, string) {
			if c.Agent != "claude" || !normalCase(c) {
				return false, "applies to Claude cases the CLI completes"
			}
			return true, ""
		}, Judge: judgeClaudeStdin})
	CheckMaxTurns = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/max-turns", "MUST",
		"When the caller sets a turn limit, every Claude invocation that runs a turn carries it (--max-turns N): the CLI stops a turn at a limit only when asked for one.", srcClaudeMaxTurns),
		Applies: func(c *Case, h *Hello) (bool, string) {
			if c.MaxTurns <= 0 || c.Agent != "claude" {
				return false, "applies to Claude cases with a turn limit"
			}
			return true, ""
		}, Judge: judgeMaxTurns})
	CheckResume = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/resume-id", "MUST",
		"A resumed turn passes the session id from system/init, thread.started or init.", srcResume),
		Applies: needs("multi_turn", multiTurn), Judge: judgeResume})
)

func judgeFlags(o *Observation) Outcome {
	var bad []string
	for _, r := range o.Fake {
		if r.Kind == "flags_error" {
			bad = append(bad, fmt.Sprintf("%s: %s (exit %d)", strings.Join(argvOf(o, r.PID), " "), r.Message, r.ExitCode))
		}
	}
	if len(bad) > 0 {
		return failf("argv the real CLI accepts", "%s", strings.Join(bad, "\n"))
	}
	if len(o.FakeStarts()) == 0 {
		return failf("at least one CLI invocation", "the adapter never started the %s CLI", o.Case.Agent)
	}
	return pass()
}

func argvOf(o *Observation, pid int) []string {
	for _, r := range o.Fake {
		if r.PID == pid && r.Kind == "start" {
			return r.Argv
		}
	}
	return nil
}

func judgeStdinClosed(o *Observation) Outcome {
	closed, rejected, stopped := map[int]bool{}, map[int]bool{}, map[int]bool{}
	for _, r := range o.Fake {
		switch {
		case r.Kind == "stdin_closed", r.Kind == "stdin_unread", r.Kind == "stdin_closed_unread":
			// stdin_unread: a CLI that reads no stdin (codex exec resume
			// with a prompt) does not wait for its EOF.
			// stdin_closed_unread: the adapter closed it in time, and a
			// real CLI ended before it read to the end (it was stopped
			// while it was loading; realcli).
			closed[r.PID] = true
		case r.Kind == "flags_error":
			rejected[r.PID] = true
		case r.Kind == "signal", r.Kind == "exit" && r.Action == killedOutright:
			// The adapter stopped the CLI (a signal, a kill) before
			// it closed stdin: nothing was waiting on stdin any more.
			stopped[r.PID] = true
		}
	}
	wrote := map[int]bool{}
	for _, w := range o.Wire {
		wrote[w.PID] = len(w.Bytes) > 0
	}
	for _, s := range o.FakeStarts() {
		if s.StdinTTY || rejected[s.PID] || formatOf(o.Case.Agent, s.Argv) == formatNone {
			// A CLI that rejects its arguments exits before it reads
			// stdin (invocation/flags reports that); --version reads
			// none.
			continue
		}
		if stopped[s.PID] && wrote[s.PID] {
			// The adapter stopped a CLI that was running its turn: it
			// was not waiting on stdin.
			continue
		}
		if !wrote[s.PID] && strings.Contains(o.Case.Faults, "start_delay") {
			continue // still loading when it was stopped: it read nothing yet
		}
		if o.Case.Agent == "codex" && !codexReadsStdin(s.Argv) {
			continue // exec resume with a prompt reads no stdin
		}
		if !closed[s.PID] {
			return failf("stdin closed (EOF) for every CLI process", "%s (pid %d) never saw stdin close: the real CLI waits for EOF before it starts, and hangs", strings.Join(s.Argv, " "), s.PID)
		}
	}
	return pass()
}

func judgeClaudeStdin(o *Observation) Outcome {
	var starts []fakecli.Observation
	for _, s := range o.FakeStarts() {
		if formatOf(o.Case.Agent, s.Argv) != formatNone {
			starts = append(starts, s)
		}
	}
	if len(starts) == 0 {
		return failf("a Claude process", "none was started")
	}
	if multiTurn(o.Case) && len(starts) > 1 {
		return Outcome{Info: true, Actual: fmt.Sprintf("the adapter ran %d turns in %d processes (resume) instead of keeping one process", len(o.Case.Prompts), len(starts))}
	}
	for _, s := range starts {
		closedAt, lastOut := int64(-1), int64(-1)
		for _, r := range o.Fake {
			if r.PID != s.PID {
				continue
			}
			switch r.Kind {
			case "stdin_closed":
				closedAt = r.TMS
			case "out":
				lastOut = r.TMS
			}
		}
		if closedAt < 0 && !o.Case.Expect.Stall {
			if exitedBySignal(o, s.PID) {
				return failf("stdin closed after the last result", "stdin was never closed; the CLI was stopped by a signal instead")
			}
			// The CLI handles SIGTERM and SIGINT and exits with a status
			// (143, 130): stopped by a signal all the same.
			if sig := signalled(o, s.PID); sig != "" {
				return failf("stdin closed after the last result", "stdin was never closed; the CLI was stopped by %s instead", sig)
			}
		}
		if closedAt >= 0 && closedAt < lastOut && multiTurn(o.Case) {
			return failf("stdin open until the last result", "stdin closed at %d ms, before the CLI's last output at %d ms", closedAt, lastOut)
		}
	}
	return pass()
}

// signalled returns the first signal the log shows pid received, "" if
// none.
func signalled(o *Observation, pid int) string {
	for _, r := range o.Fake {
		if r.PID == pid && r.Kind == "signal" {
			return r.Signal
		}
	}
	return ""
}

// exitedBySignal reports whether the case's log shows pid ended by a
// signal (settle gives every fake an exit record, SIGKILL included).
func exitedBySignal(o *Observation, pid int) bool {
	for _, r := range o.Fake {
		if r.PID == pid && r.Kind == "exit" {
			return r.Signal != ""
		}
	}
	return false
}

func judgeResume(o *Observation) Outcome {
	if o.Case.Expect.UnknownSession {
		return Outcome{Skip: true, Actual: "the CLI refused the session the first turn asked for: it announced none to pass on (lifecycle/next-turn judges the turn after)"}
	}
	starts := o.turnStarts()
	if len(starts) < 2 {
		return pass() // one process served every turn (Claude)
	}
	turns := o.cliTurns()
	if len(turns) == 0 || turns[0].format != formatStream {
		return Outcome{Skip: true, Actual: "the first turn ran without a JSON stream: no session id to read"}
	}
	id := sessionID(turns[0].lines)
	if id == "" {
		return Outcome{Info: true, Actual: "the first process announced no session id"}
	}
	for _, s := range starts[1:] {
		argv := strings.Join(s.Argv, " ")
		if !strings.Contains(argv, id) {
			return failf("the resumed invocation passes "+id, "%s", argv)
		}
	}
	return pass()
}

// CheckPrompt: the caller's prompt reaches the CLI as the caller wrote it.
var CheckPrompt = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/prompt", "MUST",
	"The caller's first prompt reaches the CLI unchanged (white space aside): as an argument, as stdin, or as the text of a stream-json user message; never wrapped (\"Human: ...\") or cut.", srcPrompt),
	Applies: always, Judge: judgePrompt})

func judgePrompt(o *Observation) Outcome {
	prompts := sentPrompts(o)
	if len(prompts) == 0 || prompts[0] == "" {
		return Outcome{Skip: true, Actual: "no prompt was sent"}
	}
	want := normText(prompts[0])
	starts := o.turnStarts()
	if len(starts) == 0 {
		return Outcome{Skip: true, Actual: "no CLI process ran a turn"}
	}
	pid := starts[0].PID
	var seen []string
	check := func(s string) bool {
		if s = normText(s); s == "" {
			return false
		}
		seen = append(seen, s)
		return s == want
	}
	for _, a := range starts[0].Argv[1:] {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") && check(v) {
			return pass()
		}
		if check(a) {
			return pass()
		}
	}
	var text []string
	users := 0
	for _, s := range o.stdinLines() {
		if s.rec.PID != pid {
			continue
		}
		text = append(text, s.rec.Text)
		if s.obj != nil && s.obj["type"] == "user" {
			users++
			if check(userText(s.obj)) {
				return pass()
			}
		}
	}
	if users == 0 && streamJSONInput(o) {
		// stream-json input carries the prompt in a user message; control
		// requests (initialize) come first, and a CLI that died before
		// the user message shows nothing of the prompt.
		return Outcome{Skip: true, Actual: "no user message reached the CLI before it ended"}
	}
	if check(strings.Join(text, "\n")) {
		return pass()
	}
	if len(text) == 0 {
		for _, r := range o.Fake {
			if r.PID == pid && (r.Kind == "flags_error" || r.Kind == "session_error" || r.Kind == "exit" && r.Signal != "") {
				// It refused its arguments or its session, or died,
				// before it read stdin: what the prompt was cannot be
				// seen.
				return Outcome{Skip: true, Actual: "the CLI ended before it read its stdin"}
			}
		}
	}
	got := "nothing that looks like it"
	for _, s := range seen {
		if strings.Contains(s, want) || strings.Contains(want, s) && len(s) > 8 {
			got = strconv.Quote(clip(s, 300))
			break
		}
	}
	return failf("the prompt "+strconv.Quote(clip(prompts[0], 200))+" as the CLI's prompt", "the CLI got %s", got)
}

// userText returns the text of a stream-json user message: its content
// string, or its text blocks joined.
func userText(obj map[string]any) string {
	msg, _ := obj["message"].(map[string]any)
	switch c := msg["content"].(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, bl := range c {
			if m, ok := bl.(map[string]any); ok && m["type"] == "text" {
				b.WriteString(str(m, "text"))
			}
		}
		return b.String()
	}
	return ""
}

// sentPrompts are the prompts the runner sent the adapter (start and
// send commands), in order.
func sentPrompts(o *Observation) []string {
	var out []string
	for _, s := range o.Sent {
		if s.Op == "start" || s.Op == "send" {
			var m map[string]any
			json.Unmarshal([]byte(s.Line), &m)
			p, _ := m["prompt"].(string)
			out = append(out, p)
		}
	}
	return out
}

// judgeMaxTurns checks that every Claude process running a turn was given
// the case's turn limit.
func judgeMaxTurns(o *Observation) Outcome {
	want := strconv.Itoa(o.Case.MaxTurns)
	n := 0
	for _, s := range o.FakeStarts() {
		if formatOf(o.Case.Agent, s.Argv) == formatNone {
			continue
		}
		n++
		got := ""
		for i, a := range s.Argv {
			if v, ok := strings.CutPrefix(a, "--max-turns="); ok {
				got = v
			} else if a == "--max-turns" && i+1 < len(s.Argv) {
				got = s.Argv[i+1]
			}
		}
		if got != want {
			how := "no --max-turns"
			if got != "" {
				how = "--max-turns " + got
			}
			return failf("--max-turns "+want+" on every Claude invocation (the caller's limit)", "%s in %s: the CLI runs on past the caller's limit", how, strings.Join(s.Argv, " "))
		}
	}
	if n == 0 {
		return Outcome{Skip: true, Actual: "no Claude process ran a turn"}
	}
	return pass()
}
