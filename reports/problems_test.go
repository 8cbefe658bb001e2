package reports

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fixtures"
)

// failing is a case of id whose given checks fail with the given actuals
// (check, actual, check, actual, ...), taking secs.
func failing(id string, secs float64, pairs ...string) *conformance.CaseResult {
	var checks []conformance.CheckResult
	for i := 0; i+1 < len(pairs); i += 2 {
		checks = append(checks, check(pairs[i], conformance.Fail, "", pairs[i+1]))
	}
	checks = append(checks, check("output/hello", conformance.Pass, "", ""))
	fixture := id
	if parts := strings.Split(id, "/"); len(parts) > 2 {
		fixture = strings.Join(parts[:2], "/")
	}
	c := caseResult("a", id, fixture, checks...)
	c.Duration = secs
	return c
}

func reasonOf(id, actual string) string {
	c := failing(id, 1, "lifecycle/x", actual)
	return Reason(c, c.Checks[0])
}

// TestReasonNormalises: what differs from case to case (numbers, quoted
// texts, paths, ids, the case's names and prompt, its CLI and the CLI's
// terminal event) is normalised away; what a check says went wrong is
// not.
func TestReasonNormalises(t *testing.T) {
	codexPrompt := func(fixture string) string {
		tr, err := fixtures.Load(fixture)
		if err != nil {
			t.Fatal(err)
		}
		return conformance.Prompts(tr)[0]
	}
	same := [][2][2]string{
		{{"claude/api-retry", "no the CLI's result among the turn's 3 events: the end of the turn never reached the caller"},
			{"codex/single-tool", "no the CLI's turn.completed among the turn's 10 events: the end of the turn never reached the caller"}},
		{{"claude/long-output", "usage not handed on: 400 input, 10136 output tokens\ncost not handed on: total_cost_usd 0.20432"},
			{"claude/plain-text", "usage not handed on: 2 input, 1 output tokens\ncost not handed on: total_cost_usd 1"}},
		{{"codex/mcp-tool-call", `text not handed on: "Issue 42 (\"Greeting\", open) asks for Greet(\"Ada\")."`},
			{"codex/api-retry", `text not handed on: "Hello after a retry."`}},
		{{"codex/interrupt", "still running 1s after the adapter exited: pid 541: codex exec --model gpt-5.3-codex -C $WORK/codex_interrupt-4088182748/work --skip-git-repo-check " + codexPrompt("codex/interrupt")},
			{"codex/single-tool/interrupt-after-2", "still running 1s after the adapter exited: pid 827: codex exec --model gpt-5.3-codex -C $WORK/codex_single-tool_interrupt-after-2-450205144/work --skip-git-repo-check " + codexPrompt("codex/single-tool")}},
		{{"gemini/interrupt", "still running 1s after the adapter exited: pid 2435: gemini -p Please do what the fixture interrupt shows."},
			{"claude/slow-start", "still running 1s after the adapter exited: pid 4444: claude -p Please do what the fixture slow-start shows."}},
		{{"claude/multi-turn", "claude --print: started a new session, f4f48fca-f4b5-48a3-a3ac-966667ac3b6e"},
			{"claude/multi-turn/resume", "claude --print: started a new session, 01a21010-bc0a-7ce2-b3a5-9049e522052e"}},
		{{"claude/tool-error", "tool call 1 (Bash toolu_mock_001): result \"x\" not handed on"},
			{"claude/subscription", "tool call 2 (Bash toolu_01aEYy3WgOx1Gl7wGSzxWJkZ): result \"y\" not handed on"}},
		{{"codex/single-tool/line-65536", "the line of 65536 bytes at /builds/ci/run-1/codex_single-tool_line-65536/out was cut (codex/single-tool/line-65536)"},
			{"codex/single-tool/line-1048576", "the line of 1048576 bytes at /builds/ci/run-2/codex_single-tool_line-1048576/out was cut (codex/single-tool/line-1048576)"}},
		{{"claude/multi-turn", "cost not handed on: total_cost_usd 0.00108\ncost not handed on: total_cost_usd 0.00108"},
			{"claude/plain-text", "cost not handed on: total_cost_usd 0.00116"}},
	}
	for _, p := range same {
		a, b := reasonOf(p[0][0], p[0][1]), reasonOf(p[1][0], p[1][1])
		if a != b {
			t.Errorf("one reason, told apart:\n  %s: %q\n  %s: %q", p[0][0], a, p[1][0], b)
		}
	}
	differ := [][2]string{
		{"nothing reached the CLI before the adapter reported the turn over", "the CLI received no signal before the adapter reported the turn over"},
		{"it is not: the content was lost (turn_end: ok=true)", "neither: the content was lost silently (turn_end: ok=true)"},
		{"cost not handed on: total_cost_usd 0.00258", "usage not handed on: 400 input, 49 output tokens\ncost not handed on: total_cost_usd 0.00258"},
		{"still running 1s after the adapter exited: pid 1: claude --agentconform-grandchild", "still running 1s after the adapter exited: pid 1: claude -p x"},
		{"the CLI's error message was lost", "the CLI's text was lost"},
	}
	for _, d := range differ {
		if a, b := reasonOf("claude/plain-text", d[0]), reasonOf("claude/plain-text", d[1]); a == b {
			t.Errorf("two reasons, one after normalising: %q and %q -> %q", d[0], d[1], a)
		}
	}
	if got, want := reasonOf("codex/single-tool", `no the CLI's turn.completed among the turn's 10 events: "codex/single-tool" took 1.5s, pid 77, session 0199a213-81c0-7800-8aa1-bbab2a035a53, id item_0`),
		`no the CLI's <terminal event> among the turn's N events: "…" took Ns, pid N, session <id>, id item_N`; got != want {
		t.Errorf("reason\n got %q\nwant %q", got, want)
	}
	if got := reasonOf("codex/plain-text", strings.Repeat("x", 5000)); len(got) > maxReason+40 {
		t.Errorf("a reason of %d bytes", len(got))
	}
}

