package reference

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/schemas"
)

// harness drives Serve as the runner does: commands in, lines out.
type harness struct {
	t        *testing.T
	in       *io.PipeWriter
	lines    chan string
	done     chan error
	interrup chan struct{}
	all      []string
}

func startHarness(t *testing.T, fakes *fakecli.Fakes, profile Profile) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	t.Cleanup(cancel)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harness{t: t, in: inW, lines: make(chan string, 1024), done: make(chan error, 1), interrup: make(chan struct{}, 1)}
	go func() {
		err := Serve(ctx, inR, outW, ServeOptions{
			Profile: profile, Env: fakes.Env(), Interrupts: h.interrup,
			InterruptGrace: 2 * time.Second, StopGrace: 2 * time.Second,
			Clock: FixedClock(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)), NewID: CounterIDs("e"),
		})
		outW.Close()
		h.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 128<<20)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return h
}

// send writes one command.
func (h *harness) send(cmd map[string]any) {
	h.t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := h.in.Write(append(b, '\n')); err != nil {
		h.t.Fatalf("writing a command: %v", err)
	}
}

// until reads lines until one contains marker (returned), failing on EOF
// or the deadline.
func (h *harness) until(marker string) string {
	h.t.Helper()
	timeout := time.After(testDeadline)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("output ended before %q; got:\n%s", marker, strings.Join(h.all, "\n"))
			}
			h.all = append(h.all, l)
			if strings.Contains(l, marker) {
				return l
			}
		case <-timeout:
			h.t.Fatalf("no %q within %s", marker, testDeadline)
		}
	}
}

// finish closes stdin and waits for Serve; it returns every line.
func (h *harness) finish() []string {
	h.t.Helper()
	h.in.Close()
	for l := range h.lines {
		h.all = append(h.all, l)
	}
	if err := <-h.done; err != nil {
		h.t.Errorf("Serve: %v", err)
	}
	return h.all
}

// split separates harness records from events.
func splitRecords(t *testing.T, lines []string) (records []map[string]any, events []byte) {
	t.Helper()
	var ev bytes.Buffer
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("output line is not JSON: %q", l)
		}
		if _, ok := m["agentconform"]; ok {
			records = append(records, m)
			continue
		}
		ev.WriteString(l + "\n")
	}
	return records, ev.Bytes()
}

// checkRecords checks the records against the harness schema and the
// protocol's order: hello first, end last, a turn_end per turn.
func checkRecords(t *testing.T, lines []string, turns int, wantOK []bool) []map[string]any {
	t.Helper()
	v, err := schemas.NewSet(schemas.FS()).Compile("harness/harness.schema.json", "")
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := splitRecords(t, lines)
	for _, r := range recs {
		if res := v.Validate(r); len(res.Problems) > 0 {
			t.Errorf("record %v: %+v", r, res.Problems)
		}
	}
	var first, last map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &first)
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if first["agentconform"] != "hello" || last["agentconform"] != "end" {
		t.Errorf("first line %v, last line %v: want hello first and end last", first, last)
	}
	var ends []map[string]any
	for _, r := range recs {
		if r["agentconform"] == "turn_end" {
			ends = append(ends, r)
		}
	}
	if len(ends) != turns {
		t.Fatalf("%d turn_end records, want %d: %v", len(ends), turns, ends)
	}
	for i, e := range ends {
		if i < len(wantOK) && e["ok"] != wantOK[i] {
			t.Errorf("turn_end %d: %v, want ok %v", i+1, e, wantOK[i])
		}
	}
	return ends
}

// TestServe runs whole cases through the harness protocol, both profiles.
func TestServe(t *testing.T) {
	cases := []struct {
		fixture string
		prompts []string
		perm    string
	}{
		{"codex/single-tool", []string{"Run echo hi"}, "allow"},
		{"gemini/multi-turn", []string{"one", "two"}, "allow"},
		{"claude/multi-turn", []string{"one", "two"}, "allow"},
		{"claude/permission-deny", []string{"create a file"}, "deny"},
		{"codex/multi-turn", []string{"one", "two"}, "allow"},
		{"gemini/multi-tool", []string{"go"}, "allow"},
		{"claude/partial-messages", []string{"which go?"}, "allow"},
	}
	for _, profile := range []Profile{ProfileUnified, ProfileShim} {
		for _, tc := range cases {
			t.Run(string(profile)+"/"+tc.fixture, func(t *testing.T) {
				agent := strings.SplitN(tc.fixture, "/", 2)[0]
				fakes := fakecli.Start(t, fakecli.Options{Fixture: tc.fixture})
				h := startHarness(t, fakes, profile)
				hello := h.until(`"hello"`)
				if !strings.Contains(hello, `"profile":"`+string(profile)+`"`) || !strings.Contains(hello, `"interrupt"`) {
					t.Errorf("hello %s", hello)
				}
				h.send(map[string]any{"op": "start", "agent": agent, "prompt": tc.prompts[0], "cwd": t.TempDir(), "permission": tc.perm})
				for _, p := range tc.prompts[1:] {
					h.send(map[string]any{"op": "send", "prompt": p}) // may come while the turn runs: queued
				}
				for range tc.prompts {
					h.until(`"turn_end"`)
				}
				h.send(map[string]any{"op": "close"}) // after the last turn_end, as the runner does
				lines := h.finish()
				oks := make([]bool, len(tc.prompts))
				for i := range oks {
					oks[i] = true
				}
				ends := checkRecords(t, lines, len(tc.prompts), oks)
				for _, e := range ends {
					if e["session_id"] == "" || e["session_id"] == nil {
						t.Errorf("turn_end without session_id: %v", e)
					}
				}
				_, events := splitRecords(t, lines)
				checkStream(t, tc.fixture, profile, events)
			})
		}
	}
}

