//go:build unix

package fakecli_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
)

// path is what a client sees along the default path of one process part:
// the stdin lines it sends, the stdout it gets, and how the process ends.
type path struct {
	stdin  []input
	stdout string
	code   int
	signal string
}

// input is a stdin line and how many stdout lines come before the client
// sends it (a client answers a request only once it has seen it).
type input struct {
	line  string
	after int
}

// walk follows one process part of a transcript the way a cooperative
// client drives it: every "in" step gets a line made from its match (and
// its first case), captures fill the templates of later lines, gotos are
// followed, delays and signal handlers are passed over.
func walk(t *testing.T, steps []transcript.Step) path {
	t.Helper()
	var p path
	var out strings.Builder
	lines := 0
	vars := transcript.Vars{}
	labels := transcript.Labels(steps)
	reqs := 0
	for pc, n := 0, 0; pc < len(steps); n++ {
		if n > 10*len(steps) {
			t.Fatal("transcript loops")
		}
		st := steps[pc]
		pc++
		switch st.Op {
		case transcript.OpOut:
			out.WriteString(vars.Fill(st.Text))
			if !st.NoNewline {
				out.WriteByte('\n')
				lines++
			}
		case transcript.OpIn:
			if st.Match == nil {
				p.stdin = append(p.stdin, input{vars.Fill(st.Text), lines})
				continue
			}
			line := fillAll(merge(st.Match, nil), vars).(map[string]any)
			if len(st.Cases) > 0 {
				line = fillAll(merge(line, st.Cases[0].Match), vars).(map[string]any)
			}
			switch line["type"] {
			case "user":
				if line["message"] == nil {
					line["message"] = map[string]any{"role": "user", "content": "go on"}
				}
				if _, ok := line["parent_tool_use_id"]; !ok {
					line["parent_tool_use_id"] = nil
				}
			case "control_request":
				if line["request_id"] == nil {
					reqs++
					line["request_id"] = fmt.Sprintf("req_%d_test", reqs)
				}
			}
			for name, ptr := range st.Capture {
				if v, ok := transcript.Lookup(line, ptr); ok {
					vars[name] = v
				}
			}
			b, _ := json.Marshal(line)
			p.stdin = append(p.stdin, input{string(b), lines})
			if len(st.Cases) > 0 {
				pc = labels[st.Cases[0].Goto]
			}
		case transcript.OpGoto:
			pc = labels[st.Label]
		case transcript.OpExit:
			p.code = st.Code
			p.stdout = out.String()
			return p
		case transcript.OpExitSignal:
			p.signal = st.Signal
			p.stdout = out.String()
			return p
		}
	}
	p.stdout = out.String()
	return p
}

// merge deep-merges b into a copy of a.
func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		am, aok := out[k].(map[string]any)
		bm, bok := v.(map[string]any)
		if aok && bok {
			out[k] = merge(am, bm)
		} else {
			out[k] = v
		}
	}
	return out
}

// fillAll fills templates in every string of v.
func fillAll(v any, vars transcript.Vars) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, y := range x {
			out[k] = fillAll(y, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = fillAll(y, vars)
		}
		return out
	case string:
		var s string
		if err := json.Unmarshal([]byte(`"`+vars.Fill(x)+`"`), &s); err == nil {
			return s
		}
		return x
	}
	return v
}

// invocation is the argv a fixture's header recorded (a fixture of a
// resumed session resumes its own recorded id, which the fake accepts);
// later processes of a session resume the first.
func invocation(h transcript.Header, part int, sessionID string) []string {
	args := h.Argv[1:]
	if part == 0 {
		return args
	}
	switch h.CLI {
	case "codex":
		// exec [options] resume ID PROMPT: options before resume, the
		// recorded prompt last.
		prompt := args[len(args)-1]
		return append(append(slices.Clone(args[:len(args)-1]), "resume", sessionID), prompt)
	case "gemini":
		return append([]string{"--resume", sessionID}, args...)
	}
	return append([]string{"--resume", sessionID}, args...)
}

// TestReplayFixtures replays every embedded fixture as its recorded
// invocation: stdout must be the transcript's stdout lines along the
// default path (templates filled), and the exit status as recorded.
// Multi-process fixtures run one process per part, resuming the session
// by the id the first process printed.
func TestReplayFixtures(t *testing.T) {
	all, err := fixtures.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range all {
		t.Run(fx.Name, func(t *testing.T) {
			t.Parallel()
			tr, err := transcript.LoadFile(fixtures.FS(), fx.Path, transcript.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Header.Argv) < 2 {
				t.Skip("the fixture records no invocation")
			}
			f := fakecli.Start(t, fakecli.Options{Fixture: fx.Name, Timing: "0.0001"})
			dir := t.TempDir()
			sessionID := ""
			for i, part := range tr.Processes() {
				p := walk(t, part)
				args := invocation(tr.Header, i, sessionID)
				var r result
				if tr.Header.CLI == "claude" {
					r = drive(t, f, args, p.stdin, dir)
				} else {
					r = runFake(t, f, tr.Header.CLI, args, cmdOpts{dir: dir, env: []string{"IS_SANDBOX=1"}})
				}
				if r.stdout != p.stdout {
					t.Errorf("process %d (%v): stdout differs\ngot:\n%s\nwant:\n%s\nstderr: %s", i+1, args, r.stdout, p.stdout, r.stderr)
				}
				want := p.code
				if p.signal != "" {
					want = 128 + signalNumber(p.signal)
				}
				if r.code != want || r.signaled != (p.signal != "") {
					t.Errorf("process %d: status %d (signaled %v), want %d (signal %q)\nstderr: %s", i+1, r.code, r.signaled, want, p.signal, r.stderr)
				}
				if sessionID == "" {
					sessionID = firstSessionID(r.stdout)
				}
			}
		})
	}
}

