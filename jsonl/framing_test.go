package jsonl

import (
	"strings"
	"testing"

	"github.com/agentconform/agentconform/finding"
)

// framingCases trigger each framing rule, and near-misses that must not.
var framingCases = []struct {
	name string
	rule *finding.Rule // the rule the case is about
	l    Line
	want []want // exact findings, in order
	msg  string // substring of the first finding's message
}{
	{name: "bom", rule: RuleBOM, l: Line{Number: 1, BOM: true, Len: 2},
		want: []want{{RuleBOM, 0, ""}}, msg: "byte order mark"},
	{name: "no bom", rule: RuleBOM, l: Line{Number: 1, Len: 2}},
	{name: "crlf", rule: RuleCRLF, l: Line{Number: 3, Offset: 10, CR: true, Len: 5},
		want: []want{{RuleCRLF, 5, ""}}},
	{name: "crlf after bom", rule: RuleCRLF, l: Line{Number: 1, BOM: true, CR: true, Len: 2},
		want: []want{{RuleBOM, 0, ""}, {RuleCRLF, 5, ""}}},
	{name: "lf", rule: RuleCRLF, l: Line{Number: 3, Offset: 10, Len: 5}},
	{name: "too long", rule: RuleLineTooLong, l: Line{Number: 2, Offset: 7, TooLong: true, Len: 2000, Limit: 1024},
		want: []want{{RuleLineTooLong, 0, ""}}, msg: "2000 bytes, over the limit of 1024"},
	{name: "at the limit", rule: RuleLineTooLong, l: Line{Number: 2, Offset: 7, Len: 1024, Limit: 1024}},
	{name: "no final newline", rule: RuleNoFinalNewline, l: Line{Number: 4, NoNewline: true, Len: 2},
		want: []want{{RuleNoFinalNewline, 2, ""}}, msg: "no terminating"},
	{name: "no final newline after cr", rule: RuleNoFinalNewline, l: Line{Number: 4, NoNewline: true, CR: true, Len: 2},
		want: []want{{RuleCRLF, 2, ""}, {RuleNoFinalNewline, 3, ""}}},
	{name: "final newline", rule: RuleNoFinalNewline, l: Line{Number: 4, Len: 2}},
}

func TestFramingFindings(t *testing.T) {
	for _, tt := range framingCases {
		t.Run(tt.name, func(t *testing.T) {
			fs := FramingFindings(tt.l)
			checkFindings(t, fs, tt.want)
			for _, f := range fs {
				if f.Line != tt.l.Number || f.Offset != tt.l.Offset || f.File != "" {
					t.Errorf("finding %v not located at line %d offset %d", f, tt.l.Number, tt.l.Offset)
				}
			}
			if tt.msg != "" && (len(fs) == 0 || !strings.Contains(fs[0].Message, tt.msg)) {
				t.Errorf("message %q does not contain %q", fs, tt.msg)
			}
		})
	}
}

// TestFramingEndToEnd reads a file with every framing problem and checks
// the findings the Reader's lines produce.
func TestFramingEndToEnd(t *testing.T) {
	in := "\xef\xbb\xbf{}\r\n" + strings.Repeat("x", 50) + "\n{\"a\":1}"
	r := NewReader(strings.NewReader(in), Options{MaxLineBytes: 10})
	var got []finding.Finding
	for {
		l, err := r.Next()
		if err != nil {
			break
		}
		got = append(got, FramingFindings(l)...)
	}
	checkFindings(t, got, []want{{RuleBOM, 0, ""}, {RuleCRLF, 5, ""}, {RuleLineTooLong, 0, ""}, {RuleNoFinalNewline, 7, ""}})
	if len(got) == 4 && (got[2].Line != 2 || got[2].Offset != 7 || got[3].Line != 3 || got[3].Offset != 58) {
		t.Errorf("findings not located: %v", got)
	}
}
