package schemas

// Tests of the schema files themselves (the .json files under spec/,
// observed/, shim/ and unified/), using only the jsonschema library: every
// file compiles and follows the conventions of README.md, every captured
// line of a real CLI validates under its observed schema, the examples of
// the seeds behave as DEFECTS.md says, and the unified profile accepts what
// §8.1 accepts.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const (
	schemaFilesDraft  = "https://json-schema.org/draft/2020-12/schema"
	schemaFilesIDBase = "https://agentconform.dev/schemas/"
	testCapturesDir   = "../testdata/captures"
	testSeedsDir      = "testdata/seeds"

	fileClaudeStdout = "observed/claude/2.1.329/stdout.schema.json"
	fileClaudeStdin  = "observed/claude/2.1.329/stdin.schema.json"
	fileCodex        = "observed/codex/0.169.0/events.schema.json"
	fileGemini       = "observed/gemini/0.61.0/events.schema.json"
	fileShim         = "shim/shim-event.schema.json"
	fileUnified      = "unified/unified-event.schema.json"
	fileSpecUnified  = "spec/unified-event.schema.json"
	fileSpecClaude   = "spec/claude-event.schema.json"
	fileSpecCodex    = "spec/codex-event.schema.json"
	fileSpecGemini   = "spec/gemini-event.schema.json"
)

// schemaFileList is every schema file this package must ship.
var schemaFileList = []string{
	fileSpecUnified, fileSpecClaude, fileSpecCodex, fileSpecGemini,
	fileClaudeStdout, fileClaudeStdin, fileCodex, fileGemini,
	fileShim, fileUnified,
}

var (
	schemaFileCacheMu sync.Mutex
	schemaFileCache   = map[string]*jsonschema.Schema{}
)

// compileSchemaFile compiles one schema file (a slash path relative to the
// package directory) with format assertions on, once per test binary.
func compileSchemaFile(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	schemaFileCacheMu.Lock()
	defer schemaFileCacheMu.Unlock()
	if s, ok := schemaFileCache[name]; ok {
		return s
	}
	doc := readSchemaDoc(t, name)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	url := "https://agentconform.test/" + name
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: add resource: %v", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: compile: %v", name, err)
	}
	schemaFileCache[name] = s
	return s
}

func readSchemaDoc(t testing.TB, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not JSON: %v", name, err)
	}
	return doc
}

// testLine is one non-empty line of a JSONL file.
type testLine struct {
	n    int // 1-based line number in the file
	text string
	v    any
}

func readTestLines(t testing.TB, name string) []testLine {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	var out []testLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			t.Fatalf("%s:%d: not JSON: %v", name, n, err)
		}
		out = append(out, testLine{n, text, v})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return out
}

func decodeTestInstance(t testing.TB, text string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatalf("not JSON: %v: %s", err, text)
	}
	return v
}

func globTestFiles(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.FromSlash(pattern))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no file matches %s", pattern)
	}
	sort.Strings(files)
	return files
}

