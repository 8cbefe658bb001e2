package validate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/acp/acpschema"
	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
)

// Logs of the two JSON-RPC surfaces (an ACP session, a `codex app-server`
// session) come as {"dir":"in"|"out","t_ms":N,"line":"<message>"} records
// (a wire copy of both directions: in is what the client wrote, out what
// the agent or server wrote) or as the messages themselves, one per line:
// both directions as a proxy logs them, or one, as a user tees the
// agent's or server's stdout. Which protocol a log speaks is told from its
// first message: "jsonrpc":"2.0" is ACP; an object with a method, or an
// id and a result or an error, and no "jsonrpc" and no "type" (every
// event of the JSONL streams has one) is the app-server's.

// rpcLog is the protocol of a JSON-RPC log; "" for none.
type rpcLog string

const (
	logACP       rpcLog = "acp"
	logAppServer rpcLog = "app-server"
)

// sniffRPCLog peeks at the first lines of br (at most 16 records, within
// 64 KiB) without consuming them and tells the protocol of the first
// message: a record's line, or the line itself. Records without a line
// (meta, err) are passed over. It reads no further than it needs to: the
// peek grows until a complete line decides (or the input ends), so a log
// piped in line by line is judged as it comes.
func sniffRPCLog(br *bufio.Reader) rpcLog {
	for need := 1; ; {
		_, err := br.Peek(need) // waits for one more read's worth, at most
		b, _ := br.Peek(br.Buffered())
		verdict, decided := sniffLines(b, err != nil)
		if decided || err != nil || len(b) >= 64<<10 {
			return verdict
		}
		need = len(b) + 1
	}
}

// sniffLines looks at the complete lines of b (and, when the input ends
// there, at its last line too); decided is false when they do not tell
// yet.
func sniffLines(b []byte, atEnd bool) (verdict rpcLog, decided bool) {
	for n := 0; len(b) > 0; n++ {
		if n == 16 {
			return "", true
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 && !atEnd {
			return "", false
		}
		line := b
		if i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(line, &obj) != nil {
			return "", true
		}
		if d, ok := obj["dir"]; ok {
			var dir, inner string
			json.Unmarshal(d, &dir)
			if json.Unmarshal(obj["line"], &inner) != nil || dir != "in" && dir != "out" {
				continue
			}
			obj = nil
			if json.Unmarshal([]byte(inner), &obj) != nil {
				return "", true
			}
		}
		return rpcProtocol(obj), true
	}
	return "", atEnd
}

// rpcProtocol tells the protocol of one decoded message.
func rpcProtocol(obj map[string]json.RawMessage) rpcLog {
	if v, ok := obj["jsonrpc"]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil && s == "2.0" {
			return logACP
		}
		return ""
	}
	if _, ok := obj["type"]; ok {
		return ""
	}
	var method string
	if m, ok := obj["method"]; ok && json.Unmarshal(m, &method) == nil && method != "" {
		return logAppServer
	}
	_, id := obj["id"]
	_, res := obj["result"]
	_, er := obj["error"]
	if id && (res || er) {
		return logAppServer
	}
	return ""
}

// logLine is one line of a JSON-RPC log: a record's line with its
// direction, or a bare line (dir "").
type logLine struct {
	dir    string // "in", "out" or "" (a bare line)
	raw    []byte
	tms    int64
	line   int
	offset int64
}

// readRPCLog reads the lines of a JSON-RPC log, passing over the records
// without a message (meta, err). A line longer than the longest read is
// reported with rule tooLong.
func readRPCLog(ctx context.Context, r io.Reader, name string, opts Options, p *pipe, tooLong *finding.Rule) ([]logLine, error) {
	rd := jsonl.NewReader(r, jsonl.Options{MaxLineBytes: opts.MaxLineBytes, Context: ctx})
	var out []logLine
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, err
		}
		if l.TooLong {
			p.emit(finding.Finding{Rule: tooLong, File: name, Line: l.Number, Offset: l.Offset,
				Message: "the line is longer than the longest line read", Expected: fmt.Sprintf("at most %d bytes", l.Limit), Actual: fmt.Sprintf("%d bytes", l.Len)})
			continue
		}
		raw := append([]byte(nil), l.Bytes...)
		ll := logLine{raw: raw, tms: -1, line: l.Number, offset: l.Offset}
		var rec struct {
			Dir  string  `json:"dir"`
			TMS  *int64  `json:"t_ms"`
			Line *string `json:"line"`
		}
		if json.Unmarshal(raw, &rec) == nil && rec.Dir != "" {
			if rec.Dir != "in" && rec.Dir != "out" || rec.Line == nil {
				continue // meta records (a start, a signal, an exit), stderr
			}
			ll.dir, ll.raw = rec.Dir, []byte(*rec.Line)
			if rec.TMS != nil {
				ll.tms = *rec.TMS
			}
		}
		out = append(out, ll)
	}
	st := rd.Stats()
	p.res.Lines, p.res.Empty, p.res.Bytes = st.Lines, st.Empty, st.Bytes
	return out, nil
}

