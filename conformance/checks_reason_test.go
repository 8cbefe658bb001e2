package conformance

import (
	"slices"
	"testing"
	"time"
)

// TestMainMessages checks that the forms of a CLI's error message a caller
// may show are found however a library formats them, in the messages the
// real CLIs write (captures and fixtures), and that a message about
// something else is not.
func TestMainMessages(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		maxTurns  bool
		shown     []string // what adapters show: each must count
		notShown  []string // none of these may count
	}{
		{name: "codex 400 with a JSON body",
			msg: `unexpected status 400 Bad Request: {"error":{"message":"Invalid 'input[0].content': string too long.","type":"invalid_request_error"}}`,
			shown: []string{
				`unexpected status 400 Bad Request: {"error":{"message":"Invalid 'input[0].content': string too long.","type":"invalid_request_error"}}`,
				"Error: Invalid 'input[0].content': string too long.",
				"Codex failed (unexpected status 400 Bad Request)",
			},
			notShown: []string{"codex exited with code 1", "Bad Request"}},
		{name: "codex 401 with its url",
			msg:      "unexpected status 401 Unauthorized: invalid x-api-key, url: http://127.0.0.1:35549/v1/responses",
			shown:    []string{"unexpected status 401 Unauthorized: invalid x-api-key", "UNEXPECTED STATUS 401 UNAUTHORIZED — INVALID X-API-KEY"},
			notShown: []string{"the turn failed"}},
		{name: "gemini API error around JSON",
			msg:      `[API Error: {"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}]`,
			shown:    []string{"Request contains an invalid argument", `{"message":"Request contains an invalid argument."}`},
			notShown: []string{"API Error"}},
		{name: "gemini 429 on two lines",
			msg:      "[API Error: rate limit exceeded (agentconform mock)]\nPlease wait and try again later.",
			shown:    []string{"rate limit exceeded (agentconform mock)", "[API Error: rate limit exceeded (agentconform mock)]"},
			notShown: []string{"Please wait"}},
		{name: "claude turn limit",
			msg: "Reached maximum number of turns (1)", maxTurns: true,
			shown:    []string{"Reached maximum number of turns (1)", "Error: Reached max turns (1)", "stopped: turn limit"},
			notShown: []string{"claude exited with code 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cands := mainMessages(tc.msg, tc.maxTurns)
			for _, s := range tc.shown {
				if !(errorText{foldText(s)}).holds(cands) {
					t.Errorf("%q does not count as the message (candidates %q)", s, cands)
				}
			}
			for _, s := range tc.notShown {
				if (errorText{foldText(s)}).holds(cands) {
					t.Errorf("%q counts as the message (candidates %q)", s, cands)
				}
			}
		})
	}
}

// TestTellsNotFound checks what counts as telling the user that the
// session to resume does not exist ("No conversation found with session
// ID: ID"): the id with words saying it was not found, in one string (the
// ACP agent's typed resourceNotFound); not the exit status, the id alone,
// nor a "not found" about something else.
func TestTellsNotFound(t *testing.T) {
	const id = "5e55104e-0000-4000-8000-0000000ee003"
	for _, tc := range []struct {
		text string
		want bool
	}{
		{`Resource not found: 5e55104e-0000-4000-8000-0000000ee003 ({"uri":"5e55104e-0000-4000-8000-0000000ee003"})`, true},
		{"No conversation found with session ID: " + id, true},
		{"Claude Code CLI exited with code 1", false},
		{"session " + id + " started", false},
		{"Resource not found: 11111111-2222-4333-8444-555555555555", false},
	} {
		if got := (errorText{foldText(tc.text)}).tellsNotFound(id); got != tc.want {
			t.Errorf("tellsNotFound(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	if (errorText{foldText("Resource not found"), foldText("session " + id)}).tellsNotFound(id) {
		t.Error("the id and \"not found\" in two unrelated strings told it")
	}
}

// TestTerminalSays checks how the CLIs' terminal events map onto the
// reason vocabulary (lines as the captures and the CLIs' sources have them).
func TestTerminalSays(t *testing.T) {
	for _, tc := range []struct {
		agent string
		obj   map[string]any
		said  string
		errs  []string
	}{
		{"claude", map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "hi"}, ReasonCompleted, nil},
		{"claude", map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "terminal_reason": "aborted_tools",
			"errors": []any{"[ede_diagnostic] result_type=user"}}, ReasonCancelled, nil},
		{"claude", map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "terminal_reason": "aborted_streaming"}, ReasonCancelled, nil},
		{"claude", map[string]any{"type": "result", "subtype": "error_max_turns", "is_error": true, "terminal_reason": "max_turns",
			"errors": []any{"Reached maximum number of turns (1)"}}, ReasonMaxTurns, []string{"Reached maximum number of turns (1)"}},
		{"claude", map[string]any{"type": "result", "subtype": "success", "is_error": true, "terminal_reason": "api_error",
			"result": "Not logged in · Please run /login"}, ReasonFailed, []string{"Not logged in · Please run /login"}},
		{"codex", map[string]any{"type": "turn.completed"}, ReasonCompleted, nil},
		{"codex", map[string]any{"type": "turn.failed", "error": map[string]any{"message": "boom"}}, ReasonFailed, []string{"boom"}},
		{"gemini", map[string]any{"type": "result", "status": "success"}, ReasonCompleted, nil},
		{"gemini", map[string]any{"type": "result", "status": "error", "error": map[string]any{"type": "FatalTurnLimitedError", "message": "Reached max session turns for this session."}},
			ReasonMaxTurns, []string{"Reached max session turns for this session."}},
		{"gemini", map[string]any{"type": "result", "status": "error", "error": map[string]any{"type": "FatalCancellationError", "message": "Operation cancelled."}}, ReasonCancelled, nil},
		{"gemini", map[string]any{"type": "result", "status": "error", "error": map[string]any{"type": "unknown", "message": "[API Error: x]"}}, ReasonFailed, []string{"[API Error: x]"}},
	} {
		said, errs := terminalSays(tc.agent, tc.obj)
		if said != tc.said || !slices.Equal(errs, tc.errs) {
			t.Errorf("%s %v: %q %q, want %q %q", tc.agent, tc.obj, said, errs, tc.said, tc.errs)
		}
	}
}

