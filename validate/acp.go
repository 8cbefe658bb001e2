package validate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/acp/acpschema"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/transcript"
)

// ACPDialect is the Result.Dialect of an Agent Client Protocol session.
const ACPDialect = "acp"

// validateACPTranscript judges an agentconform/v1 transcript of an ACP
// session (acp.IsTranscript): both directions, client lines from the in
// steps' recorded lines, along every path through its branches, under the
// rules of package acp and the ACP schema.
func validateACPTranscript(t *transcript.Transcript, res *Result, emit func(finding.Finding)) error {
	res.Dialect = ACPDialect
	res.SchemaFile = acpschema.SchemaFile
	res.SchemaVersion = acpschema.SchemaVersion
	res.CLIVersion = t.Header.CLIVersion
	sv, err := acpschema.Schema()
	if err != nil {
		return err
	}
	paths, err := acp.Paths(t)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range paths {
		for _, entries := range p.Processes {
			res.Lines += len(entries)
			for _, f := range acp.Check(acp.NewTrace(entries), t.Name, acp.CheckOptions{Schema: sv}) {
				if p.Name != "" {
					f.Message += " (on the path through " + p.Name + ")"
				}
				key := f.Rule.ID + "\x00" + strconv.Itoa(f.Line) + "\x00" + f.Pointer
				if seen[key] {
					continue
				}
				seen[key] = true
				emit(f)
			}
		}
	}
	return nil
}

// sniffACPLog reports whether a stream is a log of an ACP session: its
// first line is a JSON-RPC 2.0 message, or a {"dir","line"} record whose
// line is one.
func sniffACPLog(br *bufio.Reader) bool {
	for n := 256; n <= 64<<10; n *= 4 {
		b, err := br.Peek(n)
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return isACPLine(b[:i])
		}
		if err != nil {
			return isACPLine(b)
		}
	}
	return false
}

func isACPLine(b []byte) bool {
	var rec struct {
		JSONRPC string `json:"jsonrpc"`
		Dir     string `json:"dir"`
		Line    string `json:"line"`
	}
	if json.Unmarshal(bytes.TrimSpace(b), &rec) != nil {
		return false
	}
	if rec.JSONRPC == "2.0" {
		return true
	}
	if rec.Dir != "" {
		var inner struct {
			JSONRPC string `json:"jsonrpc"`
		}
		return json.Unmarshal([]byte(rec.Line), &inner) == nil && inner.JSONRPC == "2.0"
	}
	return false
}

// streamACPLog validates a log of an ACP session, one line per message:
// either {"dir":"in"|"out","t_ms":N,"line":"<the message>"} records (in:
// the client wrote it to the agent's stdin; out: the agent wrote it), as
// agentconform's ACP client writes its wire log, or the JSON-RPC messages
// themselves, whose direction is then told by what they are (a request of
// a method the agent handles comes from the client, session/update and
// the agent's requests from the agent, a response from the side that
// did not send the request it answers).
func streamACPLog(ctx context.Context, r io.Reader, name string, opts Options, report Reporter) (*Result, error) {
	res := &Result{Name: name, Counts: map[string]int{}, Rules: map[string]*finding.Rule{}, Dialect: ACPDialect,
		SchemaFile: acpschema.SchemaFile, SchemaVersion: acpschema.SchemaVersion}
	p := &pipe{opts: opts, name: name, res: res, report: report}
	sv, err := acpschema.Schema()
	if err != nil {
		return res, err
	}
	rd := jsonl.NewReader(r, jsonl.Options{MaxLineBytes: opts.MaxLineBytes, Context: ctx})
	var entries []acp.Entry
	open := map[acp.Side]map[string]bool{acp.Client: {}, acp.Agent: {}} // requests not answered yet, by side and id
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, err
		}
		if l.TooLong {
			p.emit(finding.Finding{Rule: acp.RuleMessage, File: name, Line: l.Number, Offset: l.Offset, Message: "the line is longer than the longest line read"})
			continue
		}
		raw := append([]byte(nil), l.Bytes...)
		var rec struct {
			Dir  string `json:"dir"`
			TMS  *int64 `json:"t_ms"`
			Line *string
		}
		e := acp.Entry{}
		if json.Unmarshal(raw, &rec) == nil && rec.Dir != "" {
			if rec.Dir != "in" && rec.Dir != "out" || rec.Line == nil {
				continue // meta records (a start, a signal, an exit)
			}
			e = acp.NewEntry(acp.Agent, []byte(*rec.Line))
			if rec.Dir == "in" {
				e.From = acp.Client
			}
			if rec.TMS != nil {
				e.TMS = *rec.TMS
			}
		} else {
			e = acp.NewEntry(guessSide(raw, open), raw)
		}
		if m := e.Msg; m != nil {
			switch m.Kind {
			case acp.Request:
				open[e.From][m.IDKey()] = true
			case acp.Response:
				delete(open[e.From.Other()], m.IDKey())
			}
		}
		e.Line, e.Offset = l.Number, l.Offset
		entries = append(entries, e)
	}
	st := rd.Stats()
	res.Lines, res.Empty, res.Bytes = st.Lines, st.Empty, st.Bytes
	for _, f := range acp.Check(acp.NewTrace(entries), name, acp.CheckOptions{Schema: sv}) {
		p.emit(f)
	}
	return res, nil
}

// guessSide tells who wrote a JSON-RPC line of a log without directions:
// a response comes from the side that did not send the outstanding
// request with its id (when both sides have one, a result with an
// "outcome" or a "content" answers the agent's permission or file
// request); a request or notification from the side that does not handle
// its method.
func guessSide(raw []byte, open map[acp.Side]map[string]bool) acp.Side {
	m, err := acp.Decode(raw)
	if err != nil {
		return acp.Agent
	}
	switch m.Kind {
	case acp.Response:
		byClient, byAgent := open[acp.Client][m.IDKey()], open[acp.Agent][m.IDKey()]
		switch {
		case byAgent && !byClient:
			return acp.Client
		case byAgent && byClient && (bytes.Contains(m.Result, []byte(`"outcome"`)) || bytes.Contains(m.Result, []byte(`"content"`))):
			return acp.Client
		}
		return acp.Agent
	default:
		sv, err := acpschema.Schema()
		if err == nil && sv.Knows(acp.Client, m.Method) {
			return acp.Agent
		}
		return acp.Client
	}
}

// ACPRules are the rules validate applies to ACP sessions, for catalogues.
func ACPRules() []*finding.Rule { return acp.Rules }
