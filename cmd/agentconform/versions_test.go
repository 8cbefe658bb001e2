package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/capture"
	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/reports"
	"github.com/agentconform/agentconform/transcript"
)

// TestRunAtCLIVersions runs the reference adapters at the default
// fixtures and at Claude Code 2.1.329 (run --cli-version), as a user
// would: both runs pass, the pinned one replayed the 2.1.329 fixtures
// (and said so in its results and reproduce commands), a scenario not
// captured at 2.1.329 is SKIP with the reason, and `report render` of the
// two shows the version matrix in Markdown and HTML.
func TestRunAtCLIVersions(t *testing.T) {
	exe := agentconformBinary(t)
	dir := t.TempDir()
	o := func(n string) string { return filepath.Join(dir, n) }
	ids := []string{"claude/plain-text", "claude/single-tool", "claude/permission-allow/policy-deny", "claude/compaction"}
	run := func(out string, more ...string) string {
		t.Helper()
		args := []string{"run", "-q", "-o", out}
		for _, id := range ids {
			args = append(args, "--case", id)
		}
		cmd := exec.Command(exe, append(args, more...)...)
		cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=", "NO_COLOR=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %v: %v\n%s%s", more, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	run(o("default.json"))
	out := run(o("v.json"), "--cli-version", "claude=2.1.329")
	if !strings.Contains(out, "PASS: reference/unified @ claude 2.1.329: 4 cases") {
		t.Errorf("summary of the pinned run:\n%s", out)
	}
	docS, _ := resultsSchema(t)
	for _, f := range []string{"default.json", "v.json"} {
		data, _ := os.ReadFile(o(f))
		validateAgainst(t, docS, data, f)
	}
	def, err := reports.ReadResultsFile(o("default.json"))
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := reports.ReadResultsFile(o("v.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(def.Runs) != 2 || len(pinned.Runs) != 2 {
		t.Fatalf("%d and %d runs, want the two reference adapters each", len(def.Runs), len(pinned.Runs))
	}
	for i, r := range def.Runs {
		if len(r.Meta.CLIVersionPins) != 0 || len(r.Cases) != len(ids) {
			t.Errorf("default %s: pins %v, %d cases", r.Meta.Adapter, r.Meta.CLIVersionPins, len(r.Cases))
		}
		for _, c := range r.Cases {
			tr, err := fixtures.Load(c.Fixture)
			if err != nil || c.Verdict != "PASS" || c.CLIVersion != tr.Header.CLIVersion {
				t.Errorf("default %s %s: %s at %s (%v)", r.Meta.Adapter, c.ID, c.Verdict, c.CLIVersion, err)
			}
		}
		p := pinned.Runs[i]
		if p.Meta.CLIVersionPins["claude"] != "2.1.329" || strings.Join(p.Meta.CLIVersions["claude"], ",") != "2.1.329" || !p.Gate.Passed {
			t.Errorf("pinned %s: pins %v, versions %v, gate %v", p.Meta.Adapter, p.Meta.CLIVersionPins, p.Meta.CLIVersions, p.Gate.Passed)
		}
		for _, c := range p.Cases {
			_, _, scenario := fixtures.SplitName(strings.TrimPrefix(c.ID, "claude/"))
			switch {
			case c.CLIVersion != "2.1.329" || !strings.Contains(c.Reproduce, "--cli-version claude=2.1.329"):
				t.Errorf("pinned %s: version %q, reproduce %s", c.ID, c.CLIVersion, c.Reproduce)
			case c.ID == "claude/compaction":
				if c.Verdict != "SKIP" || c.Fixture != "" || !strings.Contains(c.Checks[0].Actual, "no claude/compaction fixture at claude 2.1.329") {
					t.Errorf("compaction at 2.1.329: %s, fixture %q, %q", c.Verdict, c.Fixture, c.Checks[0].Actual)
				}
			case c.Verdict != "PASS" || !strings.HasPrefix(c.Fixture, "claude/2.1.329/"):
				t.Errorf("pinned %s (%s): %s replaying %s", c.ID, scenario, c.Verdict, c.Fixture)
			}
		}
	}

	code, _, _ := runCmd(t, "", "report", "render", o("default.json"), o("v.json"), "--markdown", o("m.md"), "--html", o("m.html"))
	if code != 0 {
		t.Fatalf("report render: exit %d", code)
	}
	md, _ := os.ReadFile(o("m.md"))
	page, _ := os.ReadFile(o("m.html"))
	for _, want := range []string{"### CLI versions", "#### reference/unified · claude", "#### reference/shim · claude",
		"4 cases: 0 with a different verdict at another version, 3 with the same verdict at every version they ran at, 1 that ran at one version only",
		"| reference/unified @ claude 2.1.329 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the Markdown report lacks %q:\n%s", want, md)
		}
	}
	for _, want := range []string{`<section id="versions">`, "<h3>reference/unified · claude</h3>", `">2.1.329</th>`,
		`title="SKIP · claude/compaction · 2.1.329 · no claude/compaction fixture at claude 2.1.329`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}

	// An unknown version is a usage error that names the known ones.
	known, err := conformance.KnownCLIVersions("claude")
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCmd(t, "", "run", "--cli-version", "claude=0.0.1")
	if code != exitUsage || !strings.Contains(errs, "no fixtures of claude 0.0.1; known versions of claude: "+strings.Join(known, ", ")) ||
		!strings.Contains(errs, "2.1.197") || !strings.Contains(errs, "2.1.329") {
		t.Errorf("unknown version: exit %d, %s", code, errs)
	}
	if code, _, errs := runCmd(t, "", "run", "--cli-version", "claude=2.1.329", "--transcript", o("x.jsonl")); code != exitUsage || !strings.Contains(errs, "--transcript") {
		t.Errorf("--cli-version with --transcript: exit %d, %s", code, errs)
	}
	if code, out, _ := runCmd(t, "", "run", "--list"); code != 0 || !strings.Contains(out, "CLI versions (--cli-version CLI=VERSION") || !strings.Contains(out, "  claude  "+strings.Join(known, ", ")) {
		t.Errorf("run --list does not list the CLI versions:\n%.2000s", out)
	}
}

