package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/validate"
)

// maxJUnitFindings caps the findings kept per stream and rule for the XML
// document (which can only be written at the end); the rest are counted and
// the count is written, so nothing is dropped silently.
const maxJUnitFindings = 1000

// JUnitWriter writes a JUnit XML document, as read by GitHub, GitLab and
// Jenkins: one testsuite per stream, one testcase per rule that has
// findings there (a failure for violations; system-out for warnings), a
// passing "clean" testcase for a stream without findings, and a "drift"
// testcase listing what the schemas did not know.
type JUnitWriter struct {
	w       io.Writer
	current map[string]*ruleFindings // by rule ID, for the stream being read
	suites  []junitSuite
}

type ruleFindings struct {
	rule     *finding.Rule
	sev      finding.Severity
	lines    []string
	overflow int
}

// NewJUnit returns a JUnitWriter on w.
func NewJUnit(w io.Writer) *JUnitWriter {
	return &JUnitWriter{w: w, current: map[string]*ruleFindings{}}
}

// Finding keeps the finding for its stream's testsuite.
func (j *JUnitWriter) Finding(f finding.Finding, sev finding.Severity) {
	if f.Rule == nil {
		return
	}
	rf, ok := j.current[f.Rule.ID]
	if !ok {
		rf = &ruleFindings{rule: f.Rule, sev: sev}
		j.current[f.Rule.ID] = rf
	}
	if sev < rf.sev { // Violation < Warning: a rule with any violation fails
		rf.sev = sev
	}
	if len(rf.lines) >= maxJUnitFindings {
		rf.overflow++
		return
	}
	rf.lines = append(rf.lines, visibleFinding(f).String())
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// Stream closes the stream's testsuite.
func (j *JUnitWriter) Stream(r *validate.Result) {
	r = visibleCopy(r)
	name := displayFile(r.Name)
	suite := junitSuite{Name: name}
	ids := make([]string, 0, len(j.current))
	for id := range j.current {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		rf := j.current[id]
		body := strings.Join(rf.lines, "\n")
		if rf.overflow > 0 {
			body += fmt.Sprintf("\n... and %d more findings of this rule", rf.overflow)
		}
		header := fmt.Sprintf("Requirement: %s\nSource: %s\nLevel: %s\n\n", rf.rule.Requirement, rf.rule.Source, rf.rule.Level)
		c := junitCase{Name: id, Classname: name}
		if rf.sev == finding.Violation {
			c.Failure = &junitFailure{Message: fmt.Sprintf("%s: %s", id, plural(r.Counts[id], "finding")), Type: rf.rule.Level.String(), Body: header + body}
			suite.Failures++
		} else {
			c.SystemOut = header + body
		}
		suite.Cases = append(suite.Cases, c)
	}
	if len(ids) == 0 {
		suite.Cases = append(suite.Cases, junitCase{Name: "clean", Classname: name, SystemOut: describeStream(r)})
	}
	if len(r.Drift) > 0 {
		var b strings.Builder
		for _, e := range sortedDrift(r.Drift) {
			fmt.Fprintf(&b, "%s %s: %s, %s, first at line %d\n", e.Dialect, e.CLIVersion, driftWhat(e), plural(e.Count, "time"), e.FirstLine)
		}
		suite.Cases = append(suite.Cases, junitCase{Name: "drift", Classname: name, SystemOut: b.String()})
	}
	suite.Tests = len(suite.Cases)
	j.suites = append(j.suites, suite)
	j.current = map[string]*ruleFindings{}
}

// Close writes the XML document.
func (j *JUnitWriter) Close() error {
	doc := junitSuites{Name: "agentconform validate", Suites: j.suites}
	for _, s := range j.suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
	}
	if _, err := io.WriteString(j.w, xml.Header); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	enc := xml.NewEncoder(j.w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	if _, err := io.WriteString(j.w, "\n"); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	return nil
}
