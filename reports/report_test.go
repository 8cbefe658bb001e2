package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/conformance"
)

type jSuites struct {
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []jSuite `xml:"testsuite"`
}

type jSuite struct {
	Name     string  `xml:"name,attr"`
	Tests    int     `xml:"tests,attr"`
	Failures int     `xml:"failures,attr"`
	Errors   int     `xml:"errors,attr"`
	Skipped  int     `xml:"skipped,attr"`
	Cases    []jCase `xml:"testcase"`
}

type jCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Body    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Type string `xml:"type,attr"`
		Body string `xml:",chardata"`
	} `xml:"error"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	SystemOut string `xml:"system-out"`
}

// TestResultsJUnit parses the JUnit XML back: one testsuite per check
// family, FAIL a failure with requirement, expected, actual and diff, CRASH
// and TIMEOUT errors, baselined failures and SKIP skipped, counts that add
// up; and compares it with the golden file.
func TestResultsJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteResultsJUnit(&buf, testDoc(t)); err != nil {
		t.Fatal(err)
	}
	var doc jSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	var names []string
	byName := map[string]jSuite{}
	tests, failures, errors, skipped := 0, 0, 0, 0
	for _, s := range doc.Suites {
		names = append(names, s.Name)
		byName[s.Name] = s
		if s.Tests != len(s.Cases) {
			t.Errorf("suite %s: tests=%d but %d testcases", s.Name, s.Tests, len(s.Cases))
		}
		tests, failures, errors, skipped = tests+s.Tests, failures+s.Failures, errors+s.Errors, skipped+s.Skipped
		for _, c := range s.Cases {
			if !strings.HasPrefix(c.Name, s.Name+"/") {
				t.Errorf("check %s in suite %s", c.Name, s.Name)
			}
		}
	}
	if want := []string{"output", "lossless", "control", "lifecycle", "forward"}; !cmp.Equal(names, want) {
		t.Errorf("suites %v, want one per family present: %v", names, want)
	}
	if doc.Tests != tests || doc.Failures != failures || doc.Errors != errors || doc.Skipped != skipped {
		t.Errorf("totals %+v do not add up to %d/%d/%d/%d", doc, tests, failures, errors, skipped)
	}
	if tests != 14 || failures != 1 || errors != 2 || skipped != 2 {
		t.Errorf("tests %d failures %d errors %d skipped %d, want 14 1 2 2", tests, failures, errors, skipped)
	}
	find := func(suite, class, name string) jCase {
		for _, c := range byName[suite].Cases {
			if c.Classname == class && c.Name == name {
				return c
			}
		}
		t.Fatalf("no testcase %s %s in %s", class, name, suite)
		return jCase{}
	}
	f := find("lifecycle", "reference/unified.codex/single-tool/exit-mid-line", "lifecycle/reports-failure")
	if f.Failure == nil || f.Failure.Type != "FAIL" {
		t.Fatalf("FAIL is not a failure: %+v", f)
	}
	for _, want := range []string{"Requirement: Requirement of lifecycle/reports-failure.", "Expected: turn_end ok:false", "Actual: ok:true", "Diff (-expected +actual):", "Reproduce: agentconform run"} {
		if !strings.Contains(f.Failure.Body, want) {
			t.Errorf("failure body lacks %q:\n%s", want, f.Failure.Body)
		}
	}
	// The case ran 0.25 s; its checks share that time.
	if secs, err := strconv.ParseFloat(f.Time, 64); !strings.Contains(f.SystemOut, "runner → adapter") || err != nil || secs <= 0 || secs >= 0.25 {
		t.Errorf("failure testcase: system-out %q, time %q (want a share of the case's 0.25 s)", f.SystemOut, f.Time)
	}
	if c := find("output", "reference/unified.gemini/plain-text", "output/hello"); c.Error == nil || c.Error.Type != "CRASH" || !strings.Contains(c.Error.Body, payload) {
		t.Errorf("CRASH is not an error carrying the text verbatim: %+v", c)
	}
	if c := find("lifecycle", "reference/unified.claude/single-tool/stall", "lifecycle/reports-failure"); c.Skipped == nil || !strings.Contains(c.Skipped.Message, "expected failure (baseline)") || c.Failure != nil {
		t.Errorf("baselined failure: %+v", c)
	}
	if c := find("forward", "python3_my_adapter_py_--name_'<b>x</b>'.claude/plain-text", "forward/unknown-type"); c.Failure != nil || !strings.HasPrefix(c.SystemOut, "NON-STRICT") {
		t.Errorf("NON-STRICT without --strict: %+v", c)
	}
	golden(t, "results.junit.xml", buf.Bytes())
}

// TestResultsMarkdown checks the order (verdict counts, new failures,
// stale entries, matrix), the escaping of hostile text, and the golden file.
func TestResultsMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteResultsMarkdown(&buf, testDoc(t), MarkdownOptions{ReportURL: "https://example.com/report.html"}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	order := []string{"## agentconform: ❌ 3 new failures in 3 problems", "| reference/unified | 4 |", "### New failures: 3 in 3 problems", "<code>output/hello</code> in <code>gemini/plain-text</code>",
		"### Stale baseline entries", "`claude/plain-text` (reference/unified)", "### Matrix", "| claude | 2.1.331 | `claude/plain-text` | ✅ | ⚠️ NON-STRICT |", "Full report"}
	at := 0
	for _, s := range order {
		i := strings.Index(md[at:], s)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", s, md)
		}
		at += i
	}
	if strings.Contains(md, "<script") || strings.Contains(md, "<img") || strings.Contains(md, "</textarea") {
		t.Errorf("markup from results reaches the Markdown unescaped:\n%s", md)
	}
	if !strings.Contains(md, `&lt;script&gt;document.title='pwned'&lt;/script&gt;&lt;/textarea&gt;`) || !strings.Contains(md, `\*not bold\*`) {
		t.Errorf("payload not rendered as text")
	}
	if !strings.Contains(md, "❌ FAIL (baseline)") || !strings.Contains(md, "💥 **CRASH**") || !strings.Contains(md, "| · |") {
		t.Errorf("matrix cells: baseline, new and not-run markers missing")
	}
	golden(t, "results.md", buf.Bytes())

	// A small budget keeps the head and the failures, and shortens the rest.
	buf.Reset()
	WriteResultsMarkdown(&buf, testDoc(t), MarkdownOptions{MaxBytes: 2500})
	if buf.Len() > 2500 || !strings.Contains(buf.String(), "New failures: 3 in 3 problems") {
		t.Errorf("budget 2500: %d bytes\n%s", buf.Len(), buf.String())
	}
}

// TestResultsHTML checks that the page is self-contained, that everything
// from results is escaped (one script element runs, the page's own; the
// details are one JSON data block), that every cell opens details in the
// data with requirement, diff and wire timing, and compares it with the
// golden file.
func TestResultsHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteResultsHTML(&buf, testDoc(t), HTMLOptions{Generated: started}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	markup, data := splitPageData(t, page)
	if n := strings.Count(strings.ToLower(markup), "<script"); n != 1 {
		t.Errorf("%d <script elements besides the data; want only the page's own", n)
	}
	// The only addresses are the links of the check sources to the
	// protocol reference on GitHub; nothing is loaded.
	bare := docLink.ReplaceAllString(markup, "")
	for _, bad := range []string{"<img", "</textarea", "<b>x</b>", "http://", "https://", "<link", "@import", "url("} {
		if strings.Contains(bare, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;&lt;/textarea&gt;&lt;img src=x onerror=&#34;document.title=&#39;pwned&#39;&#34;&gt;",
		`<td class="c v-FAIL exp"`, `<td class="c v-CRASH new"`, `<td class="none" title="not run">`,
		`<option>0.169.0</option>`, `<option>lifecycle</option>`,
		"python3 my_adapter.py --name &#39;&lt;b&gt;x&lt;/b&gt;&#39;",
		`<h2>New failures: 3 in 3 problems</h2>`,
	} {
		if !strings.Contains(markup, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// The details are in the data, escaped as JSON: nothing in it can end
	// the data block or start markup.
	if strings.ContainsAny(pageDataBlock(page), "<>&") {
		t.Errorf("the data block carries <, > or & raw")
	}
	stall := data.caseNamed(t, "reference/unified", "claude/single-tool/stall")
	exit := data.caseNamed(t, "reference/unified", "codex/single-tool/exit-mid-line")
	if !strings.Contains(stall.Wire, "0.120s adapter: turn_end ok=true") || !strings.Contains(stall.Wire, payload) {
		t.Errorf("stall wire %q", stall.Wire)
	}
	var sawDiff, sawSource bool
	for _, k := range data.L[exit.Checks] {
		cat := data.K[int(k[0].(float64))]
		if cat[0] == "lifecycle/reports-failure" {
			sawDiff = len(k) > 4 && k[4] == "-{\"type\":\"turn_end\",\"ok\":false}\n+{\"type\":\"turn_end\",\"ok\":true}\n" && data.str(k[2]) == "ok:true: the failure was reported as success"
			sawSource = cat[3] == "Requirement of lifecycle/reports-failure." && fmt.Sprint(cat[4]) ==
				"[[docs/protocols/unified.md#records https://github.com/agentconform/agentconform/blob/main/docs/protocols/unified.md#records] [an older source ]]"
		}
	}
	if !sawDiff || !sawSource {
		t.Errorf("exit-mid-line details: diff %v, requirement and source %v: %+v", sawDiff, sawSource, data.L[exit.Checks])
	}
	// The reproduce command is its run's, around the case ID.
	for _, c := range data.D {
		if rp := data.R[c.R].Rp; c.Rp != nil || rp != [2]string{"agentconform run --case ", " --seed 7 --keep"} {
			t.Errorf("%s: reproduce %v, run's %q", c.ID, c.Rp, rp)
		}
	}
	// Every present cell points at details.
	cells := regexp.MustCompile(`data-d="(\d+)"`).FindAllStringSubmatch(markup, -1)
	for _, c := range cells {
		if n, _ := strconv.Atoi(c[1]); n >= len(data.D) {
			t.Errorf("cell %s has no details", c[1])
		}
	}
	if len(cells) < 7 {
		t.Errorf("%d cells", len(cells))
	}
	golden(t, "results.html", buf.Bytes())
}

// testPageData is a page's data block (pageData) as the page's script
// reads it.
type testPageData struct {
	V []string
	S []string
	K [][]any
	R []struct {
		Col string
		Rp  [2]string
	}
	L [][][]any
	D []testPageCase
}

// testPageCase is one case's details in a page's data.
type testPageCase struct {
	R      int
	ID     string
	Checks int     `json:"k"`
	Wire   string  `json:"w"`
	Rp     *string `json:"rp"`
}

func (d *testPageData) str(v any) string {
	if i, ok := v.(float64); ok && i > 0 {
		return d.S[int(i)-1]
	}
	return ""
}

// caseNamed returns the details of a case of the run named column.
func (d *testPageData) caseNamed(t *testing.T, column, id string) testPageCase {
	t.Helper()
	for _, c := range d.D {
		if c.ID == id && d.R[c.R].Col == column {
			return c
		}
	}
	t.Fatalf("no details of %s in %s", id, column)
	return d.D[0]
}

// dataOpen starts the data block of a results page.
const dataOpen = `<script type="application/json" id="data">`

// pageDataBlock returns the text of a results page's data block ("" if
// it has none).
func pageDataBlock(page string) string {
	i := strings.Index(page, dataOpen)
	if i < 0 {
		return ""
	}
	rest := page[i+len(dataOpen):]
	return rest[:strings.Index(rest, "</script>")]
}

// splitPageData returns a results page without its data block, and the
// data block decoded.
func splitPageData(t *testing.T, page string) (string, *testPageData) {
	t.Helper()
	i := strings.Index(page, dataOpen)
	if i < 0 {
		t.Fatal("the page has no data block")
	}
	block := pageDataBlock(page)
	var d testPageData
	if err := json.Unmarshal([]byte(block), &d); err != nil {
		t.Fatalf("the data block is not JSON: %v", err)
	}
	return page[:i] + page[i+len(dataOpen)+len(block)+len("</script>"):], &d
}

func shard(r *conformance.Results, s string, ids ...string) *conformance.Results {
	out := &conformance.Results{Meta: r.Meta}
	out.Meta.Shard = s
	for _, c := range r.Cases {
		for _, id := range ids {
			if c.ID == id {
				out.Cases = append(out.Cases, c)
			}
		}
	}
	out.Meta.Duration = 1
	return out
}

// TestMerge joins shards back into the run they split, and refuses or
// warns about what is not a set of shards.
func TestMerge(t *testing.T) {
	doc := testDoc(t)
	run := doc.Runs[0]
	s1 := shard(run, "1/2", "claude/plain-text", "gemini/plain-text")
	s2 := shard(run, "2/2", "claude/single-tool/stall", "codex/single-tool/exit-mid-line")
	s2.Meta.Started = s2.Meta.Started.Add(30 * time.Second)
	b := testBaseline(t)
	d1, d2 := NewDocument(s1), NewDocument(s2)
	ApplyBaseline(d1, b, GateOptions{})
	ApplyBaseline(d2, b, GateOptions{})
	merged, warnings, err := Merge(d2, d1, NewDocument(doc.Runs[1]))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("merge: %v %v", err, warnings)
	}
	if len(merged.Runs) != 2 || merged.Runs[1].Meta.Adapter != doc.Runs[1].Meta.Adapter {
		t.Fatalf("runs %d", len(merged.Runs))
	}
	m := merged.Runs[0]
	if diff := cmp.Diff(run.Cases, m.Cases); diff != "" {
		t.Errorf("merged cases differ from the unsplit run:\n%s", diff)
	}
	if diff := cmp.Diff(run.Gate, m.Gate); diff != "" {
		t.Errorf("merged gate differs from the unsplit run's:\n%s", diff)
	}
	if m.Meta.Shard != "" || !m.Meta.Started.Equal(started) || m.Meta.Duration != 31 {
		t.Errorf("merged meta: shard %q started %v duration %v", m.Meta.Shard, m.Meta.Started, m.Meta.Duration)
	}
	// A missing shard: merged, with a warning, and the shard list kept.
	partial, warnings, err := Merge(d1)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "2/2 are missing") || partial.Runs[0].Meta.Shard != "1/2" {
		t.Errorf("one of two shards: %v %v %q", err, warnings, partial.Runs[0].Meta.Shard)
	}
	if _, _, err := Merge(d1, d1); err == nil || !strings.Contains(err.Error(), "is in two runs") {
		t.Errorf("the same shard twice: %v", err)
	}
	other := shard(run, "2/2", "codex/single-tool/exit-mid-line")
	other.Meta.Seed = 8
	if _, _, err := Merge(d1, NewDocument(other)); err == nil || !strings.Contains(err.Error(), "different seeds") {
		t.Errorf("shards of different seeds: %v", err)
	}
}

// TestDiff lists new failures, fixed checks and other verdict changes.
func TestDiff(t *testing.T) {
	old := testDoc(t)
	cur := testDoc(t)
	a := cur.Runs[0]
	a.Cases[0].Checks[1].Verdict = conformance.Fail           // claude/plain-text lossless/text: PASS -> FAIL
	a.Cases[3].Checks[0].Verdict = conformance.Pass           // gemini/plain-text output/hello: CRASH -> PASS
	a.Cases[2].Checks[1].Verdict = conformance.Crash          // exit-mid-line: FAIL -> CRASH (still failing)
	cur.Runs[1].Cases[0].Checks[1].Verdict = conformance.Pass // NON-STRICT -> PASS
	cur.Runs[1].Cases = cur.Runs[1].Cases[:2]                 // codex/single-tool/stall no longer runs
	d := Diff(old, cur)
	keys := func(l []Change) []string {
		var out []string
		for _, c := range l {
			out = append(out, c.Case+" "+c.Check+" "+string(c.Old)+">"+string(c.New))
		}
		return out
	}
	if got, want := keys(d.NewFailures), []string{"claude/plain-text lossless/text PASS>FAIL"}; !cmp.Equal(got, want) {
		t.Errorf("new failures %v, want %v", got, want)
	}
	if got, want := keys(d.Fixed), []string{"gemini/plain-text output/hello CRASH>PASS"}; !cmp.Equal(got, want) {
		t.Errorf("fixed %v, want %v", got, want)
	}
	if got, want := keys(d.Changed), []string{
		"claude/plain-text forward/unknown-type NON-STRICT>PASS",
		"codex/single-tool/stall lifecycle/stall TIMEOUT>",
		"codex/single-tool/stall output/hello INFORMATIONAL>",
		"codex/single-tool/exit-mid-line lifecycle/reports-failure FAIL>CRASH",
	}; !cmp.Equal(got, want) {
		t.Errorf("changed %v, want %v", got, want)
	}
	if d.Unchanged != 8 {
		t.Errorf("unchanged %d", d.Unchanged)
	}
	var text, md bytes.Buffer
	WriteDiffText(&text, d)
	WriteDiffMarkdown(&md, d)
	if !strings.Contains(text.String(), "PASS → FAIL  lossless/text [claude/plain-text] (reference/unified)") || !strings.Contains(text.String(), "TIMEOUT → (not run)") {
		t.Errorf("text diff:\n%s", text.String())
	}
	if !strings.Contains(md.String(), "## agentconform diff: ❌ 1 new failure") || strings.Contains(md.String(), "<b>x</b>") {
		t.Errorf("markdown diff:\n%s", md.String())
	}
	if d := Diff(old, old); len(d.NewFailures)+len(d.Fixed)+len(d.Changed) != 0 {
		t.Errorf("a run differs from itself: %+v", d)
	}
}

// TestGate recomputes the gate against a baseline and prints what to change.
func TestGate(t *testing.T) {
	doc := testDoc(t)
	g := doc.Runs[0].Gate
	want := conformance.Gate{Passed: false,
		Counts:   map[conformance.Verdict]int{conformance.Pass: 4, conformance.Fail: 2, conformance.Crash: 1, conformance.Skip: 1},
		New:      []string{"codex/single-tool/exit-mid-line lifecycle/reports-failure", "gemini/plain-text output/hello"},
		Expected: []string{"claude/single-tool/stall lifecycle/reports-failure"},
		Stale:    []string{"claude/plain-text"}}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("gate (-want +got):\n%s", diff)
	}
	if !doc.Runs[0].Cases[1].Checks[1].Baselined || doc.Runs[0].Cases[2].Checks[1].Baselined {
		t.Error("Baselined marks the expected failure only")
	}
	var out bytes.Buffer
	WriteGate(&out, doc, testBaseline(t))
	for _, w := range []string{
		"FAIL: reference/unified: 2 new failures, 1 expected (baseline), 1 stale baseline entry",
		"accept them by adding these lines to agentconform.baseline:\n    codex/single-tool/exit-mid-line lifecycle/reports-failure\n",
		"delete them from agentconform.baseline:\n    agentconform.baseline:3: claude/plain-text\n",
		"Gate: FAIL (exit 1): 3 new failures not in agentconform.baseline",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("gate output lacks %q:\n%s", w, out.String())
		}
	}
	// A baseline listing every failure passes, and --strict turns
	// NON-STRICT into a new failure.
	var bl bytes.Buffer
	WriteBaseline(&bl, doc)
	full, err := ParseBaseline(&bl)
	if err != nil {
		t.Fatal(err)
	}
	if !ApplyBaseline(doc, full, GateOptions{}) {
		t.Errorf("a baseline of every failure does not pass: %+v %+v", doc.Runs[0].Gate, doc.Runs[1].Gate)
	}
	if ApplyBaseline(doc, full, GateOptions{Strict: true}) || !cmp.Equal(doc.Runs[1].Gate.New, []string{"claude/plain-text forward/unknown-type"}) {
		t.Errorf("strict: %+v", doc.Runs[1].Gate)
	}
	if _, err := ParseBaseline(strings.NewReader("a b c\n")); err == nil {
		t.Error("three fields accepted")
	}
}

// TestAnnotations checks the GitHub workflow commands: file and line, and
// the escaping of %, newlines, colons and commas.
func TestAnnotations(t *testing.T) {
	doc := testDoc(t)
	var out bytes.Buffer
	// root ".." is the repository, where fixtures/codex/single-tool.jsonl is.
	WriteAnnotations(&out, doc, testBaseline(t), "..")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d annotations:\n%s", len(lines), out.String())
	}
	want0 := "::error file=fixtures/codex/single-tool.jsonl,line=1,title=FAIL lifecycle/reports-failure [codex/single-tool/exit-mid-line] (reference/unified)::Requirement of lifecycle/reports-failure.%0AExpected: turn_end ok:false%0AActual: ok:true: the failure was reported as success%0AReproduce: agentconform run --case codex/single-tool/exit-mid-line --seed 7 --keep"
	if lines[0] != want0 {
		t.Errorf("annotation\n got %s\nwant %s", lines[0], want0)
	}
	if !strings.HasPrefix(lines[1], "::error file=fixtures/gemini/plain-text.jsonl,line=1,title=CRASH output/hello") {
		t.Errorf("second annotation %s", lines[1])
	}
	// The baseline's path is relative to the working directory (this
	// package), and annotations name it relative to root.
	if want := "::warning file=reports/agentconform.baseline,line=3,title=stale baseline entry (reference/unified)::claude/plain-text no longer fails: delete it from agentconform.baseline"; lines[2] != want {
		t.Errorf("stale annotation\n got %s\nwant %s", lines[2], want)
	}
	if !strings.HasPrefix(lines[3], "::error file=fixtures/codex/single-tool.jsonl,line=1,title=TIMEOUT lifecycle/stall [codex/single-tool/stall] (python3 my_adapter.py --name '<b>x</b>')::") {
		t.Errorf("fourth annotation %s", lines[3])
	}
	// Without the fixtures at hand, no file.
	out.Reset()
	WriteAnnotations(&out, doc, nil, t.TempDir())
	if !strings.HasPrefix(out.String(), "::error title=FAIL lifecycle/reports-failure") || strings.Contains(out.String(), "file=") {
		t.Errorf("annotations without fixtures or baseline:\n%s", out.String())
	}
	got := workflowCommand("error", map[string]string{"file": "a,b:c.go", "line": "7", "title": "50% done"}, "first\nsecond\r%")
	if want := "::error file=a%2Cb%3Ac.go,line=7,title=50%25 done::first%0Asecond%0D%25"; got != want {
		t.Errorf("escaping\n got %s\nwant %s", got, want)
	}
}

// TestProgress: a terminal gets one line rewritten in place; anything else
// (a pipe, a file, a buffer) gets nothing.
func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, false, true, false)
	now := started
	p.now = func() time.Time { return now }
	p.Start("reference/unified")
	doc := testDoc(t)
	for _, c := range doc.Runs[0].Cases {
		now = now.Add(time.Second)
		p.Case(c)
	}
	p.Clear()
	out := buf.String()
	if !strings.Contains(out, "\r\x1b[Kreference/unified: 4 cases, 1 passed, 3 failed, 0 skipped, 0:04 elapsed") || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("progress on a terminal: %q", out)
	}
	buf.Reset()
	p = NewProgress(&buf, false)
	p.Start("x")
	p.Case(doc.Runs[0].Cases[0])
	p.Clear()
	if buf.Len() != 0 {
		t.Errorf("progress on a buffer: %q", buf.String())
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(w) || ColorEnabled(w) {
		t.Error("a pipe is taken for a terminal")
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		if IsTerminal(null) {
			t.Error("the null device is taken for a terminal")
		}
		null.Close()
	}
}

// TestSummary checks the terminal summary: failures with their reproduce
// command, the table, the gate and what to change.
func TestSummary(t *testing.T) {
	var buf bytes.Buffer
	WriteSummary(&buf, testDoc(t), SummaryOptions{Out: "results.json", Baseline: testBaseline(t)})
	out := buf.String()
	for _, w := range []string{
		"FAIL lifecycle/reports-failure [codex/single-tool/exit-mid-line]\n  Requirement:",
		"reference/unified    lifecycle",
		"FAIL: reference/unified: 4 cases in 12.5s; 2 new failures, 1 expected (baseline), 1 stale baseline entries",
		"stale baseline entry (no longer fails; delete it) (agentconform.baseline:3): claude/plain-text",
		"to accept the new failures, add their \"<case-id> <check-id>\" lines to agentconform.baseline",
		"Results: results.json",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("summary lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colors without Color")
	}
	buf.Reset()
	WriteSummary(&buf, testDoc(t), SummaryOptions{Color: true, Quiet: true})
	if !strings.Contains(buf.String(), "\x1b[1;31mFAIL\x1b[0m") || strings.Contains(buf.String(), "Requirement:") || !strings.Contains(buf.String(), "  new failure: gemini/plain-text output/hello") {
		t.Errorf("quiet colored summary:\n%s", buf.String())
	}
}

func TestLineDiff(t *testing.T) {
	got := lineDiff("a\nb\nc", "a\nx\nc\nd")
	if want := " a\n-b\n+x\n c\n+d\n"; got != want {
		t.Errorf("lineDiff = %q, want %q", got, want)
	}
}

// docLink is the link of a check's source to a section of the protocol
// reference, as the pages write it with the default base.
var docLink = regexp.MustCompile(`href="https://github\.com/agentconform/agentconform/blob/main/docs/protocols/[a-z0-9-]+\.md#[A-Za-z0-9_-]+"`)

// TestSourceLinks checks that the HTML and Markdown reports link each
// reference of a check's source to its section, under the default or a
// given base, and leave other text (an older source, a hostile one) as
// escaped text without a link.
func TestSourceLinks(t *testing.T) {
	doc := testDoc(t)
	for _, run := range doc.Runs {
		for _, c := range run.Cases {
			for i := range c.Checks {
				c.Checks[i].Source = "docs/protocols/claude.md#interrupt; docs/protocols/x.md#a\"><script>alert(1)</script>; javascript:alert(1)"
			}
		}
	}
	var html, md bytes.Buffer
	if err := WriteResultsHTML(&html, doc, HTMLOptions{Generated: started, SourceBase: "../.."}); err != nil {
		t.Fatal(err)
	}
	// The page's script makes links of the parts with an address.
	_, data := splitPageData(t, html.String())
	want := `[[docs/protocols/claude.md#interrupt ../../docs/protocols/claude.md#interrupt] [docs/protocols/x.md#a"><script>alert(1)</script> ] [javascript:alert(1) ]]`
	for _, k := range data.K {
		if got := fmt.Sprint(k[4]); got != want {
			t.Errorf("%s sources %s, want %s", k[0], got, want)
		}
	}
	// A base that is not an address gives no link.
	html.Reset()
	if err := WriteResultsHTML(&html, doc, HTMLOptions{Generated: started, SourceBase: "javascript:alert(1)//"}); err != nil {
		t.Fatal(err)
	}
	if _, data := splitPageData(t, html.String()); !strings.Contains(fmt.Sprint(data.K[0][4]), "[docs/protocols/claude.md#interrupt ]") || strings.Contains(html.String(), `href="javascript:`) {
		t.Errorf("a javascript: base became a link: %v", data.K[0][4])
	}
	if err := WriteResultsMarkdown(&md, doc, MarkdownOptions{SourceBase: "https://example.com/tree/v1/"}); err != nil {
		t.Fatal(err)
	}
	wantMD := "[docs/protocols/claude.md#interrupt](https://example.com/tree/v1/docs/protocols/claude.md#interrupt); "
	if !strings.Contains(md.String(), wantMD) {
		t.Errorf("Markdown lacks %s", wantMD)
	}
	if strings.Contains(md.String(), "](javascript:") || strings.Contains(md.String(), "<script>") {
		t.Error("Markdown links or leaves raw the hostile source")
	}
	if got := SourceBase(""); got != "https://github.com/agentconform/agentconform/blob/main/" {
		t.Errorf("default base %q", got)
	}
	if got := SourceBase("../.."); got != "../../" {
		t.Errorf("SourceBase(../..) = %q", got)
	}
}
