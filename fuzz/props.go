package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/reference/unified"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/sequence"
	"github.com/agentconform/agentconform/validate"
)

type unifiedEvent = unified.Event

// The properties every execution is judged by. A crasher's header names
// the one it breaks.
const (
	// PropNoPanic: the adapter neither panics nor crashes.
	PropNoPanic = "no-panic"
	// PropEnds: the adapter ends its stream properly: the profile's
	// terminal event (unified sessionEnded, last and once; shim result,
	// followed by nothing but message_stop) and, for an external adapter,
	// its end record.
	PropEnds = "ends-stream"
	// PropValid: every event is valid for the adapter's profile (schema,
	// order, id pairing), as `agentconform validate` judges it.
	PropValid = "valid"
	// PropIDs: every tool and session id the adapter reports came from the
	// CLI's output (the CLI's id itself, or one the reference scheme derives
	// from it by a "#turn" or ".n" suffix when it was reused). An
	// app-server client is judged on its tool ids (the server's item ids):
	// the unified events need a sessionId before the client has read the
	// thread's, and a placeholder is all there is then.
	PropIDs = "ids-from-input"
	// PropLossless: the adapter neither invents nor loses what the
	// conformance lossless checks see (text, tool calls, file changes,
	// usage), compared with the reference translation of the same bytes or,
	// for mutations that change no content, with the unmutated run.
	PropLossless = "lossless"
	// PropDeadline: the execution finishes within its deadline.
	PropDeadline = "deadline"
	// PropOutcome: every turn gets one terminal outcome: one turn_end per
	// prompt the caller sent (never two); an app-server client reports
	// each turn the server completed, as the server's status says; an ACP
	// agent answers every session/prompt exactly once (cancelled after
	// session/cancel).
	PropOutcome = "turn-outcome"
	// PropAnswered: no request of the server is left unanswered by an
	// app-server client, or answered twice, and an approval is answered
	// with the caller's policy.
	PropAnswered = "requests-answered"
	// PropReaped: nothing is left running: no CLI process and no other
	// process the adapter started outlives it.
	PropReaped = "nothing-left-running"
)

// Properties lists the properties in the order they are checked.
var Properties = []string{PropNoPanic, PropDeadline, PropEnds, PropValid, PropOutcome, PropAnswered, PropIDs, PropLossless, PropReaped}

// A Failure is a property an execution broke.
type Failure struct {
	// Property is one of Properties.
	Property string
	// Message says how, for the report.
	Message string
}

// Error renders the failure as "property: message".
func (f *Failure) Error() string { return f.Property + ": " + f.Message }

func failf(prop, format string, args ...any) *Failure {
	return &Failure{Property: prop, Message: fmt.Sprintf(format, args...)}
}

// decoded is one event of the adapter's stream.
type decoded struct {
	raw []byte
	obj map[string]any
}

// decodeEvents parses the adapter's event lines.
func decodeEvents(lines [][]byte) ([]decoded, *Failure) {
	out := make([]decoded, 0, len(lines))
	for i, l := range lines {
		obj, fs := jsonl.Parse(l, jsonl.ParseOptions{})
		if obj == nil {
			msg := "not a JSON object"
			if len(fs) > 0 {
				msg = fs[0].Message
			}
			return nil, failf(PropValid, "event %d is not a JSON object (%s): %.200q", i+1, msg, l)
		}
		for _, f := range fs {
			// What the validator of an external adapter's output calls a
			// violation (invalid UTF-8, say) is one here too.
			if f.Rule != nil && f.Rule.Level == finding.Must {
				return nil, failf(PropValid, "event %d: %s: %s: %.200q", i+1, f.Rule.ID, f.Message, l)
			}
		}
		out = append(out, decoded{raw: l, obj: obj})
	}
	return out, nil
}

// checkEnds judges PropEnds on one profile's events.
func checkEnds(profile string, evs []decoded) *Failure {
	if len(evs) == 0 {
		return failf(PropEnds, "the adapter handed out no event at all: the caller never hears that the session ended")
	}
	typ := func(i int) string { s, _ := evs[i].obj["type"].(string); return s }
	switch profile {
	case "unified":
		n := 0
		for i := range evs {
			if typ(i) == "sessionEnded" {
				n++
			}
		}
		if n != 1 || typ(len(evs)-1) != "sessionEnded" {
			return failf(PropEnds, "want exactly one sessionEnded, as the last event; got %d, and the last event is %q", n, typ(len(evs)-1))
		}
	case "shim":
		last := len(evs) - 1
		if typ(last) == "message_stop" {
			last--
		}
		if last < 0 || typ(last) != "result" {
			got := "nothing"
			if last >= 0 {
				got = strconv.Quote(typ(last))
			}
			return failf(PropEnds, "want a result as the last event (message_stop may follow it); got %s", got)
		}
	}
	return nil
}