// TestSchemaFilesCompile compiles every .json file of the schema tree (the
// tree that gets embedded: everything but testdata/).
func TestSchemaFilesCompile(t *testing.T) {
	var found []string
	err := fs.WalkDir(os.DirFS("."), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == "testdata" {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range schemaFileList {
		if !slices.Contains(found, want) {
			t.Errorf("missing schema file %s", want)
		}
	}
	for _, p := range found {
		t.Run(p, func(t *testing.T) { compileSchemaFile(t, p) })
	}
}

// TestSchemaFilesConventions checks the conventions of README.md that the
// loader relies on, in every observed, shim and unified file.
func TestSchemaFilesConventions(t *testing.T) {
	for _, name := range schemaFileList {
		if strings.HasPrefix(name, "spec/") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var doc map[string]any
			b, err := os.ReadFile(filepath.FromSlash(name))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if doc["$schema"] != schemaFilesDraft {
				t.Errorf("$schema = %v, want %s", doc["$schema"], schemaFilesDraft)
			}
			if doc["$id"] != schemaFilesIDBase+name {
				t.Errorf("$id = %v, want %s", doc["$id"], schemaFilesIDBase+name)
			}
			if d, _ := doc["description"].(string); d == "" {
				t.Error("no top-level description")
			}
			if strings.HasPrefix(name, "observed/") {
				parts := strings.Split(name, "/") // observed/<cli>/<version>/<file>
				if doc["x-cli"] != parts[1] || doc["x-cli-version"] != parts[2] {
					t.Errorf("x-cli/x-cli-version = %v/%v, want %s/%s", doc["x-cli"], doc["x-cli-version"], parts[1], parts[2])
				}
				if d, _ := doc["description"].(string); !strings.Contains(d, parts[2]) || !strings.Contains(d, "docs/protocols/") {
					t.Errorf("description does not name version %s and its sources", parts[2])
				}
			}
			defs, _ := doc["$defs"].(map[string]any)
			for k, v := range defs {
				if d, _ := v.(map[string]any)["description"].(string); d == "" {
					t.Errorf("$defs/%s has no description", k)
				}
			}
			branches, _ := doc["oneOf"].([]any)
			if len(branches) == 0 {
				t.Fatal("root has no oneOf")
			}
			seen := map[string]bool{}
			for i, br := range branches {
				m, _ := br.(map[string]any)
				ref, _ := m["$ref"].(string)
				if len(m) != 1 || !strings.HasPrefix(ref, "#/$defs/") {
					t.Errorf("oneOf/%d is not a lone $ref into $defs: %v", i, br)
					continue
				}
				def, _ := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
				props, _ := def["properties"].(map[string]any)
				typ, _ := props["type"].(map[string]any)
				c, ok := typ["const"].(string)
				if !ok {
					t.Errorf("%s declares no properties.type.const", ref)
					continue
				}
				key := c
				if sub, ok := props["subtype"].(map[string]any); ok {
					switch {
					case sub["const"] != nil:
						key += "/" + fmt.Sprint(sub["const"])
					case sub["enum"] != nil:
						key += "/" + fmt.Sprint(sub["enum"])
					}
					// Otherwise (an optional x-open-enum subtype, as in
					// shim result) the branch is dispatched on type alone.
				}
				if req, _ := def["required"].([]any); !slices.Contains(req, any("type")) {
					t.Errorf("%s does not require type", ref)
				}
				if seen[key] {
					t.Errorf("two branches for %s", key)
				}
				seen[key] = true
			}
			checkForbiddenKeywords(t, doc, "#", false)
		})
	}
}

// checkForbiddenKeywords rejects the keywords the conventions forbid: "not",
// additionalProperties false, oneOf/anyOf below the root, and object schemas
// that declare properties without "type": "object" (only if-conditions may).
func checkForbiddenKeywords(t *testing.T, v any, at string, inProps bool) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["properties"]; ok && !inProps && !strings.HasSuffix(at, "/if") && !typeIncludesObject(x["type"]) {
			t.Errorf("%s: declares properties without \"type\": \"object\"", at)
		}
		for k, c := range x {
			if !inProps {
				switch {
				case k == "not":
					t.Errorf("%s: uses not", at)
				case k == "additionalProperties" && c == false:
					t.Errorf("%s: additionalProperties false", at)
				case (k == "oneOf" || k == "anyOf") && at != "#":
					t.Errorf("%s: %s below the root (use allOf of if/then)", at, k)
				}
			}
			checkForbiddenKeywords(t, c, at+"/"+k, !inProps && (k == "properties" || k == "$defs"))
		}
	case []any:
		for i, c := range x {
			checkForbiddenKeywords(t, c, fmt.Sprintf("%s/%d", at, i), false)
		}
	}
}

func typeIncludesObject(v any) bool {
	switch x := v.(type) {
	case string:
		return x == "object"
	case []any:
		return slices.Contains(x, any("object"))
	}
	return false
}

