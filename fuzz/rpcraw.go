package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing/iotest"
	"time"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/fixtures/acpfixtures"
	asfixtures "github.com/agentconform/agentconform/fixtures/appserver"
	"github.com/agentconform/agentconform/transcript"
	"github.com/agentconform/agentconform/validate"
)

// The targets on arbitrary bytes for the two JSON-RPC surfaces: one line
// through both JSON-RPC decoders (ACP's strict acp.Decode and the
// app-server's transcript.ParseRPC), ACP logs and transcripts through
// validate (package acp's trace and rules), and app-server transcripts and
// logs through package appserver's checker. Each must not panic or hang,
// and every error and finding must say where: a line of the input (and
// that line's byte offset), and a JSON pointer that is one.

// The JSON-RPC targets on arbitrary bytes, for RawSeeds.
const (
	RawRPCMessage = "rpc-message"
	RawACP        = "acp"
	RawAppServer  = "app-server"
)

// rpcDeadline bounds one execution of a JSON-RPC target on arbitrary
// bytes (the watchdog ends the process after it: a hang).
const rpcDeadline = 10 * time.Second

// validPointer reports whether p is "" or a JSON pointer (RFC 6901): a
// "/" before every token, "~" only as "~0" or "~1".
func validPointer(p string) bool {
	if p == "" {
		return true
	}
	if p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 >= len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

// CheckRPCMessage judges the two JSON-RPC line decoders on one line of
// arbitrary bytes: acp.Decode (JSON-RPC 2.0, strict) and
// transcript.ParseRPC (codex app-server, no "jsonrpc" member). Neither may
// panic; an error of acp.Decode is an *acp.DecodeError with a message and
// a JSON pointer (or "" for the whole line); what either accepts is what
// it says it is (a request has a method and an id, a notification a
// method and no id, a response an id and exactly one of result and
// error); and a line acp.Decode accepts, ParseRPC accepts as the same
// kind, since JSON-RPC 2.0 is the app-server's framing plus "jsonrpc".
func CheckRPCMessage(data []byte) *Failure {
	defer watchWhat(time.Now(), rpcDeadline, fmt.Sprintf("the JSON-RPC decoders on %d bytes", len(data)))()
	m, err := acp.Decode(data)
	switch {
	case err != nil:
		var de *acp.DecodeError
		if !errors.As(err, &de) {
			return failf(PropValid, "acp.Decode failed with a %T, not an *acp.DecodeError (no location): %v", err, err)
		}
		if strings.TrimSpace(de.Message) == "" || !validPointer(de.Pointer) {
			return failf(PropValid, "acp.Decode's error has no message or a pointer that is none: %+v", *de)
		}
	case m == nil:
		return failf(PropValid, "acp.Decode returned neither a message nor an error")
	default:
		if f := acpShape(m); f != nil {
			return f
		}
	}
	pm, perr := transcript.ParseRPC(data)
	switch {
	case perr != nil:
		if strings.TrimSpace(perr.Error()) == "" {
			return failf(PropValid, "transcript.ParseRPC failed without a message")
		}
		if ptr, ok := rpcErrPointer(perr.Error()); ok && !validPointer(ptr) {
			return failf(PropValid, "transcript.ParseRPC's error names %q, which is no JSON pointer: %v", ptr, perr)
		}
	case pm == nil:
		return failf(PropValid, "transcript.ParseRPC returned neither a message nor an error")
	default:
		if f := parseRPCShape(pm); f != nil {
			return f
		}
	}
	if err == nil && perr != nil && !nullOrBigID(m.ID) {
		// An id of null, or a number that is no integer an int64 holds,
		// is the one thing JSON-RPC 2.0 allows that the app-server's ids
		// (strings and integers) do not.
		return failf(PropValid, "acp.Decode accepts a %s that transcript.ParseRPC rejects: %v", m.Kind, perr)
	}
	return nil
}

// nullOrBigID reports whether a raw id is null, or a number that is not
// an integer an int64 holds.
func nullOrBigID(id json.RawMessage) bool {
	t := strings.TrimSpace(string(id))
	if t == "null" {
		return true
	}
	if t != "" && t[0] != '"' {
		_, err := strconv.ParseInt(t, 10, 64)
		return err != nil
	}
	return false
}

// rpcErrPointer finds the "at /pointer:" an error of transcript.ParseRPC
// starts with.
func rpcErrPointer(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, "at ")
	if !ok {
		return "", false
	}
	ptr, _, ok := strings.Cut(rest, ": ")
	return ptr, ok
}

