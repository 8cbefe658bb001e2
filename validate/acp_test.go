package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/acp/acpschema"
	"github.com/agentconform/agentconform/finding"
)

// TestACPCaptures: validate reads the ACP captures of Gemini CLI as ACP
// sessions (both directions, every path, every process) and finds in them
// exactly what Gemini CLI 0.61.0 breaks itself: the history of a loaded
// session comes after the session/load response.
func TestACPCaptures(t *testing.T) {
	files, err := filepath.Glob("../testdata/captures/gemini/*/acp-*.jsonl")
	if err != nil || len(files) < 10 {
		t.Fatalf("ACP captures: %v %v", files, err)
	}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		res, err := Stream(context.Background(), f, p, Options{}, func(fd finding.Finding, sev finding.Severity) {
			found = append(found, fd.Rule.ID)
		})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Dialect != ACPDialect || res.SchemaFile != acpschema.SchemaFile || !res.Transcript {
			t.Errorf("%s: dialect %q, schema %q, transcript %v", p, res.Dialect, res.SchemaFile, res.Transcript)
		}
		want := ""
		if filepath.Base(p) == "acp-load.jsonl" {
			want = strings.Repeat(acp.RuleLoadHistory.ID+" ", 4)
		}
		if got := strings.Join(found, " ") + map[bool]string{true: " ", false: ""}[len(found) > 0]; got != want {
			t.Errorf("%s: findings %q, want %q", p, got, want)
		}
	}
}

// TestACPBroken: hand-broken copies of a capture, and ACP logs of both
// directions ({"dir","line"} records, as the acp profile's editor writes
// them, and bare JSON-RPC lines) fire exactly their rules.
func TestACPBroken(t *testing.T) {
	b, err := os.ReadFile("../testdata/captures/gemini/0.61.0/acp-cancel.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	capture := string(b)
	for _, tc := range []struct {
		name, from, to string
		want           string
	}{
		{"end_turn after cancel", `{\"stopReason\":\"cancelled\"}`, `{\"stopReason\":\"end_turn\"}`, acp.RuleCancelled.ID},
		{"a made-up stop reason", `{\"stopReason\":\"cancelled\"}`, `{\"stopReason\":\"stopped\"}`, acp.RuleCancelled.ID + " " + acp.RuleStopReason.ID + " " + acp.RuleSchema.ID},
	} {
		if !strings.Contains(capture, tc.from) {
			t.Fatalf("%s: the capture has no %s", tc.name, tc.from)
		}
		got, _ := collect(t, strings.NewReader(strings.Replace(capture, tc.from, tc.to, 1)), Options{})
		ids := rulesOf(got)
		if ids != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, got, tc.want)
		}
	}

	const (
		in1  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`
		out1 = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`
		in2  = `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}`
		out2 = `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`
		in3  = `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}`
		perm = `{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s","options":[{"optionId":"y","name":"Allow","kind":"allow_once"}],"toolCall":{"toolCallId":"t","status":"pending"}}}`
		ans  = `{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"y"}}}`
		tool = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","status":"in_progress"}}}`
		done = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}}}`
		end  = `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`
	)
	dir := func(d, line string) string {
		return `{"dir":"` + d + `","t_ms":1,"line":` + quote(line) + `}`
	}
	good := []string{dir("in", in1), dir("out", out1), dir("in", in2), dir("out", out2), dir("in", in3), dir("out", perm), dir("in", ans), dir("out", tool), dir("out", done), dir("out", end), `{"dir":"meta","event":"exit","code":0}`}
	if got, res := collect(t, strings.NewReader(strings.Join(good, "\n")+"\n"), Options{}); len(got) != 0 || res.Dialect != ACPDialect {
		t.Errorf("a correct wire log: %v, dialect %q", got, res.Dialect)
	}
	pending := append(append([]string(nil), good[:8]...), good[9:]...)
	if got, _ := collect(t, strings.NewReader(strings.Join(pending, "\n")+"\n"), Options{}); rulesOf(got) != acp.RuleToolFinal.ID {
		t.Errorf("a tool left in progress: %v", got)
	}
	// Bare lines: who wrote which is told from what they are, ids shared
	// by both sides included.
	bare := []string{in1, out1, in2, out2, in3, perm, ans, tool, done, end}
	if got, _ := collect(t, strings.NewReader(strings.Join(bare, "\n")+"\n"), Options{}); len(got) != 0 {
		t.Errorf("a correct bare log: %v", got)
	}
	if got, _ := collect(t, strings.NewReader(strings.Join(append(bare, end), "\n")+"\n"), Options{}); rulesOf(got) != acp.RuleResponsePairs.ID {
		t.Errorf("a prompt answered twice: %v", got)
	}
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// rulesOf is the rule ids of collect's "rule@line" findings, joined.
func rulesOf(got []string) string {
	var ids []string
	for _, g := range got {
		id, _, _ := strings.Cut(g, "@")
		ids = append(ids, id)
	}
	return strings.Join(ids, " ")
}
