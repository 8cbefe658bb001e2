package validate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
)

// wireLine is one line of a session's wire: who wrote it and what.
type wireLine struct {
	client bool
	text   string
}

// sessionWire is what each process of a capture's main path wrote and
// read, as a wire copy or a tee would hold it: for ACP the recorded
// lines, for the app-server (whose captures keep only what replay
// matches) the server's lines with the client's ids 1, 2, ... filled in
// and the client's requests completed as the capture driver sends them.
func sessionWire(t *testing.T, p string) [][]wireLine {
	t.Helper()
	tr, err := transcript.ReadFile(p, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]wireLine
	if acp.IsTranscript(tr) {
		paths, err := acp.Paths(tr)
		if err != nil {
			t.Fatal(err)
		}
		for _, entries := range paths[0].Processes {
			var proc []wireLine
			for _, e := range entries {
				proc = append(proc, wireLine{client: e.From == acp.Client, text: string(e.Raw)})
			}
			out = append(out, proc)
		}
		return out
	}
	for _, steps := range tr.Processes() {
		var proc []wireLine
		vars := transcript.Vars{}
		next := 0
		thread, turn := "", ""
		labels := transcript.Labels(steps)
	walk:
		for i := 0; i < len(steps); i++ {
			st := steps[i]
			switch st.Op {
			case transcript.OpOut:
				text := vars.Fill(st.Text)
				var obj map[string]any
				json.Unmarshal([]byte(text), &obj)
				if r, ok := obj["result"].(map[string]any); ok {
					if th, ok := r["thread"].(map[string]any); ok {
						thread, _ = th["id"].(string)
					}
				}
				if obj["method"] == "turn/started" {
					tt, _ := obj["params"].(map[string]any)["turn"].(map[string]any)
					turn, _ = tt["id"].(string)
				}
				proc = append(proc, wireLine{text: text})
			case transcript.OpIn:
				msg := map[string]any{}
				for k, v := range st.Match {
					msg[k] = v
				}
				if method, ok := msg["method"].(string); ok {
					for name, ptr := range st.Capture {
						if ptr == "/id" {
							next++
							msg["id"] = next
							vars[name] = next
						}
					}
					switch method {
					case "initialize":
						msg["params"] = map[string]any{"clientInfo": map[string]any{"name": "t", "title": "t", "version": "1.0.0"}, "capabilities": map[string]any{"experimentalApi": false}}
					case "thread/start":
						msg["params"] = map[string]any{"cwd": "/home/user/project", "sandbox": "workspace-write"}
					case "thread/resume":
						msg["params"] = map[string]any{"threadId": thread}
					case "turn/start":
						msg["params"] = map[string]any{"threadId": thread, "input": []any{map[string]any{"type": "text", "text": "hi", "text_elements": []any{}}}, "approvalPolicy": "never"}
					case "turn/interrupt":
						msg["params"] = map[string]any{"threadId": thread, "turnId": turn}
					}
				}
				b, _ := json.Marshal(msg)
				proc = append(proc, wireLine{client: true, text: string(b)})
			case transcript.OpGoto:
				i = labels[st.Label] - 1
			case transcript.OpExit, transcript.OpExitSignal:
				break walk
			}
		}
		out = append(out, proc)
	}
	return out
}

// stdoutOf is the agent's or server's lines of a wire, as a tee of its
// stdout holds them.
func stdoutOf(wire []wireLine) []string {
	var out []string
	for _, l := range wire {
		if !l.client {
			out = append(out, l.text)
		}
	}
	return out
}

// asRecords writes lines as {"dir","t_ms","line"} records.
func asRecords(wire []wireLine) []string {
	var out []string
	for i, l := range wire {
		dir := "out"
		if l.client {
			dir = "in"
		}
		b, _ := json.Marshal(map[string]any{"dir": dir, "t_ms": i, "line": l.text})
		out = append(out, string(b))
	}
	return out
}