// TestCapturesValidate validates every line of every real capture under the
// observed schema of its CLI.
func TestCapturesValidate(t *testing.T) {
	cases := []struct {
		glob, schema string
	}{
		{testCapturesDir + "/claude/*.stdout.jsonl", fileClaudeStdout},
		{testCapturesDir + "/claude/*.stdin.jsonl", fileClaudeStdin},
		{testCapturesDir + "/codex/*.stdout.jsonl", fileCodex},
		{testCapturesDir + "/gemini/*.stdout.jsonl", fileGemini},
	}
	for _, c := range cases {
		s := compileSchemaFile(t, c.schema)
		for _, f := range globTestFiles(t, c.glob) {
			lines := readTestLines(t, f)
			if len(lines) == 0 {
				t.Errorf("%s: no lines", f)
			}
			for _, l := range lines {
				if err := s.Validate(l.v); err != nil {
					t.Errorf("%s:%d under %s: %v", f, l.n, c.schema, err)
				}
			}
		}
	}

	// Transcripts: "out" lines are stdout, "in" lines are stdin.
	out, in := compileSchemaFile(t, fileClaudeStdout), compileSchemaFile(t, fileClaudeStdin)
	counts := map[string]int{}
	for _, f := range globTestFiles(t, testCapturesDir+"/claude/*.transcript.jsonl") {
		for _, l := range readTestLines(t, f) {
			var rec struct {
				Dir  string `json:"dir"`
				Line string `json:"line"`
			}
			if err := json.Unmarshal([]byte(l.text), &rec); err != nil {
				t.Fatalf("%s:%d: %v", f, l.n, err)
			}
			var s *jsonschema.Schema
			switch rec.Dir {
			case "out":
				s = out
			case "in":
				s = in
			default:
				continue
			}
			if strings.TrimSpace(rec.Line) == "" {
				continue
			}
			counts[rec.Dir]++
			if err := s.Validate(decodeTestInstance(t, rec.Line)); err != nil {
				t.Errorf("%s:%d (%s) : %v", f, l.n, rec.Dir, err)
			}
		}
	}
	if counts["out"] == 0 || counts["in"] == 0 {
		t.Errorf("transcripts gave %d out and %d in lines; want both > 0", counts["out"], counts["in"])
	}
}

// seedCase runs every line of a seed file under a schema; wantFail lists the
// line numbers expected to fail (every other line must validate).
type seedCase struct {
	file, schema string
	wantFail     []int
	why          string // the DEFECTS.md entry behind wantFail
}

func runSeedCases(t *testing.T, cases []seedCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.file+"@"+c.schema, func(t *testing.T) {
			s := compileSchemaFile(t, c.schema)
			lines := readTestLines(t, path.Join(testSeedsDir, c.file))
			if len(lines) == 0 {
				t.Fatal("no lines")
			}
			var failed []int
			for _, l := range lines {
				err := s.Validate(l.v)
				if err != nil {
					failed = append(failed, l.n)
				}
				if want := slices.Contains(c.wantFail, l.n); want != (err != nil) {
					if err != nil {
						t.Errorf("line %d fails unexpectedly: %v\n%s", l.n, err, l.text)
					} else {
						t.Errorf("line %d validates, want a failure (%s)\n%s", l.n, c.why, l.text)
					}
				}
			}
			t.Logf("%d lines, failing %v", len(lines), failed)
		})
	}
}

// TestSeedExamplesUnderSpec checks the examples of the protocol spec against its §8
// schemas as written. Where the spec contradicts itself the expected failure
// is listed, with the DEFECTS.md entry that explains it.
func TestSeedExamplesUnderSpec(t *testing.T) {
	runSeedCases(t, []seedCase{
		{file: "000_claude_3_3_stdin.jsonl", schema: fileSpecClaude},
		{file: "000_claude_3_4_events.jsonl", schema: fileSpecClaude},
		{file: "000_claude_3_5_flow.jsonl", schema: fileSpecClaude},
		{file: "000_claude_9_5_mock.jsonl", schema: fileSpecClaude},
		{file: "000_claude_derived.jsonl", schema: fileSpecClaude, wantFail: []int{1},
			why: "DEFECTS.md S-C1: result.status lacks cancelled although §3.4 and §6.3 use it"},
		{file: "000_codex_4_5_events.jsonl", schema: fileSpecCodex},
		{file: "000_codex_4_6_flow.jsonl", schema: fileSpecCodex},
		{file: "000_codex_derived.jsonl", schema: fileSpecCodex, wantFail: []int{1},
			why: "DEFECTS.md S-X2: item.completed.status lacks skipped although §4.4 lists it"},
		{file: "000_gemini_5_5_events.jsonl", schema: fileSpecGemini, wantFail: []int{9},
			why: "DEFECTS.md S-G2: the §5.5 error result has \"stats\": null but the schema requires an object"},
		{file: "000_gemini_5_6_flow.jsonl", schema: fileSpecGemini},
		{file: "000_unified_derived.jsonl", schema: fileSpecUnified, wantFail: []int{1},
			why: "DEFECTS.md S-U4: §7.5 produces TurnStartedEvent (and others) that §8.1 has no branch for"},
	})
}

