package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/reports"
	"github.com/agentconform/agentconform/schemas"
)

func chk(id string, v conformance.Verdict) conformance.CheckResult {
	fam, _, _ := strings.Cut(id, "/")
	return conformance.CheckResult{Check: id, Family: conformance.Family(fam), Level: "MUST", Requirement: "Requirement of " + id + ".",
		Source: "test", Verdict: v, Expected: "expected " + id, Actual: "actual " + id}
}

// resultsFile writes one run of adapter "a" whose cases are given as
// "case-id check-id VERDICT", judged without a baseline.
func resultsFile(t *testing.T, dir, name, shard string, checks ...string) string {
	t.Helper()
	run := &conformance.Results{Meta: conformance.Meta{Tool: "agentconform", Version: "test", Adapter: "a", Seed: 1, Shard: shard,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Duration: 1}}
	byID := map[string]*conformance.CaseResult{}
	for _, c := range checks {
		f := strings.Fields(c)
		cr, ok := byID[f[0]]
		if !ok {
			agent, _, _ := strings.Cut(f[0], "/")
			cr = &conformance.CaseResult{ID: f[0], Adapter: "a", Agent: agent, Fixture: "codex/plain-text", Verdict: conformance.Pass, Reproduce: "agentconform run --case " + f[0]}
			byID[f[0]] = cr
			run.Cases = append(run.Cases, cr)
		}
		v := conformance.Verdict(f[2])
		cr.Checks = append(cr.Checks, chk(f[1], v))
		if v != conformance.Pass {
			cr.Verdict = v
		}
	}
	doc := reports.NewDocument(run)
	reports.ApplyBaseline(doc, nil, reports.GateOptions{})
	p := filepath.Join(dir, name)
	if err := reports.WriteResultsFile(p, doc); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReportGate checks the gate's exit codes (0 no new failure, 1 new
// failures, 2 usage or I/O error), its advice and its annotations.
func TestReportGate(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	dir := t.TempDir()
	res := resultsFile(t, dir, "r.json", "", "codex/plain-text output/hello PASS", "codex/plain-text lifecycle/ends-stream FAIL", "codex/x output/hello PASS")
	base := filepath.Join(dir, "baseline")

	code, out, _ := runCmd(t, "", "report", "gate", res)
	if code != 1 || !strings.Contains(out, "accept them by adding these lines to the baseline:\n    codex/plain-text lifecycle/ends-stream") ||
		!strings.Contains(out, "Gate: FAIL (exit 1): 1 failure and no baseline") {
		t.Errorf("no baseline: exit %d\n%s", code, out)
	}
	os.WriteFile(base, []byte("codex/plain-text lifecycle/ends-stream\n"), 0o644)
	if code, out, _ := runCmd(t, "", "report", "gate", "--baseline", base, res); code != 0 || !strings.Contains(out, "Gate: PASS") {
		t.Errorf("baselined failure: exit %d\n%s", code, out)
	}
	os.WriteFile(base, []byte("# known\ncodex/plain-text lifecycle/ends-stream\ncodex/x output/hello\ncodex/never-ran\n"), 0o644)
	code, out, _ = runCmd(t, "", "report", "gate", "--baseline", base, res)
	if code != 0 || !strings.Contains(out, "delete them from "+base+":\n    "+base+":3: codex/x output/hello\n") || strings.Contains(out, "never-ran") {
		t.Errorf("stale entry: exit %d\n%s", code, out)
	}
	t.Setenv("GITHUB_ACTIONS", "true")
	code, out, _ = runCmd(t, "", "report", "gate", "--baseline", base, res)
	if code != 0 || !strings.Contains(out, ",line=3,title=stale baseline entry (a)::codex/x output/hello no longer fails: delete it from "+base) {
		t.Errorf("annotations: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", "report", "gate", res)
	if code != 1 || !strings.Contains(out, "::error title=FAIL lifecycle/ends-stream [codex/plain-text] (a)::Requirement of lifecycle/ends-stream.%0AExpected:") {
		t.Errorf("error annotation: exit %d\n%s", code, out)
	}
	t.Setenv("GITHUB_ACTIONS", "")
	// --write-baseline accepts today's failures.
	accepted := filepath.Join(dir, "accepted")
	if code, _, _ := runCmd(t, "", "report", "gate", "--write-baseline", accepted, res); code != 1 {
		t.Errorf("--write-baseline still judges: exit %d", code)
	}
	if code, _, _ := runCmd(t, "", "report", "gate", "--baseline", accepted, res); code != 0 {
		t.Errorf("the written baseline does not pass: exit %d", code)
	}
	os.WriteFile(filepath.Join(dir, "bad"), []byte("a b c\n"), 0o644)
	for _, args := range [][]string{
		{"report", "gate"},
		{"report", "gate", filepath.Join(dir, "missing.json")},
		{"report", "gate", "--baseline", filepath.Join(dir, "bad"), res},
		{"report", "gate", "--baseline", filepath.Join(dir, "missing"), res},
		{"report", "gate", "--nope", res},
		{"report", "frobnicate"},
		{"report"},
	} {
		if code, _, errs := runCmd(t, "", args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errs)
		}
	}
}

// TestReportMergeDiffRender: merge shards, diff two runs (exit 1 on new
// failures), render every format.
func TestReportMergeDiffRender(t *testing.T) {
	dir := t.TempDir()
	s1 := resultsFile(t, dir, "s1.json", "1/2", "codex/plain-text output/hello PASS")
	s2 := resultsFile(t, dir, "s2.json", "2/2", "codex/x output/hello FAIL")
	merged := filepath.Join(dir, "merged.json")
	if code, _, errs := runCmd(t, "", "report", "merge", "-o", merged, s1, s2); code != 0 || errs != "" {
		t.Fatalf("merge: exit %d %s", code, errs)
	}
	doc, err := reports.ReadResultsFile(merged)
	if err != nil || len(doc.Runs) != 1 || len(doc.Runs[0].Cases) != 2 || doc.Runs[0].Meta.Shard != "" || doc.Runs[0].Gate.Passed {
		t.Fatalf("merged: %v %+v", err, doc)
	}
	if code, _, errs := runCmd(t, "", "report", "merge", s1); code != 0 || !strings.Contains(errs, "warning: a: shards 2/2 are missing") {
		t.Errorf("partial merge: exit %d %q", code, errs)
	}
	if code, _, errs := runCmd(t, "", "report", "merge", s1, s1); code != 2 || !strings.Contains(errs, "is in two runs") {
		t.Errorf("duplicate shard: exit %d %q", code, errs)
	}

	old := resultsFile(t, dir, "old.json", "", "codex/plain-text output/hello FAIL", "codex/x output/hello PASS")
	cur := resultsFile(t, dir, "new.json", "", "codex/plain-text output/hello PASS", "codex/x output/hello FAIL")
	code, out, _ := runCmd(t, "", "report", "diff", old, cur)
	if code != 1 || !strings.Contains(out, "New failures (1)\n  PASS → FAIL  output/hello [codex/x] (a)") || !strings.Contains(out, "Fixed (1)\n  FAIL → PASS  output/hello [codex/plain-text] (a)") {
		t.Errorf("diff: exit %d\n%s", code, out)
	}
	if code, out, _ := runCmd(t, "", "report", "diff", cur, cur); code != 0 || !strings.Contains(out, "New failures (0)") {
		t.Errorf("diff with itself: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", "report", "diff", "--format", "json", old, cur)
	var d reports.ResultsDiff
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != 1 || len(d.NewFailures) != 1 || len(d.Fixed) != 1 {
		t.Errorf("json diff: exit %d %v %+v", code, err, d)
	}
	if code, _, _ := runCmd(t, "", "report", "diff", old); code != 2 {
		t.Errorf("diff with one file: exit %d", code)
	}

	code, out, _ = runCmd(t, "", "report", "render", merged)
	if code != 0 || !strings.Contains(out, "FAIL: a: 2 cases") {
		t.Errorf("render text: exit %d\n%s", code, out)
	}
	html, md, junit, nd := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.ndjson")
	if code, _, errs := runCmd(t, "", "report", "render", "--html", html, "--markdown", md, "--junit", junit, "--ndjson", nd, "--title", "T <1>", merged); code != 0 {
		t.Fatalf("render: exit %d %s", code, errs)
	}
	for p, want := range map[string]string{html: "<title>T &lt;1&gt;</title>", md: "## T &lt;1&gt;: ❌ 1 new failure", junit: `<testsuite name="output" tests="2" failures="1"`, nd: `{"kind":"end"`} {
		data, _ := os.ReadFile(p)
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %s", filepath.Base(p), want)
		}
	}
	// NDJSON reads back as the same results.
	back, err := reports.ReadResultsFile(nd)
	if err != nil || len(back.Runs[0].Cases) != 2 {
		t.Errorf("NDJSON back: %v", err)
	}
}

// TestValidateReports: validate's Markdown and HTML formats, and the drift
// report in its three forms, on a stream with hostile text and drift.
func TestValidateReports(t *testing.T) {
	in := strings.Replace(cleanGemini, `"role":"user"`, `"role":"user","mood":"<script>x</script>"`, 1) + "<script>banner</script>\n"
	code, md, _ := runCmd(t, in, "validate", "--format", "markdown", "-")
	if code != 1 || !strings.Contains(md, "## agentconform validate: ❌ 1 violation in 1 stream") || !strings.Contains(md, "| field | `mood` | `/mood` | 1 | &lt;stdin&gt;:2 |") {
		t.Errorf("markdown: exit %d\n%s", code, md)
	}
	if !strings.Contains(md, "| `tool_use` | parameters, timestamp, tool\\_id, tool\\_name, type |") {
		t.Errorf("markdown drift lacks the kinds never seen:\n%s", md)
	}
	code, page, _ := runCmd(t, in, "validate", "--format", "html", "-")
	if code != 1 || strings.Count(page, "<script") != 1 || !strings.Contains(page, "jsonl/not-json") || !strings.Contains(page, "tool_use") {
		t.Errorf("html: exit %d, %d script elements", code, strings.Count(page, "<script"))
	}
	dir := t.TempDir()
	for _, name := range []string{"drift.json", "drift.md", "drift.txt"} {
		p := filepath.Join(dir, name)
		if code, _, errs := runCmd(t, in, "validate", "-q", "--drift-report", p, "-"); code != 1 || errs != "" {
			t.Fatalf("--drift-report %s: exit %d %s", name, code, errs)
		}
		data, _ := os.ReadFile(p)
		switch name {
		case "drift.json":
			var rep reports.DriftReport
			if err := json.Unmarshal(data, &rep); err != nil || len(rep.Groups) != 1 {
				t.Fatalf("drift JSON: %v\n%s", err, data)
			}
			g := rep.Groups[0]
			var never []string
			for _, n := range g.NeverSeen {
				never = append(never, n.Kind+":"+strings.Join(n.Required, ","))
			}
			if g.Dialect != "gemini" || g.Events != 4 || len(g.Unknown) != 1 || g.Unknown[0].Pointer != "/mood" ||
				strings.Join(never, " ") != "error:message,severity,timestamp,type tool_result:status,timestamp,tool_id,type tool_use:parameters,timestamp,tool_id,tool_name,type" {
				t.Errorf("drift group %+v, never seen %v", g, never)
			}
		case "drift.md":
			if !strings.Contains(string(data), "### Drift") {
				t.Errorf("drift Markdown:\n%s", data)
			}
		default:
			if !strings.Contains(string(data), "unknown field mood at /mood: 1 time, first at <stdin>:2") || !strings.Contains(string(data), "tool_use: parameters, timestamp, tool_id, tool_name, type") {
				t.Errorf("drift text:\n%s", data)
			}
		}
	}
}

// agentconformBinary builds the command into the test's temporary
// directory, for tests that need it as a separate process (the reference
// adapters and the fakes are this binary). The build cache makes all but
// the first build a link.
func agentconformBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	exe := filepath.Join(t.TempDir(), "agentconform")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("building agentconform: %v\n%s", err, out)
	}
	return exe
}