// streamValidator checks an adapter's events the way validate.Stream does
// (schema of the profile, sequence rules; MUST findings are violations),
// without its I/O pipeline, which costs more than the whole translation on
// streams this small. TestValidatorAgrees holds it to validate.Stream.
type streamValidator struct {
	v       *schemas.Validator
	dialect schemas.Dialect

	// valid remembers events (by their bytes) the schema found no problem
	// in: most events of an execution are the same as in the last one with
	// the same fixture (event ids are counters, the clock is fixed), and
	// schema validation is the costliest property.
	mu    sync.Mutex
	valid map[string]bool
}

// maxValidCache bounds the remembered valid events.
const maxValidCache = 1 << 16

// schemaOK reports whether the schema finds no problem in an event, and
// the problems when it does.
func (sv *streamValidator) schemaOK(e decoded) (bool, schemas.Result) {
	sv.mu.Lock()
	ok := sv.valid[string(e.raw)]
	sv.mu.Unlock()
	if ok {
		return true, schemas.Result{}
	}
	r := sv.v.Validate(e.obj)
	if len(r.Problems) > 0 {
		return false, r
	}
	sv.mu.Lock()
	if sv.valid == nil || len(sv.valid) >= maxValidCache {
		sv.valid = map[string]bool{}
	}
	sv.valid[string(e.raw)] = true
	sv.mu.Unlock()
	return true, r
}

var (
	validators   = map[string]*streamValidator{}
	validatorsMu sync.Mutex
)

// validatorFor returns the validator of a profile's stream.
func validatorFor(profile string) (*streamValidator, error) {
	validatorsMu.Lock()
	defer validatorsMu.Unlock()
	if sv, ok := validators[profile]; ok {
		return sv, nil
	}
	var d schemas.Dialect
	var p schemas.Profile
	switch profile {
	case "unified":
		d, p = schemas.UnifiedEvents, schemas.Unified
	case "shim":
		d, p = schemas.ShimEvents, schemas.Shim
	default:
		return nil, fmt.Errorf("fuzz: no validator for profile %q", profile)
	}
	v, err := schemas.Load(p, d, "")
	if err != nil {
		return nil, err
	}
	sv := &streamValidator{v: v, dialect: d}
	validators[profile] = sv
	return sv, nil
}

// violations returns the first violations (at most max) of the stream.
func (sv *streamValidator) violations(evs []decoded, max int) []string {
	var out []string
	add := func(line int, msg string) {
		if len(out) < max {
			out = append(out, fmt.Sprintf("event %d: %s", line, msg))
		}
	}
	checker, err := sequence.New(string(sv.dialect), sequence.Options{})
	if err != nil {
		return []string{err.Error()}
	}
	report := func(f finding.Finding) {
		if f.Rule != nil && finding.SeverityOf(f.Rule.Level, false) == finding.Violation {
			add(f.Line, f.Rule.ID+": "+f.Message)
		}
	}
	var off int64
	for i, e := range evs {
		if ok, r := sv.schemaOK(e); !ok {
			for _, p := range r.Problems {
				add(i+1, "schema: "+r.Kind+" "+p.Pointer+": "+p.Message)
			}
		}
		checker.Observe(sequence.Event{Line: i + 1, Offset: off, Len: int64(len(e.raw)), Dir: sequence.Out, Obj: e.obj}, report)
		off += int64(len(e.raw)) + 1
	}
	checker.End(report)
	return out
}

// officialViolations validates the events with validate.Stream itself,
// for reports and for TestValidatorAgrees.
func officialViolations(profile string, lines [][]byte) ([]string, error) {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	d := schemas.UnifiedEvents
	if profile == "shim" {
		d = schemas.ShimEvents
	}
	var out []string
	_, err := validate.Stream(context.Background(), &buf, "adapter", validate.Options{Dialect: d, Jobs: 1},
		func(f finding.Finding, sev finding.Severity) {
			if sev == finding.Violation && len(out) < 10 {
				out = append(out, f.String())
			}
		})
	return out, err
}