// drive runs claude as a client would: each stdin line is sent once the
// stdout lines before it in the transcript have arrived.
func drive(t *testing.T, f *fakecli.Fakes, args []string, in []input, dir string) result {
	t.Helper()
	l := startFake(t, f, "claude", args, cmdOpts{dir: dir, env: []string{"IS_SANDBOX=1"}})
	seen := 0
	for _, x := range in {
		for seen < x.after {
			l.next(lineTimeout)
			seen++
		}
		l.send(x.line)
	}
	r, _ := l.wait()
	return r
}

// firstSessionID finds the session (thread) id in a stream.
func firstSessionID(stream string) string {
	for _, line := range strings.Split(stream, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		for _, k := range []string{"session_id", "thread_id"} {
			if s, ok := ev[k].(string); ok && s != "" {
				return s
			}
		}
	}
	return ""
}

// TestDelayCases: a delay with cases is a window: a stdin line matching a
// case, whether it comes during the delay or was sent before the replay
// reached it, ends the delay, its captures fill later lines, and the
// replay goes on at the case's label; without such a line the delay runs
// out and the replay falls through. A line that matches no case is handled
// as in any delay.
func TestDelayCases(t *testing.T) {
	path := pingTranscript(t)
	f := fakecli.Start(t, fakecli.Options{Transcript: path, Timing: "0.001"})

	// During the delay.
	l := startFake(t, f, "claude", claudeStream, cmdOpts{})
	l.send(user("hi"))
	l.until("init", typeIs("system", "init"))
	l.send(`{"type":"keep_alive"}`)
	l.send(`{"type":"ping","id":"p-1"}`)
	if ev := l.nextEvent(); ev["type"] != "pong" || ev["id"] != "p-1" {
		t.Errorf("after the ping: %v", ev)
	}
	if r, rest := l.wait(); r.code != 3 || len(rest) != 0 {
		t.Errorf("exit %d, more lines %q; want the branch's exit 3", r.code, rest)
	}

	// Before the delay: held until the replay gets there. This fake's delay
	// is 3 s, not 30 ms: the fake must have read the ping before the delay
	// runs out, and on a loaded runner its stdin reader can lag 30 ms.
	slow := fakecli.Start(t, fakecli.Options{Transcript: path, Timing: "0.1"})
	r := runFake(t, slow, "claude", claudeStream, cmdOpts{stdin: user("hi") + "\n" + `{"type":"ping","id":"p-2"}` + "\n"})
	if got := lines(r.stdout); r.code != 3 || len(got) != 2 || !strings.Contains(got[1], `"id":"p-2"`) {
		t.Errorf("ping sent with the prompt: exit %d\n%s", r.code, r.stdout)
	}

	// No ping: the delay (30 ms at this timing) runs out.
	r = runFake(t, f, "claude", claudeStream, cmdOpts{stdin: user("hi") + "\n"})
	if got := lines(r.stdout); r.code != 0 || len(got) != 2 || !strings.Contains(got[1], `"type":"result"`) {
		t.Errorf("no ping: exit %d\n%s", r.code, r.stdout)
	}
}

// pingTranscript is a Claude session whose turn waits 30 s after its init
// for a ping (answered with a pong, exit 3), else ends (exit 0); pre are
// steps before it takes the prompt.
func pingTranscript(t *testing.T, pre ...map[string]any) string {
	steps := append(pre,
		map[string]any{"in": map[string]any{"type": "user"}},
		out(map[string]any{"type": "system", "subtype": "init", "session_id": "s"}),
		map[string]any{"delay_ms": 30000, "capture": map[string]any{"ping": "/id"},
			"cases": []any{map[string]any{"match": map[string]any{"type": "ping"}, "goto": "pinged"}}},
		out(map[string]any{"type": "result", "subtype": "success", "session_id": "s"}),
		map[string]any{"stdin_eof": true}, map[string]any{"exit": 0},
		map[string]any{"label": "pinged"},
		map[string]any{"out": `{"type":"pong","id":"{{ping}}","session_id":"s"}`},
		map[string]any{"stdin_eof": true}, map[string]any{"exit": 3})
	return writeTranscript(t, map[string]any{"transcript": "agentconform/v1", "cli": "claude", "cli_version": "2.1.331"}, steps...)
}

// TestLineForALaterDelayHeld: a line a later delay's case takes, read
// while the fake waits for something else (here a pause before it takes
// the prompt, with the prompt and the ping both in the pipe), is held for
// that delay, not ignored. It was ignored on a loaded runner whenever the
// fake read both lines before it reached the prompt's step.
func TestLineForALaterDelayHeld(t *testing.T) {
	path := pingTranscript(t, map[string]any{"delay_ms": 2000})
	f := fakecli.Start(t, fakecli.Options{Transcript: path, Timing: "0.1"})
	r := runFake(t, f, "claude", claudeStream, cmdOpts{stdin: user("hi") + "\n" + `{"type":"ping","id":"p-3"}` + "\n"})
	if got := lines(r.stdout); r.code != 3 || len(got) != 2 || !strings.Contains(got[1], `"id":"p-3"`) {
		t.Errorf("ping read before the prompt's step: exit %d\n%s", r.code, r.stdout)
	}
}
