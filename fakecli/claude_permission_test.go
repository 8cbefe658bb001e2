//go:build unix

package fakecli_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

// answerCase is one way of answering the permission prompt, its capture
// from the real CLI, and what the CLI made of it.
type answerCase struct {
	scenario string
	// answers are the control_response lines the capture's driver wrote,
	// with ID for the request's id.
	answers []string
	// decision is what the fake must log; toolResult the start of the
	// tool's tool_result text the real CLI wrote ("" when the tool ran).
	decision, toolResult string
}

var answerCases = []answerCase{
	{"permission-allow-no-input", []string{`{"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{"behavior":"allow"}}}`},
		"allow", ""},
	{"permission-no-behavior", []string{`{"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{"updatedInput":{"command":"touch created.txt","description":"Run touch created.txt"}}}}`},
		"refused", "The canUseTool callback returned an invalid permission result."},
	{"permission-deny-no-message", []string{`{"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{"behavior":"deny"}}}`},
		"refused", "The canUseTool callback returned an invalid permission result."},
	{"permission-error-response", []string{`{"type":"control_response","response":{"subtype":"error","request_id":"ID","error":"the adapter failed"}}`},
		"refused", "Tool permission request failed: Error: the adapter failed"},
	{"permission-unknown-id", []string{
		`{"type":"control_response","response":{"subtype":"success","request_id":"req-unknown-1","response":{"behavior":"allow","updatedInput":{"command":"touch created.txt","description":"Run touch created.txt"}}}}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{"behavior":"allow","updatedInput":{"command":"touch created.txt","description":"Run touch created.txt"}}}}`},
		"allow", ""},
	{"permission-answered-twice", []string{
		`{"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{"behavior":"allow","updatedInput":{"command":"touch created.txt","description":"Run touch created.txt"}}}}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{"behavior":"allow","updatedInput":{"command":"touch created.txt","description":"Run touch created.txt"}}}}`},
		"allow", ""},
	{"permission-deny-interrupt", []string{`{"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{"behavior":"deny","message":"stop now","interrupt":true}}}`},
		"interrupt", "The user doesn't want to proceed with this tool use."},
}

// afterRequest is what the real CLI wrote after the can_use_tool request
// in a capture (its stdout lines up to the exit) and its exit status.
func afterRequest(t *testing.T, tr *transcript.Transcript) (lines []string, code int) {
	t.Helper()
	seen := false
	for _, s := range tr.Steps {
		switch s.Op {
		case transcript.OpOut:
			if seen {
				lines = append(lines, s.Text)
			}
			if strings.Contains(s.Text, `"subtype":"can_use_tool"`) {
				seen = true
			}
		case transcript.OpExit:
			if !seen {
				t.Fatalf("%s: no can_use_tool request", tr.Name)
			}
			return lines, s.Code
		}
	}
	t.Fatalf("%s: no exit", tr.Name)
	return nil, 0
}

// toolResultOf is the tool_result line among lines, its text, and the
// result line.
func toolResultOf(lines []string) (line, text, result string) {
	for _, l := range lines {
		switch kindOf(l) {
		case "user":
			if line == "" && strings.Contains(l, `"tool_result"`) {
				var m struct {
					Message struct {
						Content []struct {
							Content string `json:"content"`
						} `json:"content"`
					} `json:"message"`
				}
				json.Unmarshal([]byte(l), &m)
				line = l
				if len(m.Message.Content) > 0 {
					text = m.Message.Content[0].Content
				}
			}
		default:
			if strings.HasPrefix(kindOf(l), "result/") {
				result = l
			}
		}
	}
	return line, text, result
}

// denials is a result line's permission_denials, as JSON.
func denials(t *testing.T, result string) string {
	t.Helper()
	var m struct {
		D json.RawMessage `json:"permission_denials"`
	}
	if err := json.Unmarshal([]byte(result), &m); err != nil {
		t.Fatalf("result line: %v\n%s", err, result)
	}
	return string(m.D)
}