// oneSided reports whether a log holds one direction only: its records
// are all "out", or, for bare lines, none is a request or notification
// that the client sends (clientMethod), so that the client's side is
// missing. A log with no line at all is not.
func oneSided(lines []logLine, clientMethod func(string) bool) bool {
	if len(lines) == 0 {
		return false
	}
	for _, l := range lines {
		switch l.dir {
		case "in":
			return false
		case "out":
			continue
		}
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(l.raw, &m) == nil && m.Method != "" && clientMethod(m.Method) {
			return false
		}
	}
	return true
}

// ruleIDs lists the ids of rules.
func ruleIDs(rules []*finding.Rule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.ID
	}
	return out
}

// streamACPLog validates a log of an ACP session (see above). Bare lines
// of both directions are told apart by what they are (a request of a
// method the agent handles comes from the client, session/update and the
// agent's requests from the agent, a response from the side that did not
// send the request it answers); a log with none of the client's lines is
// the agent's stdout, judged on what one direction shows
// (acp.CheckOptions.AgentOnly).
func streamACPLog(ctx context.Context, r io.Reader, name string, opts Options, report Reporter) (*Result, error) {
	res := &Result{Name: name, Counts: map[string]int{}, Rules: map[string]*finding.Rule{}, Dialect: ACPDialect,
		Profile: acpProfile(opts.Profile), SchemaFile: acpschema.SchemaFile, SchemaVersion: acpschema.SchemaVersion}
	p := &pipe{opts: opts, name: name, res: res, report: report}
	sv, err := acpschema.Schema()
	if err != nil {
		return res, err
	}
	lines, err := readRPCLog(ctx, r, name, opts, p, acp.RuleMessage)
	if err != nil {
		return res, err
	}
	agentOnly := oneSided(lines, func(m string) bool { return sv.Knows(acp.Agent, m) })
	var entries []acp.Entry
	open := map[acp.Side]map[string]bool{acp.Client: {}, acp.Agent: {}} // requests not answered yet, by side and id
	for _, l := range lines {
		var e acp.Entry
		switch {
		case l.dir == "in":
			e = acp.NewEntry(acp.Client, l.raw)
		case l.dir == "out" || agentOnly:
			e = acp.NewEntry(acp.Agent, l.raw)
		default:
			e = acp.NewEntry(guessSide(l.raw, open), l.raw)
		}
		if m := e.Msg; m != nil {
			switch m.Kind {
			case acp.Request:
				open[e.From][m.IDKey()] = true
			case acp.Response:
				delete(open[e.From.Other()], m.IDKey())
			}
		}
		e.Line, e.Offset, e.TMS = l.line, l.offset, l.tms
		entries = append(entries, e)
	}
	if agentOnly {
		res.OneSide = string(acp.Agent)
		res.NotJudged = ruleIDs(acp.AgentOnlyNotJudged)
		p.emit(finding.Finding{Rule: acp.RuleOneSide, File: name, Line: lines[0].line, Offset: lines[0].offset,
			Message:  "the log holds the agent's lines only (its stdout): not judged without the client's lines: " + strings.Join(res.NotJudged, ", "),
			Expected: "both directions, for every rule", Actual: "the agent's lines alone"})
	}
	for _, f := range acp.Check(acp.NewTrace(entries), name, acp.CheckOptions{Schema: sv, Profile: acp.Profile(res.Profile), AgentOnly: agentOnly}) {
		p.emit(f)
	}
	return res, nil
}

// userAgentVersion finds the server's version in initialize's result:
// its userAgent is "<client name>/<server version> (...)".
var userAgentVersion = regexp.MustCompile(`^[^/\s]*/(\d+\.\d+\.\d+)`)