// acpShape checks that a message acp.Decode accepted is what its Kind says.
func acpShape(m *acp.Message) *Failure {
	switch m.Kind {
	case acp.Request:
		if m.Method == "" || m.ID == nil {
			return failf(PropValid, "acp.Decode made a request without a method or an id: %+v", *m)
		}
	case acp.Notification:
		if m.Method == "" || m.ID != nil {
			return failf(PropValid, "acp.Decode made a notification without a method, or with an id: %+v", *m)
		}
	case acp.Response:
		if m.Method != "" || m.ID == nil || (m.Result == nil) == (m.Error == nil) {
			return failf(PropValid, "acp.Decode made a response with a method, without an id, or without exactly one of result and error: %+v", *m)
		}
	default:
		return failf(PropValid, "acp.Decode made a message of no kind: %+v", *m)
	}
	if m.ID != nil && m.IDKey() == "" {
		return failf(PropValid, "acp.Decode made an id with an empty key: %s", m.ID)
	}
	return nil
}

// parseRPCShape checks that a message transcript.ParseRPC accepted is
// what its Kind says.
func parseRPCShape(m *transcript.RPCMessage) *Failure {
	_, hasResult := m.Obj["result"]
	_, hasError := m.Obj["error"]
	switch m.Kind {
	case transcript.RPCRequest:
		if m.Method == "" || m.ID == "" {
			return failf(PropValid, "transcript.ParseRPC made a request without a method or an id: %v", m.Obj)
		}
	case transcript.RPCNotification:
		if m.Method == "" || m.ID != "" {
			return failf(PropValid, "transcript.ParseRPC made a notification without a method, or with an id: %v", m.Obj)
		}
	case transcript.RPCResponse:
		if m.ID == "" || !hasResult || hasError {
			return failf(PropValid, "transcript.ParseRPC made a response without an id or a result: %v", m.Obj)
		}
	case transcript.RPCError:
		if !hasError || hasResult {
			return failf(PropValid, "transcript.ParseRPC made an error response without an error: %v", m.Obj)
		}
	}
	return nil
}

// lineStarts are the byte offsets at which each physical line of data
// starts (index 0 is line 1).
func lineStarts(data []byte) []int64 {
	starts := []int64{0}
	for i, b := range data {
		if b == '\n' && i+1 < len(data) {
			starts = append(starts, int64(i+1))
		}
	}
	if len(data) == 0 {
		return nil
	}
	return starts
}

// checkLocated judges where findings say they are: a line of the input
// (or none, for the rules that are about the whole stream), at the byte
// offset that line starts at, with a column inside it and a JSON pointer
// that is one.
func checkLocated(data []byte, fs []finding.Finding, wholeStream map[string]bool) *Failure {
	starts := lineStarts(data)
	for _, f := range fs {
		id := ""
		if f.Rule != nil {
			id = f.Rule.ID
		}
		switch {
		case id == "":
			return failf(PropValid, "a finding names no rule: %s", f)
		case strings.TrimSpace(f.Message) == "":
			return failf(PropValid, "a finding says nothing: %s", f)
		case f.Line < 0 || f.Line > len(starts):
			return failf(PropValid, "a finding names line %d of a %d-line input: %s", f.Line, len(starts), f)
		case f.Line == 0 && !wholeStream[id]:
			return failf(PropValid, "a finding names no line: %s", f)
		case f.Line > 0 && f.Offset != starts[f.Line-1]:
			return failf(PropValid, "a finding names line %d at byte %d, but that line starts at byte %d: %s", f.Line, f.Offset, starts[f.Line-1], f)
		case !validPointer(f.Pointer):
			return failf(PropValid, "a finding's pointer %q is no JSON pointer: %s", f.Pointer, f)
		}
		if f.Column != 0 && f.Line > 0 {
			end := int64(len(data))
			if f.Line < len(starts) {
				end = starts[f.Line]
			}
			if f.Column < 1 || int64(f.Column) > end-starts[f.Line-1]+1 {
				return failf(PropValid, "a finding names column %d of line %d, which has %d bytes: %s", f.Column, f.Line, end-starts[f.Line-1], f)
			}
		}
	}
	return nil
}

