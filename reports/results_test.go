package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/schemas"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// payload is what a hostile transcript or adapter could put in any text:
// markup that must stay text in every report.
const payload = `<script>document.title='pwned'</script></textarea><img src=x onerror="document.title='pwned'"> | *not bold* ` + "`tick`"

var started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func check(id string, v conformance.Verdict, expected, actual string) conformance.CheckResult {
	fam, _, _ := strings.Cut(id, "/")
	level := "MUST"
	if v == conformance.NonStrict {
		level = "SHOULD"
	}
	return conformance.CheckResult{Check: id, Family: conformance.Family(fam), Level: level,
		Requirement: "Requirement of " + id + ".", Source: "docs/protocols/unified.md#records; an older source", Verdict: v, Expected: expected, Actual: actual}
}

func caseResult(adapter, id, fixture string, checks ...conformance.CheckResult) *conformance.CaseResult {
	agent, _, _ := strings.Cut(id, "/")
	c := &conformance.CaseResult{ID: id, Adapter: adapter, Agent: agent, Fixture: fixture, Description: "Case " + id + ".",
		Duration: 0.25, Checks: checks, Reproduce: "agentconform run --case " + id + " --seed 7 --keep",
		Wire: "   0.001s runner → adapter: {\"op\":\"start\"}\n   0.120s adapter: turn_end ok=true (after 3 events)\ncli pid 42: " + agent + " -p\n"}
	c.Verdict = conformance.Skip
	for _, k := range checks {
		if rankOf(k.Verdict) > rankOf(c.Verdict) {
			c.Verdict = k.Verdict
		}
	}
	return c
}

// testDoc is two adapter runs with every verdict, a baselined failure, a
// stale baseline entry and hostile text, judged against testBaseline.
func testDoc(t testing.TB) *Document {
	t.Helper()
	a := "reference/unified"
	stall := caseResult(a, "claude/single-tool/stall", "claude/single-tool",
		check("output/hello", conformance.Pass, "", ""),
		check("lifecycle/reports-failure", conformance.Fail, "turn_end ok:false", payload))
	stall.Wire += "adapter stderr (tail):\n" + payload + "\n"
	runA := &conformance.Results{
		Meta: conformance.Meta{Tool: "agentconform", Version: "0.1.0-test", Adapter: a, Seed: 7, Started: started, Duration: 12.5,
			Hello:       &conformance.Hello{Profile: "unified", Agents: []string{"claude", "codex", "gemini"}, Supports: []string{"interrupt"}, Name: "ref", Version: "1"},
			CLIVersions: map[string][]string{"claude": {"2.1.197"}, "codex": {"0.169.0"}, "gemini": {"0.61.0"}}},
		Cases: []*conformance.CaseResult{
			caseResult(a, "claude/plain-text", "claude/plain-text",
				check("output/hello", conformance.Pass, "", ""),
				check("lossless/text", conformance.Pass, "", ""),
				check("control/can-use-tool", conformance.Skip, "", "applies to claude only")),
			stall,
			caseResult(a, "codex/single-tool/exit-mid-line", "codex/single-tool",
				check("output/hello", conformance.Pass, "", ""),
				func() conformance.CheckResult {
					k := check("lifecycle/reports-failure", conformance.Fail, "turn_end ok:false", "ok:true: the failure was reported as success")
					k.Diff = "-{\"type\":\"turn_end\",\"ok\":false}\n+{\"type\":\"turn_end\",\"ok\":true}\n"
					return k
				}()),
			caseResult(a, "gemini/plain-text", "gemini/plain-text",
				check("output/hello", conformance.Crash, "the adapter ends with its end record", "exit 2 without an end record; stderr: "+payload)),
		},
	}
	b := "python3 my_adapter.py --name '<b>x</b>'"
	runB := &conformance.Results{
		Meta: conformance.Meta{Tool: "agentconform", Version: "0.1.0-test", Adapter: b, Seed: 7, Started: started.Add(time.Minute), Duration: 3,
			CLIVersions: map[string][]string{"claude": {"2.1.197"}, "codex": {"0.169.0"}}},
		Cases: []*conformance.CaseResult{
			caseResult(b, "claude/plain-text", "claude/plain-text",
				check("output/hello", conformance.Pass, "", ""),
				check("forward/unknown-type", conformance.NonStrict, "the unknown event is dropped or passed on", "the adapter stopped")),
			caseResult(b, "codex/single-tool/exit-mid-line", "codex/single-tool",
				check("output/hello", conformance.Pass, "", ""),
				check("lifecycle/reports-failure", conformance.Pass, "", "")),
			caseResult(b, "codex/single-tool/stall", "codex/single-tool",
				check("lifecycle/stall", conformance.Timeout, "the case finishes within its deadline", "still running after 20s"),
				check("output/hello", conformance.Informational, "", "hello came late")),
		},
	}
	doc := NewDocument(runA, runB)
	ApplyBaseline(doc, testBaseline(t), GateOptions{})
	return doc
}