// streamAppServerLog validates a log of a `codex app-server` session
// (see above) with package appserver: the schema bundle of the version
// the log's initialize result names (else Options.CLIVersion, else the
// newest), id pairing, turns and approvals. Bare lines of both directions
// are told apart by their methods (the bundle says which side sends
// which) and, for responses, by the outstanding requests; a log with none
// of the client's requests or notifications is the server's stdout,
// judged on what one direction shows (appserver.Checker.ServerOnly). The
// end of the log stands for the server's exit.
func streamAppServerLog(ctx context.Context, r io.Reader, name string, opts Options, report Reporter) (*Result, error) {
	res := &Result{Name: name, Counts: map[string]int{}, Rules: map[string]*finding.Rule{}, Dialect: schemas.Codex}
	p := &pipe{opts: opts, name: name, res: res, report: report}
	lines, err := readRPCLog(ctx, r, name, opts, p, appserver.RuleMessage)
	if err != nil {
		return res, err
	}
	msgs := make([]*transcript.RPCMessage, len(lines))
	for i, l := range lines {
		m, err := transcript.ParseRPC(l.raw)
		if err != nil {
			continue // the checker reports it
		}
		msgs[i] = m
		if res.CLIVersion != "" || m.Kind != transcript.RPCResponse {
			continue
		}
		if result, ok := m.Obj["result"].(map[string]any); ok {
			if ua, ok := result["userAgent"].(string); ok {
				if sm := userAgentVersion.FindStringSubmatch(ua); sm != nil {
					res.CLIVersion = sm[1]
				}
			}
		}
	}
	version := opts.CLIVersion
	if version == "" {
		version = res.CLIVersion
	}
	s := appServerSchema(opts, version, name, res, p)
	clientMethod := func(m string) bool { return s != nil && s.ClientMethod(m) }
	serverOnly := oneSided(lines, clientMethod)
	c := &appserver.Checker{Schema: s, File: name, Report: p.emit, ServerOnly: serverOnly}
	if serverOnly {
		res.OneSide = "server"
		res.NotJudged = ruleIDs(appserver.ServerOnlyNotJudged)
		p.emit(finding.Finding{Rule: appserver.RuleOneSide, File: name, Line: lines[0].line, Offset: lines[0].offset,
			Message: "the log holds the server's lines only (its stdout): not judged without the client's lines: " + strings.Join(res.NotJudged, ", ") +
				"; a result is not judged by schema (which request it answers is not in the log)",
			Expected: "both directions, for every rule", Actual: "the server's lines alone"})
	}
	open := map[appserver.Dir]map[string]bool{appserver.FromClient: {}, appserver.FromServer: {}}
	for i, l := range lines {
		ev := appserver.Event{Line: l.line, Offset: l.offset, Text: string(l.raw), Msg: msgs[i], Dir: appserver.FromServer}
		switch {
		case l.dir == "in":
			ev.Dir = appserver.FromClient
		case l.dir == "out" || serverOnly || msgs[i] == nil:
		default:
			ev.Dir = guessAppServerSide(msgs[i], clientMethod, open)
		}
		if m := msgs[i]; m != nil {
			switch m.Kind {
			case transcript.RPCRequest:
				open[ev.Dir][m.ID] = true
			case transcript.RPCResponse, transcript.RPCError:
				other := appserver.FromClient
				if ev.Dir == appserver.FromClient {
					other = appserver.FromServer
				}
				delete(open[other], m.ID)
			}
		}
		c.Event(ev)
	}
	end := appserver.Event{Kind: appserver.EvEnd}
	if n := len(lines); n > 0 {
		end.Line, end.Offset = lines[n-1].line, lines[n-1].offset
	}
	c.Event(end)
	return res, nil
}

// guessAppServerSide tells who wrote a bare line of an app-server log of
// both directions: a request or notification by its method (the client's
// methods are the bundle's client requests and notifications), a response
// by the outstanding request it answers (when both sides have one with
// its id, a result with a "decision" answers the server's approval
// request).
func guessAppServerSide(m *transcript.RPCMessage, clientMethod func(string) bool, open map[appserver.Dir]map[string]bool) appserver.Dir {
	switch m.Kind {
	case transcript.RPCRequest, transcript.RPCNotification:
		if clientMethod(m.Method) {
			return appserver.FromClient
		}
		return appserver.FromServer
	}
	byClient, byServer := open[appserver.FromClient][m.ID], open[appserver.FromServer][m.ID]
	switch {
	case byServer && !byClient:
		return appserver.FromClient
	case byServer && byClient:
		if result, ok := m.Obj["result"].(map[string]any); ok {
			if _, ok := result["decision"]; ok {
				return appserver.FromClient
			}
		}
	}
	return appserver.FromServer
}
