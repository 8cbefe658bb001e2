package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/reports"
)

// The GitHub Action (action.yml at the repository root) is a composite
// action of shell steps. These tests read it with a small parser for its
// layout, check that its inputs and the documented workflows agree with it,
// and run its shell steps in order as a runner would (bash -eo pipefail,
// GITHUB_OUTPUT, GITHUB_PATH, GITHUB_STEP_SUMMARY, if: conditions), with
// the "uses:" steps (setup-go, upload-artifact) left out.

type actionStep struct {
	name, id, cond, uses, run string
	env                       [][2]string
}

type actionFile struct {
	inputs map[string]string // name -> default
	steps  []actionStep
	text   string
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

func parseAction(t *testing.T) *actionFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	a := &actionFile{inputs: map[string]string{}, text: string(data)}
	lines := strings.Split(string(data), "\n")
	section, input := "", ""
	var step *actionStep
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := indentOf(l)
		if ind == 0 {
			section = strings.TrimSuffix(strings.TrimSpace(l), ":")
			continue
		}
		key, val, _ := strings.Cut(strings.TrimSpace(l), ":")
		switch section {
		case "inputs":
			if ind == 2 {
				input = key
				a.inputs[input] = ""
			} else if ind == 4 && key == "default" {
				a.inputs[input] = unquote(val)
			}
		case "runs":
			if strings.HasPrefix(strings.TrimSpace(l), "- name:") {
				a.steps = append(a.steps, actionStep{name: unquote(strings.TrimPrefix(strings.TrimSpace(l), "- name:"))})
				step = &a.steps[len(a.steps)-1]
				continue
			}
			if step == nil || ind != 6 {
				continue
			}
			switch key {
			case "id":
				step.id = unquote(val)
			case "if":
				step.cond = strings.TrimSpace(val)
			case "uses":
				step.uses = strings.TrimSpace(val)
			case "env":
				for i+1 < len(lines) && indentOf(lines[i+1]) == 8 && strings.TrimSpace(lines[i+1]) != "" {
					i++
					k, v, _ := strings.Cut(strings.TrimSpace(lines[i]), ":")
					step.env = append(step.env, [2]string{k, strings.TrimSpace(v)})
				}
			case "run":
				var b strings.Builder
				for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || indentOf(lines[i+1]) >= 8) {
					i++
					if len(lines[i]) >= 8 {
						b.WriteString(lines[i][8:])
					}
					b.WriteString("\n")
				}
				step.run = b.String()
			}
		}
	}
	return a
}

var exprRe = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// TestActionInputsAndReadme: every input the steps use is declared (and
// every declared one used), and the workflows of the README and of the CI
// guide use the action with inputs it has.
func TestActionInputsAndReadme(t *testing.T) {
	a := parseAction(t)
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`inputs\.([a-z-]+)`).FindAllStringSubmatch(a.text, -1) {
		used[m[1]] = true
		if _, ok := a.inputs[m[1]]; !ok {
			t.Errorf("action.yml uses undeclared input %s", m[1])
		}
	}
	for name := range a.inputs {
		if !used[name] {
			t.Errorf("input %s is declared but not used", name)
		}
	}
	if !strings.Contains(a.text, "using: composite") || len(a.steps) < 6 {
		t.Fatalf("not the composite action expected: %d steps", len(a.steps))
	}
	for _, want := range []string{"actions/upload-artifact@", "GITHUB_STEP_SUMMARY", "gh pr comment"} {
		if !strings.Contains(a.text, want) {
			t.Errorf("action.yml lacks %s", want)
		}
	}
	// The README's snippet and the complete workflow of the CI guide.
	for _, doc := range []string{"README.md", filepath.Join("docs", "guides", "ci.md")} {
		text, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(string(text), "- uses: agentconform/agentconform@")
		if i < 0 {
			t.Errorf("%s shows no workflow using the action", doc)
			continue
		}
		block := string(text)[i:]
		block = block[:strings.Index(block, "```")]
		with, keys := false, 0
		for _, l := range strings.Split(block, "\n") {
			if strings.TrimSpace(l) == "with:" {
				with = true
				continue
			}
			if with && strings.Contains(l, ":") {
				k, _, _ := strings.Cut(strings.TrimSpace(l), ":")
				if strings.HasPrefix(k, "#") {
					continue
				}
				keys++
				if _, ok := a.inputs[k]; !ok {
					t.Errorf("the workflow of %s passes %s, which action.yml does not declare", doc, k)
				}
			}
		}
		if keys == 0 {
			t.Errorf("the workflow of %s passes no input", doc)
		}
	}
}

