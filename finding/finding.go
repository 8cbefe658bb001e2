// Package finding defines the vocabulary every check in agentconform reports
// in: a Rule (stable ID, requirement sentence, source, level) and a Finding
// (one occurrence of a rule at a place in a stream). Packages that check
// things export their rules; packages that print things consume findings.
package finding

import (
	"fmt"
	"strconv"
	"strings"
)

// Level says how binding a rule is, after RFC 2119.
type Level int

const (
	// Must rules are violations when broken.
	Must Level = iota
	// Should rules are warnings when broken; --strict makes them violations.
	Should
	// Drift rules record something the schemas do not know (an unknown
	// type, subtype, field or enum value). Drift is reported as counts and
	// becomes a violation only under --strict.
	Drift
	// Info rules record facts worth showing that are never violations.
	Info
)

// String returns the level's name as printed in reports.
func (l Level) String() string {
	switch l {
	case Must:
		return "MUST"
	case Should:
		return "SHOULD"
	case Drift:
		return "DRIFT"
	case Info:
		return "INFO"
	}
	return "Level(" + strconv.Itoa(int(l)) + ")"
}

// MarshalText makes levels print by name in JSON output.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText parses a level name written by MarshalText.
func (l *Level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "MUST":
		*l = Must
	case "SHOULD":
		*l = Should
	case "DRIFT":
		*l = Drift
	case "INFO":
		*l = Info
	default:
		return fmt.Errorf("finding: unknown level %q (want MUST, SHOULD, DRIFT or INFO)", b)
	}
	return nil
}

// Rule is one requirement a stream or an adapter must meet. Its ID is stable
// and hierarchical ("claude/order/result-ends-turn") so that baselines,
// reports and users can refer to it across releases.
type Rule struct {
	// ID is the stable hierarchical identifier, segments separated by '/'.
	ID string `json:"id"`
	// Requirement is the sentence the rule enforces, phrased as a requirement.
	Requirement string `json:"requirement"`
	// Source names where the requirement comes from: one or more sections
	// of the protocol reference, joined with "; "
	// ("docs/protocols/codex.md#turn-order"). Package docs/protocols checks
	// and links them.
	Source string `json:"source"`
	// Level is MUST, SHOULD, DRIFT or INFO.
	Level Level `json:"level"`
}

// Severity is how a finding counts once --strict has been taken into account.
type Severity int

const (
	// Violation fails validation (exit code 1).
	Violation Severity = iota
	// Warning is printed but does not fail validation.
	Warning
	// Note is counted in summaries (drift, info) but not printed per line.
	Note
)

// String returns the severity's name as printed in reports.
func (s Severity) String() string {
	switch s {
	case Violation:
		return "violation"
	case Warning:
		return "warning"
	case Note:
		return "note"
	}
	return "Severity(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText makes severities print by name in JSON output.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// SeverityOf maps a rule level to the severity of its findings. Under strict,
// SHOULD and DRIFT findings are violations too; INFO never is.
func SeverityOf(l Level, strict bool) Severity {
	switch l {
	case Must:
		return Violation
	case Should:
		if strict {
			return Violation
		}
		return Warning
	case Drift:
		if strict {
			return Violation
		}
		return Note
	}
	return Note
}

// Finding is one occurrence of a rule in a stream. Line and Offset locate
// the line (1-based line number, 0-based byte offset of the line's first
// byte in the file); Column, when non-zero, is the 0-based byte offset of the
// problem inside the line. Pointer is an RFC 6901 JSON pointer into the
// line's object, or "" when the finding is about the line or the stream.
type Finding struct {
	Rule     *Rule  `json:"-"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Offset   int64  `json:"offset"`
	Column   int    `json:"column,omitempty"`
	Pointer  string `json:"pointer,omitempty"`
	Message  string `json:"message"`
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
}

// Location renders "file:line" (or "file" for stream-level findings, or
// "<stdin>" when the file has no name) for text output.
func (f Finding) Location() string {
	file := f.File
	if file == "" {
		file = "<stdin>"
	}
	if f.Line <= 0 {
		return file
	}
	return file + ":" + strconv.Itoa(f.Line)
}

// String renders the finding as one line of text output:
// "file:line: rule-id: message (at /pointer; expected X, found Y)".
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.Location())
	b.WriteString(": ")
	if f.Rule != nil {
		b.WriteString(f.Rule.ID)
		b.WriteString(": ")
	}
	b.WriteString(f.Message)
	var extra []string
	if f.Pointer != "" {
		extra = append(extra, "at "+f.Pointer)
	}
	if f.Line > 0 {
		off := f.Offset + int64(f.Column)
		extra = append(extra, "byte "+strconv.FormatInt(off, 10))
	}
	if f.Expected != "" {
		extra = append(extra, "expected "+f.Expected)
	}
	if f.Actual != "" {
		extra = append(extra, "found "+f.Actual)
	}
	if len(extra) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(extra, "; "))
		b.WriteString(")")
	}
	return b.String()
}

// Pointer builds an RFC 6901 JSON pointer from reference tokens, escaping
// '~' and '/' as the RFC requires. Pointer() is "", the whole document.
func Pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(EscapeToken(t))
	}
	return b.String()
}

// EscapeToken escapes one JSON pointer reference token.
func EscapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	t = strings.ReplaceAll(t, "~", "~0")
	return strings.ReplaceAll(t, "/", "~1")
}
