// Package sequence checks the stateful properties of a stream of decoded
// JSON events: the order of events, the pairing of ids (a tool call and its
// result, a control request and its response, an item's start and its
// completion), uniqueness of ids, and how the stream terminates. Field types
// are checked elsewhere (by schema validation); a checker here skips any
// field it cannot use and never panics on odd shapes.
//
// One Checker handles one stream in one dialect:
//
//   - "claude": Claude Code stdout (`--output-format stream-json`), or with
//     Options.Both a transcript of stdin and stdout in time order;
//   - "claude-stdin": what a client writes to Claude Code's stdin
//     (`--input-format stream-json`);
//   - "codex": `codex exec --json` stdout;
//   - "gemini": `gemini -o stream-json` stdout;
//   - "unified": the unified camelCase event model (docs/protocols/unified.md);
//   - "shim": the Claude-compatible shim contract (docs/protocols/shim.md).
//
// Memory is bounded by what is pending (open turns, unanswered calls and
// requests), never by the length of the stream. Ids that are no longer
// pending are remembered in a window of the most recent 4096 per ledger, so
// a duplicate id, a second result or a response after a cancel is caught
// when it comes within that window; one that comes later is not. Events
// whose type a dialect does not know are ignored here (they are reported as
// drift by the schema layer).
package sequence

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/finding"
)

// Direction says which way a line travelled. Only bidirectional dialects
// (a Claude transcript) care; everything else is Out.
type Direction int

const (
	// Out is a line the CLI wrote to stdout, or a line an adapter emitted.
	// It is the zero value, so single-direction callers need not set it.
	Out Direction = iota
	// In is a line written to the CLI's stdin.
	In
)

// String names the stream a direction stands for, as used in messages.
func (d Direction) String() string {
	switch d {
	case Out:
		return "stdout"
	case In:
		return "stdin"
	}
	return "Direction(" + strconv.Itoa(int(d)) + ")"
}

// Event is one decoded line of a stream, with where it came from so that
// findings can point at it.
type Event struct {
	// Line is the 1-based line number in the file.
	Line int
	// Offset is the byte offset of the line's first byte in the file.
	Offset int64
	// Len is the byte length of the line (used by line-size rules).
	Len int64
	// Dir is the direction of the line (stdout or stdin).
	Dir Direction
	// Obj is the decoded JSON object, as encoding/json produces it
	// (numbers are float64, or json.Number with UseNumber).
	Obj map[string]any
}

// DefaultShimMaxLine is the shim line budget used when Options.ShimMaxLine
// is 0: Yume's stream parser buffers about 100 KB per JSON object
// (docs/protocols/shim.md#chunking).
const DefaultShimMaxLine int64 = 100 * 1024

// Options adjusts what a checker can check.
type Options struct {
	// Both says the stream holds both directions (a transcript). Only then
	// can a request on one side be matched with its response on the other,
	// so only then are unknown responses and unanswered requests reported.
	Both bool
	// ShimMaxLine is the shim dialect's line budget in bytes; 0 means
	// DefaultShimMaxLine.
	ShimMaxLine int64
}

// Checker is the state machine for one stream. Observe is called once per
// event in stream order; End once when the stream is exhausted. Findings
// carry the Line and Offset of the line that shows the problem; the caller
// fills in File. A Checker is not safe for concurrent use.
type Checker interface {
	// Observe checks one event against what came before it.
	Observe(ev Event, report func(finding.Finding))
	// End reports what the end of the stream leaves open: unterminated
	// turns, unanswered calls and requests, truncation.
	End(report func(finding.Finding))
}

// Dialects lists the dialect names New accepts, in a stable order, so that
// command-line front ends can offer and validate them.
func Dialects() []string {
	return []string{"claude", "claude-stdin", "codex", "gemini", "unified", "shim"}
}

// New returns a fresh checker for one stream in the given dialect. An
// unknown dialect is an error that lists the known ones.
func New(dialect string, opts Options) (Checker, error) {
	switch dialect {
	case "claude":
		return newClaude(opts), nil
	case "claude-stdin":
		return newClaudeStdinChecker(), nil
	case "codex":
		return newCodex(), nil
	case "gemini":
		return newGemini(), nil
	case "unified":
		return newUnified(), nil
	case "shim":
		return newShim(opts), nil
	}
	return nil, fmt.Errorf("sequence: unknown dialect %q (known: %s)", dialect, strings.Join(Dialects(), ", "))
}

// place is where a line sits in the file: enough to point a finding at a
// line seen earlier without keeping the line.
type place struct {
	line int
	off  int64
}

// at returns the place of an event.
func at(ev Event) place { return place{line: ev.Line, off: ev.Offset} }

// finding builds a finding for rule r located at p. ptr is a JSON pointer
// into the line's object, or "" for the whole line.
func (p place) finding(r *finding.Rule, ptr, format string, args ...any) finding.Finding {
	return finding.Finding{
		Rule:    r,
		Line:    p.line,
		Offset:  p.off,
		Pointer: ptr,
		Message: fmt.Sprintf(format, args...),
	}
}

// The accessors below read decoded JSON without ever panicking: a missing
// key or a value of the wrong type reads as absent, and the schema layer
// reports the type error.

// str returns m[key] when it is a string.
func str(m map[string]any, key string) (string, bool) {
	s, ok := m[key].(string)
	return s, ok
}

// obj returns m[key] when it is an object, else nil.
func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// list returns m[key] when it is an array, else nil.
func list(m map[string]any, key string) []any {
	a, _ := m[key].([]any)
	return a
}

// isTrue reports whether m[key] is the JSON literal true.
func isTrue(m map[string]any, key string) bool {
	b, _ := m[key].(bool)
	return b
}

// number returns a JSON number as float64, whether it was decoded as
// float64 or as json.Number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// quote renders an id for a message, shortened so that a huge id cannot
// blow up a report.
func quote(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strconv.Quote(s)
}
