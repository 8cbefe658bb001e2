//go:build unix

package fakecli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// TestOutputFormats checks the non-stream output formats derived from a
// stream transcript: Claude text (the result text) and json (the result
// object), Gemini text (the assistant's chunks) and json (one object),
// and Claude's --replay-user-messages echo.
func TestOutputFormats(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text"})
	fx, err := loadFixture("claude/plain-text")
	if err != nil {
		t.Fatal(err)
	}
	var result string
	for _, st := range fx.Steps {
		if jsonField(st.Text, "type") == "result" {
			result = st.Text
		}
	}
	text := runFake(t, f, "claude", []string{"-p", "hello"}, cmdOpts{})
	if text.code != 0 || text.stdout != jsonField(result, "result")+"\n" {
		t.Errorf("claude text: exit %d, stdout %q", text.code, text.stdout)
	}
	js := runFake(t, f, "claude", []string{"-p", "hello", "--output-format", "json"}, cmdOpts{})
	if js.code != 0 || js.stdout != result+"\n" {
		t.Errorf("claude json: exit %d, stdout %q", js.code, js.stdout)
	}
	verbose := runFake(t, f, "claude", []string{"-p", "hello", "--output-format", "json", "--verbose"}, cmdOpts{})
	var all []map[string]any
	if err := json.Unmarshal([]byte(verbose.stdout), &all); err != nil || len(all) < 2 {
		t.Errorf("claude json --verbose: %v, %d messages", err, len(all))
	}

	l := startFake(t, f, "claude", append(claudeStream, "--replay-user-messages"), cmdOpts{})
	l.send(user("echo me"))
	l.until("system/init", typeIs("system", "init"))
	ev := l.nextEvent()
	if ev["type"] != "user" || ev["isReplay"] != true || lookup(ev, "/message/content") != "echo me" {
		t.Errorf("replayed user message: %v", ev)
	}
	l.wait()

	g := fakecli.Start(t, fakecli.Options{Fixture: "gemini/plain-text"})
	gt := runFake(t, g, "gemini", []string{"-p", "hi"}, cmdOpts{})
	if gt.code != 0 || gt.stdout != "Hello! How can I help you today?\n" || strings.Contains(gt.stdout, "{") {
		t.Errorf("gemini text: exit %d, stdout %q", gt.code, gt.stdout)
	}
	gj := runFake(t, g, "gemini", []string{"-p", "hi", "-o", "json"}, cmdOpts{})
	var obj map[string]any
	if err := json.Unmarshal([]byte(gj.stdout), &obj); err != nil || obj["response"] != strings.TrimSuffix(gt.stdout, "\n") || obj["stats"] == nil {
		t.Errorf("gemini json: %v, %q", err, gj.stdout)
	}
}

// TestClaudePartialMessages: stream_event lines (and the "requesting"
// status) are written only with --include-partial-messages.
func TestClaudePartialMessages(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/partial-messages"})
	p := []string{"-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "hi"}
	with := runFake(t, f, "claude", append(p, "--include-partial-messages"), cmdOpts{env: []string{"IS_SANDBOX=1"}})
	without := runFake(t, f, "claude", p, cmdOpts{env: []string{"IS_SANDBOX=1"}})
	if with.code != 0 || without.code != 0 {
		t.Fatalf("exit %d and %d", with.code, without.code)
	}
	if !strings.Contains(with.stdout, `"type":"stream_event"`) {
		t.Fatal("the fixture has no stream_event lines")
	}
	if strings.Contains(without.stdout, `"type":"stream_event"`) || strings.Contains(without.stdout, `"status":"requesting"`) {
		t.Error("partial messages written without --include-partial-messages")
	}
	if !strings.Contains(without.stdout, `"type":"result"`) || strings.Count(without.stdout, "\n") >= strings.Count(with.stdout, "\n") {
		t.Errorf("without partial messages:\n%s", without.stdout)
	}
}