// TestAllowedReasons checks the reasons a failed turn may give, by what
// the CLI's stream shows and what the runner did.
func TestAllowedReasons(t *testing.T) {
	stream := &turnWire{format: formatStream}
	text := &turnWire{format: formatText}
	for _, tc := range []struct {
		name string
		f    turnFacts
		want []string
	}{
		{"API error", turnFacts{wire: stream, said: ReasonFailed}, []string{ReasonFailed}},
		{"turn limit", turnFacts{wire: stream, said: ReasonMaxTurns}, []string{ReasonMaxTurns}},
		{"aborted result", turnFacts{wire: stream, said: ReasonCancelled, interrupted: true}, []string{ReasonCancelled}},
		{"interrupted, no terminal event", turnFacts{wire: stream, interrupted: true}, []string{ReasonCancelled}},
		{"closed, no terminal event", turnFacts{wire: stream, closed: true}, []string{ReasonFailed, ReasonCancelled}},
		{"died", turnFacts{wire: stream}, []string{ReasonFailed}},
		{"no CLI ran", turnFacts{}, []string{ReasonFailed}},
		{"text output", turnFacts{wire: text}, []string{ReasonFailed, ReasonMaxTurns}},
		{"completed, then exit 3", turnFacts{wire: stream, said: ReasonCompleted}, []string{ReasonFailed}},
		{"completed though interrupted", turnFacts{wire: stream, said: ReasonCompleted, interrupted: true}, []string{ReasonFailed, ReasonCancelled}},
	} {
		if got := tc.f.allowedReasons(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestTurnFactsWindows checks that what the runner sent is given to the
// turn that ran then: between the previous turn_end and the turn's own.
func TestTurnFactsWindows(t *testing.T) {
	o := &Observation{Case: &Case{Agent: "codex"},
		Sent:    []Sent{{Op: "start", At: 0}, {Op: "interrupt", At: 2 * time.Second}, {Op: "send", At: 4 * time.Second}, {Op: "close", At: 7 * time.Second}},
		Records: []Record{{Kind: "hello"}, {Kind: "turn_end", At: 3 * time.Second}, {Kind: "turn_end", At: 6 * time.Second}, {Kind: "end", At: 8 * time.Second}}}
	if f := o.turnFacts(0); !f.interrupted || f.closed {
		t.Errorf("turn 1: interrupted %v, closed %v; want the interrupt only", f.interrupted, f.closed)
	}
	if f := o.turnFacts(1); f.interrupted || f.closed {
		t.Errorf("turn 2: interrupted %v, closed %v; want neither (close came after its turn_end)", f.interrupted, f.closed)
	}
	if f := o.turnFacts(2); !f.closed {
		t.Error("a turn with no turn_end: the close after the last one is its")
	}
}