func judge(t *testing.T, lines []string, opts Options) (*Result, []finding.Finding) {
	t.Helper()
	var got []finding.Finding
	res, err := Stream(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), "log.jsonl", opts, func(f finding.Finding, sev finding.Severity) {
		got = append(got, f)
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, got
}

func jsonRPCCaptures(t *testing.T) []string {
	t.Helper()
	acpFiles, _ := filepath.Glob("../testdata/captures/gemini/*/acp-*.jsonl")
	asFiles, _ := filepath.Glob("../testdata/captures/codex/*/app-server-*.jsonl")
	if len(acpFiles) < 10 || len(asFiles) < 10 {
		t.Fatalf("captures: %d ACP, %d app-server", len(acpFiles), len(asFiles))
	}
	return append(acpFiles, asFiles...)
}

// TestStdoutOnlyLogs: the stdout of every process of every ACP and
// app-server capture, as a user tees it (bare lines, or "out" records),
// is read as the agent's or server's side alone: no violation, the side
// named, the rules it cannot be judged by listed (and a note saying so).
// The wire of both directions of the same processes is judged as a
// session of both sides, with no violation either.
func TestStdoutOnlyLogs(t *testing.T) {
	for _, p := range jsonRPCCaptures(t) {
		isACP := strings.Contains(filepath.Base(p), "acp-")
		side, note, notJudged := "server", appserver.RuleOneSide, appserver.ServerOnlyNotJudged
		if isACP {
			side, note, notJudged = "agent", acp.RuleOneSide, acp.AgentOnlyNotJudged
		}
		for pi, wire := range sessionWire(t, p) {
			var stdoutRecords []wireLine
			for _, l := range wire {
				if !l.client {
					stdoutRecords = append(stdoutRecords, l)
				}
			}
			for form, lines := range map[string][]string{"bare": stdoutOf(wire), "records": asRecords(stdoutRecords)} {
				res, got := judge(t, lines, Options{})
				if len(got) > 0 || res.OneSide != side || res.Counts[note.ID] != 1 || !slices.Equal(res.NotJudged, ruleIDs(notJudged)) {
					t.Errorf("%s process %d, stdout (%s): one side %q, not judged %v, counts %v, findings %v", p, pi+1, form, res.OneSide, res.NotJudged, res.Counts, got)
				}
			}
			for form, lines := range map[string][]string{"records": asRecords(wire)} {
				res, got := judge(t, lines, Options{})
				if len(got) > 0 || res.OneSide != "" || res.NotJudged != nil {
					t.Errorf("%s process %d, both directions (%s): one side %q, findings %v", p, pi+1, form, res.OneSide, got)
				}
			}
		}
	}
}

// TestAppServerBareBothDirections: a bare log of both directions of an
// app-server session (as a proxy logs it) is told apart by method and
// id, judged as a session of both sides, and a response dropped from it
// is a request never answered.
func TestAppServerBareBothDirections(t *testing.T) {
	wire := sessionWire(t, "../testdata/captures/codex/0.169.0/app-server-approval-accept.jsonl")[0]
	var lines []string
	for _, l := range wire {
		lines = append(lines, l.text)
	}
	res, got := judge(t, lines, Options{})
	if len(got) > 0 || res.OneSide != "" || res.CLIVersion != "0.169.0" {
		t.Fatalf("bare log of both sides: one side %q, version %q, %v", res.OneSide, res.CLIVersion, got)
	}
	var dropped []string
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"id":3,"result"`) {
			dropped = append(dropped, l)
		}
	}
	_, got = judge(t, dropped, Options{})
	if ids := findingIDs(got); ids != appserver.RuleRequestUnanswered.ID {
		t.Errorf("turn/start's response dropped: %s", ids)
	}
}

func findingIDs(fs []finding.Finding) string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.Rule.ID)
	}
	return strings.Join(ids, " ")
}

// edit changes the first line of lines that contains from (replacing it
// with to; "" deletes the line) and fails when none does.
func edit(t *testing.T, lines []string, from, to string) []string {
	t.Helper()
	for i, l := range lines {
		if strings.Contains(l, from) {
			out := append([]string(nil), lines[:i]...)
			if to != "" {
				out = append(out, strings.Replace(l, from, to, 1))
			}
			return append(out, lines[i+1:]...)
		}
	}
	t.Fatalf("no line holds %s", from)
	return nil
}

// TestStdoutOnlyBroken: deliberately broken stdout logs fire exactly the
// rules one direction can judge, each finding with its line, byte
// offset, pointer and what was expected.
func TestStdoutOnlyBroken(t *testing.T) {
	stdout := func(p string) []string {
		return stdoutOf(sessionWire(t, "../testdata/captures/"+p)[0])
	}
	single := stdout("gemini/0.61.0/acp-single-tool.jsonl")
	asSingle := stdout("codex/0.169.0/app-server-single-tool.jsonl")
	appendAfterEnd := func(lines []string, extra string) []string {
		return append(append([]string(nil), lines...), extra)
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  string // rule ids, in order
		ptr   string // the first finding's pointer
	}{
		{"ACP: a made-up stopReason", edit(t, single, `"stopReason":"end_turn"`, `"stopReason":"done"`),
			acp.RuleStopReason.ID + " " + acp.RuleSchema.ID, "/result/stopReason"},
		{"ACP: the tool's completion dropped", edit(t, single, `"status":"completed"`, ""),
			acp.RuleToolFinal.ID, ""},
		{"ACP: the tool's completion after the turn's response", appendAfterEnd(edit(t, single, `"status":"completed"`, ""), lastWith(t, single, `"status":"completed"`)),
			acp.RuleToolFinal.ID + " " + acp.RuleToolLate.ID, ""},
		{"ACP: a line that is not JSON-RPC", appendAfterEnd(single, `Loading...`), acp.RuleMessage.ID, ""},
		{"ACP: session/update breaks the schema", edit(t, single, `"type":"text","text":`, `"type":"text","text":7,"x":`),
			acp.RuleSchema.ID, "/params/update"},
		{"ACP: initialize's result breaks the schema", edit(t, single, `"protocolVersion":1`, `"protocolVersion":"one"`),
			acp.RuleSchema.ID, "/result/protocolVersion"},
		{"app-server: turn/completed dropped", edit(t, asSingle, `"method":"turn/completed"`, ""),
			appserver.RuleTurnCompleted.ID, ""},
		{"app-server: turn/completed twice", appendAfterEnd(asSingle, lastWith(t, asSingle, `"method":"turn/completed"`)),
			appserver.RuleTurnOrder.ID, "/params/turn/id"},
		{"app-server: an item never completed", edit(t, asSingle, `"method":"item/completed","params":{"item":{"type":"commandExecution"`, ""),
			appserver.RuleItemCompleted.ID, "/params/turn"},
		{"app-server: a notification breaks the schema", edit(t, asSingle, `"method":"turn/started","params":{"threadId":`, `"method":"turn/started","params":{"threadId":7,"x":`),
			appserver.RuleSchema.ID, "/params/threadId"},
		{"app-server: an error object breaks the schema", appendAfterEnd(asSingle, `{"id":9,"error":{"code":"bad","message":"m"}}`),
			appserver.RuleSchema.ID, "/error/code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, got := judge(t, tc.lines, Options{})
			if res.OneSide == "" {
				t.Fatalf("not read as one side")
			}
			if ids := findingIDs(got); ids != tc.want {
				t.Fatalf("rules %q, want %q: %v", ids, tc.want, got)
			}
			f := got[0]
			if f.File != "log.jsonl" || f.Line <= 0 || f.Offset < 0 || f.Expected == "" || !strings.HasPrefix(f.Pointer, tc.ptr) {
				t.Errorf("finding without its place or expectation: %+v", f)
			}
			if want := offsetOf(tc.lines, f.Line); f.Offset != want {
				t.Errorf("offset %d, want %d (line %d)", f.Offset, want, f.Line)
			}
		})
	}
}

// offsetOf is the byte offset of line n (1-based) of lines joined with
// newlines.
func offsetOf(lines []string, n int) int64 {
	var off int64
	for _, l := range lines[:n-1] {
		off += int64(len(l)) + 1
	}
	return off
}

func lastWith(t *testing.T, lines []string, s string) string {
	t.Helper()
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return lines[i]
		}
	}
	t.Fatalf("no line holds %s", s)
	return ""
}

// TestStdoutOnlyProfiles: the agent's stdout of a loaded session is judged
// alike under both profiles (the load order needs the client's
// session/load), and says so.
func TestStdoutOnlyProfiles(t *testing.T) {
	wire := sessionWire(t, "../testdata/captures/gemini/0.61.0/acp-load.jsonl")
	if len(wire) != 2 {
		t.Fatalf("%d processes", len(wire))
	}
	for _, profile := range []schemas.Profile{schemas.Spec, schemas.Observed} {
		res, got := judge(t, stdoutOf(wire[1]), Options{Profile: profile})
		if len(got) > 0 || !slices.Contains(res.NotJudged, acp.RuleLoadHistory.ID) {
			t.Errorf("%s: %v, not judged %v", profile, got, res.NotJudged)
		}
	}
}

// TestRPCLogsReadAnyWay: a JSON-RPC log gets the same findings and
// result however its bytes come (one at a time, in halves), cut anywhere
// it breaks nothing (no panic, every finding on a line of the input, or
// about the whole stream: a first line cut short is no JSON-RPC message),
// and a stream piped in line by line is told apart without waiting for
// 64 KiB.
func TestRPCLogsReadAnyWay(t *testing.T) {
	wire := sessionWire(t, "../testdata/captures/codex/0.169.0/app-server-approval-accept.jsonl")[0]
	acpWire := sessionWire(t, "../testdata/captures/gemini/0.61.0/acp-cancel.jsonl")[0]
	var inputs []string
	for _, lines := range [][]string{stdoutOf(wire), asRecords(wire), stdoutOf(acpWire), asRecords(acpWire)} {
		inputs = append(inputs, strings.Join(lines, "\n")+"\n")
	}
	run := func(r io.Reader) string {
		var got []string
		res, err := Stream(context.Background(), r, "log.jsonl", Options{}, func(f finding.Finding, sev finding.Severity) {
			got = append(got, f.String())
		})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s %s %d %d %d %v %s %v", res.Dialect, res.Profile, res.Lines, res.Bytes, res.Violations, res.Counts, res.OneSide, got)
	}
	for i, in := range inputs {
		whole := run(strings.NewReader(in))
		if got := run(iotest.OneByteReader(strings.NewReader(in))); got != whole {
			t.Errorf("input %d, one byte at a time:\n%s\nwhole:\n%s", i, got, whole)
		}
		if got := run(iotest.HalfReader(strings.NewReader(in))); got != whole {
			t.Errorf("input %d, in halves:\n%s\nwhole:\n%s", i, got, whole)
		}
		for cut := 1; cut < len(in); cut += 97 {
			part := in[:cut]
			physical := strings.Count(part, "\n") + 1
			Stream(context.Background(), strings.NewReader(part), "cut", Options{}, func(f finding.Finding, sev finding.Severity) {
				if (f.Line <= 0 && !strings.HasPrefix(f.Rule.ID, "stream/")) || f.Line > physical {
					t.Errorf("input %d cut at %d: finding on line %d of %d: %s", i, cut, f.Line, physical, f)
				}
			})
		}
	}
	// The first line decides: a pipe that has written one line and waits
	// is sniffed without blocking.
	pr, pw := io.Pipe()
	go pw.Write([]byte(stdoutOf(wire)[0] + "\n"))
	done := make(chan rpcLog, 1)
	go func() { done <- sniffRPCLog(bufio.NewReaderSize(pr, 64<<10)) }()
	if got := <-done; got != logAppServer {
		t.Errorf("sniffed %q", got)
	}
	pw.Close()
}
