package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/conformance"
)

// fidelityRuns is an adapter's run on the fakes and on the real CLIs:
// case a agrees, case b differs in one check, case c only the fakes
// could play (SKIP on the real CLIs, no real run).
func fidelityRuns() (fake, real *conformance.Results) {
	chk := func(id string, v conformance.Verdict, actual string) conformance.CheckResult {
		return conformance.CheckResult{Check: id, Verdict: v, Actual: actual}
	}
	rr := &conformance.RealRun{CLI: "codex", Version: "0.171.0", Scenario: "single-tool"}
	fake = &conformance.Results{Meta: conformance.Meta{Adapter: "my-adapter", CLI: "fake"}, Cases: []*conformance.CaseResult{
		{ID: "codex/a", Checks: []conformance.CheckResult{chk("x/one", conformance.Pass, ""), chk("x/two", conformance.Skip, "")}},
		{ID: "codex/b", Checks: []conformance.CheckResult{chk("x/one", conformance.Pass, ""), chk("x/two", conformance.Fail, "fake found")}},
		{ID: "codex/c", Checks: []conformance.CheckResult{chk("x/one", conformance.Fail, "")}},
	}}
	real = &conformance.Results{Meta: conformance.Meta{Adapter: conformance.RealRunName("my-adapter"), CLI: "real"}, Cases: []*conformance.CaseResult{
		{ID: "codex/a", Real: rr, Checks: []conformance.CheckResult{chk("x/one", conformance.Pass, ""), chk("x/two", conformance.Skip, "")}},
		{ID: "codex/b", Real: rr, Checks: []conformance.CheckResult{chk("x/one", conformance.Pass, ""), chk("x/two", conformance.Pass, "")}},
		{ID: "codex/c", Verdict: conformance.Skip, Checks: []conformance.CheckResult{chk("x/one", conformance.Skip, "not playable")}},
	}}
	return fake, real
}

func TestCompareFidelity(t *testing.T) {
	fake, real := fidelityRuns()
	f := CompareFidelity(NewDocument(fake), NewDocument(real))
	if len(f.Adapters) != 1 {
		t.Fatalf("%d adapters, want 1 pair", len(f.Adapters))
	}
	a := f.Adapters[0]
	if a.Adapter != "my-adapter" || a.Cases != 2 || a.RealSkipped != 1 || a.Pairs != 3 || a.Agree != 2 || len(a.Differ) != 1 {
		t.Fatalf("%+v: want 2 cases, 1 only on the fakes, 3 pairs judged (SKIP on both is none), 2 agree, 1 differs", a)
	}
	d := a.Differ[0]
	if d.Case != "codex/b" || d.Check != "x/two" || d.Fake != conformance.Fail || d.Real != conformance.Pass || d.FakeActual != "fake found" {
		t.Errorf("difference %+v", d)
	}
	if a.Contradict != 1 {
		t.Errorf("%d contradictions, want 1 (FAIL on the fakes, PASS on the real CLI)", a.Contradict)
	}
	// A check judged on one side only differs without contradicting.
	fake.Cases[0].Checks[1].Verdict = conformance.Pass
	if g := CompareFidelity(NewDocument(fake), NewDocument(real)).Adapters[0]; len(g.Differ) != 2 || g.Contradict != 1 {
		t.Errorf("PASS on the fakes, SKIP on the real CLI: %d differ, %d contradict; want 2 and 1", len(g.Differ), g.Contradict)
	}
	fake.Cases[0].Checks[1].Verdict = conformance.Skip
	if a.RealVersions["codex"] != "0.171.0" {
		t.Errorf("real versions %v", a.RealVersions)
	}
	// One document holding both runs pairs them too; a run without its
	// partner pairs with nothing.
	if g := CompareFidelity(NewDocument(fake, real)); len(g.Adapters) != 1 {
		t.Errorf("one document: %d pairs", len(g.Adapters))
	}
	if g := CompareFidelity(NewDocument(real)); len(g.Adapters) != 0 {
		t.Errorf("a real run alone paired with %+v", g.Adapters)
	}
}

func TestFidelityInReports(t *testing.T) {
	fake, real := fidelityRuns()
	doc := NewDocument(fake, real)
	var md, html, text bytes.Buffer
	if err := WriteResultsMarkdown(&md, doc, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteResultsHTML(&html, doc, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	WriteFidelityText(&text, CompareFidelity(doc))
	for name, s := range map[string]string{"markdown": md.String(), "html": html.String(), "text": text.String()} {
		if !strings.Contains(s, "66.7%") || !strings.Contains(s, "x/two") {
			t.Errorf("%s: no fidelity section with the agreement (66.7%%) and the differing check:\n%s", name, s)
		}
	}
}