func testBaseline(t testing.TB) *Baseline {
	t.Helper()
	b, err := ParseBaseline(strings.NewReader("# expected\nclaude/single-tool/stall lifecycle/reports-failure\nclaude/plain-text  # passes now: stale\n"))
	if err != nil {
		t.Fatal(err)
	}
	b.File = "agentconform.baseline"
	return b
}

var (
	schemaOnce              sync.Once
	docSchema, recordSchema *jsonschema.Schema
	schemaErr               error
)

// resultsSchemas compiles schemas/results/results.schema.json from the
// embedded schemas: the document and its NDJSON record.
func resultsSchemas(t testing.TB) (*jsonschema.Schema, *jsonschema.Schema) {
	t.Helper()
	schemaOnce.Do(func() {
		raw, err := fs.ReadFile(schemas.FS(), "results/results.schema.json")
		if err != nil {
			schemaErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		const url = "https://agentconform.dev/schemas/results/results.schema.json"
		if err = c.AddResource(url, doc); err != nil {
			schemaErr = err
			return
		}
		if docSchema, schemaErr = c.Compile(url); schemaErr != nil {
			return
		}
		recordSchema, schemaErr = c.Compile(url + "#/$defs/Record")
	})
	if schemaErr != nil {
		t.Fatalf("results schema: %v", schemaErr)
	}
	return docSchema, recordSchema
}

func validateJSON(t *testing.T, s *jsonschema.Schema, data []byte, what string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: not JSON: %v", what, err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s does not match schemas/results: %v", what, err)
	}
}

