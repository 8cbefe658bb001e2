package reports

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/validate"
)

// TestKindCounter counts kinds in the three input shapes, across write
// boundaries, skipping lines over the limit and lines that are not JSON.
func TestKindCounter(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]int
	}{
		{"events", "{\"type\":\"system\",\"subtype\":\"init\"}\nbanner\n{\"type\":\"assistant\"}\n\n{\"type\":\"result\",\"subtype\":\"success\"}",
			map[string]int{"system": 1, "system/init": 1, "assistant": 1, "result": 1, "result/success": 1}},
		{"capture", `{"dir":"meta","t_ms":0,"cli":"codex"}` + "\n" + `{"dir":"in","t_ms":1,"line":"{\"type\":\"user\"}"}` + "\n" + `{"dir":"out","t_ms":2,"line":"{\"type\":\"turn.started\"}"}` + "\n",
			map[string]int{"turn.started": 1}},
		{"v1", `{"transcript":"agentconform/v1","cli":"gemini"}` + "\n" + `{"in":{"type":"user"}}` + "\n" + `{"out":"{\"type\":\"init\",\"session_id\":\"{{s}}\"}","t":3}` + "\n",
			map[string]int{"init": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := NewKindCounter(0)
			// One byte at a time: lines span writes.
			for i := 0; i < len(tc.in); i++ {
				k.Write([]byte{tc.in[i]})
			}
			k.Close()
			if diff := cmp.Diff(tc.want, k.Counts()); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
	k := NewKindCounter(20)
	io.WriteString(k, `{"type":"a_very_long_type_name_indeed"}`+"\n"+`{"type":"ok"}`+"\n")
	if diff := cmp.Diff(map[string]int{"ok": 1}, k.Counts()); diff != "" || k.Events() != 1 {
		t.Errorf("limit: %s", diff)
	}
}

// TestDriftCollector runs validate on two gemini streams of one version and
// checks the report: unknowns merged with counts and first place, the
// kinds never seen with their required fields.
func TestDriftCollector(t *testing.T) {
	dc := NewDriftCollector(nil)
	streams := []string{
		`{"type":"init","timestamp":"2026-11-20T23:06:12.407Z","session_id":"s","model":"m","mood":1}` + "\n" +
			`{"type":"message","timestamp":"2026-11-20T23:06:12.408Z","role":"user","content":"hi"}` + "\n",
		`{"type":"init","timestamp":"2026-11-20T23:06:12.407Z","session_id":"s","model":"m","mood":2}` + "\n" +
			`{"type":"weather","timestamp":"2026-11-20T23:06:12.408Z"}` + "\n",
	}
	for i, s := range streams {
		k := NewKindCounter(0)
		res, err := validate.Stream(context.Background(), io.TeeReader(strings.NewReader(s), k), []string{"a.jsonl", "b.jsonl"}[i],
			validate.Options{Dialect: "gemini"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		k.Close()
		dc.Add(res, k)
	}
	rep := dc.Report()
	if len(rep.Groups) != 1 {
		t.Fatalf("%d groups", len(rep.Groups))
	}
	g := rep.Groups[0]
	want := []DriftItem{
		{What: "type", Name: "weather", Pointer: "/type", Count: 1, First: "b.jsonl:2", Rule: "gemini/drift/unknown-type"},
		{What: "field", Name: "mood", Pointer: "/mood", Count: 2, First: "a.jsonl:1", Rule: "gemini/drift/unknown-field"},
	}
	if diff := cmp.Diff(want, g.Unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	var never []string
	for _, n := range g.NeverSeen {
		never = append(never, n.Kind)
	}
	if diff := cmp.Diff([]string{"error", "result", "tool_result", "tool_use"}, never); diff != "" || g.Streams != 2 || g.Events != 4 || !g.KindsCounted {
		t.Errorf("never seen %v (%s), streams %d, events %d", never, diff, g.Streams, g.Events)
	}
	if got := g.NeverSeen[3].Required; !cmp.Equal(got, []string{"parameters", "timestamp", "tool_id", "tool_name", "type"}) {
		t.Errorf("tool_use required %v", got)
	}
	// Subtypes given by an enum count one by one (Claude result errors).
	ks := dc.schemaKinds("observed/claude/2.1.329/stdout.schema.json")
	names := map[string]bool{}
	for _, k := range ks {
		names[k.kind] = true
	}
	for _, n := range []string{"system/init", "result/success", "result/error_max_turns", "assistant", "control_request"} {
		if !names[n] {
			t.Errorf("claude kinds lack %s", n)
		}
	}
}

// TestValidatePages renders validate's Markdown and HTML with hostile
// finding text: escaped in both, the HTML with only its own script.
func TestValidatePages(t *testing.T) {
	rule := &finding.Rule{ID: "jsonl/not-json", Level: finding.Must, Requirement: "Lines are JSON.", Source: "seed"}
	res := &validate.Result{Name: "x.jsonl", Dialect: "gemini", Lines: 2, Violations: 1, Counts: map[string]int{rule.ID: 1}, Rules: map[string]*finding.Rule{rule.ID: rule}}
	for _, f := range []Format{Markdown, HTML} {
		var buf bytes.Buffer
		w, err := NewFindingWriter(f, &buf)
		if err != nil {
			t.Fatal(err)
		}
		w.Finding(finding.Finding{Rule: rule, File: "x.jsonl", Line: 2, Message: "line is not JSON: " + payload, Actual: payload}, finding.Violation)
		w.Stream(res)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		switch f {
		case HTML:
			if strings.Count(out, "<script") != 1 || strings.Contains(out, "<img") || !strings.Contains(out, "&lt;/textarea&gt;") {
				t.Errorf("HTML escaping:\n%s", out)
			}
		case Markdown:
			// Findings are listed in a code fence, where text stays text.
			if !strings.Contains(out, "```text\nx.jsonl:2: violation: jsonl/not-json: line is not JSON: <script>") || !strings.Contains(out, "| MUST | 1 | `jsonl/not-json` | Lines are JSON. |") {
				t.Errorf("Markdown:\n%s", out)
			}
		}
	}
	if _, err := NewFindingWriter("yaml", io.Discard); err == nil {
		t.Error("unknown format accepted")
	}
}
