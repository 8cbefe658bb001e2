package reports

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/agentconform/agentconform/conformance"
)

// MarkdownOptions adjust WriteResultsMarkdown.
type MarkdownOptions struct {
	// Title heads the report; "" means "agentconform".
	Title string
	// ReportURL, if set, is linked as the full (HTML) report.
	ReportURL string
	// SourceBase is where each check's source links to: the repository
	// root as a URL or as a path relative to the report, ending in '/';
	// "" means the reference as published on GitHub (see SourceBase).
	SourceBase string
	// MaxBytes bounds the output; 0 means 60000, which fits a pull-request
	// comment (GitHub takes 65536 characters). The matrix is shortened
	// first (only rows that are not all PASS or SKIP, then a row count),
	// then the failure details.
	MaxBytes int
}

// verdictEmoji marks verdicts in Markdown, where color is not available.
var verdictEmoji = map[conformance.Verdict]string{
	conformance.Pass: "✅", conformance.Fail: "❌", conformance.Crash: "💥", conformance.Timeout: "⏱️",
	conformance.NonStrict: "⚠️", conformance.Informational: "ℹ️", conformance.Skip: "⏭️",
}

// WriteResultsMarkdown writes doc as GitHub-flavored Markdown for a
// pull-request comment or $GITHUB_STEP_SUMMARY: the gate and the verdict
// counts per adapter, the new failures first, grouped into problems
// (requirement, expected, actual, diff, what follows from each, its cases,
// reproduce command), stale baseline entries, the cases
// whose verdict differs between CLI versions (when runs replayed more than
// one version of a CLI), then the matrix of cases by adapter.
func WriteResultsMarkdown(w io.Writer, doc *Document, o MarkdownOptions) error {
	doc = visibleCopy(doc)
	o.Title, o.ReportURL = visible(o.Title), visible(o.ReportURL)
	limit := o.MaxBytes
	if limit <= 0 {
		limit = 60000
	}
	m := buildMatrix(doc)
	fails := newFailures(m)
	head := mdHead(doc, m, fails, o)
	foot := mdFoot(doc, o)
	budget := limit - len(head) - len(foot)
	// The problems first, with as many of their details and cases as
	// leave room for a short matrix: their case lists are clipped first,
	// then the later problems lose their details.
	base := SourceBase(o.SourceBase)
	problems := allNewProblems(m)
	stale := mdStale(doc)
	details := mdProblems(problems, len(fails), len(problems), -1, base)
	for n := 40; len(details)+len(stale) > budget*3/4 && n >= 5; n /= 2 {
		details = mdProblems(problems, len(fails), len(problems), n, base)
	}
	for n := len(problems); len(details)+len(stale) > budget*3/4 && n > 0; n /= 2 {
		details = mdProblems(problems, len(fails), n/2, 5, base)
	}
	budget -= len(details) + len(stale)
	// The problems the baseline expects, one line each, if there is room.
	expected := allExpectedProblems(m)
	known := mdExpectedProblems(expected, len(expected))
	for n := len(expected); len(known) > budget/3 && n > 0; n /= 2 {
		known = mdExpectedProblems(expected, n/2)
	}
	budget -= len(known)
	// The CLI versions, when runs replayed more than one: the cases whose
	// verdict differs, fewer of them when room is short.
	vm := buildVersionMatrix(doc, m)
	ver := mdVersions(vm, -1)
	for n := 40; len(ver) > budget/2 && n > 0; n /= 2 {
		ver = mdVersions(vm, n)
	}
	if len(ver) > budget/2 {
		ver = mdVersions(vm, 0)
	}
	budget -= len(ver)
	// Fake against real: where an adapter ran on both, the agreement and
	// the verdicts that differ.
	fid := ""
	if f := CompareFidelity(doc); len(f.Adapters) > 0 {
		var b strings.Builder
		WriteFidelityMarkdown(&b, f)
		fid = b.String() + "\n"
		if len(fid) > budget/2 {
			g := *f
			g.Adapters = nil
			for _, a := range f.Adapters {
				a.Differ = nil
				g.Adapters = append(g.Adapters, a)
			}
			b.Reset()
			WriteFidelityMarkdown(&b, &g)
			fid = b.String() + "\n"
		}
	}
	budget -= len(fid)
	mat := mdMatrix(m, false, -1)
	if len(mat) > budget {
		mat = mdMatrix(m, true, -1)
	}
	for n := len(m.Rows); len(mat) > budget && n > 0; n = n * 3 / 4 {
		mat = mdMatrix(m, true, n)
	}
	if len(mat) > budget {
		mat = ""
	}
	var out bytes.Buffer
	out.WriteString(head)
	out.WriteString(details)
	out.WriteString(stale)
	out.WriteString(known)
	out.WriteString(ver)
	out.WriteString(fid)
	out.WriteString(mat)
	out.WriteString(foot)
	_, err := w.Write(out.Bytes())
	return err
}

