package capture

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
)

func v1(t *testing.T, lines ...string) *transcript.Transcript {
	t.Helper()
	tr, err := transcript.Load(strings.NewReader(strings.Join(lines, "\n")+"\n"), "test", transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

const codexHeader = `{"transcript":"agentconform/v1","cli":"codex","cli_version":"0.169.0","scenario":"single-tool","description":"x.","argv":["codex","exec"],"cwd":"/home/user/project","session_id":"t1","source":"captured"}`

func out(line string) string {
	return `{"out":` + quote(line) + `}`
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

func TestCompareShapes(t *testing.T) {
	base := v1(t, codexHeader,
		`{"stdin_eof":true}`,
		out(`{"type":"thread.started","thread_id":"t1"}`),
		out(`{"type":"turn.started"}`),
		out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"ls","exit_code":null,"status":"in_progress"}}`),
		`{"on_signal":{"SIGINT":"exit:1"}}`,
		out(`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"ls","exit_code":0,"status":"completed","old":1}}`),
		out(`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"hi"}}`),
		out(`{"type":"turn.completed","usage":{"input_tokens":1}}`),
		`{"exit":0}`)
	capt := v1(t, codexHeader,
		`{"stdin_eof":true}`,
		out(`{"type":"thread.started","thread_id":"t2"}`),
		out(`{"type":"turn.started"}`),
		out(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"first"}}`),
		out(`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","exit_code":null,"status":"running"}}`),
		`{"on_signal":{"SIGINT":"exit:130"}}`,
		out(`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","exit_code":0,"status":"completed","extra":{"a":1,"b":{"c":2}}}}`),
		out(`{"type":"turn.finished","usage":{"input_tokens":2}}`),
		`{"exit":0}`)
	var got []string
	for _, c := range Compare(Along(base, capt)) {
		got = append(got, c.String())
	}
	want := []string{
		"+ new event kind turn.finished",
		"- vanished event kind turn.completed",
		"+ new field /item/extra in item.completed:command_execution (and 3 fields inside it)",
		"- vanished field /item/old in item.completed:command_execution",
		"+ new value running at /item/status in item.started:command_execution",
		"- vanished value in_progress at /item/status in item.started:command_execution",
		"~ changed order of process 1:\n" +
			"      was: thread.started, turn.started, item.started:command_execution, item.completed:command_execution, item.completed:agent_message, turn.completed\n" +
			"      now: thread.started, turn.started, item.completed:agent_message, item.started:command_execution, item.completed:command_execution, turn.finished",
		"~ changed order of process 1 after SIGINT:\n" +
			"      was: thread.started, turn.started, item.started:command_execution\n" +
			"      now: thread.started, turn.started, item.completed:agent_message, item.started:command_execution",
		"~ changed exit of process 1 after SIGINT: 1 -> 130",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c := Compare(Along(capt, capt)); len(c) != 0 {
		t.Errorf("a transcript drifts from itself: %v", c)
	}
}

func TestOrderIgnoresParallelInterleaving(t *testing.T) {
	seq := v1(t, codexHeader,
		out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution"}}`),
		out(`{"type":"item.completed","item":{"id":"item_0","type":"command_execution"}}`),
		out(`{"type":"item.started","item":{"id":"item_1","type":"command_execution"}}`),
		out(`{"type":"item.completed","item":{"id":"item_1","type":"command_execution"}}`),
		`{"exit":0}`)
	par := v1(t, codexHeader,
		out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution"}}`),
		out(`{"type":"item.started","item":{"id":"item_1","type":"command_execution"}}`),
		out(`{"type":"item.completed","item":{"id":"item_0","type":"command_execution"}}`),
		out(`{"type":"item.completed","item":{"id":"item_1","type":"command_execution"}}`),
		`{"exit":0}`)
	if c := Compare(Along(seq, par)); len(c) != 0 {
		t.Errorf("parallel calls drift from sequential ones: %v", c)
	}
}

func TestBaselineDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, version string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		h := strings.Replace(codexHeader, `"0.169.0"`, `"`+version+`"`, 1)
		if err := os.WriteFile(p, []byte(h+"\n"+`{"exit":0}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("codex/0.9.0/single-tool.jsonl", "0.9.0")
	write("codex/0.10.0/single-tool.jsonl", "0.10.0")
	write("codex/0.11.0/single-tool.jsonl", "0.11.0")
	b := Baseline{Dir: dir}
	for version, want := range map[string]string{"0.11.0": "0.10.0", "0.12.0": "0.11.0", "0.10.0": "0.9.0", "0.9.0": "0.9.0"} {
		tr, err := b.Load("codex", version, "single-tool")
		if err != nil || tr == nil || tr.Header.CLIVersion != want {
			t.Errorf("baseline for %s: %v %v, want %s", version, tr, err, want)
		}
	}
	// A version directory linked in from elsewhere counts.
	elsewhere := t.TempDir()
	h := strings.Replace(codexHeader, `"0.169.0"`, `"0.12.0"`, 1)
	if err := os.WriteFile(filepath.Join(elsewhere, "single-tool.jsonl"), []byte(h+"\n"+`{"exit":0}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "codex", "0.12.0")); err != nil {
		t.Fatal(err)
	}
	if tr, err := b.Load("codex", "0.13.0", "single-tool"); err != nil || tr == nil || tr.Header.CLIVersion != "0.12.0" {
		t.Errorf("baseline for 0.13.0 with 0.12.0 linked: %v %v", tr, err)
	}
	if tr, err := b.Load("codex", "0.11.0", "plain-text"); tr != nil || err != nil {
		t.Errorf("a missing scenario gave %v, %v", tr, err)
	}
	if tr, err := (Baseline{}).Load("codex", "0.169.0", "single-tool"); tr == nil || err != nil {
		t.Errorf("the embedded fixture: %v", err)
	}
	if tr, err := (Baseline{}).Load("codex", "0.169.0", "slow-stream"); tr != nil || err != nil {
		t.Errorf("no fixture gave %v, %v", tr, err)
	}
}