// TestServeInterrupt interrupts through the interrupt command and through
// signal mode (the Interrupts channel SIGINT feeds).
func TestServeInterrupt(t *testing.T) {
	for _, profile := range []Profile{ProfileUnified, ProfileShim} {
		for _, mode := range []string{"command", "signal"} {
			for _, agent := range Agents {
				testServeInterrupt(t, profile, mode, agent)
			}
		}
	}
}

func testServeInterrupt(t *testing.T, profile Profile, mode string, agent Agent) {
	t.Run(string(profile)+"/"+mode+"/"+string(agent), func(t *testing.T) {
		fakes := fakecli.Start(t, fakecli.Options{Fixture: string(agent) + "/interrupt"})
		h := startHarness(t, fakes, profile)
		h.send(map[string]any{"op": "start", "agent": string(agent), "prompt": "Run the tests.", "cwd": t.TempDir(), "permission": "allow"})
		if profile == ProfileShim {
			h.until(`"tool_use"`)
		} else {
			h.until(`"toolStarted"`)
		}
		if mode == "command" {
			h.send(map[string]any{"op": "interrupt"})
		} else {
			h.interrup <- struct{}{}
		}
		end := h.until(`"turn_end"`)
		if !strings.Contains(end, `"ok":false`) {
			t.Errorf("turn_end %s, want ok false", end)
		}
		h.send(map[string]any{"op": "close"})
		lines := h.finish()
		checkRecords(t, lines, 1, []bool{false})
		_, events := splitRecords(t, lines)
		checkStream(t, "interrupt", profile, events)
		want := `"reason":"cancelled"`
		if profile == ProfileShim {
			want = `"type":"interrupt"`
		}
		if !bytes.Contains(events, []byte(want)) {
			t.Errorf("no %s in:\n%s", want, events)
		}
	})
}

// TestServeMisuse: commands out of order and bad starts get failed
// turn_ends, never a hang or a crash.
func TestServeMisuse(t *testing.T) {
	fakes := fakecli.Start(t, fakecli.Options{Fixture: "codex/plain-text"})

	h := startHarness(t, fakes, ProfileUnified)
	h.send(map[string]any{"op": "send", "prompt": "too early"})
	h.in.Write([]byte("this is not JSON\n"))
	h.send(map[string]any{"op": "interrupt"})
	h.send(map[string]any{"op": "start", "agent": "copilot", "prompt": "hi", "cwd": t.TempDir()})
	lines := h.finish() // stdin EOF without close: also the end
	ends := checkRecords(t, lines, 2, []bool{false, false})
	if !strings.Contains(ends[1]["error"].(string), "copilot") {
		t.Errorf("turn_end %v does not name the bad agent", ends[1])
	}
	if !strings.Contains(lines[len(lines)-1], `"ok":false`) {
		t.Errorf("end %s, want ok false after a failed start", lines[len(lines)-1])
	}

	h = startHarness(t, fakes, ProfileUnified)
	h.send(map[string]any{"op": "start", "agent": "codex", "prompt": "hi", "cwd": t.TempDir()})
	h.until(`"turn_end"`)
	h.send(map[string]any{"op": "start", "agent": "codex", "prompt": "again", "cwd": t.TempDir()})
	h.send(map[string]any{"op": "close"})
	lines = h.finish()
	checkRecords(t, lines, 2, []bool{true, false})
	if !strings.Contains(lines[len(lines)-1], `"ok":true`) {
		t.Errorf("end %s, want ok true", lines[len(lines)-1])
	}
}

// TestServeCloseDuringTurn: close while a turn runs (the runner gave up on
// the CLI) stops the CLI, reports the turn failed, and ends — also when
// the CLI ignores SIGINT and SIGTERM, and when stdin just ends.
func TestServeCloseDuringTurn(t *testing.T) {
	stubborn := writeTranscript(t, "gemini",
		`{"on_signal":{"SIGINT":"ignore","SIGTERM":"ignore"}}`,
		out(`{"type":"init","timestamp":"2026-11-21T00:00:00Z","session_id":"g-1","model":"auto"}`),
		out(`{"type":"tool_use","timestamp":"2026-11-21T00:00:00Z","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"sleep 100"}}`),
		`{"delay_ms":60000}`,
		`{"exit":0}`,
	)
	cases := []struct {
		name  string
		opts  fakecli.Options
		agent Agent
		eof   bool
	}{
		{"codex", fakecli.Options{Fixture: "codex/interrupt"}, Codex, false},
		{"claude", fakecli.Options{Fixture: "claude/interrupt"}, Claude, false},
		{"claude-eof", fakecli.Options{Fixture: "claude/interrupt"}, Claude, true},
		{"stubborn-gemini", fakecli.Options{Transcript: stubborn}, Gemini, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fakes := fakecli.Start(t, tc.opts)
			h := startHarness(t, fakes, ProfileUnified)
			h.send(map[string]any{"op": "start", "agent": string(tc.agent), "prompt": "Run the tests.", "cwd": t.TempDir(), "permission": "allow"})
			h.until(`"toolStarted"`)
			start := time.Now()
			if !tc.eof {
				h.send(map[string]any{"op": "close"})
			}
			lines := h.finish()
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("closing took %s", d)
			}
			checkRecords(t, lines, 1, []bool{false})
			_, events := splitRecords(t, lines)
			checkStream(t, tc.name, ProfileUnified, events)
		})
	}
}
