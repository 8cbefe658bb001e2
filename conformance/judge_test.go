package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFormatOf pins how argv is read: the output format each CLI was
// asked for, and the invocations that run no turn.
func TestFormatOf(t *testing.T) {
	for _, tc := range []struct {
		agent string
		argv  string
		want  wireFormat
	}{
		{"claude", "claude -p hi --output-format stream-json --verbose", formatStream},
		{"claude", "claude --output-format=json -p hi", formatJSON},
		{"claude", "claude -p hi", formatText},
		{"claude", "claude -v", formatNone},
		{"claude", "claude mcp list", formatNone},
		{"claude", "claude --output-format stream-json --verbose --input-format stream-json", formatStream},
		{"codex", "codex exec --json --skip-git-repo-check hi", formatStream},
		{"codex", "codex exec --experimental-json -C /w hi", formatStream},
		{"codex", "codex exec hi", formatText},
		{"codex", "codex -c model=x exec hi --json", formatStream},
		{"codex", "codex exec --json resume 0199 hi", formatStream},
		{"codex", "codex --version", formatNone},
		{"codex", "codex login", formatNone},
		{"gemini", "gemini -p hi -o stream-json -y", formatStream},
		{"gemini", "gemini -p hi --output-format json", formatJSON},
		{"gemini", "gemini -p hi", formatText},
		{"gemini", "gemini --version", formatNone},
	} {
		if got := formatOf(tc.agent, strings.Fields(tc.argv)); got != tc.want {
			t.Errorf("formatOf(%q) = %s, want %s", tc.argv, got, tc.want)
		}
	}
}

func events(t *testing.T, lines ...string) []Event {
	t.Helper()
	var out []Event
	for _, l := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		out = append(out, Event{Raw: []byte(l), Obj: obj})
	}
	return out
}

// TestInfoIndex pins what a native adapter is judged on: information
// found wherever the adapter put it (deltas on one path, JSON inside a
// string, reflowed white space), and failure shown by any common marker.
func TestInfoIndex(t *testing.T) {
	x := buildIndex(events(t,
		`{"type":"text-delta","id":"0","delta":"Hello, "}`,
		`{"type":"text-delta","id":"0","delta":"world.\n"}`,
		`{"type":"tool-call","toolCallId":"t1","input":"{\"command\":\"ls -la\"}"}`,
		`{"type":"tool-result","toolCallId":"t1","result":{"output":"a.txt\nb.txt","exitCode":2}}`,
		`{"type":"finish","usage":{"inputTokens":120,"outputTokens":7}}`,
	))
	for _, s := range []string{"Hello, world.", "Hello,   world.", "ls -la", "a.txt b.txt"} {
		if !x.hasAtom(s) {
			t.Errorf("hasAtom(%q) = false", s)
		}
	}
	if x.hasAtom("goodbye") {
		t.Error(`hasAtom("goodbye") = true`)
	}
	if !x.hasText([]string{"Hello, ", "world."}) {
		t.Error("text streamed as deltas not found")
	}
	if !x.hasUsage(usage{Input: 100, Cached: 20, Output: 7}) || x.hasUsage(usage{Input: 100, Output: 8}) {
		t.Error("usage: input with cached tokens added must be found, a wrong output count must not")
	}
	failed := tool{Name: "shell", Input: map[string]any{"command": "ls -la"}, Result: "a.txt\nb.txt"}
	if miss := x.missingTool(0, failed); len(miss) != 0 {
		t.Errorf("a failed call whose result event carries a non-zero exit code: %v", miss)
	}
	plain := buildIndex(events(t, `{"type":"tool-result","toolCallId":"t1","result":"a.txt\nb.txt"}`))
	if miss := plain.missingTool(0, failed); len(miss) == 0 || !strings.Contains(miss[len(miss)-1], "no event that carries it says so") {
		t.Errorf("a failed call shown as a plain result must be reported: %v", miss)
	}
	if miss := plain.missingTool(0, tool{Result: "c.txt", Success: true}); len(miss) != 1 {
		t.Errorf("a lost result must be reported: %v", miss)
	}
	// A command Codex left running in the background (started, never
	// completed, the turn completed): the CLI never said it failed; its
	// start with the input is all there is to hand on.
	open := tool{Name: "shell", Input: map[string]any{"command": "sleep 20"}, LeftOpen: true}
	started := buildIndex(events(t, `{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"sleep 20","status":"in_progress"}}`))
	if miss := started.missingTool(0, open); len(miss) != 0 {
		t.Errorf("a tool the CLI left open, handed on as it started: %v", miss)
	}
	if miss := plain.missingTool(0, open); len(miss) != 1 || !strings.Contains(miss[0], "input") {
		t.Errorf("a tool the CLI left open whose start is lost must be reported: %v", miss)
	}
	// The CLI's own error message beside a result (Gemini's) is handed on.
	geminiFailed := tool{Name: "read_file", Result: "File not found.", Error: "File not found: /p/x.md"}
	both := buildIndex(events(t, `{"type":"tool_result","status":"error","output":"File not found.","error":{"message":"File not found: /p/x.md"}}`))
	if miss := both.missingTool(0, geminiFailed); len(miss) != 0 {
		t.Errorf("a failed call handed on with its error message: %v", miss)
	}
	outputOnly := buildIndex(events(t, `{"type":"tool_result","status":"error","output":"File not found."}`))
	if miss := outputOnly.missingTool(0, geminiFailed); len(miss) != 1 || !strings.Contains(miss[0], "error") {
		t.Errorf("a failed call whose error message is lost must be reported: %v", miss)
	}
}

