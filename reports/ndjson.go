package reports

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/validate"
)

// NDJSONWriter writes one JSON object per line, each with a "kind" field:
// "finding" per violation or warning as it is found, "stream" and "drift"
// per stream as it ends, and one "summary" at the end. Field names are
// stable; new fields may be added.
type NDJSONWriter struct {
	w   *bufio.Writer
	enc *json.Encoder
	t   totals
	err error
}

// NewNDJSON returns an NDJSONWriter on w.
func NewNDJSON(w io.Writer) *NDJSONWriter {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &NDJSONWriter{w: bw, enc: enc}
}

// FindingRecord is the NDJSON form of a finding.
type FindingRecord struct {
	Kind        string           `json:"kind"`
	File        string           `json:"file"`
	Line        int              `json:"line"`
	Offset      int64            `json:"offset"`
	Column      int              `json:"column"`
	Pointer     string           `json:"pointer"`
	Rule        string           `json:"rule"`
	Level       finding.Level    `json:"level"`
	Severity    finding.Severity `json:"severity"`
	Message     string           `json:"message"`
	Expected    string           `json:"expected,omitempty"`
	Actual      string           `json:"actual,omitempty"`
	Requirement string           `json:"requirement"`
	Source      string           `json:"source"`
}

// NewFindingRecord converts a finding for machine-readable output.
func NewFindingRecord(f finding.Finding, sev finding.Severity) FindingRecord {
	r := FindingRecord{Kind: "finding", File: f.File, Line: f.Line, Offset: f.Offset, Column: f.Column, Pointer: f.Pointer,
		Severity: sev, Message: f.Message, Expected: f.Expected, Actual: f.Actual}
	if f.Rule != nil {
		r.Rule, r.Level, r.Requirement, r.Source = f.Rule.ID, f.Rule.Level, f.Rule.Requirement, f.Rule.Source
	}
	return r
}

func (n *NDJSONWriter) encode(v any) {
	if n.err == nil {
		n.err = n.enc.Encode(v)
	}
}

// Finding writes a "finding" record.
func (n *NDJSONWriter) Finding(f finding.Finding, sev finding.Severity) {
	n.encode(NewFindingRecord(f, sev))
}

// Stream writes a "stream" record and one "drift" record per drift entry.
func (n *NDJSONWriter) Stream(r *validate.Result) {
	n.t.add(r)
	n.encode(struct {
		Kind string `json:"kind"`
		*validate.Result
		Drift any `json:"drift,omitempty"`
	}{Kind: "stream", Result: r})
	for _, e := range sortedDrift(r.Drift) {
		n.encode(struct {
			Kind string `json:"kind"`
			*validate.DriftEntry
		}{"drift", e})
	}
}

// Close writes the "summary" record and flushes.
func (n *NDJSONWriter) Close() error {
	n.encode(struct {
		Kind       string         `json:"kind"`
		Streams    int            `json:"streams"`
		Lines      int            `json:"lines"`
		Empty      int            `json:"empty_lines"`
		Bytes      int64          `json:"bytes"`
		Violations int            `json:"violations"`
		Warnings   int            `json:"warnings"`
		Counts     map[string]int `json:"counts"`
	}{"summary", n.t.streams, n.t.lines, n.t.empty, n.t.bytes, n.t.violations, n.t.warnings, n.t.counts})
	if err := n.w.Flush(); err != nil && n.err == nil {
		n.err = err
	}
	return n.err
}