// TestSeedExamplesUnderShimAndUnified checks the shim contract's example stream under
// the shim profile, and the unified examples under the unified profile.
func TestSeedExamplesUnderShimAndUnified(t *testing.T) {
	runSeedCases(t, []seedCase{
		{file: "001_shim_example.jsonl", schema: fileShim},
		{file: "000_unified_derived.jsonl", schema: fileUnified, wantFail: []int{1},
			why: "the unified profile keeps §8.1's eight event types (DEFECTS.md S-U4)"},
	})
}

// TestSeedExamplesUnderObserved records how the protocol spec's examples fare under
// the observed schemas of today's CLIs: wantFail lists the lines the real
// protocol does not accept (DEFECTS.md; docs/protocols/spec.md#disagreements).
func TestSeedExamplesUnderObserved(t *testing.T) {
	runSeedCases(t, []seedCase{
		{file: "000_claude_3_3_stdin.jsonl", schema: fileClaudeStdin, wantFail: []int{1},
			why: "C12: stdin user messages are {type:user, message:{role,content}}"},
		{file: "000_claude_3_4_events.jsonl", schema: fileClaudeStdout, wantFail: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
			why: "C1-C10: no init/message/tool_use/tool_result/error types; system and result and stream_event have other shapes"},
		{file: "000_claude_3_5_flow.jsonl", schema: fileClaudeStdout, wantFail: []int{1, 2, 3, 4, 5, 6, 7, 8, 9},
			why: "C1, C3-C6, C16"},
		{file: "000_codex_4_5_events.jsonl", schema: fileCodex, wantFail: []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13},
			why: "X4 (item events carry item, not item_type), X14 (five usage keys)"},
		{file: "000_codex_4_6_flow.jsonl", schema: fileCodex, wantFail: []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
			why: "X4, X14"},
		{file: "000_gemini_5_5_events.jsonl", schema: fileGemini, wantFail: []int{6, 7, 8, 9, 10, 11},
			why: "G1 (no content/tool_call/retry), G3 (error event shape), G4/G5 (stats shape, never null)"},
		{file: "000_gemini_5_6_flow.jsonl", schema: fileGemini, wantFail: []int{9},
			why: "G5: stats lacks cached, input, models"},
	})
}