// lostTailRun is a run of an adapter with two bugs: it loses the end of
// every turn (lifecycle/ending-delivered, with the usage and the final
// text lost with it), and it corrupts the text of one case where the end
// arrived. Only that text is a problem of its own; the text lost with
// the end of codex/a stays under the end's problem too, for it reads
// differently.
func lostTailRun() *conformance.Results {
	end := func(event string, n int) string {
		return fmt.Sprintf("no the CLI's %s among the turn's %d events: the end of the turn never reached the caller", event, n)
	}
	r := &conformance.Results{Meta: conformance.Meta{Adapter: "a", Seed: 1}, Cases: []*conformance.CaseResult{
		failing("claude/a", 2, "lifecycle/ending-delivered", end("result", 3), "lossless/usage", "usage not handed on: 4 input, 5 output tokens\ncost not handed on: total_cost_usd 0.1"),
		failing("codex/a", 0.5, "lifecycle/ending-delivered", end("turn.completed", 7), "lossless/usage", "usage not handed on: 40 input, 50 output tokens", "lossless/text", `text not handed on: "Done."`),
		failing("codex/b", 3, "lifecycle/ending-delivered", end("turn.completed", 9), "lossless/usage", "usage not handed on: 1 input, 2 output tokens"),
		failing("gemini/a", 1, "lifecycle/ending-delivered", end("result", 4), "lossless/usage", "usage not handed on: 6 input, 7 output tokens"),
		failing("gemini/b", 1, "lossless/text", `text mangled: "Gr\ufffd\ufffde"`),
		failing("codex/c", 1, "lifecycle/reports-failure", "ok:true everywhere: the failure was reported as success"),
		failing("codex/d", 1, "lifecycle/reports-failure", "ok:true in turn 2: the failure was reported as success"),
	}}
	r.ApplyBaseline(nil)
	return r
}