// checkIDs judges PropIDs: the tool and session ids of the events against
// the bytes the CLI wrote.
func checkIDs(profile string, evs []decoded, input []byte) *Failure {
	var keys []string
	switch profile {
	case "unified":
		keys = []string{"toolId", "sessionId"}
	case "shim":
		keys = []string{"id", "tool_use_id", "session_id"}
	}
	for i, e := range evs {
		for _, k := range keys {
			id, ok := e.obj[k].(string)
			if !ok || id == "" {
				continue
			}
			if profile == "shim" && k == "id" && e.obj["type"] != "tool_use" {
				continue
			}
			if !idFromInput(id, input) {
				return failf(PropIDs, "event %d (%v) reports %s %q, which the CLI never wrote", i+1, e.obj["type"], k, id)
			}
		}
	}
	return nil
}

// idFromInput reports whether id, or the id it was derived from, occurs
// in the CLI's output (as JSON string content).
func idFromInput(id string, input []byte) bool {
	for {
		if containsJSONString(input, id) {
			return true
		}
		// The reference scheme: raw#<turn>, raw#<turn>.<n>, and raw.<n>
		// for later states of a snapshot tool.
		i := strings.LastIndexAny(id, "#.")
		if i <= 0 || !digits(id[i+1:]) {
			return false
		}
		id = id[:i]
	}
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// containsJSONString reports whether s occurs in b as written inside a
// JSON string, or as a JSON decoder reads it: with each byte that is not
// UTF-8 replaced by U+FFFD.
func containsJSONString(b []byte, s string) bool {
	if bytes.Contains(b, []byte(s)) {
		return true
	}
	q, err := json.Marshal(s)
	if err != nil || len(q) < 2 {
		return false
	}
	if bytes.Contains(b, q[1:len(q)-1]) {
		return true
	}
	if utf8.Valid(b) {
		return false
	}
	fixed := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			fixed = append(fixed, "\uFFFD"...)
		} else {
			fixed = append(fixed, b[:n]...)
		}
		b = b[n:]
	}
	return bytes.Contains(fixed, []byte(s)) || bytes.Contains(fixed, q[1:len(q)-1])
}

// Summary is what the lossless property compares: what a caller of the
// adapter can see, with generated event ids and timestamps left out (the
// projection of the conformance lossless checks).
type Summary struct {
	Text  string
	Tools []ToolSummary
	Files []string
	Usage []string
}

// ToolSummary is one tool call as a caller sees it.
type ToolSummary struct {
	ID, Name, Input, Result string
	Success                 bool
	Error                   string
}

// summarize projects unified or shim events onto a Summary.
func summarize(profile string, evs []decoded) Summary {
	var s Summary
	var text strings.Builder
	index := map[string]int{}
	tool := func(id string) *ToolSummary {
		i, ok := index[id]
		if !ok {
			i = len(s.Tools)
			index[id] = i
			s.Tools = append(s.Tools, ToolSummary{ID: id})
		}
		return &s.Tools[i]
	}
	str := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	for _, e := range evs {
		o := e.obj
		switch profile {
		case "unified":
			switch o["type"] {
			case "textChunk":
				if o["role"] != "user" {
					text.WriteString(str(o, "content"))
				}
			case "toolStarted":
				t := tool(str(o, "toolId"))
				t.Name, t.Input = str(o, "toolName"), compactJSON(o["arguments"])
			case "toolCompleted":
				t := tool(str(o, "toolId"))
				t.Result, t.Error = compactJSON(o["result"]), str(o, "error")
				t.Success, _ = o["success"].(bool)
			case "fileChanged":
				s.Files = append(s.Files, str(o, "changeType")+" "+str(o, "filePath"))
			case "turnCompleted":
				if u, ok := o["usage"]; ok {
					s.Usage = append(s.Usage, compactJSON(u))
				}
			}
		case "shim":
			switch o["type"] {
			case "text":
				text.WriteString(str(o, "content"))
			case "tool_use":
				t := tool(str(o, "id"))
				t.Name, t.Input = str(o, "name"), compactJSON(o["input"])
			case "tool_result":
				t := tool(str(o, "tool_use_id"))
				t.Result = compactJSON(o["content"])
				isErr, _ := o["is_error"].(bool)
				t.Success = !isErr
			case "usage":
				s.Usage = append(s.Usage, compactJSON(o))
			}
		}
	}
	s.Text = text.String()
	return s
}

// compactJSON renders a decoded value canonically ("" for none).
func compactJSON(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// diffSummaries returns a readable difference, "" when equal.
func diffSummaries(want, got Summary) string {
	return cmp.Diff(want, got)
}

// clip shortens s for messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("... (%d bytes more)", len(s)-n)
}