// TestCompareCaptureOfAFixtureItself: a fixture compared with itself has
// no shape changes, and the schema of its version knows it.
func TestCompareCaptureOfAFixtureItself(t *testing.T) {
	tr, err := (Baseline{}).Load("gemini", "0.61.0", "single-tool")
	if err != nil || tr == nil {
		t.Fatal(err)
	}
	r, err := CompareCapture(context.Background(), tr, Baseline{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Drifted() || r.Baseline == "" {
		t.Errorf("report %+v", r)
	}
}

// TestAcceptSchemas accepts the drift of an imaginary Codex 0.170.0 into
// a copy of the schemas: a new event type, a new item field and a new
// value of an open enum.
func TestAcceptSchemas(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "schemas", "observed", "codex", "0.169.0")
	dst := filepath.Join(dir, "observed", "codex", "0.169.0")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, "events.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "events.schema.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	h := strings.Replace(codexHeader, `"0.169.0"`, `"0.170.0"`, 1)
	tr := v1(t, h,
		out(`{"type":"thread.started","thread_id":"t1"}`),
		out(`{"type":"turn.started"}`),
		out(`{"type":"turn.paused","reason":"user"}`),
		out(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi","phase":"final"}}`),
		out(`{"type":"item.completed","item":{"id":"item_1","type":"web_search","query":"q","action":{"type":"summarize"}}}`),
		out(`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`),
		`{"exit":0}`)
	acc, err := AcceptSchemas(dir, "codex", "0.170.0", []*transcript.Transcript{tr})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"event kind turn.paused",
		`field /item/phase in item.completed:agent_message`,
		`value "summarize" at /item/action/type in item.completed:web_search`,
	}
	if strings.Join(acc.Added, "\n") != strings.Join(want, "\n") || len(acc.Left) != 0 || acc.Base != "0.169.0" {
		t.Errorf("added:\n%s\nleft: %v", strings.Join(acc.Added, "\n"), acc.Left)
	}
	nb, err := os.ReadFile(filepath.Join(dir, "observed", "codex", "0.170.0", "events.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"$id": "https://agentconform.dev/schemas/observed/codex/0.170.0/events.schema.json"`, `"x-cli-version": "0.170.0"`, `"x-added-in": "0.170.0"`} {
		if !strings.Contains(string(nb), s) {
			t.Errorf("the new file lacks %s", s)
		}
	}
	if strings.Contains(string(nb), "\t") || strings.Contains(string(nb), "    \"$id\"") {
		t.Errorf("the new file is not indented like the others")
	}
	v, err := schemas.NewSet(os.DirFS(dir)).Load(schemas.Observed, schemas.Codex, "0.170.0")
	if err != nil || v.Version != "0.170.0" {
		t.Fatalf("the new schema does not load: %v", err)
	}
	// The old version is untouched, and accepting twice is refused.
	if ob, _ := os.ReadFile(filepath.Join(dst, "events.schema.json")); string(ob) != string(b) {
		t.Error("the old version was edited")
	}
	if _, err := AcceptSchemas(dir, "codex", "0.170.0", []*transcript.Transcript{tr}); err == nil {
		t.Error("an existing version was rewritten")
	}
	if _, err := AcceptSchemas(dir, "codex", "0.1.0", nil); err == nil {
		t.Error("a version older than every schema was accepted")
	}
}

// committed loads a capture committed in testdata/captures.
func committed(t *testing.T, rel string) *transcript.Transcript {
	t.Helper()
	dir := filepath.Join("..", "testdata", "captures")
	tr, err := transcript.LoadFile(os.DirFS(dir), rel, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr.Name = rel
	return tr
}

// edited is a committed capture with edit applied to its lines.
func edited(t *testing.T, rel string, edit func(lines []string) []string) *transcript.Transcript {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "captures", rel))
	if err != nil {
		t.Fatal(err)
	}
	lines := edit(strings.Split(strings.TrimRight(string(b), "\n"), "\n"))
	tr, err := transcript.Load(strings.NewReader(strings.Join(lines, "\n")+"\n"), rel, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func changeStrings(cs []Change) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return strings.Join(out, "\n")
}

func pathOf(s *Shape, name string) (PathShape, bool) {
	for _, p := range s.Paths {
		if p.Name == name {
			return p, true
		}
	}
	return PathShape{}, false
}

// TestDriftFollowsTheClientsAnswer compares real captures of Claude's
// permission scenarios with the fixtures, which branch on the client's
// can_use_tool answer: allow with the allow branch, deny with the deny
// branch (without the system/permission_denied the fake leaves out after
// a client's deny), not both with the fixture's fall-through path.
func TestDriftFollowsTheClientsAnswer(t *testing.T) {
	for _, answer := range []string{"allow", "deny"} {
		capt := committed(t, "claude/2.1.331/permission-"+answer+".jsonl")
		r, err := CompareCapture(context.Background(), capt, Baseline{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Baseline != "fixture claude/permission-"+answer {
			t.Fatalf("%s: compared with %q", answer, r.Baseline)
		}
		for _, c := range r.Changes {
			if c.What == "order" || c.What == "exit" || c.What == "path" || c.What == "type" {
				t.Errorf("%s: %s", answer, c)
			}
		}
	}
}

// TestDriftWalksTheBranchTaken checks the path the fixtures were walked
// along for the permission captures.
func TestDriftWalksTheBranchTaken(t *testing.T) {
	for _, answer := range []string{"allow", "deny"} {
		capt := committed(t, "claude/2.1.331/permission-"+answer+".jsonl")
		base, err := (Baseline{}).Load("claude", "2.1.331", "permission-"+answer)
		if err != nil || base == nil {
			t.Fatalf("the fixture claude/permission-%s: %v", answer, err)
		}
		bs, _ := Along(base, capt)
		bp, ok := pathOf(bs, "process 1")
		if !ok || len(bs.Paths) != 1 {
			t.Fatalf("%s: paths compared: %+v", answer, bs.Paths)
		}
		want := "control_response/success, system/init, assistant:text, assistant:tool_use, control_request/can_use_tool, user:tool_result, assistant:text, result/success"
		if got := orderString(bp.Order); got != want || bp.Exit != "0" {
			t.Errorf("%s: the fixture was walked along %s (exit %s), want %s (exit 0)", answer, got, bp.Exit, want)
		}
		// The client's answer chose the branch: only the deny branch's
		// result lists the denial.
		if denied := bs.Fields["result/success"]["/permission_denials/*/tool_name"]; denied != (answer == "deny") {
			t.Errorf("%s: the walk took the wrong branch (a denial listed: %v)", answer, denied)
		}
		if len(bs.Notes) != 0 || len(bs.Problems) != 0 {
			t.Errorf("%s: notes %v, problems %v", answer, bs.Notes, bs.Problems)
		}
	}
}

// TestDriftComparesWhatFollowsASignal compares interrupted captures with
// what their baseline does after the same signal at the same point: Codex
// and Gemini against their interrupt fixtures (SIGINT exits with no
// further event; no drift), Claude 2.1.331 against the capture of 2.1.329,
// whose SIGINT branch ends with an error result that 2.1.331 no longer
// writes.
func TestDriftComparesWhatFollowsASignal(t *testing.T) {
	for _, rel := range []string{"codex/0.169.0/interrupt.jsonl", "gemini/0.61.0/interrupt.jsonl"} {
		r, err := CompareCapture(context.Background(), committed(t, rel), Baseline{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Baseline == "" || len(r.Changes) != 0 || len(r.NotCompared) != 0 {
			t.Errorf("%s vs %s: %s %v", rel, r.Baseline, changeStrings(r.Changes), r.NotCompared)
		}
	}
	r, err := CompareCapture(context.Background(), committed(t, "claude/2.1.331/interrupt-sigint.jsonl"),
		Baseline{Dir: filepath.Join("..", "testdata", "captures")})
	if err != nil {
		t.Fatal(err)
	}
	if r.BaselineVersion != "2.1.329" {
		t.Fatalf("compared with %s %s", r.Baseline, r.BaselineVersion)
	}
	want := "~ changed order of process 1 after SIGINT:\n" +
		"      was: system/init, assistant:text, assistant:tool_use, user:tool_result, user:text, result/error_during_execution\n" +
		"      now: system/init, assistant:text, assistant:tool_use, user:tool_result, user:text"
	if got := changeStrings(r.Changes); !strings.Contains(got, want) || !strings.Contains(got, "- vanished event kind result/error_during_execution") {
		t.Errorf("changes:\n%s\nwant among them:\n%s", got, want)
	}
	if strings.Contains(changeStrings(r.Changes), "order of process 1:") {
		t.Errorf("the main paths differ: %s", changeStrings(r.Changes))
	}
}

// TestDriftSeesAChangedCapture edits real captures where the old
// comparison did not look: after the signal, and on the allow path.
func TestDriftSeesAChangedCapture(t *testing.T) {
	ctx := context.Background()
	// A Codex that writes turn.started again after SIGINT.
	capt := edited(t, "codex/0.169.0/interrupt.jsonl", func(lines []string) []string {
		var out []string
		for _, l := range lines {
			out = append(out, l)
			if l == `{"label":"interrupted"}` {
				out = append(out, `{"out":"{\"type\":\"turn.started\"}"}`)
			}
		}
		return out
	})
	r, err := CompareCapture(ctx, capt, Baseline{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(changeStrings(r.Changes), "~ changed order of process 1 after SIGINT:") {
		t.Errorf("a new event after SIGINT: changes %q", changeStrings(r.Changes))
	}
	// A Codex that exits 2 after SIGINT.
	capt = edited(t, "codex/0.169.0/interrupt.jsonl", func(lines []string) []string {
		n := len(lines)
		lines[n-1] = strings.Replace(lines[n-1], `"exit":1`, `"exit":2`, 1)
		return lines
	})
	if r, err = CompareCapture(ctx, capt, Baseline{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(changeStrings(r.Changes), "~ changed exit of process 1 after SIGINT: 1 -> 2") {
		t.Errorf("another exit after SIGINT: changes %q", changeStrings(r.Changes))
	}
	// A Claude that, allowed to run the tool, answers with no text.
	capt = edited(t, "claude/2.1.331/permission-allow.jsonl", func(lines []string) []string {
		var out []string
		for _, l := range lines {
			if !strings.Contains(l, `Created created.txt.`) || strings.Contains(l, `\"type\":\"result\"`) {
				out = append(out, l)
			}
		}
		return out
	})
	if r, err = CompareCapture(ctx, capt, Baseline{}); err != nil {
		t.Fatal(err)
	}
	if got := changeStrings(r.Changes); !strings.Contains(got, "~ changed order of process 1:") ||
		!strings.Contains(got, "now: control_response/success, system/init, assistant:text, assistant:tool_use, control_request/can_use_tool, user:tool_result, result/success") {
		t.Errorf("the answer left out: changes %q", got)
	}
}

// TestDriftLeavesToTheFake: where the baseline leaves the path to the
// fake (Claude's interrupt request answered by the fake, an on_signal
// "default"), drift compares up to there and says what it left out; where
// the baseline cannot follow (it exits before the signal, waits for a line
// the client never sent), that is drift.
func TestDriftLeavesToTheFake(t *testing.T) {
	r, err := CompareCapture(context.Background(), committed(t, "claude/2.1.331/interrupt.jsonl"), Baseline{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.NotCompared) != 1 || !strings.Contains(r.NotCompared[0], "control_request interrupt (after tool start 1): the fake answers it itself") {
		t.Errorf("not compared: %q", r.NotCompared)
	}
	for _, c := range r.Changes {
		if c.What == "order" || c.What == "exit" || c.What == "path" {
			t.Errorf("compared beyond the interrupt: %s", c)
		}
	}

	capt := v1(t, codexHeader,
		`{"stdin_eof":true}`,
		out(`{"type":"thread.started","thread_id":"t1"}`),
		out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution"}}`),
		`{"on_signal":{"SIGTERM":"goto:cut"}}`,
		out(`{"type":"item.completed","item":{"id":"item_0","type":"command_execution"}}`),
		`{"exit":0}`,
		`{"label":"cut"}`,
		out(`{"type":"turn.failed"}`),
		`{"exit":143}`)
	for _, tc := range []struct {
		name, base, note, problem string
	}{
		{"default", `{"on_signal":{"SIGTERM":"default"}}`, "process 1 after SIGTERM: the baseline leaves SIGTERM (after tool start 1) to the fake's default", ""},
		{"no handler", ``, "process 1 after SIGTERM: the baseline leaves SIGTERM (after tool start 1) to the fake's default", ""},
		{"exits first", `{"on_signal":{"SIGTERM":"exit:1"}}`, "", ""},
	} {
		lines := []string{codexHeader}
		if tc.base != "" {
			lines = append(lines, tc.base)
		}
		lines = append(lines, `{"stdin_eof":true}`,
			out(`{"type":"thread.started","thread_id":"t1"}`),
			out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution"}}`),
			out(`{"type":"item.completed","item":{"id":"item_0","type":"command_execution"}}`),
			`{"exit":0}`)
		bs, cs := Along(v1(t, lines...), capt)
		if tc.note != "" {
			if len(bs.Notes) != 1 || bs.Notes[0] != tc.note {
				t.Errorf("%s: notes %q, want %q", tc.name, bs.Notes, tc.note)
			}
			if ch := Compare(bs, cs); len(ch) != 0 {
				t.Errorf("%s: changes %s", tc.name, changeStrings(ch))
			}
			continue
		}
		want := "+ new event kind turn.failed\n" +
			"~ changed order of process 1 after SIGTERM:\n" +
			"      was: thread.started, item.started:command_execution\n" +
			"      now: thread.started, item.started:command_execution, turn.failed\n" +
			"~ changed exit of process 1 after SIGTERM: 1 -> 143"
		if got := changeStrings(Compare(bs, cs)); got != want {
			t.Errorf("%s: changes\n%s\nwant\n%s", tc.name, got, want)
		}
	}

	// A baseline that ends before the tool starts, and one that waits for
	// a second user message the client never sends.
	early := v1(t, codexHeader, `{"stdin_eof":true}`, out(`{"type":"thread.started","thread_id":"t1"}`), `{"exit":0}`)
	if got := changeStrings(Compare(Along(early, capt))); !strings.Contains(got,
		"~ changed path of process 1 after SIGTERM: the baseline ends (exit 0) before the client's SIGTERM (after tool start 1)") {
		t.Errorf("an early exit: %s", got)
	}
	claudeHeader := `{"transcript":"agentconform/v1","cli":"claude","cli_version":"2.1.331","scenario":"multi-turn","argv":["claude"],"source":"captured"}`
	oneTurn := v1(t, claudeHeader, `{"in":{"type":"user"}}`, out(`{"type":"result","subtype":"success"}`), `{"stdin_eof":true}`, `{"exit":0}`)
	twoTurns := v1(t, claudeHeader, `{"in":{"type":"user"}}`, out(`{"type":"result","subtype":"success"}`),
		`{"in":{"type":"user"}}`, out(`{"type":"result","subtype":"success"}`), `{"stdin_eof":true}`, `{"exit":0}`)
	if got := changeStrings(Compare(Along(twoTurns, oneTurn))); !strings.Contains(got,
		"~ changed path of process 1: the baseline waits for a stdin line like {\"type\":\"user\"} at line 4; the client closed stdin") {
		t.Errorf("a second turn the client never asked for: %s", got)
	}
	if got := changeStrings(Compare(Along(oneTurn, twoTurns))); !strings.Contains(got,
		"~ changed path of process 1: the baseline waits for the end of stdin at line 4; the client sent its user message first") {
		t.Errorf("a second turn the baseline does not take: %s", got)
	}
}

// TestEveryFixtureFollowsItself: each embedded fixture, taken as a
// capture, is walked along its own paths without a difference, a problem
// or anything left out. The exception: the deny branch of
// claude/permission-deny keeps a system/permission_denied that the fake
// (like the real CLI) leaves out after a client's deny, which a capture
// would not hold.
func TestEveryFixtureFollowsItself(t *testing.T) {
	withheld := map[string]string{"claude/permission-deny": "+ new event kind system/permission_denied"}
	all, err := fixtures.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range all {
		tr, err := fixtures.Load(fx.Name)
		if err != nil {
			t.Fatal(err)
		}
		bs, cs := Along(tr, tr)
		ch := Compare(bs, cs)
		if w, ok := withheld[fx.Name]; ok && len(ch) > 0 && ch[0].String() == w {
			continue
		}
		if len(ch) != 0 || len(bs.Notes) != 0 || len(cs.Paths) == 0 {
			t.Errorf("%s: changes %s, notes %v, paths %+v", fx.Name, changeStrings(ch), bs.Notes, cs.Paths)
		}
	}
}

// TestEveryCaptureFollowsItself: each committed capture is walked along
// its own paths without a difference, a problem or anything left out.
func TestEveryCaptureFollowsItself(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "captures", "*", "*", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(filepath.Join("..", "testdata", "captures"), f)
		tr := committed(t, filepath.ToSlash(rel))
		bs, cs := Along(tr, tr)
		if ch := Compare(bs, cs); len(ch) != 0 || len(bs.Notes) != 0 || len(cs.Paths) == 0 {
			t.Errorf("%s: changes %s, notes %v, paths %+v", rel, changeStrings(ch), bs.Notes, cs.Paths)
		}
	}
}
