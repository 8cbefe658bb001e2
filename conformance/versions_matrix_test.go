package conformance_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/conformance/internal/broken"
	"github.com/agentconform/agentconform/reports"
)

// TestVersionFragileAdapter shows why an adapter is run against more than
// one CLI version: between Claude Code 2.1.197 and 2.1.329 the result
// line's keys changed order (it began {"type":"result", and begins
// {"duration_api_ms": since), and an adapter that finds the result by
// that prefix passes at 2.1.197 and fails at 2.1.329. The same cases at
// both versions: the naive adapter it is made from passes both, the
// fragile one only the old one, and the version matrix of the reports
// shows the difference with the checks that make it.
func TestVersionFragileAdapter(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	adapter := func(mode broken.Bug) conformance.Adapter {
		return conformance.Adapter{Name: string(mode), Command: func(ctx context.Context) *exec.Cmd {
			return exec.CommandContext(ctx, exe, "conformance-test-adapter", string(mode))
		}}
	}
	ids := []string{"claude/plain-text", "claude/single-tool"}
	type run struct {
		mode    broken.Bug
		version string
		res     *conformance.Results
		err     error
	}
	runs := []*run{{mode: broken.ResultPrefix, version: "2.1.197"}, {mode: broken.ResultPrefix, version: "2.1.329"},
		{mode: broken.Naive, version: "2.1.197"}, {mode: broken.Naive, version: "2.1.329"}}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.res, r.err = conformance.Run(context.Background(), conformance.Config{Adapter: adapter(r.mode), Match: ids,
				CLIVersions: map[string]string{"claude": r.version}, WorkDir: t.TempDir()})
		}()
	}
	wg.Wait()
	doc := reports.NewDocument()
	for _, r := range runs {
		if r.err != nil {
			t.Fatalf("%s at %s: %v", r.mode, r.version, r.err)
		}
		want := conformance.Pass
		if r.mode == broken.ResultPrefix && r.version == "2.1.329" {
			want = conformance.Fail
		}
		if len(r.res.Cases) != len(ids) {
			t.Fatalf("%s at %s: %d cases", r.mode, r.version, len(r.res.Cases))
		}
		for _, c := range r.res.Cases {
			if c.Verdict != want || c.CLIVersion != r.version {
				t.Errorf("%s at %s: %s is %s at %s, want %s", r.mode, r.version, c.ID, c.Verdict, c.CLIVersion, want)
			}
		}
		doc.Runs = append(doc.Runs, r.res)
	}
	var md, page bytes.Buffer
	if err := reports.WriteResultsMarkdown(&md, doc, reports.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteResultsHTML(&page, doc, reports.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{
		"### CLI versions",
		"#### result-prefix · claude\n\n| case | 2.1.197 | 2.1.329 |",
		"| `claude/plain-text` | ✅ PASS | ❌ **FAIL** |",
		"| ↳ `lifecycle/reports-success` | ✅ PASS | ❌ FAIL |",
		"2 cases: 2 with a different verdict at another version, 0 with the same verdict",
		"#### naive · claude\n\n2 cases: 0 with a different verdict at another version, 2 with the same verdict",
		"| result-prefix @ claude 2.1.329 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the Markdown report lacks %q:\n%s", want, out)
		}
	}
	html := page.String()
	for _, want := range []string{`<section id="versions">`, `<h3>result-prefix · claude</h3>`, `<tr class="differs"><td class="case">claude/plain-text</td>`,
		`<td class="case">↳ lifecycle/reports-success</td><td class="v-PASS">PASS</td><td class="v-FAIL">FAIL</td>`} {
		if !strings.Contains(html, want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
}