// TestObservedRejectsAndAccepts feeds hand-made events to each schema: the
// invalid ones (missing required field, wrong type, value outside a closed
// enum) must fail; the valid ones, including events with unknown fields or
// unknown values of open enums (drift, not violations), must pass.
func TestObservedRejectsAndAccepts(t *testing.T) {
	const ts = `"timestamp":"2026-11-20T23:12:42.753Z"`
	usage5 := `"usage":{"input_tokens":1,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}`
	cmd := `"id":"item_0","type":"command_execution","command":"/bin/bash -lc ls","aggregated_output":""`
	initFields := `"type":"system","subtype":"init","uuid":"u","session_id":"s","apiKeySource":"none","claude_code_version":"2.1.329","cwd":"/w","mcp_servers":[],"model":"m","permissionMode":"default","slash_commands":[],"output_style":"default","skills":[],"plugins":[]`
	resFields := `"type":"result","uuid":"u","session_id":"s","duration_ms":1,"duration_api_ms":1,"is_error":true,"num_turns":1,"stop_reason":null,"total_cost_usd":0,"usage":{"input_tokens":1,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"modelUsage":{},"permission_denials":[]`
	msg := `"message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[%s],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
	asst := func(block string) string {
		return `{"type":"assistant","parent_tool_use_id":null,"uuid":"u","session_id":"s",` + fmt.Sprintf(msg, block) + `}`
	}
	cases := []struct {
		schema, name, event string
		valid               bool
	}{
		// Codex
		{fileCodex, "turn.completed with four usage keys", `{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`, false},
		{fileCodex, "command without exit_code key", `{"type":"item.started","item":{` + cmd + `,"status":"in_progress"}}`, false},
		{fileCodex, "exit_code string", `{"type":"item.completed","item":{` + cmd + `,"exit_code":"0","status":"completed"}}`, false},
		{fileCodex, "command status success (closed enum)", `{"type":"item.completed","item":{` + cmd + `,"exit_code":0,"status":"success"}}`, false},
		{fileCodex, "item without id", `{"type":"item.completed","item":{"type":"agent_message","text":"hi"}}`, false},
		{fileCodex, "thread_id number", `{"type":"thread.started","thread_id":7}`, false},
		{fileCodex, "file change kind rename", `{"type":"item.completed","item":{"id":"item_1","type":"file_change","changes":[{"path":"/a","kind":"rename"}],"status":"completed"}}`, false},
		{fileCodex, "spec-style item_type event", `{"type":"item.started","item_type":"agent_message"}`, false},
		{fileCodex, "turn.completed", `{"type":"turn.completed",` + usage5 + `}`, true},
		{fileCodex, "exit_code null while running", `{"type":"item.started","item":{` + cmd + `,"exit_code":null,"status":"in_progress"}}`, true},
		{fileCodex, "unknown item type (drift)", `{"type":"item.completed","item":{"id":"item_2","type":"plan","text":"1. do it"}}`, true},
		{fileCodex, "unknown extra field (drift)", `{"type":"thread.started","thread_id":"t","timestamp":"2026-01-01T00:00:00Z"}`, true},
		{fileCodex, "web_search with duplicate id key", `{"type":"item.started","item":{"id":"item_1","type":"web_search","id":"ws_1","query":"q","action":{"type":"search","query":"q"}}}`, true},
		{fileCodex, "mcp call with null result and error", `{"type":"item.started","item":{"id":"item_3","type":"mcp_tool_call","server":"s","tool":"t","arguments":{},"result":null,"error":null,"status":"in_progress"}}`, true},
		{fileCodex, "mcp call missing error key", `{"type":"item.started","item":{"id":"item_3","type":"mcp_tool_call","server":"s","tool":"t","arguments":{},"result":null,"status":"in_progress"}}`, false},
		// Gemini
		{fileGemini, "init without timestamp", `{"type":"init","session_id":"s","model":"m"}`, false},
		{fileGemini, "init without model", `{"type":"init",` + ts + `,"session_id":"s"}`, false},
		{fileGemini, "tool_result status ok", `{"type":"tool_result",` + ts + `,"tool_id":"x","status":"ok"}`, false},
		{fileGemini, "result without stats", `{"type":"result",` + ts + `,"status":"success"}`, false},
		{fileGemini, "result status cancelled", `{"type":"result",` + ts + `,"status":"cancelled","stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0,"models":{}}}`, false},
		{fileGemini, "spec-style error event", `{"type":"error",` + ts + `,"error":{"code":"API_ERROR","message":"x"}}`, false},
		{fileGemini, "timestamp not date-time", `{"type":"init","timestamp":"yesterday","session_id":"s","model":"m"}`, false},
		{fileGemini, "model stats missing input", `{"type":"result",` + ts + `,"status":"success","stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0,"models":{"m":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0}}}}`, false},
		{fileGemini, "error event", `{"type":"error",` + ts + `,"severity":"warning","message":"Loop detected, stopping execution"}`, true},
		{fileGemini, "error result", `{"type":"result",` + ts + `,"status":"error","error":{"type":"unknown","message":"[API Error]"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0,"models":{}}}`, true},
		{fileGemini, "tool_result error", `{"type":"tool_result",` + ts + `,"tool_id":"x","status":"error","error":{"type":"file_not_found","message":"File not found"}}`, true},
		// Claude stdout
		{fileClaudeStdout, "system/init", `{` + initFields + `,"tools":[]}`, true},
		{fileClaudeStdout, "system/init without tools", `{` + initFields + `}`, false},
		{fileClaudeStdout, "system/init tools not strings", `{` + initFields + `,"tools":[1]}`, false},
		{fileClaudeStdout, "error result", `{` + resFields + `,"subtype":"error_during_execution","errors":["aborted"],"terminal_reason":"aborted_tools"}`, true},
		{fileClaudeStdout, "error result without errors", `{` + resFields + `,"subtype":"error_max_turns"}`, false},
		{fileClaudeStdout, "success result with is_error true", `{` + resFields + `,"subtype":"success","result":"Not logged in · Please run /login","terminal_reason":"api_error"}`, true},
		{fileClaudeStdout, "success result without result", `{` + resFields + `,"subtype":"success"}`, false},
		{fileClaudeStdout, "unknown terminal_reason (drift)", `{` + resFields + `,"subtype":"success","result":"","terminal_reason":"some_new_reason"}`, true},
		{fileClaudeStdout, "assistant text", asst(`{"type":"text","text":"hi"}`), true},
		{fileClaudeStdout, "assistant tool_use without id", asst(`{"type":"tool_use","name":"Bash","input":{}}`), false},
		{fileClaudeStdout, "assistant thinking without signature", asst(`{"type":"thinking","thinking":"hmm"}`), false},
		{fileClaudeStdout, "assistant unknown block type (drift)", asst(`{"type":"brand_new_block","x":1}`), true},
		{fileClaudeStdout, "assistant without parent_tool_use_id", `{"type":"assistant","uuid":"u","session_id":"s",` + fmt.Sprintf(msg, `{"type":"text","text":"hi"}`) + `}`, false},
		{fileClaudeStdout, "synthetic auth error", `{"type":"assistant","parent_tool_use_id":null,"uuid":"u","session_id":"s","error":"authentication_failed","is_api_error_message":true,` + strings.Replace(fmt.Sprintf(msg, `{"type":"text","text":"Not logged in · Please run /login"}`), `"model":"m"`, `"model":"<synthetic>"`, 1) + `}`, true},
		{fileClaudeStdout, "user tool_result with blocks", `{"type":"user","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}],"is_error":true}]},"tool_use_result":"Error: denied"}`, true},
		{fileClaudeStdout, "user content number", `{"type":"user","parent_tool_use_id":null,"message":{"role":"user","content":7}}`, false},
		{fileClaudeStdout, "control_response error", `{"type":"control_response","response":{"subtype":"error","request_id":"req_3","error":"Unsupported control request subtype: bogus_subtype","error_code":"unsupported_request"}}`, true},
		{fileClaudeStdout, "control_response with top-level request_id only", `{"type":"control_response","request_id":"req_1","subtype":"success"}`, false},
		{fileClaudeStdout, "control_response error without error", `{"type":"control_response","response":{"subtype":"error","request_id":"r"}}`, false},
		{fileClaudeStdout, "can_use_tool without tool_use_id", `{"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{}}}`, false},
		{fileClaudeStdout, "control_cancel_request", `{"type":"control_cancel_request","request_id":"r"}`, true},
		{fileClaudeStdout, "stream_event text delta", `{"type":"stream_event","parent_tool_use_id":null,"uuid":"u","session_id":"s","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I'll"}}}`, true},
		{fileClaudeStdout, "stream_event delta without index", `{"type":"stream_event","parent_tool_use_id":null,"uuid":"u","session_id":"s","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"I'll"}}}`, false},
		{fileClaudeStdout, "system/status null", `{"type":"system","subtype":"status","status":null,"permissionMode":"acceptEdits","uuid":"u","session_id":"s"}`, true},
		{fileClaudeStdout, "system/api_retry without error", `{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":500,"error_status":529,"uuid":"u","session_id":"s"}`, false},
		{fileClaudeStdout, "system/informational (loose group)", `{"type":"system","subtype":"informational","content":"x","level":"info","uuid":"u","session_id":"s"}`, true},
		{fileClaudeStdout, "keep_alive", `{"type":"keep_alive"}`, true},
		{fileClaudeStdout, "rate_limit_event without status", `{"type":"rate_limit_event","rate_limit_info":{"resetsAt":1},"uuid":"u","session_id":"s"}`, false},
		{fileClaudeStdout, "spec-style init", `{"type":"init","session_id":"s"}`, false},
		// Claude stdin
		{fileClaudeStdin, "user with string content", `{"type":"user","session_id":"","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}`, true},
		{fileClaudeStdin, "user without message", `{"type":"user","session_id":""}`, false},
		{fileClaudeStdin, "user with role assistant", `{"type":"user","message":{"role":"assistant","content":"hi"}}`, false},
		{fileClaudeStdin, "control_request without request_id", `{"type":"control_request","request":{"subtype":"interrupt"}}`, false},
		{fileClaudeStdin, "interrupt", `{"type":"control_request","request_id":"req_2_abcd1234","request":{"subtype":"interrupt"}}`, true},
		{fileClaudeStdin, "set_permission_mode without mode", `{"type":"control_request","request_id":"r","request":{"subtype":"set_permission_mode"}}`, false},
		{fileClaudeStdin, "set_model null", `{"type":"control_request","request_id":"r","request":{"subtype":"set_model","model":null}}`, true},
		{fileClaudeStdin, "unknown subtype (drift)", `{"type":"control_request","request_id":"r","request":{"subtype":"bogus_subtype"}}`, true},
		{fileClaudeStdin, "deny without message", `{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{"behavior":"deny"}}}`, false},
		{fileClaudeStdin, "deny", `{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{"behavior":"deny","message":"denied by test host","interrupt":false}}}`, true},
		{fileClaudeStdin, "behavior allowAlways", `{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{"behavior":"allowAlways"}}}`, false},
		{fileClaudeStdin, "allow with updatedPermissions", `{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{"behavior":"allow","updatedInput":{},"updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}}}`, true},
		{fileClaudeStdin, "setMode without mode", `{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{"behavior":"allow","updatedPermissions":[{"type":"setMode","destination":"session"}]}}}`, false},
		{fileClaudeStdin, "hook callback answer", `{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{"continue":true,"hookSpecificOutput":{"hookEventName":"PreToolUse"}}}}`, true},
		{fileClaudeStdin, "keep_alive", `{"type":"keep_alive"}`, true},
		{fileClaudeStdin, "spec-style message", `{"type":"message","role":"user","content":[{"type":"text","text":"hi"}]}`, false},
		// Shim
		{fileShim, "system/init without permissionMode", `{"type":"system","subtype":"init","session_id":"s","model":"m","cwd":"/r","tools":[]}`, false},
		{fileShim, "text content number", `{"type":"text","content":1}`, false},
		{fileShim, "result without is_error", `{"type":"result","subtype":"success"}`, false},
		{fileShim, "usage without output_tokens", `{"type":"usage","input_tokens":1}`, false},
		{fileShim, "tool_result object content", `{"type":"tool_result","tool_use_id":"c","content":{"output":"ok"},"is_error":false}`, true},
		{fileShim, "interrupted result", `{"type":"result","is_error":true,"subtype":"cancelled"}`, true},
		{fileShim, "system/error", `{"type":"system","subtype":"error","message":"Not authenticated"}`, true},
		// Unified
		{fileUnified, "textChunk without content", `{"id":"e","sessionId":"s",` + ts + `,"type":"textChunk"}`, false},
		{fileUnified, "timestamp not date-time", `{"id":"e","sessionId":"s","timestamp":"now","type":"textChunk","content":"x"}`, false},
		{fileUnified, "sessionEnded reason done", `{"id":"e","sessionId":"s",` + ts + `,"type":"sessionEnded","reason":"done"}`, false},
		{fileUnified, "event without id", `{"sessionId":"s",` + ts + `,"type":"turnCompleted"}`, false},
		{fileUnified, "turnCompleted", `{"id":"e","sessionId":"s",` + ts + `,"type":"turnCompleted"}`, true},
	}
	for _, c := range cases {
		t.Run(path.Base(path.Dir(c.schema))+"/"+c.name, func(t *testing.T) {
			err := compileSchemaFile(t, c.schema).Validate(decodeTestInstance(t, c.event))
			if c.valid && err != nil {
				t.Errorf("want valid, got %v", err)
			}
			if !c.valid && err == nil {
				t.Errorf("want a violation, got none: %s", c.event)
			}
		})
	}
}

// genUnifiedBenchEvents writes n events the way gen_unified.py (the generator
// of the validate throughput benchmark, in the shared bench directory) does,
// with a Go random source.
func genUnifiedBenchEvents(n int) []map[string]any {
	r := rand.New(rand.NewPCG(7, 7))
	const ts = "2025-12-03T10:00:00.000Z"
	var out []map[string]any
	ev := func(typ string, kv ...any) {
		d := map[string]any{"id": fmt.Sprintf("ev_%d", len(out)+1), "sessionId": "sess_abc123", "timestamp": ts, "type": typ}
		for i := 0; i < len(kv); i += 2 {
			d[kv[i].(string)] = kv[i+1]
		}
		out = append(out, d)
	}
	ev("sessionStarted", "agentType", "claude", "config", map[string]any{"agentType": "claude", "model": "sonnet", "approvalMode": "autoAll"})
	for len(out) < n {
		ev("textChunk", "content", strings.Repeat("I'll analyze the codebase and refactor the authentication module ", 1+r.IntN(4)),
			"isPartial", r.Float64() < 0.5, "role", "assistant")
		tid := fmt.Sprintf("toolu_%d", len(out))
		ev("toolStarted", "toolId", tid, "toolName", "Edit",
			"arguments", map[string]any{"file_path": "/src/auth.ts", "old_string": "function login()", "new_string": "async function login()"})
		ev("toolProgress", "toolId", tid, "output", strings.Repeat("line of output\n", 1+r.IntN(5)), "progress", 0.5)
		ev("toolCompleted", "toolId", tid, "success", true, "result", "File updated successfully")
		ev("fileChanged", "filePath", "/src/auth.ts", "changeType", "modified", "before", "function login()", "after", "async function login()")
		ev("turnCompleted", "usage", map[string]any{"inputTokens": 1250, "outputTokens": 487, "totalTokens": 1737}, "durationMs", 5000)
	}
	ev("sessionEnded", "reason", "completed", "finalUsage", map[string]any{"inputTokens": 1, "outputTokens": 2, "totalTokens": 3})
	// Round-trip through JSON so that numbers are json.Number, as for any decoded line.
	for i, d := range out {
		b, _ := json.Marshal(d)
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			panic(err)
		}
		out[i] = v.(map[string]any)
	}
	return out
}

