package reports

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentconform/agentconform/conformance"
)

// IsTerminal reports whether w is an interactive terminal: an *os.File that
// is a character device other than the null device. Progress lines and
// colors are written only to terminals.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return false
	}
	return true
}

// ColorEnabled reports whether to color output to w: a terminal, NO_COLOR
// unset or empty (https://no-color.org), and TERM not "dumb".
func ColorEnabled(w io.Writer) bool {
	return IsTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// verdictOrder is the column order of summary tables.
var verdictOrder = []conformance.Verdict{conformance.Pass, conformance.Fail, conformance.NonStrict, conformance.Crash,
	conformance.Timeout, conformance.Informational, conformance.Skip}

// ansi colors per verdict.
var verdictColor = map[conformance.Verdict]string{
	conformance.Pass: "32", conformance.Fail: "31", conformance.Crash: "1;31", conformance.Timeout: "33",
	conformance.NonStrict: "33", conformance.Informational: "36", conformance.Skip: "2",
}

func paint(on bool, code, s string) string {
	if !on || code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Progress prints one status line on a terminal while a run goes (cases
// done, passes, failures, elapsed time), rewritten in place at most ten
// times a second. A Progress for a writer that is not a terminal (a pipe,
// a file, a CI log) prints nothing. It is safe for concurrent use.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	on      bool
	color   bool
	strict  bool
	adapter string
	start   time.Time
	last    time.Time
	done    int
	pass    int
	fail    int
	skip    int
	shown   bool
	now     func() time.Time
	// Lines prints one line per finished case where there is no terminal
	// to redraw a progress line on (a CI log), so that a long run is not
	// silent for minutes.
	Lines bool
}

// NewProgress returns a Progress on w; it prints only if w is a terminal.
func NewProgress(w io.Writer, strict bool) *Progress {
	return newProgress(w, strict, IsTerminal(w), ColorEnabled(w))
}

func newProgress(w io.Writer, strict, on, color bool) *Progress {
	return &Progress{w: w, on: on, color: color, strict: strict, now: time.Now}
}

// Start begins counting a new adapter's run.
func (p *Progress) Start(adapter string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.adapter, p.start, p.done, p.pass, p.fail, p.skip = visible(adapter), p.now(), 0, 0, 0, 0
	p.last = time.Time{}
}

// Case counts one finished case and redraws the line.
func (p *Progress) Case(c *conformance.CaseResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	switch {
	case c.Verdict.Failed(p.strict):
		p.fail++
	case c.Verdict == conformance.Skip:
		p.skip++
	default:
		p.pass++
	}
	if !p.on && p.Lines {
		fmt.Fprintf(p.w, "%s %s %s (%.1fs) [%d done: %d passed, %d failed, %d skipped]\n",
			c.Verdict, c.ID, p.adapter, c.Duration, p.done, p.pass, p.fail, p.skip)
		return
	}
	if now := p.now(); now.Sub(p.last) >= 100*time.Millisecond {
		p.last = now
		p.draw()
	}
}

func (p *Progress) draw() {
	if !p.on {
		return
	}
	el := p.now().Sub(p.start).Round(time.Second)
	line := fmt.Sprintf("%s: %d cases, %s passed, %s failed, %d skipped, %s",
		p.adapter, p.done, paint(p.color, "32", fmt.Sprint(p.pass)), paint(p.color && p.fail > 0, "31", fmt.Sprint(p.fail)), p.skip, formatElapsed(el))
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.shown = true
}

// Clear erases the status line, before other output.
func (p *Progress) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

func formatElapsed(d time.Duration) string {
	m := int(d / time.Minute)
	s := int((d % time.Minute) / time.Second)
	return fmt.Sprintf("%d:%02d elapsed", m, s)
}

// SummaryOptions adjust WriteSummary.
type SummaryOptions struct {
	// Quiet leaves out the failure details (new failures are still listed).
	Quiet bool
	// Color colors verdicts (see ColorEnabled).
	Color bool
	// Out names where the results were written, for the last line.
	Out string
	// Baseline is the baseline the gate used, to name the lines of stale
	// entries.
	Baseline *Baseline
}

// WriteSummary prints what a terminal user reads after a run: per run,
// its new failures grouped into problems (Problems), the problem with the
// most cases first, each with its requirement, the expected and actual of
// one of its cases, the failures that follow from it, its cases and the
// command that reproduces that one; then a table of check verdicts per
// adapter and family; then each run's gate and what to change (new
// failures to fix or baseline, stale baseline entries to delete).
func WriteSummary(w io.Writer, doc *Document, o SummaryOptions) error {
	doc = visibleCopy(doc)
	ew := &errWriter{w: w}
	if !o.Quiet {
		for _, res := range doc.Runs {
			writeProblems(ew, res, o.Color)
		}
	}
	ew.printf("%-20s %-11s", "adapter", "family")
	for _, v := range verdictOrder {
		ew.printf(" %13s", v)
	}
	ew.printf("\n")
	for _, res := range doc.Runs {
		counts := map[conformance.Family]map[conformance.Verdict]int{}
		for _, cr := range res.Cases {
			for _, r := range cr.Checks {
				if counts[r.Family] == nil {
					counts[r.Family] = map[conformance.Verdict]int{}
				}
				counts[r.Family][r.Verdict]++
			}
		}
		for _, f := range conformance.Families {
			ew.printf("%-20s %-11s", clipLeft(res.Meta.Adapter, 20), f)
			for _, v := range verdictOrder {
				n := counts[f][v]
				cell := fmt.Sprintf(" %13d", n)
				if n > 0 && v != conformance.Pass && v != conformance.Skip {
					cell = paint(o.Color, verdictColor[v], cell)
				}
				ew.printf("%s", cell)
			}
			ew.printf("\n")
		}
	}
	lines := map[string]int{}
	if o.Baseline != nil {
		for _, e := range o.Baseline.Entries() {
			lines[e.Key] = e.Line
		}
	}
	for _, res := range doc.Runs {
		g := res.Gate
		state := paint(o.Color, "1;32", "PASS")
		if !g.Passed {
			state = paint(o.Color, "1;31", "FAIL")
		}
		if res.Meta.Incomplete {
			state = paint(o.Color, "1;33", "INCOMPLETE")
		}
		ew.printf("\n%s: %s: %d cases in %.1fs; %d new failures, %d expected (baseline), %d stale baseline entries\n",
			state, RunLabel(res), len(res.Cases), res.Meta.Duration, len(g.New), len(g.Expected), len(g.Stale))
		if res.Meta.Incomplete {
			ew.printf("  the run was interrupted: only the cases that finished are judged\n")
		}
		for _, s := range g.Stale {
			where := ""
			if n := lines[s]; n > 0 && o.Baseline.File != "" {
				where = fmt.Sprintf(" (%s:%d)", o.Baseline.File, n)
			}
			ew.printf("  stale baseline entry (no longer fails; delete it)%s: %s\n", where, s)
		}
		if len(g.New) > 0 {
			if o.Quiet {
				for _, n := range g.New {
					ew.printf("  new failure: %s\n", n)
				}
			}
			if o.Baseline != nil {
				ew.printf("  to accept the new failures, add their \"<case-id> <check-id>\" lines to %s\n", baselineName(o.Baseline))
			}
		}
	}
	if o.Out != "" {
		ew.printf("Results: %s\n", o.Out)
	}
	return ew.err
}

func clipLeft(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n+3:]
}

// summaryCases is how many case IDs a problem lists on a terminal; the
// results, Markdown and HTML reports list them all.
const summaryCases = 8

// writeProblems prints a run's new problems: a line that counts them,
// then one block per problem.
func writeProblems(ew *errWriter, res *conformance.Results, color bool) {
	problems := newProblems(res)
	if len(problems) == 0 {
		return
	}
	cases := map[string]bool{}
	failures := 0
	for _, p := range problems {
		for _, c := range p.newCases() {
			cases[c] = true
		}
	}
	for _, c := range res.Cases {
		for _, k := range c.Checks {
			if k.Verdict.Failed(res.Meta.Strict) && !k.Baselined {
				failures++
			}
		}
	}
	ew.printf("%s: %s (%s in %s)\n\n", RunLabel(res), plural(len(problems), "problem"), plural(failures, "new failure"), plural(len(cases), "case"))
	for _, p := range problems {
		ew.printf("%s\n\n", formatProblem(p, color))
	}
}

// formatProblem renders one problem for a terminal, in the shape of
// conformance.FormatFailure (which it is, for a problem of one case): the
// verdict, check and how many cases; the
// requirement; the expected, actual and diff of its example case; what
// follows from it; its cases; the command that reproduces the example.
func formatProblem(p *Problem, color bool) string {
	var b strings.Builder
	k, cases := p.result, p.newCases()
	verdict := string(p.Verdict)
	if color {
		verdict = paint(true, verdictColor[p.Verdict], verdict)
	}
	if len(cases) == 1 {
		fmt.Fprintf(&b, "%s %s [%s]", verdict, p.Check, p.Example)
	} else {
		fmt.Fprintf(&b, "%s %s: %s", verdict, p.Check, plural(len(cases), "case"))
		if a := byAgent(cases); a != "" {
			fmt.Fprintf(&b, " (%s)", a)
		}
	}
	if n := len(p.Expected); n > 0 {
		fmt.Fprintf(&b, ", and %d expected by the baseline", n)
	}
	fmt.Fprintf(&b, "\n  Requirement: %s (%s, %s)\n", k.Requirement, k.Level, k.Source)
	in := "  "
	if len(cases) > 1 {
		fmt.Fprintf(&b, "  In %s:\n", p.Example)
		in = "    "
	}
	if k.Expected != "" {
		fmt.Fprintf(&b, "%sExpected: %s\n", in, indentText(k.Expected, in))
	}
	if k.Actual != "" {
		fmt.Fprintf(&b, "%sActual: %s\n", in, indentText(k.Actual, in))
	}
	if k.Diff != "" {
		fmt.Fprintf(&b, "%sDiff (-expected +actual):\n%s\n", in, indentLines(k.Diff, in+"  "))
	}
	for _, why := range followReasons(p) {
		var parts []string
		for _, f := range p.Follows {
			if f.Why == why {
				parts = append(parts, fmt.Sprintf("%s in %s", f.Check, plural(len(f.Cases), "case")))
			}
		}
		fmt.Fprintf(&b, "  With it, %s: %s\n", why, strings.Join(parts, ", "))
	}
	if len(cases) > 1 {
		shown := []string{p.Example}
		for _, c := range cases {
			if len(shown) == summaryCases {
				break
			}
			if c != p.Example {
				shown = append(shown, c)
			}
		}
		more := ""
		if n := len(cases) - len(shown); n > 0 {
			more = fmt.Sprintf(", … and %d more", n)
		}
		fmt.Fprintf(&b, "  Cases: %s%s\n", strings.Join(shown, ", "), more)
	}
	fmt.Fprintf(&b, "  Reproduce: %s", p.Reproduce)
	return b.String()
}

// followReasons are the distinct reasons of a problem's consequences, in
// their order.
func followReasons(p *Problem) []string {
	var out []string
	for _, f := range p.Follows {
		if !containsString(out, f.Why) {
			out = append(out, f.Why)
		}
	}
	return out
}

// indentText indents the lines after the first of a value that follows
// a label at indentation in.
func indentText(s, in string) string { return strings.ReplaceAll(s, "\n", "\n"+in+"  ") }

// indentLines indents every line of s with prefix.
func indentLines(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
