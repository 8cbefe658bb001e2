package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/conformance"
)

// versionRun is one run of adapter a: its cases given as "case-id
// version VERDICT [check VERDICT]..." ("-" as version: no fixture there,
// SKIP); pin is the --cli-version it was asked for ("" default).
func versionRun(a, pin string, cases ...string) *conformance.Results {
	r := &conformance.Results{Meta: conformance.Meta{Tool: "agentconform", Version: "0.1.0-test", Adapter: a, Seed: 1, Started: started}}
	if pin != "" {
		r.Meta.CLIVersionPins = map[string]string{"claude": pin}
	}
	for _, spec := range cases {
		f := strings.Fields(spec)
		var checks []conformance.CheckResult
		for i := 3; i+1 < len(f); i += 2 {
			checks = append(checks, check(f[i], conformance.Verdict(f[i+1]), "expected", "actual"))
		}
		version, fixture := f[1], "claude/"+strings.TrimPrefix(f[0], "claude/")
		if version == "-" {
			version, fixture = pin, ""
			checks = []conformance.CheckResult{check("output/hello", conformance.Skip, "", "no claude/x fixture at claude "+pin)}
		} else if pin != "" {
			fixture = "claude/" + pin + "/" + strings.TrimPrefix(f[0], "claude/")
		}
		c := caseResult(a, f[0], fixture, checks...)
		c.CLIVersion = version
		if conformance.Verdict(f[2]) != c.Verdict && version != pin {
			panic("bad spec " + spec)
		}
		r.Cases = append(r.Cases, c)
	}
	return r
}