// TestClaudePermissionAnswersCaptured: the fake takes every answer to
// can_use_tool as Claude Code 2.1.331 does (the permission-* captures of
// malformed, doubled and misdirected answers): the same tool_result line
// (a refusal's reason, a deny's own message), the same kinds of lines up
// to the exit, the same permission_denials and exit status, and the
// decision in its observation log.
func TestClaudePermissionAnswersCaptured(t *testing.T) {
	for _, ac := range answerCases {
		t.Run(ac.scenario, func(t *testing.T) {
			capt := loadClaudeCapture(t, "2.1.331", ac.scenario)
			want, wantCode := afterRequest(t, capt)
			wantLine, wantText, wantResult := toolResultOf(want)
			if !strings.HasPrefix(wantText, ac.toolResult) || (ac.toolResult == "") != strings.Contains(wantText, "Bash completed") {
				t.Fatalf("capture: the tool_result says %q, want it to begin %q", wantText, ac.toolResult)
			}

			f := fakecli.Start(t, fakecli.Options{Fixture: "claude/permission-allow"})
			l := startFake(t, f, "claude", append(claudeStream, "--permission-prompt-tool", "stdio"), cmdOpts{})
			l.send(user("Create created.txt."))
			req := l.until("can_use_tool", func(ev map[string]any) bool {
				return ev["type"] == "control_request" && lookup(ev, "/request/subtype") == "can_use_tool"
			})
			for _, a := range ac.answers {
				l.send(strings.Replace(a, `"request_id":"ID"`, `"request_id":"`+req["request_id"].(string)+`"`, 1))
			}
			r, got := l.wait()
			gotLine, _, gotResult := toolResultOf(got)
			if shape(gotLine) != shape(wantLine) {
				t.Errorf("tool_result line:\n%s\nthe real CLI's:\n%s", gotLine, wantLine)
			}
			if g, w := kindsOf(got), kindsOf(want); g != w {
				t.Errorf("lines after the request: %s, the real CLI wrote %s", g, w)
			}
			if g, w := denials(t, gotResult), denials(t, wantResult); g != w {
				t.Errorf("permission_denials %s, the real CLI's %s", g, w)
			}
			if r.code != wantCode {
				t.Errorf("exit %d, the real CLI's %d", r.code, wantCode)
			}
			obs := observations(t, f)
			var decisions []string
			for _, o := range obs {
				if o.Kind == "permission" {
					decisions = append(decisions, o.Decision)
				}
			}
			if strings.Join(decisions, ",") != ac.decision {
				t.Errorf("permission records %v, want one %s", decisions, ac.decision)
			}
		})
	}
}

// TestClaudeDenyMessageCaptured: a deny's tool_result carries the client's
// message (the capture's driver denied with "denied by agentconform
// capture"); the fake writes the message its client sent, not the
// recorded one.
func TestClaudeDenyMessageCaptured(t *testing.T) {
	lines, _ := afterRequest(t, loadClaudeCapture(t, "2.1.331", "permission-deny"))
	if _, text, _ := toolResultOf(lines); text != "denied by agentconform capture" {
		t.Fatalf("capture: the deny's tool_result says %q", text)
	}
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/permission-allow"})
	l := startFake(t, f, "claude", append(claudeStream, "--permission-prompt-tool", "stdio"), cmdOpts{})
	l.send(user("Create created.txt."))
	req := l.until("can_use_tool", func(ev map[string]any) bool {
		return ev["type"] == "control_request" && lookup(ev, "/request/subtype") == "can_use_tool"
	})
	l.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + req["request_id"].(string) + `","response":{"behavior":"deny","message":"not \"today\""}}}`)
	_, got := l.wait()
	line, text, _ := toolResultOf(got)
	if text != `not "today"` || !strings.Contains(line, `"tool_use_result":"Error: not \"today\""`) || !strings.Contains(line, `"source":"user_reject"`) {
		t.Errorf("the deny's tool_result: %s", line)
	}
}

// TestClaudeAllowWithoutInputRefusedBefore2_1_329: Claude Code 2.1.197
// refuses an allow without updatedInput with a ZodError (captured:
// 2.1.197-permission-answers/permission-allow-no-input, -no-behavior, -deny-no-message);
// replaying the 2.1.197 fixture, the fake writes the same refusal over
// the allow path's tool_result and lists the call in the result's
// permission_denials. A complete allow still runs the tool.
func TestClaudeAllowWithoutInputRefusedBefore2_1_329(t *testing.T) {
	for _, ac := range answerCases[:3] {
		t.Run(ac.scenario, func(t *testing.T) {
			want, _ := afterRequest(t, loadClaudeCapture(t, "2.1.197-permission-answers", ac.scenario))
			wantLine, wantText, wantResult := toolResultOf(want)
			if !strings.HasPrefix(wantText, "Tool permission request failed: ZodError: [") {
				t.Fatalf("capture: the tool_result says %q", wantText)
			}
			f := fakecli.Start(t, fakecli.Options{Fixture: "claude/2.1.197/permission-allow"})
			l := startFake(t, f, "claude", append(claudeStream, "--permission-prompt-tool", "stdio"), cmdOpts{})
			l.send(user("Create created.txt."))
			req := l.until("can_use_tool", func(ev map[string]any) bool {
				return ev["type"] == "control_request" && lookup(ev, "/request/subtype") == "can_use_tool"
			})
			l.send(strings.Replace(ac.answers[0], `"request_id":"ID"`, `"request_id":"`+req["request_id"].(string)+`"`, 1))
			_, got := l.wait()
			gotLine, _, gotResult := toolResultOf(got)
			// The fixture's tool is another call (its own id and input).
			gotLine = strings.ReplaceAll(gotLine, jsonField(gotLine, "session_id"), "S")
			wantLine = strings.ReplaceAll(wantLine, jsonField(wantLine, "session_id"), "S")
			if g, w := blankToolID(shape(gotLine)), blankToolID(shape(wantLine)); g != w {
				t.Errorf("tool_result line:\n%s\nthe real CLI's:\n%s", g, w)
			}
			if denials(t, wantResult) == "[]" || denials(t, gotResult) == "[]" {
				t.Errorf("permission_denials: %s, the real CLI's %s", denials(t, gotResult), denials(t, wantResult))
			}
		})
	}
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/2.1.197/permission-allow"})
	l := startFake(t, f, "claude", append(claudeStream, "--permission-prompt-tool", "stdio"), cmdOpts{})
	l.send(user("Create created.txt."))
	req := l.until("can_use_tool", func(ev map[string]any) bool {
		return ev["type"] == "control_request" && lookup(ev, "/request/subtype") == "can_use_tool"
	})
	l.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + req["request_id"].(string) + `","response":{"behavior":"allow","updatedInput":{}}}}`)
	_, got := l.wait()
	if line, _, result := toolResultOf(got); strings.Contains(line, `"is_error":true`) || denials(t, result) != "[]" {
		t.Errorf("a complete allow: %s", line)
	}
}

