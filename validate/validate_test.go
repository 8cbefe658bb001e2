package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
)

// collect validates input and returns "rule@line" for every reported
// finding, sorted, plus the result.
func collect(t *testing.T, r io.Reader, opts Options) ([]string, *Result) {
	t.Helper()
	var got []string
	res, err := Stream(context.Background(), r, "t.jsonl", opts, func(f finding.Finding, _ finding.Severity) {
		if f.File != "t.jsonl" {
			t.Errorf("finding without the file name: %+v", f)
		}
		got = append(got, f.Rule.ID+"@"+strconv.Itoa(f.Line))
	})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	sort.Strings(got)
	return got, res
}

// pipeCutCaptures are real captures whose stdout the CLI itself cut short,
// with the findings that cut gives: Gemini CLI 0.61.0 calls process.exit
// without draining stdout, and lost the end of a 350 KB tool_result line
// 3 × 64 KiB into it (exit 0, no result).
var pipeCutCaptures = map[string]map[string]int{
	"../testdata/captures/gemini/pipe_cut.long-output.jsonl": {
		"jsonl/no-final-newline": 1, "jsonl/invalid-json": 1, "gemini/stream/truncated": 1,
	},
}

func TestCapturesAreClean(t *testing.T) {
	var files []string
	err := filepath.WalkDir("../testdata/captures", func(p string, d os.DirEntry, err error) error {
		// ACP sessions are judged by the acp rules: TestACPCaptures.
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && !strings.HasPrefix(d.Name(), "acp-") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 12 {
		t.Fatalf("found only %d capture files", len(files))
	}
	for _, p := range files {
		// The CLI is the first directory under captures (claude/..., or
		// codex/0.169.0/... for a versioned transcript).
		rel, _ := filepath.Rel("../testdata/captures", p)
		rel = filepath.ToSlash(rel)
		t.Run(rel, func(t *testing.T) {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var findings []string
			res, err := Stream(context.Background(), f, p, Options{}, func(f finding.Finding, sev finding.Severity) {
				findings = append(findings, sev.String()+" "+f.String())
			})
			if err != nil {
				t.Fatal(err)
			}
			if cut := pipeCutCaptures[filepath.ToSlash(p)]; cut != nil {
				// The real CLI lost the end of its stdout: the cut is
				// what the capture shows, and exactly that is reported.
				if diff := cmp.Diff(cut, res.Counts); diff != "" {
					t.Errorf("a capture cut short by the CLI must report the cut and nothing else (-want +got):\n%s\n%s", diff, strings.Join(findings, "\n"))
				}
			} else if res.Violations > 0 || res.Warnings > 0 {
				t.Errorf("capture should be clean, got:\n%s", strings.Join(findings, "\n"))
			}
			if len(res.Drift) > 0 {
				t.Errorf("capture should show no drift under the observed schemas, got %d entries: first %+v", len(res.Drift), *res.Drift[0])
			}
			want := map[string]schemas.Dialect{"claude": schemas.Claude, "codex": schemas.Codex, "gemini": schemas.Gemini}[captureCLI(p)]
			if strings.HasSuffix(p, ".stdin.jsonl") {
				want = schemas.ClaudeStdin
			}
			if res.Dialect != want {
				t.Errorf("dialect = %q, want %q", res.Dialect, want)
			}
			if res.SchemaFile == "" {
				t.Error("no schema was applied")
			}
		})
	}
}

// captureCLI is the CLI a capture file belongs to: the directory under
// testdata/captures it is in (<cli>/NAME or <cli>/<version>/NAME).
func captureCLI(p string) string {
	rel, _ := filepath.Rel(filepath.Join("..", "testdata", "captures"), p)
	cli, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return cli
}

// TestClaudeCapturesStrict validates every committed Claude capture (the
// 2.1.197 files and each version directory) with Strict, as
// `agentconform validate --strict` does: the observed schema of the
// capture's version must know every field the real CLI sent, along every
// path (signal branches included), so no drift is reported.
func TestClaudeCapturesStrict(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "captures", "claude", "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	flat, _ := filepath.Glob(filepath.Join("..", "testdata", "captures", "claude", "*.jsonl"))
	files = append(files, flat...)
	if len(files) < 40 {
		t.Fatalf("found only %d Claude capture files", len(files))
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var findings []string
		res, err := Stream(context.Background(), bytes.NewReader(b), p, Options{Strict: true}, func(f finding.Finding, sev finding.Severity) {
			findings = append(findings, sev.String()+" "+f.String())
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Violations > 0 || res.Warnings > 0 || len(res.Drift) > 0 {
			t.Errorf("%s: %d violations, %d warnings, %d drift entries under --strict:\n%s", p, res.Violations, res.Warnings, len(res.Drift), strings.Join(findings, "\n"))
		}
	}
}

const codexOK = `{"type":"thread.started","thread_id":"01a1fb35-0270-7e71-9f6d-7aa160d20171"}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc ls","aggregated_output":"a\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"done"}}
{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}
`

func TestBrokenStreamsFireExactlyTheirRules(t *testing.T) {
	tests := []struct {
		name  string
		input string
		opts  Options
		want  []string
	}{
		{name: "clean codex", input: codexOK},
		{name: "schema: wrong status enum", input: strings.Replace(codexOK, `"status":"completed"`, `"status":"success"`, 1),
			want: []string{"codex/schema@4"}},
		{name: "sequence: completed twice", input: codexOK[:strings.Index(codexOK, `{"type":"item.completed","item":{"id":"item_1"`)] +
			`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"x","aggregated_output":"","exit_code":0,"status":"completed"}}` + "\n" +
			codexOK[strings.Index(codexOK, `{"type":"turn.completed"`):],
			want: []string{"codex/item/completed-once@5"}},
		{name: "truncated after SIGINT", input: codexOK[:strings.Index(codexOK, `{"type":"item.completed","item":{"id":"item_0"`)],
			want: []string{"codex/stream/truncated@3"}},
		{name: "stderr leaking into stdout", input: strings.Replace(codexOK, `{"type":"turn.started"}`, "Reading additional input from stdin...\n"+`{"type":"turn.started"}`, 1),
			want: []string{"jsonl/not-json@2"}},
		{name: "crlf is a warning", input: strings.ReplaceAll(codexOK, "\n", "\r\n"),
			want: []string{"jsonl/crlf@1", "jsonl/crlf@2", "jsonl/crlf@3", "jsonl/crlf@4", "jsonl/crlf@5", "jsonl/crlf@6"}},
		{name: "unknown field is drift, not a finding", input: strings.Replace(codexOK, `{"type":"turn.started"}`, `{"type":"turn.started","turn_id":"t1"}`, 1)},
		{name: "unknown field under strict", input: strings.Replace(codexOK, `{"type":"turn.started"}`, `{"type":"turn.started","turn_id":"t1"}`, 1),
			opts: Options{Strict: true}, want: []string{"codex/drift/unknown-field@2"}},
		{name: "duplicate key (real web_search) is a warning", input: strings.Replace(codexOK, `{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"done"}}`,
			`{"type":"item.completed","item":{"id":"item_1","type":"web_search","id":"ws_1","query":"q","action":{"type":"search","query":"q"}}}`, 1),
			want: []string{"codex/item/started-first@5", "jsonl/duplicate-key@5"}},
		{name: "forced dialect mismatch", input: codexOK, opts: Options{Dialect: schemas.Gemini},
			want: []string{"stream/no-known-events@0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := collect(t, strings.NewReader(tt.input), tt.opts)
			if d := cmp.Diff(tt.want, got); d != "" && !(len(tt.want) == 0 && len(got) == 0) {
				t.Errorf("findings (-want +got):\n%s", d)
			}
		})
	}
}

func TestStrictTurnsWarningsIntoViolations(t *testing.T) {
	in := strings.ReplaceAll(codexOK, "\n", "\r\n")
	_, loose := collect(t, strings.NewReader(in), Options{})
	_, strict := collect(t, strings.NewReader(in), Options{Strict: true})
	if loose.Violations != 0 || loose.Warnings != 6 {
		t.Errorf("loose: %d violations, %d warnings; want 0, 6", loose.Violations, loose.Warnings)
	}
	if strict.Violations != 6 || strict.Warnings != 0 {
		t.Errorf("strict: %d violations, %d warnings; want 6, 0", strict.Violations, strict.Warnings)
	}
}

func TestSplitReadsGiveTheSameFindings(t *testing.T) {
	data, err := os.ReadFile("../testdata/captures/claude/f_bidi_permission_allow.transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// Break it in several ways so there is something to find.
	broken := bytes.Replace(data, []byte(`"dir": "out"`), []byte(`"dir": "sideways"`), 1)
	broken = append(broken, []byte("garbage\n{\"dir\":\"out\",\"t_ms\":1,\"line\":\"{\\\"type\\\":\\\"result\\\"}\"}")...)
	whole, _ := collect(t, bytes.NewReader(broken), Options{})
	if len(whole) < 3 {
		t.Fatalf("expected several findings in the broken transcript, got %v", whole)
	}
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(broken)),
		"half":     iotest.HalfReader(bytes.NewReader(broken)),
		"one job":  bytes.NewReader(broken),
	} {
		opts := Options{}
		if name == "one job" {
			opts.Jobs = 1
		}
		got, _ := collect(t, r, opts)
		if d := cmp.Diff(whole, got); d != "" {
			t.Errorf("%s: findings differ (-whole +split):\n%s", name, d)
		}
	}
}

func TestTranscriptPairsAcrossDirections(t *testing.T) {
	data, err := os.ReadFile("../testdata/captures/claude/f_bidi_permission_allow.transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// Drop the client's answer to can_use_tool: the request is left pending.
	var kept [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(l, []byte(`"dir": "in"`)) && bytes.Contains(l, []byte(`behavior`)) {
			continue
		}
		kept = append(kept, l)
	}
	got, res := collect(t, bytes.NewReader(bytes.Join(kept, []byte("\n"))), Options{})
	if !res.Transcript || res.Dialect != schemas.Claude {
		t.Fatalf("transcript=%v dialect=%q", res.Transcript, res.Dialect)
	}
	if res.Counts["claude/control/request-answered"] != 1 {
		t.Errorf("want the unanswered can_use_tool reported, got counts %v and findings %v", res.Counts, got)
	}
}

func TestHostileInputNeverPanicsOrHangs(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	tests := map[string]string{
		"deep nesting":   `{"type":"turn.started","x":` + deep + "}\n",
		"huge numbers":   `{"type":"thread.started","thread_id":"t","n":1e400,"m":123456789012345678901234567890}` + "\n",
		"lone surrogate": `{"type":"thread.started","thread_id":"\ud800"}` + "\n",
		"NUL bytes":      "{\"type\":\"thread.started\",\"thread_id\":\"a\x00b\"}\n\x00\x00\x00\n",
		"not JSON":       "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00>\x00\x01\x00\x00\x00\n\xff\xfe\xfd\n",
		"only newlines":  "\n\n\n",
		"empty":          "",
		"array lines":    "[1,2]\n\"str\"\n42\n",
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			done := make(chan struct{})
			var res *Result
			go func() {
				defer close(done)
				res, _ = Stream(context.Background(), strings.NewReader(in), "t.jsonl", Options{}, nil)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("validate hung")
			}
			nonEmpty := strings.Count(strings.TrimRight(in, "\n"), "\n") + 1
			if strings.Trim(in, "\n") == "" {
				nonEmpty = 0
			}
			if res.Lines != nonEmpty {
				t.Errorf("Lines = %d, want %d", res.Lines, nonEmpty)
			}
			if name != "only newlines" && name != "empty" && res.Violations+res.Warnings == 0 {
				t.Errorf("hostile input %q gave no finding at all", name)
			}
		})
	}
}

// hugeLine streams a 100 MB line without holding it in memory.
type hugeLine struct{ left int }

func (h *hugeLine) Read(p []byte) (int, error) {
	if h.left <= 0 {
		return 0, io.EOF
	}
	n := min(len(p), h.left)
	for i := range n {
		p[i] = 'a'
	}
	if h.left == 100<<20 && n > 0 {
		p[0] = '{'
	}
	h.left -= n
	return n, nil
}

func TestHundredMegabyteLineIsReportedAndSkipped(t *testing.T) {
	in := io.MultiReader(&hugeLine{left: 100 << 20}, strings.NewReader("\n"+codexOK))
	got, res := collect(t, in, Options{})
	if want := []string{"jsonl/line-too-long@1"}; !cmp.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if res.Lines != 7 {
		t.Errorf("Lines = %d, want 7 (the long one and the six after it)", res.Lines)
	}
}

func TestUndecidableStream(t *testing.T) {
	_, res := collect(t, strings.NewReader(`{"type":"keep_alive"}`+"\n"), Options{})
	if res.Dialect != "" || res.Counts["stream/unknown-dialect"] != 1 {
		t.Errorf("undecidable stream: dialect %q counts %v", res.Dialect, res.Counts)
	}
}

func TestIndexPattern(t *testing.T) {
	for in, want := range map[string]string{"": "", "/a/0/b/12": "/a/*/b/*", "/x": "/x"} {
		if got := indexPattern(in); got != want {
			t.Errorf("indexPattern(%q) = %q, want %q", in, got, want)
		}
	}
}

const v1Permission = `{"transcript":"agentconform/v1","cli":"codex","cli_version":"0.169.0","scenario":"branches"}
{"stdin_eof":true}
{"out":"{\"type\":\"thread.started\",\"thread_id\":\"{{tid}}\"}"}
{"out":"{\"type\":\"turn.started\"}"}
{"in":"go?","cases":[{"match":{"x":1},"goto":"b"}]}
{"out":"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"a\"}}"}
{"goto":"end"}
{"label":"b"}
{"out":"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"b\"}}"}
{"label":"end"}
{"out":"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"cached_input_tokens\":0,\"cache_write_input_tokens\":0,\"output_tokens\":1,\"reasoning_output_tokens\":0}}"}
{"exit":0}
{"next_process":true}
{"stdin_eof":true}
{"out":"{\"type\":\"thread.started\",\"thread_id\":\"{{tid}}\"}"}
{"out":"{\"type\":\"turn.started\"}"}
{"out":"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":2,\"cached_input_tokens\":0,\"cache_write_input_tokens\":0,\"output_tokens\":2,\"reasoning_output_tokens\":0}}"}
{"exit":0}
`

func TestV1TranscriptEveryPathAndProcess(t *testing.T) {
	got, res := collect(t, strings.NewReader(v1Permission), Options{})
	if len(got) != 0 || res.Dialect != schemas.Codex || !res.Transcript {
		t.Fatalf("clean transcript: findings %v, dialect %q", got, res.Dialect)
	}
	// Break only the branch taken by a case: it must still be found, at
	// the transcript's own line.
	broken := strings.Replace(v1Permission, `\"text\":\"b\"`, `\"text\":7`, 1)
	got, _ = collect(t, strings.NewReader(broken), Options{})
	if want := []string{"codex/schema@9"}; !cmp.Equal(got, want) {
		t.Errorf("broken branch: got %v, want %v", got, want)
	}
	// Drop the second process's terminal event: truncated, reported there.
	broken = strings.Replace(v1Permission, `{"out":"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":2`, `{"err":"{\"x\":{\"input_tokens\":2`, 1)
	got, _ = collect(t, strings.NewReader(broken), Options{})
	if want := []string{"codex/stream/truncated@16"}; !cmp.Equal(got, want) {
		t.Errorf("truncated second process: got %v, want %v", got, want)
	}
	// A malformed step is a located transcript finding.
	got, _ = collect(t, strings.NewReader(strings.Replace(v1Permission, `{"goto":"end"}`, `{"goto":"nowhere"}`, 1)), Options{})
	if want := []string{"transcript/record@7"}; !cmp.Equal(got, want) {
		t.Errorf("bad goto: got %v, want %v", got, want)
	}
}

// TestClaudeBackgroundBashCaptured: Claude Code moves a Bash command that
// outlives its timeout to the background (2.1.329 and 2.1.331, the
// background-bash captures): the tool_result says so, the turn's result
// (result_index 0) comes while the command still runs, and in print mode
// the CLI later reports the task done and answers again in a turn of its
// own (system/init, result_index 1); SIGINT after the first result stops
// the task (task_notification stopped) and writes no further result. Every
// path of those captures passes the Claude rules (claude/turn/one-result,
// claude/tool/result-once among them), and a copy of the stream with a
// tool_result or a result repeated still fails them.
func TestClaudeBackgroundBashCaptured(t *testing.T) {
	for _, v := range []string{"2.1.329", "2.1.331"} {
		p := filepath.Join("..", "testdata", "captures", "claude", v, "background-bash.jsonl")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := transcript.Load(bytes.NewReader(b), p, transcript.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The main path, as the CLI wrote it when left alone.
		var main []string
		for _, s := range tr.Steps {
			if s.Op == transcript.OpLabel {
				break
			}
			if s.Op == transcript.OpOut {
				main = append(main, s.Text)
			}
		}
		var seq []string
		moved := ""
		for _, l := range main {
			var ev struct {
				Type, Subtype string
				ResultIndex   *int `json:"result_index"`
				Patch         struct{ Status string }
			}
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatal(err)
			}
			k := ev.Type
			if ev.Subtype != "" {
				k += "/" + ev.Subtype
			}
			if ev.ResultIndex != nil {
				k += "#" + strconv.Itoa(*ev.ResultIndex)
			}
			if ev.Type == "system" && ev.Subtype == "task_updated" {
				k += ":" + ev.Patch.Status
			}
			if strings.Contains(l, "was moved to the background") {
				moved = l
			}
			seq = append(seq, k)
		}
		got := strings.Join(seq, ",")
		if moved == "" || !strings.Contains(got, "result/success#0,system/task_updated:completed,system/task_notification,system/background_tasks_changed,system/init,assistant,result/success#1") {
			t.Fatalf("%s: the main path does not show the backgrounded command: %s", p, got)
		}

		var findings []string
		res, err := Stream(context.Background(), bytes.NewReader(b), p, Options{}, func(f finding.Finding, sev finding.Severity) {
			findings = append(findings, f.String())
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Violations != 0 || res.Warnings != 0 {
			t.Errorf("%s: %d violations, %d warnings on what the real CLI wrote:\n%s", p, res.Violations, res.Warnings, strings.Join(findings, "\n"))
		}

		// Hand-broken copies of the main path.
		first := -1
		for i, k := range seq {
			if strings.HasPrefix(k, "result/success#0") {
				first = i
				break
			}
		}
		for _, tc := range []struct {
			name  string
			extra string
			want  []string
		}{
			{"tool_result repeated after the result", moved, []string{"claude/tool/result-once", "claude/turn/one-result"}},
			{"result repeated", main[first], []string{"claude/turn/one-result"}},
		} {
			broken := append(append(append([]string(nil), main[:first+1]...), tc.extra), main[first+1:]...)
			got, _ := collect(t, strings.NewReader(strings.Join(broken, "\n")+"\n"), Options{})
			for _, rule := range tc.want {
				if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, rule+"@") }) {
					t.Errorf("%s, %s: no %s finding: %v", v, tc.name, rule, got)
				}
			}
		}
	}
}