// simulate runs the action's shell steps with inputs and returns the exit
// code of the last step that ran, the step summary and the outputs.
func simulate(t *testing.T, a *actionFile, inputs map[string]string, workspace string) (int, string, map[string]string) {
	t.Helper()
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	tmp := t.TempDir()
	summary := filepath.Join(tmp, "summary.md")
	pathFile := filepath.Join(tmp, "path")
	os.WriteFile(summary, nil, 0o644)
	os.WriteFile(pathFile, nil, 0o644)
	in := map[string]string{}
	for k, v := range a.inputs {
		in[k] = v
	}
	for k, v := range inputs {
		in[k] = v
	}
	outputs := map[string]map[string]string{}
	eval := func(expr string) string {
		switch {
		case strings.HasPrefix(expr, "inputs."):
			return in[strings.TrimPrefix(expr, "inputs.")]
		case expr == "github.action_path":
			return root
		case strings.HasPrefix(expr, "steps."):
			p := strings.Split(expr, ".") // steps.ID.outputs.NAME
			if len(p) == 4 {
				return outputs[p[1]][p[3]]
			}
		}
		return ""
	}
	failed, last := false, 0
	for _, s := range a.steps {
		run := !failed
		if s.cond != "" {
			run = true
			for _, term := range strings.Split(s.cond, "&&") {
				term = strings.TrimSpace(term)
				switch {
				case term == "always()":
				case strings.HasPrefix(term, "inputs.") && strings.Contains(term, "=="):
					l, r, _ := strings.Cut(term, "==")
					run = run && eval(strings.TrimSpace(l)) == unquote(r)
				default:
					run = false // github.event_name and the like: not a pull request here
				}
			}
		}
		if !run || s.uses != "" {
			continue
		}
		outFile := filepath.Join(tmp, "output-"+s.id)
		os.WriteFile(outFile, nil, 0o644)
		script := filepath.Join(tmp, "step.sh")
		os.WriteFile(script, []byte(s.run), 0o644)
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = workspace
		extraPath, _ := os.ReadFile(pathFile)
		env := append(os.Environ(), "RUNNER_TEMP="+tmp, "GITHUB_OUTPUT="+outFile, "GITHUB_PATH="+pathFile,
			"GITHUB_STEP_SUMMARY="+summary, "GITHUB_ACTIONS=true",
			"PATH="+strings.Join(strings.Fields(string(extraPath)), ":")+":"+os.Getenv("PATH"))
		for _, kv := range s.env {
			env = append(env, kv[0]+"="+exprRe.ReplaceAllStringFunc(kv[1], func(m string) string {
				return eval(exprRe.FindStringSubmatch(m)[1])
			}))
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		last = 0
		if ee, ok := err.(*exec.ExitError); ok {
			last = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("step %s: %v", s.name, err)
		}
		if last != 0 {
			failed = true
		}
		t.Logf("step %q exit %d:\n%s", s.name, last, out)
		outputs[s.id] = map[string]string{}
		f, _ := os.Open(outFile)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				outputs[s.id][k] = v
			}
		}
		f.Close()
	}
	sum, _ := os.ReadFile(summary)
	return last, string(sum), outputs["run"]
}

