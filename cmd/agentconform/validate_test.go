package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCmd runs the command in-process and returns exit code, stdout, stderr.
func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const cleanGemini = `{"type":"init","timestamp":"2026-11-20T23:06:12.407Z","session_id":"5c6e9280-7523-4bde-8075-080cd96602b0","model":"gemini-2.5-flash"}
{"type":"message","timestamp":"2026-11-20T23:06:12.408Z","role":"user","content":"hi"}
{"type":"message","timestamp":"2026-11-20T23:06:12.500Z","role":"assistant","content":"Hello","delta":true}
{"type":"result","timestamp":"2026-11-20T23:06:12.600Z","status":"success","stats":{"total_tokens":3,"input_tokens":2,"output_tokens":1,"cached":0,"input":2,"duration_ms":10,"tool_calls":0,"models":{"gemini-2.5-flash":{"total_tokens":3,"input_tokens":2,"output_tokens":1,"cached":0,"input":2}}}}
`

func TestValidateExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	bad := filepath.Join(dir, "sub", "bad.jsonl")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(good, []byte(cleanGemini), 0o644)
	os.WriteFile(bad, []byte(strings.Replace(cleanGemini, `"status":"success"`, `"status":"cancelled"`, 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a stream"), 0o644)

	if code, out, errs := runCmd(t, "", "validate", good); code != 0 || !strings.Contains(out, "OK: 1 stream") {
		t.Errorf("clean file: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ := runCmd(t, "", "validate", dir)
	if code != 1 {
		t.Errorf("directory with a bad stream: exit %d, want 1", code)
	}
	if !strings.Contains(out, "sub/bad.jsonl:4: gemini/schema: result: ") || !strings.Contains(out, "at /status") || strings.Contains(out, "notes.txt") {
		t.Errorf("directory walk output:\n%s", out)
	}
	if code, _, _ := runCmd(t, cleanGemini, "validate", "-"); code != 0 {
		t.Errorf("stdin: exit %d", code)
	}
	for _, args := range [][]string{
		{"validate", filepath.Join(dir, "missing.jsonl")},
		{"validate", "--format", "yaml", good},
		{"validate", "--dialect", "cursor", good},
		{"validate", "--profile", "nope", good},
		{"validate", "--max-line-bytes", "lots", good},
		{"validate", "--no-such-flag"},
		{"frobnicate"},
	} {
		if code, _, errs := runCmd(t, "", args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errs)
		}
	}
}

func TestValidateDefaultIsTheEmbeddedFixtures(t *testing.T) {
	code, out, errs := runCmd(t, "", "validate", "-q")
	if code != 0 {
		t.Fatalf("the embedded fixtures must validate cleanly: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "fixtures/claude/") || !strings.Contains(out, "fixtures/codex/") || !strings.Contains(out, "fixtures/gemini/") {
		t.Errorf("output does not name the fixtures:\n%s", out)
	}
}

func TestValidateJSONFormat(t *testing.T) {
	in := strings.Replace(cleanGemini, `"role":"user"`, `"role":"user","mood":"curious"`, 1) + "banner line\n"
	code, out, _ := runCmd(t, in, "validate", "--format", "json", "-")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not NDJSON: %q: %v", line, err)
		}
		kinds[rec["kind"].(string)]++
		if rec["kind"] == "finding" {
			for _, k := range []string{"file", "line", "offset", "rule", "level", "severity", "message", "requirement", "source"} {
				if _, ok := rec[k]; !ok {
					t.Errorf("finding lacks %q: %s", k, line)
				}
			}
			if rec["rule"] != "jsonl/not-json" || rec["line"] != 5.0 {
				t.Errorf("unexpected finding %s", line)
			}
		}
		if rec["kind"] == "drift" && (rec["pointer"] != "/mood" || rec["count"] != 1.0) {
			t.Errorf("unexpected drift %s", line)
		}
	}
	if kinds["finding"] != 1 || kinds["stream"] != 1 || kinds["drift"] != 1 || kinds["summary"] != 1 {
		t.Errorf("record kinds %v", kinds)
	}
}

func TestValidateJUnitFormat(t *testing.T) {
	in := strings.Replace(cleanGemini, `"status":"success"`, `"status":"cancelled"`, 1)
	code, out, _ := runCmd(t, in, "validate", "--format", "junit", "-")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Body string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	if doc.Failures != 1 || len(doc.Suites) != 1 || doc.Suites[0].Cases[0].Name != "gemini/schema" {
		t.Fatalf("unexpected JUnit document:\n%s", out)
	}
	body := doc.Suites[0].Cases[0].Failure.Body
	if !strings.Contains(body, "Requirement: ") || !strings.Contains(body, `found "cancelled"`) {
		t.Errorf("failure body lacks requirement or actual value:\n%s", body)
	}
}

func TestValidateStrictAndProfiles(t *testing.T) {
	in := strings.Replace(cleanGemini, `"role":"user"`, `"role":"user","mood":"curious"`, 1)
	if code, _, _ := runCmd(t, in, "validate", "-"); code != 0 {
		t.Errorf("drift alone must not fail: exit %d", code)
	}
	if code, out, _ := runCmd(t, in, "validate", "--strict", "-"); code != 1 || !strings.Contains(out, "gemini/drift/unknown-field") {
		t.Errorf("--strict must fail on drift: exit %d\n%s", code, out)
	}
	// The spec profile knows no cached/input/models stats: drift, and its
	// result schema accepts the real stream otherwise.
	if code, out, _ := runCmd(t, in, "validate", "--profile", "spec", "-"); code != 0 || !strings.Contains(out, "unknown field /stats/models") {
		t.Errorf("spec profile: exit %d\n%s", code, out)
	}
}

func TestListRules(t *testing.T) {
	code, out, _ := runCmd(t, "", "validate", "--list-rules")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	ids := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && (f[0] == "MUST" || f[0] == "SHOULD" || f[0] == "DRIFT" || f[0] == "INFO") {
			if ids[f[1]] {
				t.Errorf("rule %s listed twice", f[1])
			}
			ids[f[1]] = true
		}
	}
	for _, want := range []string{"jsonl/duplicate-key", "claude/schema", "spec/claude/schema", "codex/turn/closed", "gemini/stream/truncated", "shim/turn/usage", "unified/tool/id-unique", "claude/control/response-once",
		"acp/schema", "acp/session/history-before-load-response", "acp/session/history-after-load-response", "acp/log/agent-only", "appserver/schema", "appserver/log/server-only"} {
		if !ids[want] {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	if len(ids) < 100 {
		t.Errorf("only %d rules listed", len(ids))
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "100KiB": 100 << 10, "64MiB": 64 << 20, "1GiB": 1 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "-1", "0", "1.5MiB", "MiB", "12TB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}