// TestRunReportsEndToEnd runs the reference adapters on one case with
// every output: the results validate against schemas/results, the NDJSON
// streams start, case and end records, the JUnit parses, and stdout (a
// pipe) carries no progress line or color. A failing adapter inside
// GitHub Actions exits 1 with ::error annotations on the fixture.
func TestRunReportsEndToEnd(t *testing.T) {
	exe := agentconformBinary(t)
	dir := t.TempDir()
	o := func(n string) string { return filepath.Join(dir, n) }
	cmd := exec.Command(exe, "run", "--case", "codex/plain-text", "-o", o("r.json"), "--ndjson", o("r.ndjson"), "--junit", o("r.xml"),
		"--markdown", o("r.md"), "--html", o("r.html"))
	cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=", "NO_COLOR=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if strings.ContainsAny(stdout.String(), "\r\x1b") || strings.Contains(stdout.String(), "elapsed") {
		t.Errorf("progress or color on a pipe:\n%q", stdout.String())
	}
	if !strings.Contains(stdout.String(), "PASS: reference/unified: 1 cases") {
		t.Errorf("summary:\n%s", stdout.String())
	}
	docS, recS := resultsSchema(t)
	data, _ := os.ReadFile(o("r.json"))
	validateAgainst(t, docS, data, "r.json")
	f, err := os.Open(o("r.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var kinds []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		validateAgainst(t, recS, sc.Bytes(), "NDJSON record")
		var r struct{ Kind string }
		json.Unmarshal(sc.Bytes(), &r)
		kinds = append(kinds, r.Kind)
	}
	if got := strings.Join(kinds, " "); got != "start case end start case end" {
		t.Errorf("NDJSON records: %s", got)
	}
	var junit struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	xmlData, _ := os.ReadFile(o("r.xml"))
	if err := xml.Unmarshal(xmlData, &junit); err != nil || len(junit.Suites) != len(conformance.Families) || junit.Tests == 0 {
		t.Errorf("JUnit: %v, %d suites", err, len(junit.Suites))
	}
	for _, n := range []string{"r.md", "r.html"} {
		if st, err := os.Stat(o(n)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", n, err)
		}
	}

	// A failing adapter, as GitHub Actions runs it from the repository root.
	cmd = exec.Command(exe, "run", "--adapter", crashingAdapter, "--case", "codex/plain-text", "-q", "-o", o("f.json"))
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=true")
	stdout.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("failing adapter: %v\n%s", err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "\n::error file=fixtures/codex/plain-text.jsonl,line=1,title=CRASH output/records [codex/plain-text] (") {
		t.Errorf("no annotation on the fixture:\n%s", stdout.String())
	}
}

var (
	rsOnce       sync.Once
	rsDoc, rsRec *jsonschema.Schema
	rsErr        error
)

func resultsSchema(t *testing.T) (*jsonschema.Schema, *jsonschema.Schema) {
	t.Helper()
	rsOnce.Do(func() {
		raw, err := fs.ReadFile(schemas.FS(), "results/results.schema.json")
		if err != nil {
			rsErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			rsErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		const url = "https://agentconform.dev/schemas/results/results.schema.json"
		if rsErr = c.AddResource(url, doc); rsErr != nil {
			return
		}
		if rsDoc, rsErr = c.Compile(url); rsErr != nil {
			return
		}
		rsRec, rsErr = c.Compile(url + "#/$defs/Record")
	})
	if rsErr != nil {
		t.Fatal(rsErr)
	}
	return rsDoc, rsRec
}

func validateAgainst(t *testing.T, s *jsonschema.Schema, data []byte, what string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s does not match schemas/results: %v", what, err)
	}
}

// TestReportPublish re-renders an example directory (--no-run): the
// reference results and every sdk-*.json join one page, and paths of this
// machine in them are replaced.
func TestReportPublish(t *testing.T) {
	dir := t.TempDir()
	resultsFile(t, dir, "reference.json", "", "codex/plain-text output/hello PASS")
	sdk := resultsFile(t, dir, "sdk-x.json", "", "codex/plain-text output/hello FAIL")
	doc, _ := reports.ReadResultsFile(sdk)
	doc.Runs[0].Meta.Adapter = "sdk/x"
	doc.Runs[0].Cases[0].Wire = "cwd " + filepath.Join(os.TempDir(), "agentconform-run-123", "case") + "\n"
	reports.WriteResultsFile(sdk, doc)
	code, out, errs := runCmd(t, "", "report", "publish", "--no-run", "--dir", dir)
	if code != 0 || !strings.Contains(out, "(a, sdk/x)") {
		t.Fatalf("publish: exit %d\n%s%s", code, out, errs)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	md, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	if !strings.Contains(string(page), "sdk/x") || !strings.Contains(string(md), "| sdk/x | 1 |") || !strings.Contains(string(page), "cwd $TMP/case") {
		t.Errorf("published page lacks the SDK run or keeps the temp path")
	}
	if strings.Contains(string(page), os.TempDir()+"/") {
		t.Errorf("published page carries %s", os.TempDir())
	}
	if code, _, _ := runCmd(t, "", "report", "publish", "--no-run", "--dir", t.TempDir()); code != 2 {
		t.Errorf("publish --no-run without reference.json: exit %d", code)
	}
}

// crashingAdapter says hello and exits 3 without an end record: every case
// it runs is a CRASH.
const crashingAdapter = `echo '{"agentconform":"hello","profile":"native","agents":["codex"],"supports":[]}'; exit 3`