// TestCompareTools pins the unified and shim tool comparison: names, ids
// and result shapes are the adapter's, pairing and content are not.
func TestCompareTools(t *testing.T) {
	want := []tool{
		{ID: "item_0", Name: "shell", Input: map[string]any{"command": "echo hi"}, Result: "hi\n", Success: true},
		{ID: "item_1", Name: "shell", Input: map[string]any{"command": "false"}, Result: "", Success: false},
	}
	renamed := []tool{
		{ID: "t1", Name: "exec", Input: map[string]any{"command": "echo hi"}, Result: map[string]any{"stdout": "hi\n", "exit_code": 0.0}, Success: true},
		{ID: "t2", Name: "exec", Input: `{"command":"false"}`, Result: map[string]any{"stdout": "", "exit_code": 1.0}, Success: false, Error: "exit status 1"},
	}
	if p := compareTools(want, renamed); len(p) != 0 {
		t.Errorf("renamed tools with object results: %v", p)
	}
	swapped := []tool{
		{Input: map[string]any{"command": "echo hi"}, Result: "", Success: true},
		{Input: map[string]any{"command": "false"}, Result: "hi\n", Success: false},
	}
	if p := compareTools(want, swapped); len(p) == 0 {
		t.Error("results paired with the wrong calls passed")
	}
	if p := compareTools(want, renamed[:1]); len(p) == 0 {
		t.Error("a lost call passed")
	}
	// The CLI's own error message (Gemini's error.message beside its
	// output) must reach the caller, in the result or the error.
	failed := []tool{{Name: "read_file", Input: map[string]any{"file_path": "x.md"}, Result: "File not found.", Error: "File not found: /p/x.md"}}
	if p := compareTools(failed, []tool{{Input: `{"file_path":"x.md"}`, Result: "File not found.", Error: "File not found: /p/x.md"}}); len(p) != 0 {
		t.Errorf("the error message in the error: %v", p)
	}
	if p := compareTools(failed, []tool{{Input: `{"file_path":"x.md"}`, Result: "File not found.\nFile not found: /p/x.md"}}); len(p) != 0 {
		t.Errorf("the error message after the result: %v", p)
	}
	if p := compareTools(failed, []tool{{Input: `{"file_path":"x.md"}`, Result: "File not found."}}); len(p) != 1 || !strings.Contains(p[0], "/p/x.md") {
		t.Errorf("a lost error message must be reported: %v", p)
	}
	// A call the CLI left open has no outcome: either success passes.
	open := []tool{{Name: "shell", Input: map[string]any{"command": "sleep 20"}, LeftOpen: true}}
	for _, ok := range []bool{true, false} {
		if p := compareTools(open, []tool{{Input: map[string]any{"command": "sleep 20"}, Success: ok}}); len(p) != 0 {
			t.Errorf("a call left open, closed with success %v: %v", ok, p)
		}
	}
}

