package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/validate"
)

// FindingWriter renders the findings and results of a validation run.
type FindingWriter interface {
	// Finding records one violation or warning, in stream order.
	Finding(f finding.Finding, sev finding.Severity)
	// Stream records the result of one stream once it has been read.
	Stream(r *validate.Result)
	// Close writes what comes at the end (summaries, the XML document) and
	// returns the first write error, if any.
	Close() error
}

// Format names an output format of validate.
type Format string

const (
	// Text is for people: one line per finding, then summaries.
	Text Format = "text"
	// JSON is NDJSON: one object per finding, stream, drift entry and summary.
	JSON Format = "json"
	// JUnit is JUnit XML, one testsuite per stream.
	JUnit Format = "junit"
	// Markdown is GitHub-flavored Markdown: streams, findings by rule, the
	// first findings and the drift report.
	Markdown Format = "markdown"
	// HTML is one self-contained page: streams, findings (filterable) and
	// the drift report.
	HTML Format = "html"
)

// NewFindingWriter returns the writer for format f.
func NewFindingWriter(f Format, w io.Writer) (FindingWriter, error) {
	return NewFindingWriterDrift(f, w, nil)
}

// NewFindingWriterDrift returns the writer for format f; the Markdown and
// HTML writers take their drift report from dc, which the caller feeds
// with each stream's counted event kinds (nil: the writers collect drift
// themselves, without the kinds never seen).
func NewFindingWriterDrift(f Format, w io.Writer, dc *DriftCollector) (FindingWriter, error) {
	switch f {
	case Text:
		return NewText(w), nil
	case JSON:
		return NewNDJSON(w), nil
	case JUnit:
		return NewJUnit(w), nil
	case Markdown:
		return NewMarkdownFindings(w, dc), nil
	case HTML:
		return NewHTMLFindings(w, dc), nil
	}
	return nil, fmt.Errorf("unknown format %q (want text, json, junit, markdown or html)", f)
}

// totals adds up stream results for summaries.
type totals struct {
	streams, lines, empty, violations, warnings int
	bytes                                       int64
	counts                                      map[string]int
	rules                                       map[string]*finding.Rule
	drift                                       []*validate.DriftEntry
	driftByKey                                  map[string]*validate.DriftEntry
	overflow                                    int
}

func (t *totals) add(r *validate.Result) {
	if t.counts == nil {
		t.counts, t.rules = map[string]int{}, map[string]*finding.Rule{}
	}
	t.streams++
	t.lines += r.Lines
	t.empty += r.Empty
	t.bytes += r.Bytes
	t.violations += r.Violations
	t.warnings += r.Warnings
	for id, n := range r.Counts {
		t.counts[id] += n
		t.rules[id] = r.Rules[id]
	}
	if t.driftByKey == nil {
		t.driftByKey = map[string]*validate.DriftEntry{}
	}
	for _, e := range r.Drift {
		key := e.RuleID + "\x00" + e.CLIVersion + "\x00" + e.Name + "\x00" + e.Pointer
		if m, ok := t.driftByKey[key]; ok {
			m.Count += e.Count
			continue
		}
		c := *e
		t.driftByKey[key] = &c
		t.drift = append(t.drift, &c)
	}
	t.overflow += r.DriftOverflow
}

// ruleIDs returns the rule IDs with counts, MUST first, then by ID.
func (t *totals) ruleIDs() []string {
	ids := make([]string, 0, len(t.counts))
	for id := range t.counts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		li, lj := t.rules[ids[i]].Level, t.rules[ids[j]].Level
		if li != lj {
			return li < lj
		}
		return ids[i] < ids[j]
	})
	return ids
}

// sortedDrift orders drift entries by rule, CLI version, then count (most first).
func sortedDrift(entries []*validate.DriftEntry) []*validate.DriftEntry {
	out := append([]*validate.DriftEntry(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		if a.CLIVersion != b.CLIVersion {
			return a.CLIVersion < b.CLIVersion
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Pointer+a.Name < b.Pointer+b.Name
	})
	return out
}

// plural renders "1 line" / "3 lines".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// driftWhat renders what a drift entry is about, for text and JUnit.
func driftWhat(e *validate.DriftEntry) string {
	kind := e.RuleID[strings.LastIndex(e.RuleID, "/")+1:]
	switch kind {
	case "unknown-field":
		return fmt.Sprintf("unknown field %s", e.Pointer)
	case "unknown-value":
		return fmt.Sprintf("unknown value %s at %s", e.Name, e.Pointer)
	case "unknown-subtype":
		return "unknown subtype " + e.Name
	case "unknown-type":
		return "unknown type " + e.Name
	}
	return kind + " " + e.Name
}
