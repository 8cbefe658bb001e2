package capture

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		out(`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"ls","exit_code":0,"status":"completed","old":1}}`),
		out(`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"hi"}}`),
		out(`{"type":"turn.completed","usage":{"input_tokens":1}}`),
		`{"on_signal":{"SIGINT":"exit:1"}}`,
		`{"exit":0}`)
	capt := v1(t, codexHeader,
		`{"stdin_eof":true}`,
		out(`{"type":"thread.started","thread_id":"t2"}`),
		out(`{"type":"turn.started"}`),
		out(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"first"}}`),
		out(`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","exit_code":null,"status":"running"}}`),
		out(`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","exit_code":0,"status":"completed","extra":{"a":1,"b":{"c":2}}}}`),
		out(`{"type":"turn.finished","usage":{"input_tokens":2}}`),
		`{"on_signal":{"SIGINT":"exit:130"}}`,
		`{"exit":0}`)
	var got []string
	for _, c := range Compare(ShapeOf(base), ShapeOf(capt)) {
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
		"~ changed exit of process 1 SIGINT: 1 -> 130",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c := Compare(ShapeOf(capt), ShapeOf(capt)); len(c) != 0 {
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
	if c := Compare(ShapeOf(seq), ShapeOf(par)); len(c) != 0 {
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