// TestUnifiedMatchesSpec checks that the unified profile accepts the
// benchmark stream as §8.1 does, and that both judge the same mutations of
// each kind of event (a field dropped, a field of the wrong type, an unknown
// type) the same way.
func TestUnifiedMatchesSpec(t *testing.T) {
	spec, uni := compileSchemaFile(t, fileSpecUnified), compileSchemaFile(t, fileUnified)
	events := genUnifiedBenchEvents(700)
	kinds := map[string]map[string]any{}
	for _, e := range events {
		for name, s := range map[string]*jsonschema.Schema{"spec": spec, "unified": uni} {
			if err := s.Validate(e); err != nil {
				t.Fatalf("%s rejects generated event %v: %v", name, e, err)
			}
		}
		kinds[e["type"].(string)] = e
	}
	if len(kinds) != 8 {
		t.Fatalf("generated %d event types, want 8", len(kinds))
	}
	agree := func(what string, v map[string]any) {
		t.Helper()
		es, eu := spec.Validate(v), uni.Validate(v)
		if (es == nil) != (eu == nil) {
			t.Errorf("%s: spec valid=%v, unified valid=%v: %v", what, es == nil, eu == nil, v)
		}
	}
	wrong := []any{json.Number("42"), "x", true, nil, []any{}, map[string]any{}}
	for typ, e := range kinds {
		for k := range e {
			m := cloneEvent(e)
			delete(m, k)
			agree(typ+" without "+k, m)
			for _, w := range wrong {
				m := cloneEvent(e)
				m[k] = w
				agree(fmt.Sprintf("%s with %s=%v", typ, k, w), m)
			}
		}
		m := cloneEvent(e)
		m["type"] = typ + "X"
		agree("unknown type", m)
		m = cloneEvent(e)
		m["extraField"] = 1
		agree("extra field", m)
	}
}

func cloneEvent(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