// rpcStreamRules are the findings that may be about a whole JSON-RPC
// stream rather than one line: what the stream is (no schema for it), and
// a transcript's own file-level errors.
var rpcStreamRules = map[string]bool{
	validate.RuleUnknownDialect.ID:   true,
	validate.RuleNoKnownEvents.ID:    true,
	validate.RuleNoSchema.ID:         true,
	validate.RuleTranscriptLine.ID:   true,
	appserver.RuleTranscriptPaths.ID: true,
}

// validateAll runs validate.Stream on rd and collects every finding.
func validateAll(rd io.Reader, jobs int) ([]finding.Finding, *validate.Result, error) {
	var fs []finding.Finding
	res, err := validate.Stream(context.Background(), rd, "input", validate.Options{Jobs: jobs, MaxLineBytes: 1 << 16},
		func(f finding.Finding, _ finding.Severity) { fs = append(fs, f) })
	return fs, res, err
}

// CheckACP judges validate on arbitrary bytes seeded with ACP sessions:
// editor wire logs ({"dir","t_ms","line"} records), bare JSON-RPC 2.0
// logs (directions guessed) and agentconform/v1 transcripts of `gemini
// --acp`, judged by package acp's trace and rules. validate must not fail
// on an in-memory reader, every finding must be located (checkLocated),
// and the findings must not depend on how the bytes are read.
func CheckACP(data []byte) *Failure { return checkRPCValidate(data, "ACP") }

// checkRPCValidate is CheckACP and the transcript half of CheckAppServer.
func checkRPCValidate(data []byte, what string) *Failure {
	defer watchWhat(time.Now(), rpcDeadline, fmt.Sprintf("validate (%s) on %d bytes", what, len(data)))()
	fs, res, err := validateAll(bytes.NewReader(data), 1)
	if err != nil {
		return failf(PropNoPanic, "validate failed on an in-memory reader: %v", err)
	}
	if f := checkLocated(data, fs, rpcStreamRules); f != nil {
		return f
	}
	split, sres, err := validateAll(iotest.HalfReader(iotest.OneByteReader(bytes.NewReader(data))), 2)
	if err != nil {
		return failf(PropValid, "validate failed on one-byte reads: %v", err)
	}
	if a, b := findingStrings(fs), findingStrings(split); strings.Join(a, "\n") != strings.Join(b, "\n") || res.Dialect != sres.Dialect || res.Lines != sres.Lines {
		return failf(PropValid, "the findings depend on how the bytes are read:\n whole: %s %d lines %q\n split: %s %d lines %q",
			res.Dialect, res.Lines, a, sres.Dialect, sres.Lines, b)
	}
	return nil
}

// findingStrings renders findings for comparison, in a stable order (two
// workers may report per-line findings in another order).
func findingStrings(fs []finding.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		id := ""
		if f.Rule != nil {
			id = f.Rule.ID
		}
		out[i] = fmt.Sprintf("%s line=%d off=%d col=%d ptr=%q: %s", id, f.Line, f.Offset, f.Column, f.Pointer, f.Message)
	}
	sort.Strings(out)
	return out
}