// TestResultsJSONMatchesSchema validates the JSON document and every NDJSON
// record against schemas/results, and reads both back to the same runs.
func TestResultsJSONMatchesSchema(t *testing.T) {
	docS, recS := resultsSchemas(t)
	doc := testDoc(t)
	var js, nd bytes.Buffer
	if err := WriteResultsJSON(&js, doc); err != nil {
		t.Fatal(err)
	}
	validateJSON(t, docS, js.Bytes(), "results document")
	if err := WriteResultsNDJSON(&nd, doc); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(nd.Bytes()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		validateJSON(t, recS, sc.Bytes(), "NDJSON record "+sc.Text()[:min(40, len(sc.Text()))])
		var r struct{ Kind string }
		json.Unmarshal(sc.Bytes(), &r)
		kinds[r.Kind]++
	}
	if want := map[string]int{"start": 2, "case": 7, "end": 2}; !cmp.Equal(kinds, want) {
		t.Errorf("NDJSON record kinds %v, want %v", kinds, want)
	}
	// Each run carries its problems, in the document and on its end
	// record: a failure the baseline expects among them, marked.
	var written struct {
		Runs []struct{ Problems []Problem }
	}
	if err := json.Unmarshal(js.Bytes(), &written); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range written.Runs {
		for _, p := range r.Problems {
			got = append(got, fmt.Sprintf("%s %s %v %v %s", p.Verdict, p.Check, p.Cases, p.Expected, p.Reproduce))
		}
	}
	want := []string{
		"FAIL lifecycle/reports-failure [claude/single-tool/stall] [claude/single-tool/stall] agentconform run --case claude/single-tool/stall --seed 7 --keep",
		"FAIL lifecycle/reports-failure [codex/single-tool/exit-mid-line] [] agentconform run --case codex/single-tool/exit-mid-line --seed 7 --keep",
		"CRASH output/hello [gemini/plain-text] [] agentconform run --case gemini/plain-text --seed 7 --keep",
		"TIMEOUT lifecycle/stall [codex/single-tool/stall] [] agentconform run --case codex/single-tool/stall --seed 7 --keep",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems in the results document (-want +got):\n%s", diff)
	}
	if !strings.Contains(nd.String(), `"kind":"end","meta"`) || strings.Count(nd.String(), `"problems":[{"check"`) != 2 {
		t.Errorf("the NDJSON end records lack the problems:\n%s", nd.String())
	}
	// The schema rejects what the model does not have.
	for _, bad := range []string{
		`{"runs":[{"meta":{},"cases":[],"gate":{"passed":true,"counts":{}}}]}`,
		`{"runs":[],"extra":1}`,
		strings.Replace(js.String(), `"verdict": "FAIL"`, `"verdict": "BROKEN"`, 1),
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if docS.Validate(v) == nil {
			t.Errorf("schema accepts %.80s", bad)
		}
	}
	for name, data := range map[string][]byte{"json": js.Bytes(), "ndjson": nd.Bytes()} {
		back, err := ReadResults(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(doc, back); diff != "" {
			t.Errorf("%s read back differs (-written +read):\n%s", name, diff)
		}
	}
}

// TestRunWritesSchemaValidResults validates what the runner itself
// produces (the published example, when it exists) against the schema.
func TestPublishedExampleMatchesSchema(t *testing.T) {
	docS, _ := resultsSchemas(t)
	files, _ := filepath.Glob(filepath.Join("examples", "*.json"))
	if len(files) == 0 {
		t.Skip("no reports/examples/*.json yet (agentconform report publish writes them)")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		validateJSON(t, docS, data, f)
	}
}

// TestPublishedExampleHasNoMachinePaths: the published example must not
// carry paths of the machine that generated it (publish scrubs them).
func TestPublishedExampleHasNoMachinePaths(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("examples", "*"))
	if len(files) == 0 {
		t.Skip("no reports/examples yet")
	}
	abs := regexp.MustCompile(`(^|[\s"'=(:])/(tmp|home|root|work|Users|private|var/folders)/`)
	// The fixtures were recorded as /home/user (their header's cwd is
	// /home/user/project, not this machine's), and the CLIs' lines name
	// it and the CLI's files under it.
	// A clipped one ("/home/us...") is the same path cut short.
	fixtureCwd := regexp.MustCompile(`/home/user/|/home/u(s(er?)?)?(\\?"|')?\.\.\.`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = fixtureCwd.ReplaceAll(data, []byte("$$FIXTURE_HOME/"))
		if m := abs.FindIndex(data); m != nil {
			t.Errorf("%s carries an absolute path of the machine: %q", f, data[m[0]:min(len(data), m[1]+60)])
		}
	}
}

func TestReadResultsForms(t *testing.T) {
	doc := testDoc(t)
	var one bytes.Buffer
	json.NewEncoder(&one).Encode(doc.Runs[0])
	got, err := ReadResults(&one)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != 1 || got.Runs[0].Meta.Adapter != "reference/unified" {
		t.Errorf("a single run reads as %d runs", len(got.Runs))
	}
	// A killed run: start and cases, no end record.
	var nd bytes.Buffer
	s := NewResultsStream(&nd)
	s.Start(doc.Runs[0].Meta)
	s.Case(doc.Runs[0].Cases[2])
	s.Case(doc.Runs[0].Cases[0])
	got, err = ReadResults(&nd)
	if err != nil {
		t.Fatal(err)
	}
	r := got.Runs[0]
	if len(r.Cases) != 2 || r.Cases[0].ID != "claude/plain-text" || r.Gate.Passed || len(r.Gate.New) != 1 {
		t.Errorf("partial NDJSON: cases %d, gate %+v", len(r.Cases), r.Gate)
	}
	for _, bad := range []string{"", "[1]", `{"x":1}`, `{"kind":"nope"}`, `{"format":"agentconform-results/9","runs":[]}`, `{"runs":[]} {"runs":[]}`} {
		if _, err := ReadResults(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadResults(%q) accepted", bad)
		}
	}
}

// TestResultsStreamConcurrent proves records are whole lines under
// concurrent writers (the runner calls Progress from one goroutine, but the
// stream promises more).
func TestResultsStreamConcurrent(t *testing.T) {
	var buf bytes.Buffer
	s := NewResultsStream(&buf)
	doc := testDoc(t)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range doc.Runs[0].Cases {
				s.Case(c)
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 32 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("torn record %.80s", l)
		}
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got; go test ./reports -update rewrites it):\n%s", name, diff)
	}
}
