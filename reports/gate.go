package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentconform/agentconform/conformance"
)

// Baseline is a baseline file: the runner's own (conformance.Baseline),
// whose entries keep their lines so the gate can say which to delete.
type Baseline = conformance.Baseline

// BaselineEntry is one expected failure and its line.
type BaselineEntry = conformance.BaselineEntry

// ReadBaseline reads a baseline file (conformance.ReadBaseline).
func ReadBaseline(path string) (*Baseline, error) { return conformance.ReadBaseline(path) }

// ParseBaseline parses baseline lines (conformance.ParseBaseline).
func ParseBaseline(r io.Reader) (*Baseline, error) { return conformance.ParseBaseline(r) }

// baselineName names a baseline in messages.
func baselineName(b *Baseline) string {
	if b == nil || b.File == "" {
		return "the baseline"
	}
	return b.File
}

// GateOptions adjust how ApplyBaseline judges.
type GateOptions struct {
	// Strict makes NON-STRICT verdicts failures in every run, whatever the
	// run was started with (a run's own Meta.Strict always applies).
	Strict bool
}

// ApplyBaseline recomputes the gate of every run against b (nil: no
// baseline, every failure is new), as the runner does: a failure the
// baseline lists is expected and marked Baselined, any other failure is
// new, and a baseline entry whose case (or case and check) ran without
// failing is stale. It reports whether every run passed.
func ApplyBaseline(doc *Document, b *Baseline, o GateOptions) bool {
	passed := true
	for _, r := range doc.Runs {
		if o.Strict {
			r.Meta.Strict = true
		}
		r.ApplyBaseline(b)
		passed = passed && r.Gate.Passed
	}
	return passed
}

// Passed reports whether every run of doc passed its gate.
func Passed(doc *Document) bool {
	for _, r := range doc.Runs {
		if !r.Gate.Passed {
			return false
		}
	}
	return true
}

// WriteGate prints the gate of every run and what to change: the new
// failures (fix them, or add the printed lines to the baseline) and the
// stale baseline entries (delete the printed lines). b may be nil.
func WriteGate(w io.Writer, doc *Document, b *Baseline) error {
	doc = visibleCopy(doc)
	ew := &errWriter{w: w}
	lines := map[string]int{}
	if b != nil {
		for _, e := range b.Entries() {
			lines[e.Key] = e.Line
		}
	}
	var newAll []string
	for _, r := range doc.Runs {
		g := r.Gate
		state := "PASS"
		if !g.Passed {
			state = "FAIL"
		}
		ew.printf("%s: %s: %s, %d expected (baseline), %s\n", state, RunLabel(r), plural(len(g.New), "new failure"),
			len(g.Expected), plural(len(g.Stale), "stale baseline entry"))
		if len(g.New) > 0 {
			ew.printf("  New failures: fix the adapter, or accept them by adding these lines to %s:\n", baselineName(b))
			for _, k := range g.New {
				ew.printf("    %s\n", k)
			}
			newAll = append(newAll, g.New...)
		}
		if len(g.Stale) > 0 {
			ew.printf("  Stale baseline entries: these no longer fail; delete them from %s:\n", baselineName(b))
			for _, k := range g.Stale {
				if n := lines[k]; n > 0 && b.File != "" {
					ew.printf("    %s:%d: %s\n", b.File, n, k)
				} else {
					ew.printf("    %s\n", k)
				}
			}
		}
	}
	switch {
	case len(newAll) == 0:
		ew.printf("Gate: PASS (exit 0)\n")
	case b == nil:
		ew.printf("Gate: FAIL (exit 1): %s and no baseline; to accept today's failures, write them as one: agentconform report gate --write-baseline FILE RESULTS\n", plural(len(newAll), "failure"))
	default:
		ew.printf("Gate: FAIL (exit 1): %s not in %s\n", plural(len(newAll), "new failure"), baselineName(b))
	}
	return ew.err
}