// blankToolID blanks the tool_use ids of a line.
func blankToolID(s string) string {
	for _, key := range []string{`"tool_use_id":"`, `"id":"`} {
		var b strings.Builder
		for {
			i := strings.Index(s, key)
			if i < 0 {
				b.WriteString(s)
				break
			}
			j := strings.IndexByte(s[i+len(key):], '"')
			if j < 0 {
				b.WriteString(s)
				break
			}
			b.WriteString(s[:i+len(key)] + "-")
			s = s[i+len(key)+j:]
		}
		s = b.String()
	}
	return s
}

// kindsOf lists the kinds of lines, joined.
func kindsOf(lines []string) string {
	var k []string
	for _, l := range lines {
		k = append(k, kindOf(l))
	}
	return strings.Join(k, ",")
}

// observations reads a fake's observation log.
func observations(t *testing.T, f *fakecli.Fakes) []fakecli.Observation {
	t.Helper()
	fh, err := os.Open(f.ObserveLog)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	obs, err := fakecli.ReadObservations(fh)
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// TestClaudeControlRequestsCaptured: the client's own control lines are
// answered (or ignored) as Claude Code 2.1.331 does (captures
// control-requests and control-request-no-body): an unknown subtype and an
// unknown permission mode get errors, an idle interrupt its receipt, a
// response to a request never made and a line of an unknown type nothing;
// a control_request without its request member ends the CLI with exit 1
// and a line on stderr.
func TestClaudeControlRequestsCaptured(t *testing.T) {
	capt := loadClaudeCapture(t, "2.1.331", "control-requests")
	var want []string
	for _, s := range capt.Steps {
		if s.Op == transcript.OpOut && kindOf(s.Text) == "control_response" && !strings.Contains(s.Text, `"commands"`) {
			want = append(want, s.Text)
		}
	}
	if len(want) != 3 {
		t.Fatalf("capture: %d control responses besides initialize's, want 3", len(want))
	}
	preamble := []string{
		`{"type":"control_request","request_id":"req-bogus","request":{"subtype":"bogus_subtype"}}`,
		`{"type":"control_request","request_id":"req-mode","request":{"subtype":"set_permission_mode","mode":"nonsense"}}`,
		`{"type":"control_request","request_id":"req-int","request":{"subtype":"interrupt"}}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"never-asked","response":{}}}`,
		`{"type":"bogus_type","foo":1}`,
	}
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text"})
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(`{"type":"control_request","request_id":"req-init","request":{"subtype":"initialize","hooks":null}}`)
	for _, p := range preamble {
		l.send(p)
	}
	l.send(user("Say hello in one short sentence."))
	l.until("result", typeIs("result"))
	r, _ := l.wait()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if kindOf(line) == "control_response" && !strings.Contains(line, `"commands"`) {
			got = append(got, line)
		}
	}
	for i, id := range []string{"req-bogus", "req-mode", "req-int"} {
		want[i] = strings.Replace(want[i], "{{req"+string(rune('2'+i))+"}}", id, 1)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("control responses:\n%s\nthe real CLI's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.code != 0 {
		t.Errorf("exit %d", r.code)
	}

	noBody := loadClaudeCapture(t, "2.1.331", "control-request-no-body")
	wantErr, wantCode := "", -1
	for _, s := range noBody.Steps {
		switch s.Op {
		case transcript.OpErr:
			wantErr = s.Text
		case transcript.OpExit:
			wantCode = s.Code
		}
	}
	l = startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(`{"type":"control_request","request_id":"req-init","request":{"subtype":"initialize","hooks":null}}`)
	l.send(`{"type":"control_request","request_id":"req-empty"}`)
	l.send(user("Say hello in one short sentence."))
	r, _ = l.wait()
	if r.code != wantCode || !strings.Contains(r.stderr, wantErr+"\n") || strings.Contains(r.stdout, `"type":"result"`) {
		t.Errorf("a control_request without request: exit %d, stderr %q, stdout:\n%s\nthe real CLI: exit %d, %q", r.code, r.stderr, r.stdout, wantCode, wantErr)
	}
}