func mdHead(doc *Document, m *matrix, fails []newFailure, o MarkdownOptions) string {
	var b strings.Builder
	title := o.Title
	if title == "" {
		title = "agentconform"
	}
	switch {
	case len(doc.Runs) == 0:
		fmt.Fprintf(&b, "## %s: no results\n\n", mdText(title))
	case len(fails) == 0:
		fmt.Fprintf(&b, "## %s: ✅ no new failures\n\n", mdText(title))
	default:
		fmt.Fprintf(&b, "## %s: ❌ %s in %s\n\n", mdText(title), plural(len(fails), "new failure"), plural(len(allNewProblems(m)), "problem"))
	}
	b.WriteString("| adapter | cases |")
	for _, v := range verdictOrder {
		fmt.Fprintf(&b, " %s %s |", verdictEmoji[v], v)
	}
	b.WriteString(" new | baseline | stale | gate |\n|---|---:|")
	for range verdictOrder {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|---:|---|\n")
	for i, r := range m.Runs {
		_, cases := verdictCounts(r)
		fmt.Fprintf(&b, "| %s | %d |", mdText(m.Columns[i]), len(r.Cases))
		for _, v := range verdictOrder {
			fmt.Fprintf(&b, " %d |", cases[v])
		}
		gate := "✅ pass"
		if !r.Gate.Passed {
			gate = "❌ fail"
		}
		fmt.Fprintf(&b, " %d | %d | %d | %s |\n", len(r.Gate.New), len(r.Gate.Expected), len(r.Gate.Stale), gate)
	}
	b.WriteString("\nCases by their worst check verdict; new, baseline and stale count checks.\n\n")
	return b.String()
}

// mdProblems renders the new problems: a heading that counts them and
// the failures they hold, then per problem a collapsible block whose
// summary names the verdict, check, number of cases and run, with the
// requirement, the expected, actual and diff of its example case, the
// failures that follow from it, its cases (at most maxCases of them; -1:
// all) and the command that reproduces the example. Problems after the
// first detailed ones are one line each.
func mdProblems(problems []runProblem, failures, detailed, maxCases int, base string) string {
	if len(problems) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### New failures: %d in %s\n\n", failures, plural(len(problems), "problem"))
	b.WriteString("Each problem is one check failing for the same reason across cases, the one with the most cases first; failures that follow from it in its cases are listed with it.\n\n")
	for i, rp := range problems {
		p, k, cases := rp.Problem, rp.result, rp.newCases()
		if i >= detailed {
			fmt.Fprintf(&b, "- %s %s `%s` in %s (%s), e.g. `%s`\n", verdictEmoji[p.Verdict], p.Verdict, mdCodeText(p.Check), plural(len(cases), "case"), mdText(rp.Column), mdCodeText(p.Example))
			continue
		}
		where := "<code>" + html.EscapeString(p.Example) + "</code>"
		if len(cases) > 1 {
			where = plural(len(cases), "case")
		}
		fmt.Fprintf(&b, "<details><summary>%s %s <code>%s</code> in %s · %s</summary>\n\n",
			verdictEmoji[p.Verdict], p.Verdict, html.EscapeString(p.Check), where, html.EscapeString(rp.Column))
		fmt.Fprintf(&b, "**Requirement:** %s (%s, %s)\n\n", mdText(k.Requirement), mdText(k.Level), mdSource(k.Source, base))
		if len(cases) > 1 {
			fmt.Fprintf(&b, "In `%s`, one of them:\n\n", mdCodeText(p.Example))
		}
		if k.Expected != "" {
			fmt.Fprintf(&b, "**Expected:** %s\n\n", mdText(clipText(k.Expected, 1500)))
		}
		if k.Actual != "" {
			fmt.Fprintf(&b, "**Actual:** %s\n\n", mdText(clipText(k.Actual, 1500)))
		}
		if k.Diff != "" {
			b.WriteString(fenced(clipText(k.Diff, 3000), "diff"))
		}
		for _, why := range followReasons(p) {
			var parts []string
			for _, f := range p.Follows {
				if f.Why == why {
					parts = append(parts, fmt.Sprintf("`%s` in %s", mdCodeText(f.Check), plural(len(f.Cases), "case")))
				}
			}
			fmt.Fprintf(&b, "With it, %s: %s.\n\n", mdText(why), strings.Join(parts, ", "))
		}
		if len(cases) > 1 {
			shown := cases
			if maxCases >= 0 && len(shown) > maxCases {
				shown = shown[:maxCases]
			}
			fmt.Fprintf(&b, "**Cases (%d):** ", len(cases))
			for j, c := range shown {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "`%s`", mdCodeText(c))
			}
			if n := len(cases) - len(shown); n > 0 {
				fmt.Fprintf(&b, ", … and %d more", n)
			}
			b.WriteString("\n\n")
		}
		if n := len(p.Expected); n > 0 {
			fmt.Fprintf(&b, "And %s whose failure the baseline expects.\n\n", plural(n, "case"))
		}
		fmt.Fprintf(&b, "Reproduce:\n\n%s</details>\n\n", fenced(p.Reproduce, "sh"))
	}
	if detailed < len(problems) {
		b.WriteString("\n")
	}
	return b.String()
}

