package validate

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/finding"
)

// TestAppServerTranscript: an app-server capture is judged by package
// appserver (clean), and the same capture without its turn/completed is a
// violation.
func TestAppServerTranscript(t *testing.T) {
	const p = "../testdata/captures/codex/0.169.0/app-server-single-tool.jsonl"
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	run := func(data []byte) (*Result, []string) {
		var got []string
		res, err := Stream(context.Background(), bytes.NewReader(data), p, Options{}, func(f finding.Finding, sev finding.Severity) {
			got = append(got, sev.String()+" "+f.String())
		})
		if err != nil {
			t.Fatal(err)
		}
		return res, got
	}
	res, got := run(b)
	if res.Violations > 0 || res.Warnings > 0 || res.Dialect != "codex" || !strings.Contains(res.SchemaFile, "appserver/codex/0.169.0/") {
		t.Fatalf("clean capture: %+v %v", res, got)
	}
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `turn/completed`) {
			kept = append(kept, l)
		}
	}
	res, got = run([]byte(strings.Join(kept, "\n")))
	if res.Violations == 0 || !strings.Contains(strings.Join(got, "\n"), "appserver/turn-completed") {
		t.Fatalf("without turn/completed: %v", got)
	}
}
