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
// adapter, then case; a dot inside either, as in an adapter command's
// file name, becomes "_", since viewers split the classname at dots). FAIL is a <failure>; CRASH and TIMEOUT are an
// <error>; both carry the requirement, expected, actual, diff and the
// reproduce command, and the wire excerpt goes to the testcase's
// system-out. SKIP, and failures the baseline expects, are <skipped> with
// the reason, so a CI system agrees with the gate. NON-STRICT (without
// --strict) and INFORMATIONAL pass, their finding in system-out. The
// checks of a case share its duration (they judge one run), so that the
// times add up to the cases'; the testsuites element has the wall time.

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
	var wall float64
	for _, r := range doc.Runs {
		wall += r.Meta.Duration
		for _, c := range r.Cases {
			// The checks share their case's one run: each gets its share
			// of it, so that the times add up to the cases' durations.
			share := 0.0
			if len(c.Checks) > 0 {
				share = c.Duration / float64(len(c.Checks))
			}
			for _, k := range c.Checks {
				s := suite(k.Family)
				secs[k.Family] += share
				if s.Timestamp == "" && !r.Meta.Started.IsZero() {
					s.Timestamp = r.Meta.Started.UTC().Format("2006-01-02T15:04:05")
				}
				tc := rjCase{Name: k.Check, Classname: junitClass(RunLabel(r)) + "." + junitClass(c.ID), Time: fmt.Sprintf("%.3f", share)}
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
	for _, f := range order {
		s := suites[f]
		if s.Tests == 0 {
			continue
		}
		s.Time = fmt.Sprintf("%.3f", secs[f])
		for _, r := range doc.Runs {
			s.Properties = append(s.Properties, rjProperty{Name: "adapter", Value: r.Meta.Adapter})
		}
		doc2.Suites = append(doc2.Suites, *s)
		doc2.Tests += s.Tests
		doc2.Failures += s.Failures
		doc2.Errors += s.Errors
		doc2.Skipped += s.Skipped
	}
	// The whole run's time is its wall time: its cases ran in parallel.
	doc2.Time = fmt.Sprintf("%.3f", wall)
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

// junitClass makes one part of a classname: no dots (viewers split there),
// no white space.
func junitClass(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '_'
		case ' ', '\t':
			return '_'
		}
		return r
	}, s)
}