// TestActionRuns runs the action as a runner would: a failing adapter
// fails the job (exit 1) with the summary posted and every report written;
// with those failures in a baseline the job passes; with
// fail-on-new-failures false it passes too.
func TestActionRuns(t *testing.T) {
	exe := agentconformBinary(t) // skips with -short; warms the build cache
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	a := parseAction(t)
	ws := t.TempDir()
	inputs := map[string]string{"adapter": crashingAdapter, "cases": "codex/plain-text"}
	code, summary, out := simulate(t, a, inputs, ws)
	if code != 1 {
		t.Fatalf("a failing adapter: the job ends with %d, want 1", code)
	}
	if !strings.Contains(summary, "## agentconform: ❌") || !strings.Contains(summary, "### New failures") {
		t.Errorf("step summary:\n%s", summary)
	}
	if out["exit-code"] != "1" || out["new-failures"] == "0" || out["new-failures"] == "" {
		t.Errorf("outputs %v", out)
	}
	for _, f := range []string{"report.html", "summary.md", "junit.xml", "results.json", "results.ndjson"} {
		if st, err := os.Stat(filepath.Join(out["report-dir"], f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	// Accept today's failures in a baseline: the job passes.
	base := filepath.Join(ws, "baseline")
	if err := exec.Command(exe, "report", "gate", "--write-baseline", base, filepath.Join(out["report-dir"], "results.json")).Run(); err == nil {
		t.Fatal("report gate passed results with failures")
	}
	inputs["baseline"] = "baseline"
	if code, summary, out := simulate(t, a, inputs, ws); code != 0 || out["new-failures"] != "0" || !strings.Contains(summary, "no new failures") {
		t.Errorf("with a baseline: exit %d, outputs %v\n%s", code, out, summary)
	}
	delete(inputs, "baseline")
	inputs["fail-on-new-failures"] = "false"
	if code, _, _ := simulate(t, a, inputs, ws); code != 0 {
		t.Errorf("fail-on-new-failures false: exit %d", code)
	}
	// The documented workflow: a correct adapter named by a path relative
	// to the repository the workflow checked out.
	if _, err := exec.LookPath("python3"); err == nil {
		for from, to := range map[string]string{"single-turn.py": "my_adapter.py", "_harness.py": "_harness.py"} {
			src, err := os.ReadFile(filepath.Join("..", "..", "conformance", "testdata", "adapters", from))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, to), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		snippet := map[string]string{"adapter": "python3 my_adapter.py", "cases": "codex/plain-text"}
		if code, summary, out := simulate(t, a, snippet, ws); code != 0 || out["new-failures"] != "0" {
			t.Errorf("the documented workflow: exit %d, outputs %v\n%s", code, out, summary)
		}
		// An older CLI release: its cases replay that version's fixtures.
		snippet = map[string]string{"adapter": "python3 my_adapter.py", "cases": "claude/plain-text codex/plain-text", "cli-versions": "claude=2.1.329,\ncodex=0.169.0"}
		code, summary, out := simulate(t, a, snippet, ws)
		res, err := reports.ReadResultsFile(filepath.Join(out["report-dir"], "results.json"))
		if code != 0 || err != nil || len(res.Runs) != 1 || res.Runs[0].Meta.CLIVersionPins["claude"] != "2.1.329" || res.Runs[0].Meta.CLIVersionPins["codex"] != "0.169.0" {
			t.Errorf("cli-versions: exit %d, %v\n%s", code, err, summary)
		} else {
			for _, c := range res.Runs[0].Cases {
				if c.ID == "claude/plain-text" && (c.CLIVersion != "2.1.329" || c.Fixture != "claude/2.1.329/plain-text") {
					t.Errorf("cli-versions: claude/plain-text replayed %s at %s", c.Fixture, c.CLIVersion)
				}
			}
		}
	}
}

// TestActionInstallsAModuleVersion runs the action with version: set to a
// module version, served by a module proxy (moduleProxy): the install step
// go-installs the three commands at that version, and the run that
// follows is theirs (its results carry the version).
func TestActionInstallsAModuleVersion(t *testing.T) {
	for _, kv := range moduleProxy(t) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	a := parseAction(t)
	code, summary, out := simulate(t, a, map[string]string{"version": proxyVersion, "cases": "codex/plain-text"}, t.TempDir())
	if code != 0 || out["exit-code"] != "0" {
		t.Fatalf("version %s: exit %d, outputs %v\n%s", proxyVersion, code, out, summary)
	}
	res, err := reports.ReadResultsFile(filepath.Join(out["report-dir"], "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) == 0 {
		t.Fatal("no run in the results")
	}
	for _, r := range res.Runs {
		if r.Meta.Version != strings.TrimPrefix(proxyVersion, "v") {
			t.Errorf("the results of %s were written by agentconform %s, not %s", r.Meta.Adapter, r.Meta.Version, proxyVersion)
		}
	}
	bin := filepath.Join(filepath.Dir(out["report-dir"]), "agentconform-bin")
	for _, name := range []string{"agentconform", "agentconform-fake", "agentconform-adapter"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			t.Errorf("the install step did not install %s: %v", name, err)
		}
	}
}