// TestReportPublishVersions re-renders an example directory holding the
// reference results at the default and at an older CLI version: the
// published pages show the version matrix.
func TestReportPublishVersions(t *testing.T) {
	dir := t.TempDir()
	resultsFile(t, dir, "reference.json", "", "codex/plain-text output/hello PASS")
	older := resultsFile(t, dir, "reference-codex-0.1.0.json", "", "codex/plain-text output/hello FAIL")
	doc, _ := reports.ReadResultsFile(older)
	doc.Runs[0].Meta.CLIVersionPins = map[string]string{"codex": "0.1.0"}
	doc.Runs[0].Cases[0].CLIVersion = "0.1.0"
	reports.WriteResultsFile(older, doc)
	code, out, errs := runCmd(t, "", "report", "publish", "--no-run", "--dir", dir)
	if code != 0 || !strings.Contains(out, "(a, a @ codex 0.1.0)") {
		t.Fatalf("publish: exit %d\n%s%s", code, out, errs)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if !strings.Contains(string(md), "#### a · codex") || !strings.Contains(string(md), "| `codex/plain-text` | ❌ **FAIL** | ✅ PASS |") ||
		!strings.Contains(string(md), "the CLI versions section compares them") || !strings.Contains(string(page), `<section id="versions">`) {
		t.Errorf("the published pages lack the version matrix:\n%s", md)
	}
}

// TestCaptureWritesAVersionedSet: capture --update-fixtures
// --versioned-fixtures writes the captures as the fixture set of their
// CLI version, converted for replay, and leaves the default fixtures be.
func TestCaptureWritesAVersionedSet(t *testing.T) {
	out, work, fx := t.TempDir(), t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(fx, "gemini"), 0o755)
	def := filepath.Join(fx, "gemini", "plain-text.jsonl")
	os.WriteFile(def, []byte("untouched\n"), 0o644)
	code, stdout, errs := runCaptureCmd(t, "capture", "--cli", "gemini", "--gemini-path", fakeGemini(t, ""), "--scenario", "plain-text",
		"-o", out, "--work-dir", work, "--update-fixtures", "--versioned-fixtures", "--fixtures-dir", fx)
	if code != exitOK || !strings.Contains(errs, "wrote the gemini 0.61.0 fixtures") {
		t.Fatalf("capture: %d\n%s\n%s", code, stdout, errs)
	}
	tr, err := transcript.ReadFile(filepath.Join(fx, "gemini", "0.61.0", "plain-text.jsonl"), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h := tr.Header; h.CLI != "gemini" || h.CLIVersion != "0.61.0" || h.Scenario != "plain-text" || h.Source != "captured" || h.Cwd != "/home/user/project" || h.SessionID == "" {
		t.Errorf("header %+v", h)
	}
	if b, _ := os.ReadFile(def); string(b) != "untouched\n" {
		t.Errorf("the default fixture was overwritten")
	}
	if code, _, errs := runCaptureCmd(t, "capture", "--versioned-fixtures", "--cli", "gemini", "--gemini-path", fakeGemini(t, "")); code != exitUsage || !strings.Contains(errs, "needs --update-fixtures") {
		t.Errorf("--versioned-fixtures alone: %d %s", code, errs)
	}
}

// TestCaptureWritesAVersionedClaudeSet: --versioned-fixtures converts
// Claude captures as the generator does (fixtures/convert): the captures
// of 2.1.329 make exactly the embedded 2.1.329 set, joined branches and
// all, and the captures no fixture is made from are named.
func TestCaptureWritesAVersionedClaudeSet(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "captures", "claude", "2.1.329")
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) < 15 {
		t.Fatalf("captures: %v %v", files, err)
	}
	var runs []*captureRun
	for _, f := range files {
		runs = append(runs, &captureRun{Result: &capture.Result{File: f}})
	}
	fx := t.TempDir()
	os.Mkdir(filepath.Join(fx, "claude"), 0o755)
	var progress bytes.Buffer
	if err := updateVersionedFixtures(fx, runs, &progress); err != nil {
		t.Fatal(err)
	}
	set, err := fixtures.AllVersion("claude", "2.1.329")
	if err != nil {
		t.Fatal(err)
	}
	wrote, _ := filepath.Glob(filepath.Join(fx, "claude", "2.1.329", "*.jsonl"))
	if len(wrote) != len(set) || !strings.Contains(progress.String(), "wrote the claude 2.1.329 fixtures") {
		t.Errorf("wrote %d fixtures, the embedded set has %d\n%s", len(wrote), len(set), progress.String())
	}
	for _, f := range set {
		want, _ := fs.ReadFile(fixtures.FS(), f.Path)
		got, err := os.ReadFile(filepath.Join(fx, filepath.FromSlash(f.Path)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: what capture wrote is not the embedded fixture (%v)", f.Name, err)
		}
	}
	for _, sc := range []string{"background-bash", "slow-stream"} {
		if !strings.Contains(progress.String(), "no fixture from the claude 2.1.329 capture "+sc+": ") {
			t.Errorf("progress does not name the unused capture %s:\n%s", sc, progress.String())
		}
	}
}