// WriteBaseline writes the failures of every run as a baseline file.
func WriteBaseline(w io.Writer, doc *Document) error {
	ew := &errWriter{w: w}
	ew.printf("# agentconform baseline: expected failures, one \"<case-id> <check-id>\" per line\n")
	seen := map[string]bool{}
	for _, r := range doc.Runs {
		for _, c := range r.Cases {
			for _, k := range c.Checks {
				key := c.ID + " " + k.Check
				if k.Verdict.Failed(r.Meta.Strict) && !seen[key] {
					seen[key] = true
					ew.printf("%s\n", key)
				}
			}
		}
	}
	return ew.err
}

// maxAnnotations bounds the annotations of each kind; GitHub shows only the
// first few per step anyway, and the rest are in the reports.
const maxAnnotations = 50

// WriteAnnotations writes GitHub Actions workflow commands: an error per
// new failure (on the fixture's file when root holds it, as in this
// repository), and a warning per stale baseline entry on its line of the
// baseline file. root is the directory paths are made relative to ("" for
// the working directory).
func WriteAnnotations(w io.Writer, doc *Document, b *Baseline, root string) error {
	doc = visibleCopy(doc)
	ew := &errWriter{w: w}
	lines := map[string]int{}
	if b != nil {
		for _, e := range b.Entries() {
			lines[e.Key] = e.Line
		}
	}
	errs, warns, dropped := 0, 0, 0
	for _, r := range doc.Runs {
		failing := map[string]bool{}
		for _, k := range r.Gate.New {
			failing[k] = true
		}
		for _, c := range r.Cases {
			for _, k := range c.Checks {
				if !failing[c.ID+" "+k.Check] {
					continue
				}
				if errs >= maxAnnotations {
					dropped++
					continue
				}
				errs++
				props := map[string]string{"title": fmt.Sprintf("%s %s [%s] (%s)", k.Verdict, k.Check, c.ID, r.Meta.Adapter)}
				if f := fixtureFile(root, c.Fixture); f != "" {
					props["file"], props["line"] = f, "1"
				}
				msg := k.Requirement
				if k.Expected != "" {
					msg += "\nExpected: " + k.Expected
				}
				if k.Actual != "" {
					msg += "\nActual: " + k.Actual
				}
				msg += "\nReproduce: " + c.Reproduce
				ew.printf("%s\n", workflowCommand("error", props, msg))
			}
		}
		for _, s := range r.Gate.Stale {
			if warns >= maxAnnotations {
				dropped++
				continue
			}
			warns++
			props := map[string]string{"title": "stale baseline entry (" + r.Meta.Adapter + ")"}
			if b != nil && b.File != "" && lines[s] > 0 {
				props["file"], props["line"] = relTo(root, b.File), fmt.Sprint(lines[s])
			}
			ew.printf("%s\n", workflowCommand("warning", props, s+" no longer fails: delete it from "+baselineName(b)))
		}
	}
	if dropped > 0 {
		ew.printf("%s\n", workflowCommand("notice", nil, fmt.Sprintf("%d more annotations left out; the reports list everything", dropped)))
	}
	return ew.err
}

// fixtureFile is the repository path of an embedded fixture, if root holds it.
func fixtureFile(root, fixture string) string {
	if fixture == "" {
		return ""
	}
	p := filepath.ToSlash(filepath.Join("fixtures", fixture+".jsonl"))
	if _, err := os.Stat(filepath.Join(root, p)); err != nil {
		return ""
	}
	return p
}

func relTo(root, p string) string {
	base := root
	if base == "" {
		base = "."
	}
	ab, err1 := filepath.Abs(base)
	ap, err2 := filepath.Abs(p)
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(p)
	}
	if rel, err := filepath.Rel(ab, ap); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(p)
}

// workflowCommand renders "::name k=v,...::message" with the escaping
// GitHub Actions requires: %, CR and LF everywhere; also : and , in
// property values.
func workflowCommand(name string, props map[string]string, msg string) string {
	var b strings.Builder
	b.WriteString("::")
	b.WriteString(name)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	order := map[string]int{"file": 0, "line": 1, "endLine": 2, "col": 3, "title": 4}
	sort.Slice(keys, func(i, j int) bool { return order[keys[i]] < order[keys[j]] })
	for i, k := range keys {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(escapeProperty(props[k]))
	}
	b.WriteString("::")
	b.WriteString(escapeData(msg))
	return b.String()
}

func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}