// TestProblems groups a run's failures: the lost end in every CLI is one
// problem (its usage and text under it), ordered first; a bug of another
// kind in the same check family, and one check failing for two reasons,
// stay problems of their own; the example is the simplest case and the
// reproduce command its own; nothing of the run changes.
func TestProblems(t *testing.T) {
	r := lostTailRun()
	before := fmt.Sprintf("%+v", *r)
	ps := Problems(r)
	if fmt.Sprintf("%+v", *r) != before {
		t.Error("Problems changed the run")
	}
	type row struct {
		Check, Example string
		Cases          []string
		Follows        map[string][]string
	}
	var got []row
	for _, p := range ps {
		rw := row{Check: p.Check, Example: p.Example, Cases: p.Cases}
		for _, f := range p.Follows {
			if rw.Follows == nil {
				rw.Follows = map[string][]string{}
			}
			rw.Follows[f.Check] = f.Cases
			if f.Why != "lost with the end of the turn" {
				t.Errorf("%s follows %s because %q", f.Check, p.Check, f.Why)
			}
		}
		if p.Reproduce != "agentconform run --case "+p.Example+" --seed 7 --keep" {
			t.Errorf("%s: reproduce %q is not its example's", p.Check, p.Reproduce)
		}
		got = append(got, rw)
	}
	want := []row{
		{Check: "lifecycle/ending-delivered", Example: "codex/a", Cases: []string{"claude/a", "codex/a", "codex/b", "gemini/a"},
			Follows: map[string][]string{"lossless/usage": {"claude/a", "codex/a", "codex/b", "gemini/a"}, "lossless/text": {"codex/a"}}},
		{Check: "lifecycle/reports-failure", Example: "codex/c", Cases: []string{"codex/c"}},
		{Check: "lifecycle/reports-failure", Example: "codex/d", Cases: []string{"codex/d"}},
		{Check: "lossless/text", Example: "gemini/b", Cases: []string{"gemini/b"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// Every failure is in exactly one problem, as it or under it.
	n := 0
	for _, p := range ps {
		n += len(p.Cases)
		for _, f := range p.Follows {
			n += len(f.Cases)
		}
	}
	if n != len(r.Gate.New) {
		t.Errorf("problems hold %d failures, the gate counts %d", n, len(r.Gate.New))
	}

	// The same text lost where the end arrived: that reason shows up
	// without its primary, so it is a problem of its own in both cases.
	r = lostTailRun()
	r.Cases[4].Checks[0].Actual = `text not handed on: "Hi."`
	ps = Problems(r)
	var text *Problem
	for _, p := range ps {
		for _, f := range p.Follows {
			if f.Check == "lossless/text" {
				t.Errorf("lossless/text is under %s though it fails without it", p.Check)
			}
		}
		if p.Check == "lossless/text" {
			text = p
		}
	}
	if text == nil || !cmp.Equal(text.Cases, []string{"codex/a", "gemini/b"}) {
		t.Errorf("lossless/text problem %+v, want codex/a and gemini/b", text)
	}

	// A baseline that expects the end's failure in two cases: they stay
	// in the problem, marked, and the example is a new one.
	r = lostTailRun()
	b, err := ParseBaseline(strings.NewReader("codex/a lifecycle/ending-delivered\ngemini/a lifecycle/ending-delivered\n"))
	if err != nil {
		t.Fatal(err)
	}
	r.ApplyBaseline(b)
	p := Problems(r)[0]
	if !cmp.Equal(p.Expected, []string{"codex/a", "gemini/a"}) || p.New() != 2 || p.Example != "codex/b" || !cmp.Equal(p.newCases(), []string{"claude/a", "codex/b"}) {
		t.Errorf("baselined problem: expected %v, new %d, example %s", p.Expected, p.New(), p.Example)
	}
	// NON-STRICT is a failure of a strict run only.
	r = lostTailRun()
	r.Cases[5].Checks[0].Verdict = conformance.NonStrict
	if ps := Problems(r); len(ps) != 3 {
		t.Errorf("non-strict run: %d problems, want 3", len(ps))
	}
	r.Meta.Strict = true
	if ps := Problems(r); len(ps) != 4 || !cmp.Equal(ps[1].Verdict, conformance.NonStrict) && !cmp.Equal(ps[2].Verdict, conformance.NonStrict) {
		t.Errorf("strict run: %d problems", len(ps))
	}
	if ps := Problems(&conformance.Results{}); len(ps) != 0 {
		t.Errorf("an empty run has problems: %v", ps)
	}
	// A relation with a cycle loses no failure: each is then its own.
	saved := consequences
	defer func() { consequences = saved }()
	consequences = append(consequences[:0:0], saved...)
	consequences = append(consequences, struct {
		Primary   string
		Followers []string
		Why       string
	}{Primary: "lossless/usage", Followers: []string{"lifecycle/ending-delivered"}, Why: "a cycle"})
	r = lostTailRun()
	ps = Problems(r)
	n = 0
	for _, p := range ps {
		n += len(p.Cases)
		for _, f := range p.Follows {
			n += len(f.Cases)
		}
	}
	if n != len(r.Gate.New) {
		t.Errorf("with a cycle, the problems hold %d failures of %d", n, len(r.Gate.New))
	}
}

// TestMarkdownProblems: the Markdown report leads with the problems, the
// lost end first with its four cases, the usage and text lost with it,
// and the command that reproduces its simplest case; a small budget
// shortens the case lists and then the later problems, never drops one.
func TestMarkdownProblems(t *testing.T) {
	doc := NewDocument(lostTailRun())
	var buf bytes.Buffer
	if err := WriteResultsMarkdown(&buf, doc, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	order := []string{
		"## agentconform: ❌ 12 new failures in 4 problems",
		"### New failures: 12 in 4 problems",
		"<details><summary>❌ FAIL <code>lifecycle/ending-delivered</code> in 4 cases · a</summary>",
		"In `codex/a`, one of them:",
		"**Actual:** no the CLI's turn.completed among the turn's 7 events",
		"With it, lost with the end of the turn: `lossless/usage` in 4 cases, `lossless/text` in 1 case.",
		"**Cases (4):** `claude/a`, `codex/a`, `codex/b`, `gemini/a`",
		"agentconform run --case codex/a --seed 7 --keep",
		"<code>lifecycle/reports-failure</code> in <code>codex/c</code>",
		"<code>lossless/text</code> in <code>gemini/b</code>",
		"### Matrix",
	}
	at := 0
	for _, s := range order {
		i := strings.Index(md[at:], s)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", s, md)
		}
		at += i
	}
	if n := strings.Count(md, "<details><summary>"); n != 4 { // one per problem
		t.Errorf("%d collapsible blocks, want 4", n)
	}
	// The lost usage is not a problem of its own.
	if strings.Contains(md, "<code>lossless/usage</code> in") {
		t.Errorf("lossless/usage shown beside the lost end, not under it")
	}
	// A problem the baseline expects is listed apart, one line.
	r := lostTailRun()
	b, err := ParseBaseline(strings.NewReader("codex/c lifecycle/reports-failure\n"))
	if err != nil {
		t.Fatal(err)
	}
	r.ApplyBaseline(b)
	buf.Reset()
	WriteResultsMarkdown(&buf, NewDocument(r), MarkdownOptions{})
	known := buf.String()
	if !strings.Contains(known, "### New failures: 11 in 3 problems") || strings.Contains(known, "<code>lifecycle/reports-failure</code> in <code>codex/c</code>") ||
		!strings.Contains(known, "### Failures the baseline expects: 1 in 1 problem") ||
		!strings.Contains(known, "- ❌ FAIL `lifecycle/reports-failure` in 1 case (a), e.g. `codex/c`: ok:true everywhere: the failure was reported as success\n") {
		t.Errorf("a baselined problem:\n%s", known)
	}
	for _, limit := range []int{3000, 2200} {
		buf.Reset()
		WriteResultsMarkdown(&buf, doc, MarkdownOptions{MaxBytes: limit})
		small := buf.String()
		if buf.Len() > limit || strings.Count(small, "lifecycle/reports-failure") < 2 || !strings.Contains(small, "lossless/text") {
			t.Errorf("budget %d: %d bytes, problems dropped:\n%s", limit, buf.Len(), small)
		}
	}
}

// TestHTMLProblems: the page lists the problems, each case a button that
// opens that case's details, the lost end first with what follows from
// it; a problem the baseline expects is listed apart.
func TestHTMLProblems(t *testing.T) {
	r := lostTailRun()
	b, err := ParseBaseline(strings.NewReader("codex/c lifecycle/reports-failure\n"))
	if err != nil {
		t.Fatal(err)
	}
	r.ApplyBaseline(b)
	var buf bytes.Buffer
	if err := WriteResultsHTML(&buf, NewDocument(r), HTMLOptions{Generated: started}); err != nil {
		t.Fatal(err)
	}
	markup, data := splitPageData(t, buf.String())
	for _, want := range []string{
		`<h2>New failures: 11 in 3 problems</h2>`,
		`<span class="badge v-FAIL">FAIL</span> <code>lifecycle/ending-delivered</code> in <b>4 cases</b> · a`,
		`<dt>with it</dt><dd>lost with the end of the turn: <code>lossless/usage</code> in 4 cases, <code>lossless/text</code> in 1 case</dd>`,
		`<dt>reproduce</dt><dd class="mono">agentconform run --case codex/a --seed 7 --keep</dd>`,
		`<summary><h2>Failures the baseline expects: 1 in 1 problem</h2></summary>`,
	} {
		if !strings.Contains(markup, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	list := markup[strings.Index(markup, "<summary>its 4 cases</summary>"):]
	list = list[:strings.Index(list, "</details>")]
	buttons := regexp.MustCompile(`data-d="(\d+)"><code>([^<]+)</code>`).FindAllStringSubmatch(list, -1)
	if len(buttons) != 4 {
		t.Fatalf("the lost end lists %d cases, want 4:\n%s", len(buttons), list)
	}
	for _, m := range buttons {
		if i, _ := strconv.Atoi(m[1]); i >= len(data.D) || data.D[i].ID != m[2] {
			t.Errorf("the button of %s opens details %s", m[2], m[1])
		}
	}
}

// TestPublishedExampleSize: the published HTML report stays under 3 MB
// (it was 16.4 MB when every case's details were markup).
func TestPublishedExampleSize(t *testing.T) {
	st, err := os.Stat(filepath.Join("examples", "index.html"))
	if err != nil {
		t.Skip("no reports/examples/index.html (agentconform report publish writes it)")
	}
	if st.Size() >= 3_000_000 {
		t.Errorf("reports/examples/index.html is %d bytes, want under 3 MB", st.Size())
	}
}

// TestLostTailProblems judges the grouping on a real run: every case of
// conformance/testdata/adapters/lost-tail.py (an adapter that loses the
// last line of every turn), its failing checks as the run wrote them
// (testdata/lost-tail.json: `agentconform run --adapter 'python3
// conformance/testdata/adapters/lost-tail.py' -o FILE`, then jq keeping
// the failing checks of the failing cases, without their wire, and the
// adapter's path made relative). The summary opens with one problem, the
// lost end in every CLI, with all the usage and text lost with it under
// it and none of them beside it; every failure is in one problem.
func TestLostTailProblems(t *testing.T) {
	doc, err := ReadResultsFile(filepath.Join("testdata", "lost-tail.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := doc.Runs[0]
	run.ApplyBaseline(nil)
	ending := map[string]bool{}
	lost := map[string]int{}
	for _, c := range run.Cases {
		for _, k := range c.Checks {
			if k.Check == "lifecycle/ending-delivered" {
				ending[c.ID] = true
			}
		}
	}
	for _, c := range run.Cases {
		for _, k := range c.Checks {
			if (k.Check == "lossless/usage" || k.Check == "lossless/text") && ending[c.ID] {
				lost[k.Check]++
			}
		}
	}
	ps := Problems(run)
	first := ps[0]
	if first.Check != "lifecycle/ending-delivered" || len(first.Cases) != len(ending) || len(ending) < 90 {
		t.Fatalf("the run opens with %s in %d cases; want lifecycle/ending-delivered in all %d", first.Check, len(first.Cases), len(ending))
	}
	follows := map[string]int{}
	for _, f := range first.Follows {
		follows[f.Check] = len(f.Cases)
	}
	if !cmp.Equal(follows, lost) || lost["lossless/usage"] < 70 || lost["lossless/text"] < 20 {
		t.Errorf("under the lost end: %v; want every usage and text lost with it: %v", follows, lost)
	}
	n := 0
	for _, p := range ps {
		if p != first && (p.Check == "lossless/usage" || p.Check == "lossless/text") {
			t.Errorf("%s in %v beside the lost end, not under it", p.Check, p.Cases)
		}
		n += len(p.Cases)
		for _, f := range p.Follows {
			n += len(f.Cases)
		}
	}
	if n != len(run.Gate.New) {
		t.Errorf("the problems hold %d failures, the run has %d", n, len(run.Gate.New))
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, doc, SummaryOptions{}); err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(buf.String(), "\n", 4)
	if want := fmt.Sprintf("python3 conformance/testdata/adapters/lost-tail.py: %d problems (%d new failures in %d cases)", len(ps), len(run.Gate.New), len(run.Cases)); head[0] != want {
		t.Errorf("the summary opens with\n%s\nwant\n%s", head[0], want)
	}
	if !strings.HasPrefix(head[2], fmt.Sprintf("FAIL lifecycle/ending-delivered: %d cases (claude ", len(ending))) {
		t.Errorf("the first problem reads %q", head[2])
	}
	golden(t, "lost-tail.summary.txt", buf.Bytes())
}
