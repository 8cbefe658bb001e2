package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/agentconform/agentconform/conformance"
)

// The JUnit XML of run results, as GitHub (test-reporter actions), GitLab
// (artifacts:reports:junit) and Jenkins (junit step) read it: one
// testsuite per check family; one testcase per check on each case, named
// by the check ID, with classname "<adapter>.<case-id>" (Jenkins groups by
// adapter, then case). FAIL is a <failure>; CRASH and TIMEOUT are an
// <error>; both carry the requirement, expected, actual, diff and the
// reproduce command, and the wire excerpt goes to the testcase's
// system-out. SKIP, and failures the baseline expects, are <skipped> with
// the reason, so a CI system agrees with the gate. NON-STRICT (without
// --strict) and INFORMATIONAL pass, their finding in system-out. A
// testcase's time is its case's duration (the checks judge one run).

type rjSuites struct {
	XMLName  xml.Name  `xml:"testsuites"`
	Name     string    `xml:"name,attr"`
	Tests    int       `xml:"tests,attr"`
	Failures int       `xml:"failures,attr"`
	Errors   int       `xml:"errors,attr"`
	Skipped  int       `xml:"skipped,attr"`
	Time     string    `xml:"time,attr"`
	Suites   []rjSuite `xml:"testsuite"`
}

type rjSuite struct {
	Name       string       `xml:"name,attr"`
	Tests      int          `xml:"tests,attr"`
	Failures   int          `xml:"failures,attr"`
	Errors     int          `xml:"errors,attr"`
	Skipped    int          `xml:"skipped,attr"`
	Time       string       `xml:"time,attr"`
	Timestamp  string       `xml:"timestamp,attr,omitempty"`
	Properties []rjProperty `xml:"properties>property,omitempty"`
	Cases      []rjCase     `xml:"testcase"`
}

type rjProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type rjCase struct {
	Name      string     `xml:"name,attr"`
	Classname string     `xml:"classname,attr"`
	Time      string     `xml:"time,attr"`
	Failure   *rjProblem `xml:"failure,omitempty"`
	Error     *rjProblem `xml:"error,omitempty"`
	Skipped   *rjSkipped `xml:"skipped,omitempty"`
	SystemOut string     `xml:"system-out,omitempty"`
}

type rjProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type rjSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// WriteResultsJUnit writes doc as JUnit XML.
func WriteResultsJUnit(w io.Writer, doc *Document) error {
	doc = visibleCopy(doc)
	suites := map[conformance.Family]*rjSuite{}
	var order []conformance.Family
	suite := func(f conformance.Family) *rjSuite {
		s, ok := suites[f]
		if !ok {
			s = &rjSuite{Name: string(f)}
			suites[f] = s
			order = append(order, f)
		}
		return s
	}
	for _, f := range conformance.Families {
		suite(f)
	}
	secs := map[conformance.Family]float64{}
	for _, r := range doc.Runs {
		for _, c := range r.Cases {
			counted := map[conformance.Family]bool{}
			for _, k := range c.Checks {
				s := suite(k.Family)
				if !counted[k.Family] {
					counted[k.Family] = true
					secs[k.Family] += c.Duration
				}
				if s.Timestamp == "" && !r.Meta.Started.IsZero() {
					s.Timestamp = r.Meta.Started.UTC().Format("2006-01-02T15:04:05")
				}
				tc := rjCase{Name: k.Check, Classname: r.Meta.Adapter + "." + c.ID, Time: fmt.Sprintf("%.3f", c.Duration)}
				switch {
				case k.Verdict == conformance.Skip:
					tc.Skipped = &rjSkipped{Message: "not applicable: " + k.Actual}
					s.Skipped++
				case k.Verdict.Failed(r.Meta.Strict) && k.Baselined:
					tc.Skipped = &rjSkipped{Message: fmt.Sprintf("expected failure (baseline): %s: %s", k.Verdict, firstLine(k.Actual))}
					tc.SystemOut = junitBody(c, k) + wireSection(c)
					s.Skipped++
				case k.Verdict == conformance.Crash || k.Verdict == conformance.Timeout:
					tc.Error = &rjProblem{Message: junitMessage(c, k), Type: string(k.Verdict), Body: junitBody(c, k)}
					tc.SystemOut = wireSection(c)
					s.Errors++
				case k.Verdict.Failed(r.Meta.Strict):
					tc.Failure = &rjProblem{Message: junitMessage(c, k), Type: string(k.Verdict), Body: junitBody(c, k)}
					tc.SystemOut = wireSection(c)
					s.Failures++
				case k.Verdict == conformance.NonStrict || k.Verdict == conformance.Informational:
					tc.SystemOut = string(k.Verdict) + "\n" + junitBody(c, k)
				}
				s.Cases = append(s.Cases, tc)
				s.Tests++
			}
		}
	}
	doc2 := rjSuites{Name: "agentconform run"}
	var total float64
	for _, f := range order {
		s := suites[f]
		if s.Tests == 0 {
			continue
		}
		s.Time = fmt.Sprintf("%.3f", secs[f])
		total += secs[f]
		for _, r := range doc.Runs {
			s.Properties = append(s.Properties, rjProperty{Name: "adapter", Value: r.Meta.Adapter})
		}
		doc2.Suites = append(doc2.Suites, *s)
		doc2.Tests += s.Tests
		doc2.Failures += s.Failures
		doc2.Errors += s.Errors
		doc2.Skipped += s.Skipped
	}
	doc2.Time = fmt.Sprintf("%.3f", total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc2); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	return nil
}

func junitMessage(c *conformance.CaseResult, k conformance.CheckResult) string {
	return fmt.Sprintf("%s %s [%s]: %s", k.Verdict, k.Check, c.ID, k.Requirement)
}

func junitBody(c *conformance.CaseResult, k conformance.CheckResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Requirement: %s (%s, %s)\n", k.Requirement, k.Level, k.Source)
	if k.Expected != "" {
		fmt.Fprintf(&b, "Expected: %s\n", k.Expected)
	}
	if k.Actual != "" {
		fmt.Fprintf(&b, "Actual: %s\n", k.Actual)
	}
	if k.Diff != "" {
		fmt.Fprintf(&b, "Diff (-expected +actual):\n%s\n", strings.TrimRight(k.Diff, "\n"))
	}
	fmt.Fprintf(&b, "Reproduce: %s\n", c.Reproduce)
	return b.String()
}

func wireSection(c *conformance.CaseResult) string {
	if c.Wire == "" {
		return ""
	}
	return "Wire (" + c.ID + "):\n" + c.Wire
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
