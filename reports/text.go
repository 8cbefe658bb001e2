package reports

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/validate"
)

// TextWriter renders findings for a terminal: "file:line: rule-id: message
// (at /pointer; byte N; expected X; found Y)" per finding, warnings marked,
// then one line per stream, the counts per rule with their requirement, and
// the drift summary.
type TextWriter struct {
	w       *bufio.Writer
	streams []*validate.Result
	t       totals
	err     error
	// Quiet suppresses per-finding lines; summaries are still written.
	Quiet bool
}

// NewText returns a TextWriter on w.
func NewText(w io.Writer) *TextWriter { return &TextWriter{w: bufio.NewWriterSize(w, 64<<10)} }

// Finding writes one line per violation or warning.
func (t *TextWriter) Finding(f finding.Finding, sev finding.Severity) {
	if t.Quiet {
		return
	}
	f = visibleFinding(f)
	s := f.String()
	if sev == finding.Warning {
		loc := f.Location() + ": "
		s = loc + "warning: " + strings.TrimPrefix(s, loc)
	}
	t.printf("%s\n", s)
}

// Stream remembers a stream's result for the summary.
func (t *TextWriter) Stream(r *validate.Result) {
	r = visibleCopy(r)
	t.streams = append(t.streams, r)
	t.t.add(r)
}

func (t *TextWriter) printf(format string, args ...any) {
	if t.err != nil {
		return
	}
	_, t.err = fmt.Fprintf(t.w, format, args...)
}

// Close writes the summaries.
func (t *TextWriter) Close() error {
	if len(t.streams) > 0 {
		t.printf("\n")
	}
	for _, r := range t.streams {
		t.printf("%s: %s\n", displayFile(r.Name), describeStream(r))
	}
	tot := &t.t
	if ids := tot.ruleIDs(); len(ids) > 0 {
		t.printf("\nFindings by rule:\n")
		for _, id := range ids {
			rule := tot.rules[id]
			t.printf("  %-6s %7d  %s\n         %s  [%s]\n", rule.Level, tot.counts[id], id, rule.Requirement, rule.Source)
		}
	}
	if len(tot.drift) > 0 {
		t.printf("\nDrift: what the schemas do not know (not violations; --strict makes them so):\n")
		for _, e := range sortedDrift(tot.drift) {
			t.printf("  %s %s: %s, %s, first at %s:%d\n", e.Dialect, e.CLIVersion, driftWhat(e), plural(e.Count, "time"), displayFile(e.FirstFile), e.FirstLine)
		}
		if tot.overflow > 0 {
			t.printf("  ... and %d more occurrences of names beyond the first %d distinct ones\n", tot.overflow, len(tot.drift))
		}
	}
	verdict := "OK"
	if tot.violations > 0 {
		verdict = "FAIL"
	}
	t.printf("\n%s: %s, %s (%s empty), %d bytes: %s, %s.\n", verdict, plural(tot.streams, "stream"), plural(tot.lines, "line"),
		fmt.Sprint(tot.empty), tot.bytes, plural(tot.violations, "violation"), plural(tot.warnings, "warning"))
	if err := t.w.Flush(); err != nil && t.err == nil {
		t.err = err
	}
	return t.err
}

func displayFile(name string) string {
	if name == "" {
		return "<stdin>"
	}
	return name
}

// describeStream renders how a stream was judged, in one line.
func describeStream(r *validate.Result) string {
	var b strings.Builder
	if r.Dialect == "" {
		b.WriteString("dialect unknown")
	} else {
		b.WriteString(string(r.Dialect))
		if r.Transcript {
			b.WriteString(" transcript")
		}
	}
	if r.Profile != "" {
		fmt.Fprintf(&b, ", %s profile", r.Profile)
	}
	if r.SchemaFile != "" {
		fmt.Fprintf(&b, " (%s)", r.SchemaFile)
	}
	if r.CLIVersion != "" {
		fmt.Fprintf(&b, ", CLI %s", r.CLIVersion)
	}
	if r.OneSide != "" {
		fmt.Fprintf(&b, ", the %s's lines only", r.OneSide)
	}
	fmt.Fprintf(&b, ": %s, %s, %s", plural(r.Lines, "line"), plural(r.Violations, "violation"), plural(r.Warnings, "warning"))
	if n := len(r.Drift); n > 0 {
		fmt.Fprintf(&b, ", %d drift entries", n)
	}
	if len(r.NotJudged) > 0 {
		fmt.Fprintf(&b, "; not judged without the other side: %s", strings.Join(r.NotJudged, ", "))
	}
	return b.String()
}