// mdExpectedProblems lists the problems whose every failure the
// baseline expects, one line each (the first n of them, then how many
// more), collapsed: they do not fail the gate.
func mdExpectedProblems(problems []runProblem, n int) string {
	if len(problems) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Failures the baseline expects: %d in %s\n\n<details><summary>Known failures, listed in the baseline; grouped as the new ones are</summary>\n\n",
		failureCount(problems), plural(len(problems), "problem"))
	for i, p := range problems {
		if i == n {
			fmt.Fprintf(&b, "- … and %s more; the HTML report has them all.\n", plural(len(problems)-n, "problem"))
			break
		}
		fmt.Fprintf(&b, "- %s %s `%s` in %s (%s), e.g. `%s`: %s\n", verdictEmoji[p.Verdict], p.Verdict, mdCodeText(p.Check),
			plural(len(p.Cases), "case"), mdText(p.Column), mdCodeText(p.Example), mdText(clipText(firstLine(p.result.Actual), 200)))
	}
	b.WriteString("\n</details>\n\n")
	return b.String()
}

func mdStale(doc *Document) string {
	var b strings.Builder
	for _, r := range doc.Runs {
		if len(r.Gate.Stale) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("### Stale baseline entries\n\nThese no longer fail: delete them from the baseline.\n\n")
		}
		for _, s := range r.Gate.Stale {
			fmt.Fprintf(&b, "- `%s` (%s)\n", mdCodeText(s), mdText(RunLabel(r)))
		}
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// mdMatrix renders the matrix; onlyInteresting keeps rows where some
// adapter did not pass (or skip); maxRows < 0 means all.
func mdMatrix(m *matrix, onlyInteresting bool, maxRows int) string {
	if len(m.Rows) == 0 {
		return ""
	}
	var rows []*matrixRow
	for _, r := range m.Rows {
		if onlyInteresting && !interesting(r) {
			continue
		}
		rows = append(rows, r)
	}
	var b strings.Builder
	what := fmt.Sprintf("%s × %s", plural(len(m.Rows), "case"), plural(len(m.Columns), "adapter"))
	if onlyInteresting {
		what += fmt.Sprintf(", the %s where some adapter did not pass", plural(len(rows), "case"))
	}
	open := ""
	if len(rows) <= 40 {
		open = " open"
	}
	fmt.Fprintf(&b, "### Matrix\n\n<details%s><summary>%s</summary>\n\n", open, html.EscapeString(what))
	if len(rows) == 0 {
		b.WriteString("Every case passed or was skipped on every adapter.\n\n</details>\n\n")
		return b.String()
	}
	b.WriteString("| CLI | version | case |")
	for _, c := range m.Columns {
		fmt.Fprintf(&b, " %s |", mdText(c))
	}
	b.WriteString("\n|---|---|---|")
	for range m.Columns {
		b.WriteString(":-:|")
	}
	b.WriteString("\n")
	for i, r := range rows {
		if maxRows >= 0 && i >= maxRows {
			fmt.Fprintf(&b, "\n… and %s more; the HTML report has them all.\n", plural(len(rows)-i, "row"))
			break
		}
		version := r.Version
		if version == "" {
			version = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` |", mdText(r.CLI), mdText(version), mdCodeText(r.Case))
		for _, c := range r.Cells {
			fmt.Fprintf(&b, " %s |", mdCell(c))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n</details>\n\n")
	return b.String()
}

func interesting(r *matrixRow) bool {
	for _, c := range r.Cells {
		if c != nil && c.Case.Verdict != conformance.Pass && c.Case.Verdict != conformance.Skip {
			return true
		}
	}
	return false
}

func mdCell(c *matrixCell) string {
	if c == nil {
		return "·"
	}
	v := c.Case.Verdict
	switch {
	case v == conformance.Pass || v == conformance.Skip:
		return verdictEmoji[v]
	case c.Expected:
		return verdictEmoji[v] + " " + string(v) + " (baseline)"
	case c.New:
		return verdictEmoji[v] + " **" + string(v) + "**"
	}
	return verdictEmoji[v] + " " + string(v)
}

func mdFoot(doc *Document, o MarkdownOptions) string {
	var b strings.Builder
	if o.ReportURL != "" {
		fmt.Fprintf(&b, "Full report (every case's requirement, diff and wire log): %s\n\n", o.ReportURL)
	}
	versions := map[string]bool{}
	var meta []string
	for _, r := range doc.Runs {
		versions[r.Meta.Tool+" "+r.Meta.Version] = true
	}
	for v := range versions {
		meta = append(meta, strings.TrimSpace(v))
	}
	sort.Strings(meta)
	var seeds []string
	for _, r := range doc.Runs {
		s := fmt.Sprintf("%s: seed %d", RunLabel(r), r.Meta.Seed)
		if r.Meta.Incomplete {
			s += ", INCOMPLETE (interrupted; only the cases that finished)"
		}
		if r.Meta.Shard != "" {
			s += ", shard " + r.Meta.Shard
		}
		if r.Meta.Strict {
			s += ", strict"
		}
		seeds = append(seeds, s)
	}
	if len(meta) > 0 {
		fmt.Fprintf(&b, "<sub>%s; %s</sub>\n", html.EscapeString(strings.Join(meta, ", ")), html.EscapeString(strings.Join(seeds, "; ")))
	}
	return b.String()
}

// mdText escapes s for Markdown text (also inside table cells): HTML
// specials become entities, Markdown punctuation is backslash-escaped, and
// line breaks become spaces.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\\', '`', '*', '_', '[', ']', '|', '~', '#', '!', '{', '}':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCodeText makes s safe inside a `code span` in a table: no backticks,
// pipes or line breaks.
func mdCodeText(s string) string {
	return strings.NewReplacer("`", "'", "|", "¦", "\n", " ", "\r", " ").Replace(s)
}

// fenced wraps s in a code fence longer than any backtick run in s.
func fenced(s, lang string) string {
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n\n"
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … (%d more bytes)", len(s)-cut)
}