// CheckAppServer judges package appserver on arbitrary bytes: a log
// with each message's side in front ('>' the client wrote it, '<' the
// server did; a line "." is the client closing stdin, "x" the server
// exiting) is fed to appserver.Checker straight, with the compiled
// schemas of the newest Codex; anything else goes through validate, which
// judges app-server transcripts along every path of their branches, and
// app-server logs (wire records, bare messages of both directions or of
// the server's alone). Neither may panic or hang; every finding is
// located.
func CheckAppServer(data []byte) *Failure {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || !strings.ContainsRune("<>.x", rune(t[0])) {
		return checkRPCValidate(data, "app-server")
	}
	defer watchWhat(time.Now(), rpcDeadline, fmt.Sprintf("appserver.Checker on %d bytes", len(data)))()
	s, err := appserver.LoadSchema("")
	if err != nil {
		return failf(PropNoPanic, "the app-server schemas: %v", err)
	}
	var fs []finding.Finding
	c := &appserver.Checker{Schema: s, File: "input", Report: func(f finding.Finding) { fs = append(fs, f) }}
	var off int64
	lines := bytes.Split(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	last := appserver.Event{Kind: appserver.EvExit, Line: 1}
	for i, l := range lines {
		ev := appserver.Event{Line: i + 1, Offset: off}
		last.Line, last.Offset = ev.Line, ev.Offset
		off += int64(len(l)) + 1
		switch {
		case len(l) == 0:
		case string(l) == ".":
			ev.Kind = appserver.EvStdinClosed
			c.Event(ev)
		case string(l) == "x":
			ev.Kind = appserver.EvExit
			c.Event(ev)
		case l[0] == '>' || l[0] == '<':
			ev.Dir = appserver.FromClient
			if l[0] == '<' {
				ev.Dir = appserver.FromServer
			}
			ev.Text = string(l[1:])
			c.Event(ev)
		}
	}
	if len(lines) > 0 {
		c.Event(last)
	}
	return checkLocated(data, fs, nil)
}

// rpcSeeds returns the seeds of the JSON-RPC targets on arbitrary bytes.
func rpcSeeds(target string) [][]byte {
	var out [][]byte
	switch target {
	case RawRPCMessage:
		out = rpcMessageSeeds()
	case RawACP:
		for _, name := range acpfixtures.Names() {
			b, err := fs.ReadFile(acpfixtures.FS(), name+".jsonl")
			if err == nil && len(b) <= rawSeedMax {
				out = append(out, b)
			}
			t, err := acpfixtures.Load(name)
			if err != nil {
				continue
			}
			wire, bare, agent := acpLogs(t)
			out = append(out, wire, bare, agent)
		}
		for _, src := range acpShapes {
			out = append(out, []byte(src))
		}
	case RawAppServer:
		names, _ := asfixtures.Names()
		for _, name := range names {
			b, err := fs.ReadFile(asfixtures.FS(), name+".jsonl")
			if err == nil && len(b) <= rawSeedMax {
				out = append(out, b)
			}
			t, err := asfixtures.Load(name)
			if err != nil {
				continue
			}
			tagged, wire, bare, server := appServerLogs(t)
			out = append(out, tagged, wire, bare, server)
		}
		for _, src := range appServerShapes {
			out = append(out, []byte(src))
		}
	}
	return out
}

// acpShapes are small ACP transcripts of the shapes replay allows and
// the captures do not show: a loop back to the prompt it serves, a case
// that branches to another answer, a signal's branch, a second process.
var acpShapes = []string{
	`{"transcript":"agentconform/v1","cli":"gemini","cli_version":"0.61.0","argv":["gemini","--acp"]}
{"in":{"method":"initialize"},"capture":{"i":"/id"},"recorded":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}"}
{"out":"{\"jsonrpc\":\"2.0\",\"id\":{{json:i}},\"result\":{\"protocolVersion\":1}}"}
{"label":"prompt"}
{"in":{"method":"session/prompt"},"capture":{"p":"/id"},"recorded":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s\",\"prompt\":[]}}","cases":[{"match":{"params":{"sessionId":"x"}},"goto":"other"}]}
{"on_signal":{"SIGINT":"goto:other"}}
{"out":"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}}}"}
{"delay_ms":5,"cases":[{"match":{"method":"session/cancel"},"goto":"other"}]}
{"out":"{\"jsonrpc\":\"2.0\",\"id\":{{json:p}},\"result\":{\"stopReason\":\"end_turn\"}}"}
{"goto":"prompt"}
{"label":"other"}
{"out":"{\"jsonrpc\":\"2.0\",\"id\":{{json:p}},\"result\":{\"stopReason\":\"cancelled\"}}"}
{"exit":0}
{"next_process":true}
{"in":{"method":"initialize"},"capture":{"i":"/id"}}
{"out":"{\"jsonrpc\":\"2.0\",\"id\":{{json:i}},\"result\":{\"protocolVersion\":1}}"}
{"stdin_eof":true}
{"exit":0}
`,
}

// appServerShapes are small app-server transcripts of the shapes replay
// allows and the captures do not show: a loop back to turn/start, an
// approval's cases, the interrupted branch.
var appServerShapes = []string{
	`{"transcript":"agentconform/v1","cli":"codex","cli_version":"0.169.0","argv":["codex","app-server"]}
{"in":{"method":"initialize"},"capture":{"id1":"/id"}}
{"out":"{\"id\":{{json:id1}},\"result\":{\"userAgent\":\"x\"}}"}
{"in":{"method":"initialized"}}
{"label":"turn"}
{"in":{"method":"turn/start"},"capture":{"t":"/id"}}
{"out":"{\"id\":{{json:t}},\"result\":{\"turn\":{\"id\":\"1\",\"items\":[],\"status\":\"inProgress\",\"error\":null}}}"}
{"out":"{\"method\":\"turn/started\",\"params\":{\"threadId\":\"th\",\"turn\":{\"id\":\"1\",\"items\":[],\"status\":\"inProgress\",\"error\":null}}}"}
{"out":"{\"id\":0,\"method\":\"item/commandExecution/requestApproval\",\"params\":{\"threadId\":\"th\",\"turnId\":\"1\",\"itemId\":\"c\"}}"}
{"in":{"id":0},"cases":[{"match":{"result":{"decision":"accept"}},"goto":"accept"}]}
{"delay_ms":10}
{"label":"accept"}
{"out":"{\"method\":\"item/started\",\"params\":{\"threadId\":\"th\",\"turnId\":\"1\",\"item\":{\"type\":\"commandExecution\",\"id\":\"c\"}}}"}
{"out":"{\"method\":\"turn/completed\",\"params\":{\"threadId\":\"th\",\"turn\":{\"id\":\"1\",\"items\":[],\"status\":\"completed\",\"error\":null}}}"}
{"goto":"turn"}
{"label":"interrupted"}
{"out":"{\"method\":\"turn/completed\",\"params\":{\"threadId\":\"th\",\"turn\":{\"id\":\"1\",\"items\":[],\"status\":\"interrupted\",\"error\":null}}}"}
{"stdin_eof":true}
{"exit":0}
`,
	">{\"id\":1,\"method\":\"turn/start\",\"params\":{}}\n<{\"id\":1,\"result\":{}}\n<{\"id\":1,\"result\":{}}\n<{\"id\":7,\"method\":\"item/fileChange/requestApproval\",\"params\":{}}\n.\nx\n<{\"method\":\"turn/completed\",\"params\":{\"turn\":{\"id\":\"9\",\"status\":\"completed\"}}}\n",
}

// wireRecord is one line of a wire log: {"dir","t_ms","line"} (in: the
// client wrote it).
func wireRecord(w *bytes.Buffer, in bool, tms int64, line string) {
	dir := "out"
	if in {
		dir = "in"
	}
	rec, _ := json.Marshal(map[string]any{"dir": dir, "t_ms": max(tms, 0), "line": line})
	w.Write(rec)
	w.WriteByte('\n')
}

// acpLogs renders the main path of an ACP transcript as the editor's
// wire log, as a bare log of its JSON-RPC lines, and as the agent's
// stdout alone.
func acpLogs(t *transcript.Transcript) (wire, bare, agent []byte) {
	paths, err := acp.Paths(t)
	if err != nil || len(paths) == 0 {
		return nil, nil, nil
	}
	var w, b, a bytes.Buffer
	for _, entries := range paths[0].Processes {
		for _, e := range entries {
			wireRecord(&w, e.From == acp.Client, e.TMS, string(e.Raw))
			b.Write(e.Raw)
			b.WriteByte('\n')
			if e.From == acp.Agent {
				a.Write(e.Raw)
				a.WriteByte('\n')
			}
		}
	}
	return w.Bytes(), b.Bytes(), a.Bytes()
}

// appServerLogs renders the main path of an app-server transcript as the
// side-tagged log CheckAppServer feeds the checker, as a wire log, as a
// bare log of both directions and as the server's stdout alone.
func appServerLogs(t *transcript.Transcript) (tagged, wire, bare, server []byte) {
	var tg, w, b, sv bytes.Buffer
	for _, part := range t.Processes() {
		for _, ev := range appserver.Events(part) {
			switch ev.Kind {
			case appserver.EvStdinClosed:
				tg.WriteString(".\n")
			case appserver.EvExit:
				tg.WriteString("x\n")
			default:
				text := ev.Text
				if ev.Msg != nil {
					mb, _ := json.Marshal(ev.Msg.Obj)
					text = string(mb)
				}
				client := ev.Dir == appserver.FromClient
				if client {
					tg.WriteByte('>')
				} else {
					tg.WriteByte('<')
					sv.WriteString(text)
					sv.WriteByte('\n')
				}
				tg.WriteString(text)
				tg.WriteByte('\n')
				wireRecord(&w, client, 0, text)
				b.WriteString(text)
				b.WriteByte('\n')
			}
		}
	}
	return tg.Bytes(), w.Bytes(), b.Bytes(), sv.Bytes()
}

// templateRE matches the {{name}} and {{json:name}} templates of a
// transcript's line.
var templateRE = regexp.MustCompile(`\{\{[^{}]*\}\}`)

// rpcMessageSeeds are JSON-RPC lines of both surfaces, one of each shape
// (kind, method, the members present) the fixtures hold, and the edge
// cases of the framing.
func rpcMessageSeeds() [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	add := func(line string) {
		if len(line) > 4096 {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &obj) != nil {
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var method string
		json.Unmarshal(obj["method"], &method)
		sig := method + " " + strings.Join(keys, ",")
		if !seen[sig] {
			seen[sig] = true
			out = append(out, []byte(line))
		}
	}
	var ts []*transcript.Transcript
	for _, name := range acpfixtures.Names() {
		if t, err := acpfixtures.Load(name); err == nil {
			ts = append(ts, t)
		}
	}
	if names, err := asfixtures.Names(); err == nil {
		for _, name := range names {
			if t, err := asfixtures.Load(name); err == nil {
				ts = append(ts, t)
			}
		}
	}
	for _, t := range ts {
		for _, s := range t.Steps {
			switch {
			case s.Op == transcript.OpOut:
				add(templateRE.ReplaceAllString(s.Text, "7"))
			case s.Op == transcript.OpIn && s.Recorded != "":
				add(s.Recorded)
			}
		}
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","id":"a","result":null}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"x","params":[]}`,
		`{"jsonrpc":"2.0","method":"x","params":"no"}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
		`{"id":9223372036854775808,"method":"turn/start"}`,
		`{"id":1.5,"result":{}}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"a/b\"}\r",
		`[{"jsonrpc":"2.0","method":"batch"}]`,
		`{"jsonrpc":"2.0","method":"x"} {"jsonrpc":"2.0","method":"y"}`,
	} {
		out = append(out, []byte(s))
	}
	return out
}