// TestResolveCommand pins how an adapter command is made to work from the
// fresh directory each case runs in: relative files become absolute, the
// rest is left alone.
func TestResolveCommand(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"my_adapter.py", "my-adapter", "drivers/x.mjs"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o755)
	}
	q := shellQuote
	for _, tc := range []struct{ in, want string }{
		{"python3 my_adapter.py", "python3 " + q(dir+"/my_adapter.py")},
		{"./my-adapter --profile unified", q(dir+"/my-adapter") + " --profile unified"},
		{"my-adapter", "my-adapter"}, // a bare name is looked up in PATH
		{"node 'drivers/x.mjs' --config=drivers/x.mjs", "node " + q(dir+"/drivers/x.mjs") + " " + q("--config="+dir+"/drivers/x.mjs")},
		{"python3 missing.py", "python3 missing.py"},
		{"python3 my_adapter.py | tee log", "python3 my_adapter.py | tee log"}, // not a simple command: left alone
		{"/usr/bin/env python3 /abs/a.py", "/usr/bin/env python3 /abs/a.py"},
	} {
		if got := ResolveCommand(tc.in, dir); got != tc.want {
			t.Errorf("ResolveCommand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestExecable pins which adapter commands the runner's shell replaces
// itself with (exec): one simple command that runs a program, whatever its
// words hold, and nothing the shell must stay for.
func TestExecable(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"node driver.mjs", true},
		{`node "$DRV"`, true},
		{`node "$HOME/x/driver.mjs" --flag=$X`, true},
		{`"${ADAPTER:-/opt/a b/adapter}" --profile unified`, true},
		{`node "$(pwd)/driver.mjs"`, true},
		{"node `pwd`/driver.mjs", true},
		{"python3 a.py 2>/dev/null", true},
		{"python3 a.py 2>&1", true},
		{"python3 a.py # a comment", true},
		{`node "a;b|c" 'd && e'`, true},
		{"python3 a.py | tee log", false},
		{"cd dir && node x", false},
		{"node x; echo done", false},
		{"node x &", false},
		{"(node x)", false},
		{"{ node x; }", false},
		{"FOO=1 node x", false},
		{"cd dir", false},
		{"exec node x", false},
		{"if true; then node x; fi", false},
		{"node x\nnode y", false},
		{`node "unclosed`, false},
		{`node "$(echo ")"`, false},
		{"", false},
	} {
		if got := execable(tc.cmd); got != tc.want {
			t.Errorf("execable(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// TestBaselinePatterns pins globs in baselines: one line for one bug seen
// in many cases, and stale when none of its cases fails any more.
func TestBaselinePatterns(t *testing.T) {
	b, err := ParseBaseline(strings.NewReader("codex/* invocation/prompt # one bug, every case\n*/single-tool/line-* buffer/*\nclaude/plain-text\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		caseID, check string
		want          bool
	}{
		{"codex/plain-text", "invocation/prompt", true},
		{"codex/single-tool/line-65536", "invocation/prompt", true},
		{"gemini/plain-text", "invocation/prompt", false},
		{"codex/single-tool/line-65536", "buffer/line-intact", true},
		{"codex/single-tool/line-65536", "lifecycle/reports-success", false},
		{"claude/plain-text", "lossless/text", true},
	} {
		if _, got := b.expects(tc.caseID, tc.check); got != tc.want {
			t.Errorf("expects(%s, %s) = %v, want %v", tc.caseID, tc.check, got, tc.want)
		}
	}
	res := &Results{Cases: []*CaseResult{{ID: "codex/plain-text", Checks: []CheckResult{{Check: "invocation/prompt", Verdict: Pass}}}}}
	res.ApplyBaseline(b)
	if !slices.Contains(res.Gate.Stale, "codex/* invocation/prompt") {
		t.Errorf("a pattern none of whose cases fails is stale: %v", res.Gate.Stale)
	}
	if _, err := ParseBaseline(strings.NewReader("codex/[ x\n")); err == nil {
		t.Error("a bad pattern was accepted")
	}
}