func TestVersionMatrix(t *testing.T) {
	a, b := "reference/unified", "other"
	doc := NewDocument(
		versionRun(a, "", "claude/plain-text 2.1.331 PASS output/hello PASS lifecycle/reports-success PASS",
			"claude/single-tool 2.1.331 FAIL output/hello PASS lossless/text FAIL",
			"claude/compaction 2.1.331 PASS output/hello PASS"),
		versionRun(a, "2.1.329", "claude/plain-text 2.1.329 FAIL output/hello PASS lifecycle/reports-success FAIL",
			"claude/single-tool 2.1.329 FAIL output/hello PASS lossless/text FAIL",
			"claude/compaction - SKIP"),
		versionRun(a, "2.1.197", "claude/plain-text 2.1.197 PASS output/hello PASS lifecycle/reports-success PASS"),
		// Another adapter at one version: nothing to compare.
		versionRun(b, "", "claude/plain-text 2.1.331 PASS output/hello PASS"),
	)
	ApplyBaseline(doc, nil, GateOptions{})
	m := buildMatrix(doc)
	if want := []string{"reference/unified", "reference/unified @ claude 2.1.329", "reference/unified @ claude 2.1.197", "other"}; !cmp.Equal(m.Columns, want) {
		t.Errorf("columns %v, want %v", m.Columns, want)
	}
	for _, r := range m.Rows {
		want := map[string]string{"claude/plain-text": "2.1.197 / 2.1.329 / 2.1.331", "claude/single-tool": "2.1.329 / 2.1.331",
			"claude/compaction": "2.1.331"}[r.Case] // no fixture at 2.1.329: it did not run there
		if r.Version != want {
			t.Errorf("%s: versions %q, want %q", r.Case, r.Version, want)
		}
	}
	vm := buildVersionMatrix(doc, m)
	if len(vm.Groups) != 1 {
		t.Fatalf("%d groups, want reference/unified · claude alone", len(vm.Groups))
	}
	g := vm.Groups[0]
	var labels []string
	for _, c := range g.Columns {
		labels = append(labels, c.Label)
	}
	if want := []string{"2.1.197", "2.1.329", "2.1.331 (default)"}; !cmp.Equal(labels, want) {
		t.Errorf("version columns %v, want %v (oldest first)", labels, want)
	}
	if g.Differ != 1 || g.Same != 1 || g.Partial != 1 || len(g.Rows) != 3 {
		t.Errorf("differ %d, same %d, partial %d, rows %d; want 1, 1, 1, 3", g.Differ, g.Same, g.Partial, len(g.Rows))
	}
	for _, r := range g.Rows {
		if r.Differs != (r.Case == "claude/plain-text") {
			t.Errorf("%s: differs %v", r.Case, r.Differs)
		}
		if r.Case == "claude/plain-text" {
			if len(r.Checks) != 1 || r.Checks[0].Check != "lifecycle/reports-success" ||
				!cmp.Equal(r.Checks[0].Verdicts, []conformance.Verdict{conformance.Pass, conformance.Fail, conformance.Pass}) {
				t.Errorf("plain-text's differing checks: %+v", r.Checks)
			}
		}
	}

	var md bytes.Buffer
	if err := WriteResultsMarkdown(&md, doc, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"### CLI versions\n",
		"#### reference/unified · claude\n\n| case | 2.1.197 | 2.1.329 | 2.1.331 (default) |\n|---|:-:|:-:|:-:|\n" +
			"| `claude/plain-text` | ✅ PASS | ❌ **FAIL** | ✅ PASS |\n| ↳ `lifecycle/reports-success` | ✅ PASS | ❌ FAIL | ✅ PASS |\n",
		"3 cases: 1 with a different verdict at another version, 1 with the same verdict at every version they ran at, 1 that ran at one version only",
		"| reference/unified @ claude 2.1.329 |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "#### other") {
		t.Errorf("an adapter at one version has a version table")
	}
	// Short of room, the version table gives way to its counts.
	var short bytes.Buffer
	if err := WriteResultsMarkdown(&short, doc, MarkdownOptions{MaxBytes: 2600}); err != nil {
		t.Fatal(err)
	}
	if s := short.String(); !strings.Contains(s, "### CLI versions") || strings.Contains(s, "| ↳ ") || len(s) > 2600 {
		t.Errorf("short Markdown (%d bytes):\n%s", len(s), s)
	}

	var page bytes.Buffer
	if err := WriteResultsHTML(&page, doc, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{`<section id="versions">`, "<h3>reference/unified · claude</h3>",
		`<th title="reference/unified @ claude 2.1.329">2.1.329</th>`, `<tr class="differs"><td class="case">claude/plain-text</td>`,
		`<td class="case">↳ lifecycle/reports-success</td><td class="v-PASS">PASS</td><td class="v-FAIL">FAIL</td><td class="v-PASS">PASS</td>`,
		`title="SKIP · claude/compaction · 2.1.329 · no claude/x fixture at claude 2.1.329"`,
		`data-version="2.1.197 2.1.329 2.1.331"`, `<option>2.1.197</option><option>2.1.329</option><option>2.1.331</option>`} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	// One version only: no version section.
	one := NewDocument(doc.Runs[0], doc.Runs[3])
	page.Reset()
	md.Reset()
	WriteResultsHTML(&page, one, HTMLOptions{})
	WriteResultsMarkdown(&md, one, MarkdownOptions{})
	if strings.Contains(page.String(), `id="versions"`) || strings.Contains(md.String(), "CLI versions") {
		t.Errorf("a version section without a second version")
	}
}

// TestVersionMatrixMixedDefault: a default run whose fixtures were of
// several versions is one column that says so, and each cell the version
// it ran at.
func TestVersionMatrixMixedDefault(t *testing.T) {
	a := "reference/unified"
	doc := NewDocument(
		versionRun(a, "", "claude/plain-text 2.1.197 PASS output/hello PASS", "claude/compaction 2.1.329 PASS output/hello PASS"),
		versionRun(a, "2.1.329", "claude/plain-text 2.1.329 PASS output/hello PASS", "claude/compaction - SKIP"),
	)
	ApplyBaseline(doc, nil, GateOptions{})
	m := buildMatrix(doc)
	g := buildVersionMatrix(doc, m).Groups[0]
	if g.Columns[0].Label != "2.1.329" || g.Columns[1].Label != "default (2.1.197, 2.1.329)" {
		t.Errorf("columns %q, %q", g.Columns[0].Label, g.Columns[1].Label)
	}
	var md bytes.Buffer
	WriteResultsMarkdown(&md, doc, MarkdownOptions{})
	if !strings.Contains(md.String(), "2 cases: 0 with a different verdict at another version, 1 with the same verdict at every version they ran at, 1 that ran at one version only") {
		t.Errorf("Markdown:\n%s", md.String())
	}
	if c := g.Columns[1]; c.cellVersion(g.Rows[1].Cells[1]) != "2.1.197" || c.cellVersion(g.Rows[0].Cells[1]) != "2.1.329" {
		t.Errorf("the default column does not say which version each case ran at")
	}
}

// TestMergeKeepsVersionsApart: runs of one adapter at different CLI
// versions are not shards of one run.
func TestMergeKeepsVersionsApart(t *testing.T) {
	a := "reference/unified"
	doc, _, err := Merge(NewDocument(versionRun(a, "", "claude/plain-text 2.1.331 PASS output/hello PASS")),
		NewDocument(versionRun(a, "2.1.329", "claude/plain-text 2.1.329 PASS output/hello PASS")))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 2 || doc.Runs[1].Meta.CLIVersionPins["claude"] != "2.1.329" {
		t.Errorf("merged %d runs, want 2 kept apart", len(doc.Runs))
	}
}
