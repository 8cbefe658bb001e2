//go:build unix

package fakecli_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

// asClient drives a fake `codex app-server` as an editor does.
type asClient struct {
	t      *testing.T
	l      *live
	thread string
}

func startAppServer(t *testing.T, fixture string, env ...string) *asClient {
	t.Helper()
	f := fakecli.Start(t, fakecli.Options{Fixture: fixture})
	return &asClient{t: t, l: startFake(t, f, "codex", []string{"app-server"}, cmdOpts{env: env})}
}

// method returns a line's method ("" for a response).
func method(ev map[string]any) string { s, _ := ev["method"].(string); return s }

// untilMethod reads lines until one has the method.
func (c *asClient) untilMethod(m string) map[string]any {
	c.t.Helper()
	return c.l.until(m, func(ev map[string]any) bool { return method(ev) == m })
}

// untilID reads lines until the response to id (its JSON text).
func (c *asClient) untilID(id string) map[string]any {
	c.t.Helper()
	return c.l.until("the answer to "+id, func(ev map[string]any) bool {
		return method(ev) == "" && ev["id"] != nil && jsonValue(c.t, ev["id"]) == id
	})
}

// jsonValue is v's JSON text.
func jsonValue(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// handshake initializes, starts a thread and a turn.
func (c *asClient) handshake(turnPolicy string) {
	c.t.Helper()
	c.l.send(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`)
	r := c.untilID("1")
	if ua, _ := lookup(r, "/result/userAgent").(string); !strings.HasPrefix(ua, "t/0.169.0 (") || !strings.HasSuffix(ua, " (t; 1)") {
		c.t.Fatalf("initialize: the userAgent does not echo the clientInfo: %v", r)
	}
	c.l.send(`{"method":"initialized"}`)
	c.l.send(`{"id":"th","method":"thread/start","params":{"cwd":"/home/user/project"}}`)
	r = c.untilID(`"th"`)
	thread, _ := lookup(r, "/result/thread/id").(string)
	if thread == "" {
		c.t.Fatalf("thread/start: %v", r)
	}
	c.thread = thread
	c.l.send(`{"id":2,"method":"turn/start","params":{"threadId":"` + thread + `","input":[{"type":"text","text":"go"}],"approvalPolicy":"` + turnPolicy + `"}}`)
	if r := c.untilID("2"); lookup(r, "/result/turn/status") != "inProgress" {
		c.t.Fatalf("turn/start: %v", r)
	}
}

// TestAppServerTurn: a client's ids (numbers and strings) come back on the
// answers, the turn streams and completes, and closing stdin ends the
// process with status 0.
func TestAppServerTurn(t *testing.T) {
	c := startAppServer(t, "codex/app-server-single-tool")
	c.handshake("never")
	done := c.untilMethod("turn/completed")
	if lookup(done, "/params/turn/status") != "completed" {
		t.Errorf("turn/completed %v", done)
	}
	r, _ := c.l.wait()
	if r.code != 0 {
		t.Errorf("exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestAppServerInterrupt: turn/interrupt during the command's window is
// answered {} and the turn completes interrupted (the capture's branch);
// without it the command completes.
func TestAppServerInterrupt(t *testing.T) {
	c := startAppServer(t, "codex/app-server-interrupt")
	c.handshake("never")
	started := c.l.until("the command", func(ev map[string]any) bool {
		return method(ev) == "item/started" && lookup(ev, "/params/item/type") == "commandExecution"
	})
	turn, _ := lookup(started, "/params/turnId").(string)
	c.l.send(`{"id":9,"method":"turn/interrupt","params":{"threadId":"` + c.thread + `","turnId":"` + turn + `"}}`)
	if r := c.untilID("9"); r["result"] == nil {
		t.Fatalf("turn/interrupt: %v", r)
	}
	done := c.untilMethod("turn/completed")
	if lookup(done, "/params/turn/status") != "interrupted" {
		t.Errorf("turn/completed %v", done)
	}
	if r, _ := c.l.wait(); r.code != 0 {
		t.Errorf("exit %d", r.code)
	}

	// An interrupt where the transcript has no branch: made up from the
	// turn's own lines.
	c = startAppServer(t, "codex/app-server-plain-text", "AGENTCONFORM_FAULTS=stall:after=8")
	c.handshake("never")
	c.untilMethod("turn/started")
	c.l.send(`{"id":9,"method":"turn/interrupt","params":{"threadId":"` + c.thread + `","turnId":"y"}}`)
	c.untilID("9")
	done = c.untilMethod("turn/completed")
	if lookup(done, "/params/turn/status") != "interrupted" {
		t.Errorf("made-up turn/completed %v", done)
	}
	c.l.wait()
}

// TestAppServerApprovals: the approval request is answered by the client,
// and each decision replays what the real CLI then did.
func TestAppServerApprovals(t *testing.T) {
	for decision, status := range map[string]string{"accept": "completed", "decline": "declined", "acceptForSession": "completed"} {
		c := startAppServer(t, "codex/app-server-approval-accept")
		c.handshake("untrusted")
		req := c.untilMethod("item/commandExecution/requestApproval")
		id := jsonValue(t, req["id"])
		c.l.send(`{"id":` + id + `,"result":{"decision":"` + decision + `"}}`)
		item := c.l.until("the command's end", func(ev map[string]any) bool {
			return method(ev) == "item/completed" && lookup(ev, "/params/item/type") == "commandExecution"
		})
		if got := lookup(item, "/params/item/status"); got != status {
			t.Errorf("%s: item status %v, want %s", decision, got, status)
		}
		c.untilMethod("turn/completed")
		c.l.wait()
	}
}

// TestAppServerErrors: the real server's answers to what the transcript
// does not expect.
func TestAppServerErrors(t *testing.T) {
	c := startAppServer(t, "codex/app-server-plain-text")
	c.l.send(`{"id":1,"method":"thread/start","params":{}}`)
	if r := c.untilID("1"); lookup(r, "/error/message") != "Not initialized" || lookup(r, "/error/code") != float64(-32600) {
		t.Errorf("before initialize: %v", r)
	}
	c.l.send(`{"id":2,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`)
	c.untilID("2")
	c.l.send(`{"id":3,"method":"initialize","params":{}}`)
	if r := c.untilID("3"); lookup(r, "/error/message") != "Already initialized" {
		t.Errorf("second initialize: %v", r)
	}
	c.l.send(`{"id":4,"method":"no/such","params":{}}`)
	if r := c.untilID("4"); !strings.HasPrefix(lookup(r, "/error/message").(string), "Invalid request: unknown variant `no/such`, expected one of `initialize`, ") {
		t.Errorf("unknown method: %v", r)
	}
	c.l.send(`{"id":5,"method":"turn/start"}`)
	if r := c.untilID("5"); lookup(r, "/error/message") != "Invalid request: missing field `params`" {
		t.Errorf("no params: %v", r)
	}
	// Thread ids as 0.169.0 reads them (observed): UUIDs in any of the
	// uuid crate's forms, named back in lower-case hyphenated form.
	for i, c2 := range []struct{ req, msg string }{
		{`"turn/start","params":{"threadId":"nope","input":[]}`, "invalid thread id: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1"},
		{`"turn/start","params":{"threadId":"5e55104e-0000-4000-8000-0000000ee003","input":[]}`, "thread not found: 5e55104e-0000-4000-8000-0000000ee003"},
		{`"turn/interrupt","params":{"threadId":"nope","turnId":"x"}`, "invalid thread id: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1"},
		{`"thread/resume","params":{"threadId":"nope"}`, "invalid session id: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1"},
		{`"thread/resume","params":{"threadId":"12345678"}`, "invalid session id: invalid length: expected length 32 for simple format, found 8"},
		{`"thread/resume","params":{"threadId":""}`, "invalid session id: invalid length: expected length 32 for simple format, found 0"},
		{`"thread/resume","params":{"threadId":"5e55104e-0000-4000-8000-0000000ee00"}`, "invalid session id: invalid group length in group 4: expected 12, found 11"},
		{`"thread/resume","params":{"threadId":"5e55104e-0000-4000-8000-0000000ee0zz"}`, "invalid session id: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `z` at 35"},
		{`"thread/resume","params":{"threadId":"5e55104e00004000800000000000ee03"}`, "no rollout found for thread id 5e55104e-0000-4000-8000-00000000ee03"},
		{`"thread/resume","params":{"threadId":"5E55104E-0000-4000-8000-0000000EE003"}`, "no rollout found for thread id 5e55104e-0000-4000-8000-0000000ee003"},
		{`"thread/resume","params":{"threadId":42}`, "Invalid request: invalid type: integer `42`, expected a string"},
		{`"thread/resume","params":{}`, "Invalid request: missing field `threadId`"},
	} {
		id := strconv.Itoa(100 + i)
		c.l.send(`{"id":` + id + `,"method":` + c2.req + `}`)
		if r := c.untilID(id); lookup(r, "/error/message") != c2.msg || lookup(r, "/error/code") != -32600.0 {
			t.Errorf("%s: %v, want -32600 %q", c2.req, r, c2.msg)
		}
	}
	c.l.send(`not json`)
	c.l.send(`{"method":"no/such/notification"}`)
	c.l.quiet(200 * time.Millisecond)
	r, _ := c.l.wait()
	if r.code != 0 || !strings.Contains(r.stderr, "Failed to deserialize JSONRPCMessage") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestAppServerFlags: the flag grammar and usage errors of 0.169.0.
func TestAppServerFlags(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/app-server-plain-text"})
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"app-server", "--bogus"}, 2, "error: unexpected argument '--bogus' found\n\nUsage: codex app-server [OPTIONS] [COMMAND]\n\nFor more information, try '--help'.\n"},
		{[]string{"app-server", "--listen", "stdio://", "--bogus"}, 2, "error: unexpected argument '--bogus' found\n\nUsage: codex app-server --listen <URL>\n\nFor more information, try '--help'.\n"},
		{[]string{"app-server", "bogus"}, 2, "error: unrecognized subcommand 'bogus'\n\nUsage: codex app-server [OPTIONS] [COMMAND]\n\nFor more information, try '--help'.\n"},
		{[]string{"app-server", "--listen"}, 2, "error: a value is required for '--listen <URL>' but none was supplied\n\nFor more information, try '--help'.\n"},
		{[]string{"app-server", "--listen", "bogus://x"}, 2, "error: invalid value 'bogus://x' for '--listen <URL>': unsupported --listen URL `bogus://x`; expected `stdio://`, `unix://`, `unix://PATH`, `ws://IP:PORT`, or `off`\n\nFor more information, try '--help'.\n"},
		{[]string{"app-server", "-c", "foo"}, 1, "Error: error parsing -c overrides: Invalid override (missing '='): foo\n"},
		{[]string{"app-server", "--version"}, 2, "error: unexpected argument '--version' found\n\nUsage: codex app-server [OPTIONS] [COMMAND]\n\nFor more information, try '--help'.\n"},
	} {
		r := runFake(t, f, "codex", c.args, cmdOpts{})
		if r.code != c.code || r.stderr != c.stderr || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q", c.args, r.code, r.stderr, r.stdout)
		}
	}
	r := runFake(t, f, "codex", []string{"app-server", "--help"}, cmdOpts{})
	if r.code != 0 || !strings.HasPrefix(r.stdout, "[experimental] Run the app server or related tooling\n\nUsage: codex app-server [OPTIONS] [COMMAND]") {
		t.Errorf("--help: %d %q", r.code, r.stdout[:min(len(r.stdout), 80)])
	}
	r = runFake(t, f, "codex", []string{"app-server", "-c", "model=x", "--listen", "stdio://", "--enable", "y"}, cmdOpts{stdin: ""})
	if r.code != 0 || r.stdout != "" {
		t.Errorf("valid flags, stdin closed at once: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestAppServerResume: the second process of the resume fixture (the same
// session store) answers thread/resume and runs the second turn.
func TestAppServerResume(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/app-server-resume"})
	var thread string
	for i, open := range []string{`{"id":"th","method":"thread/start","params":{}}`, `{"id":"th","method":"thread/resume","params":{"threadId":"T"}}`} {
		l := startFake(t, f, "codex", []string{"app-server"}, cmdOpts{})
		l.send(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`)
		l.send(`{"method":"initialized"}`)
		l.send(strings.Replace(open, `"T"`, `"`+thread+`"`, 1))
		r := l.until("the thread", func(ev map[string]any) bool { return ev["id"] == "th" })
		id, _ := lookup(r, "/result/thread/id").(string)
		if i == 0 {
			thread = id
		} else if id != thread || thread == "" {
			t.Errorf("resumed thread %q, started %q", id, thread)
		}
		l.send(`{"id":2,"method":"turn/start","params":{"threadId":"` + thread + `","input":[{"type":"text","text":"go"}]}}`)
		l.until("turn/completed", func(ev map[string]any) bool { return ev["method"] == "turn/completed" })
		if res, _ := l.wait(); res.code != 0 {
			t.Errorf("process %d: exit %d", i+1, res.code)
		}
	}
}

// TestAppServerResumeKept: a thread kept in the session store (as an
// earlier process left it, under an id of its own) is resumed by id in a
// process that replays another fixture: the resumed part runs, every
// line naming the resumed id, and the log says the process resumed it.
func TestAppServerResumeKept(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/app-server-plain-text"})
	const id = "5e55104e-0000-4000-8000-00000000a001"
	if err := fakecli.SeedSession(f.Sessions, fakecli.SessionSeed{CLI: "codex", ID: id, Fixture: "codex/app-server-resume", Next: 1}); err != nil {
		t.Fatal(err)
	}
	l := startFake(t, f, "codex", []string{"app-server"}, cmdOpts{})
	l.send(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`)
	l.send(`{"method":"initialized"}`)
	l.send(`{"id":2,"method":"thread/resume","params":{"threadId":"` + strings.ToUpper(id) + `"}}`)
	r := l.until("the thread", func(ev map[string]any) bool { return ev["id"] == 2.0 })
	if got := lookup(r, "/result/thread/id"); got != id {
		t.Fatalf("resumed thread %v, want %s: %v", got, id, r)
	}
	l.send(`{"id":3,"method":"turn/start","params":{"threadId":"01a21040-8e34-7b81-85df-3377b9aaae34","input":[{"type":"text","text":"go"}]}}`)
	if r := l.until("the answer", func(ev map[string]any) bool { return ev["id"] == 3.0 }); lookup(r, "/error/message") != "thread not found: 01a21040-8e34-7b81-85df-3377b9aaae34" {
		t.Errorf("a turn on the recorded thread, not the resumed one: %v", r)
	}
	l.send(`{"id":4,"method":"turn/start","params":{"threadId":"` + id + `","input":[{"type":"text","text":"go"}]}}`)
	done := l.until("turn/completed", func(ev map[string]any) bool { return ev["method"] == "turn/completed" })
	if lookup(done, "/params/threadId") != id || lookup(done, "/params/turn/status") != "completed" || !strings.Contains(jsonValue(t, done), "Resumed: the second answer.") {
		t.Errorf("turn/completed: %v", done)
	}
	if res, _ := l.wait(); res.code != 0 {
		t.Errorf("exit %d", res.code)
	}
	obs, err := f.Observations()
	if err != nil {
		t.Fatal(err)
	}
	var sessions []string
	for _, o := range obs {
		if o.Kind == "session" {
			sessions = append(sessions, fmt.Sprintf("%s %v", o.Session, o.Resumed))
		}
	}
	if want := []string{id + " true"}; strings.Join(sessions, ",") != strings.Join(want, ",") {
		t.Errorf("session records %v, want %v", sessions, want)
	}
}

// TestAppServerResumeLoaded: thread/resume of the thread the process runs
// (as a client that resumes before every turn sends it) is answered with
// the thread, after 0.169.0's deprecationNotice, and the next turn runs.
func TestAppServerResumeLoaded(t *testing.T) {
	c := startAppServer(t, "codex/app-server-multi-turn")
	c.handshake("never")
	c.untilMethod("turn/completed")
	c.l.send(`{"id":"r","method":"thread/resume","params":{"threadId":"` + c.thread + `"}}`)
	notice := c.l.nextEvent()
	if method(notice) != "deprecationNotice" {
		t.Errorf("before the answer: %v", notice)
	}
	if r := c.untilID(`"r"`); lookup(r, "/result/thread/id") != c.thread {
		t.Fatalf("thread/resume of the loaded thread: %v", r)
	}
	c.l.send(`{"id":"t2","method":"turn/start","params":{"threadId":"` + c.thread + `","input":[{"type":"text","text":"again"}]}}`)
	if done := c.untilMethod("turn/completed"); lookup(done, "/params/turn/status") != "completed" {
		t.Errorf("the second turn: %v", done)
	}
	c.l.send(`{"id":"x","method":"thread/resume","params":{"threadId":"` + c.thread + `","excludeTurns":true}}`)
	if r := c.l.nextEvent(); r["id"] != "x" {
		t.Errorf("excludeTurns: the answer first, got %v", r)
	}
}

// TestAppServerFreshThread: a thread/start after the recorded thread was
// kept opens a thread of a new id (the same one for the same seed), and
// its turn runs on it.
func TestAppServerFreshThread(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/app-server-plain-text"})
	var ids []string
	for i := 0; i < 3; i++ {
		l := startFake(t, f, "codex", []string{"app-server"}, cmdOpts{})
		l.send(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`)
		l.send(`{"method":"initialized"}`)
		l.send(`{"id":2,"method":"thread/start","params":{}}`)
		r := l.until("the thread", func(ev map[string]any) bool { return ev["id"] == 2.0 })
		id, _ := lookup(r, "/result/thread/id").(string)
		l.send(`{"id":3,"method":"turn/start","params":{"threadId":"` + id + `","input":[{"type":"text","text":"go"}]}}`)
		done := l.until("turn/completed", func(ev map[string]any) bool { return ev["method"] == "turn/completed" })
		if lookup(done, "/params/threadId") != id {
			t.Errorf("process %d: the turn ran on %v, its thread is %s", i+1, lookup(done, "/params/threadId"), id)
		}
		l.wait()
		ids = append(ids, id)
	}
	if ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] {
		t.Errorf("thread ids %v: each thread/start must open a new thread", ids)
	}
}

// TestAppServerThreadsKept: a thread is kept once its first turn/start is
// taken, not before, and never when it is ephemeral; a later process
// resumes only a kept one.
func TestAppServerThreadsKept(t *testing.T) {
	for _, c := range []struct {
		name, start string
		turn, kept  bool
	}{
		{"turn", `{}`, true, true},
		{"no-turn", `{}`, false, false},
		{"ephemeral", `{"ephemeral":true}`, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := fakecli.Start(t, fakecli.Options{Fixture: "codex/app-server-resume"})
			l := startFake(t, f, "codex", []string{"app-server"}, cmdOpts{})
			l.send(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`)
			l.send(`{"method":"initialized"}`)
			l.send(`{"id":2,"method":"thread/start","params":` + c.start + `}`)
			r := l.until("the thread", func(ev map[string]any) bool { return ev["id"] == 2.0 })
			thread, _ := lookup(r, "/result/thread/id").(string)
			if c.turn {
				l.send(`{"id":3,"method":"turn/start","params":{"threadId":"` + thread + `","input":[{"type":"text","text":"go"}]}}`)
				l.until("turn/completed", func(ev map[string]any) bool { return ev["method"] == "turn/completed" })
			}
			l.wait()
			l = startFake(t, f, "codex", []string{"app-server"}, cmdOpts{})
			l.send(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`)
			l.send(`{"method":"initialized"}`)
			l.send(`{"id":2,"method":"thread/resume","params":{"threadId":"` + thread + `"}}`)
			r = l.until("the answer", func(ev map[string]any) bool { return ev["id"] == 2.0 })
			l.wait()
			switch {
			case c.kept && lookup(r, "/result/thread/id") != thread:
				t.Errorf("thread/resume of a kept thread: %v", r)
			case !c.kept && lookup(r, "/error/message") != "no rollout found for thread id "+thread:
				t.Errorf("thread/resume of a thread not kept: %v", r)
			}
		})
	}
}

// TestAppServerSignals: SIGTERM ends it with 0, SIGINT kills it.
func TestAppServerSignals(t *testing.T) {
	for sig, want := range map[syscall.Signal]int{syscall.SIGTERM: 0, syscall.SIGINT: 128 + int(syscall.SIGINT)} {
		c := startAppServer(t, "codex/app-server-plain-text")
		c.l.send(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`)
		c.untilID("1")
		c.l.signal(sig)
		for range c.l.lines { // stdout closes when the process ends
		}
		if r, _ := c.l.wait(); r.code != want {
			t.Errorf("%v: status %d, want %d", sig, r.code, want)
		}
	}
}

// TestAppServerFaults: the JSON-RPC faults answer a request twice, never,
// or add a notification no client knows.
func TestAppServerFaults(t *testing.T) {
	run := func(spec string) []string {
		c := startAppServer(t, "codex/app-server-plain-text", "AGENTCONFORM_FAULTS="+spec)
		c.l.send(`{"id":"a","method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`)
		c.l.send(`{"method":"initialized"}`)
		_, rest := c.l.wait()
		return rest
	}
	count := func(lines []string, sub string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, sub) {
				n++
			}
		}
		return n
	}
	if n := count(run("answer_twice:nth=1"), `{"id":"a","result":`); n != 2 {
		t.Errorf("answer_twice: %d answers", n)
	}
	if n := count(run("answer_never:nth=1"), `"id":"a"`); n != 0 {
		t.Errorf("answer_never: %d answers", n)
	}
	if n := count(run("unknown_method:after=1"), `"method":"agentconform/unknown_notification"`); n != 1 {
		t.Errorf("unknown_method: %d", n)
	}
}

// TestAppServerReplaysCaptures plays the client's side of every app-server
// capture of the real Codex (its requests, numbered from 1, notifications
// and answers, each sent when the capture's client sent it) against the
// fake replaying that capture: the fake's stdout is the real server's,
// line for line, with the client's ids echoed, to the exit status of each
// process along the main path.
func TestAppServerReplaysCaptures(t *testing.T) {
	files, err := filepath.Glob("../testdata/captures/codex/0.169.0/app-server-*.jsonl")
	if err != nil || len(files) < 10 {
		t.Fatalf("%d app-server captures (%v)", len(files), err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".jsonl"), func(t *testing.T) {
			tr, err := transcript.ReadFile(file, transcript.Options{})
			if err != nil {
				t.Fatal(err)
			}
			abs, _ := filepath.Abs(file)
			f := fakecli.Start(t, fakecli.Options{Transcript: abs})
			for pi, part := range tr.Processes() {
				l := startFake(t, f, "codex", tr.Header.Argv[1:], cmdOpts{})
				vars := transcript.Vars{}
				next := 0
			steps:
				for _, st := range part {
					switch st.Op {
					case transcript.OpOut:
						want := vars.Fill(st.Text)
						if got := l.next(lineTimeout); got != want {
							t.Fatalf("process %d, line %d: got\n%s\nwant\n%s", pi+1, st.Line, clipLine(got), clipLine(want))
						}
					case transcript.OpIn:
						obj := map[string]any{}
						for k, v := range st.Match {
							obj[k] = v
						}
						if method, ok := obj["method"]; ok {
							if len(st.Capture) > 0 {
								next++
								obj["id"] = next
								for name := range st.Capture {
									vars[name] = next
								}
							}
							params := map[string]any{}
							if method == "turn/start" || method == "thread/resume" {
								params["threadId"] = tr.Header.SessionID // the thread of the capture
							}
							obj["params"] = params
						}
						b, _ := json.Marshal(obj)
						l.send(string(b))
					case transcript.OpStdinEOF:
						r, rest := l.wait()
						if len(rest) > 0 {
							t.Errorf("process %d: lines after the capture's: %q", pi+1, rest)
						}
						for _, s := range part {
							if s.Op == transcript.OpExit && r.code != s.Code {
								t.Errorf("process %d: exit %d, want %d", pi+1, r.code, s.Code)
							}
						}
						break steps
					case transcript.OpLabel:
						break steps
					}
				}
			}
		})
	}
}

// clipLine shortens a line for a message.
func clipLine(s string) string {
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}
