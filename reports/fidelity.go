package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/agentconform/agentconform/conformance"
)

// Fidelity compares each adapter's run on the fakes with its run on the
// real CLIs (`agentconform run --cli fake,real`, or two results files):
// every (case, check) both runs judged whose verdict differs. A fake that
// agrees with its CLI gives the same verdicts; a difference is a fidelity
// bug of a fake, or a real CLI doing one thing in one run and another in
// the next, and each wants its explanation.
type Fidelity struct {
	Adapters []AdapterFidelity `json:"adapters"`
}

// AdapterFidelity is one adapter's comparison.
type AdapterFidelity struct {
	// Adapter is the adapter's name (its run on the fakes').
	Adapter string `json:"adapter"`
	// RealVersions are the real CLIs' versions, per CLI.
	RealVersions map[string]string `json:"real_versions,omitempty"`
	// Cases counts the cases both runs played; RealSkipped those only the
	// fakes could play (SKIP on the real CLIs, with the reason).
	Cases       int `json:"cases"`
	RealSkipped int `json:"real_skipped"`
	// Pairs counts the (case, check) pairs of those cases that either run
	// judged (a verdict other than SKIP); Agree those with one verdict.
	Pairs int `json:"pairs"`
	Agree int `json:"agree"`
	// Differ are the pairs whose verdicts differ.
	Differ []FidelityDiff `json:"differ,omitempty"`
	// Contradict counts the pairs of Differ that both runs judged (no
	// SKIP on either side): a verdict the fakes give that the real CLI
	// does not bear out, or the other way round. The rest of Differ is
	// judged on one side only (a CLI's timing or path made the check not
	// apply on the other).
	Contradict int `json:"contradict"`
}

// Agreement is the share of judged pairs with one verdict (1 with none).
func (a AdapterFidelity) Agreement() float64 {
	if a.Pairs == 0 {
		return 1
	}
	return float64(a.Agree) / float64(a.Pairs)
}

// FidelityDiff is one (case, check) the two runs judged apart.
type FidelityDiff struct {
	Case  string `json:"case"`
	Check string `json:"check"`
	// Fake and Real are the verdicts; FakeActual and RealActual what each
	// check found; Outcome the real run's note, when the real CLI's run
	// differed from the scenario's fixture.
	Fake       conformance.Verdict `json:"fake"`
	Real       conformance.Verdict `json:"real"`
	FakeActual string              `json:"fake_actual,omitempty"`
	RealActual string              `json:"real_actual,omitempty"`
	Outcome    string              `json:"outcome,omitempty"`
}

// CompareFidelity pairs the runs of the documents: a run whose Meta.CLI
// is "real" with the run on the fakes of the same adapter
// (conformance.FakeRunName of its name). Runs without a partner are left
// out.
func CompareFidelity(docs ...*Document) *Fidelity {
	fakes := map[string]*conformance.Results{}
	var reals []*conformance.Results
	for _, d := range docs {
		for _, r := range d.Runs {
			if r.Meta.CLI == "real" {
				reals = append(reals, r)
			} else {
				fakes[r.Meta.Adapter] = r
			}
		}
	}
	out := &Fidelity{}
	for _, real := range reals {
		name := conformance.FakeRunName(real.Meta.Adapter)
		fake := fakes[name]
		if fake == nil {
			continue
		}
		out.Adapters = append(out.Adapters, compareRuns(name, fake, real))
	}
	sort.Slice(out.Adapters, func(i, j int) bool { return out.Adapters[i].Adapter < out.Adapters[j].Adapter })
	return out
}

func compareRuns(name string, fake, real *conformance.Results) AdapterFidelity {
	a := AdapterFidelity{Adapter: name, RealVersions: map[string]string{}}
	byID := map[string]*conformance.CaseResult{}
	for _, c := range fake.Cases {
		byID[c.ID] = c
	}
	for _, rc := range real.Cases {
		fc := byID[rc.ID]
		if fc == nil {
			continue
		}
		if rc.Real == nil {
			if rc.Verdict == conformance.Skip {
				a.RealSkipped++
			}
			continue
		}
		a.RealVersions[rc.Real.CLI] = rc.Real.Version
		a.Cases++
		fchecks := map[string]conformance.CheckResult{}
		for _, r := range fc.Checks {
			fchecks[r.Check] = r
		}
		for _, r := range rc.Checks {
			f, ok := fchecks[r.Check]
			if !ok || f.Verdict == conformance.Skip && r.Verdict == conformance.Skip {
				continue
			}
			a.Pairs++
			if f.Verdict == r.Verdict {
				a.Agree++
				continue
			}
			if f.Verdict != conformance.Skip && r.Verdict != conformance.Skip {
				a.Contradict++
			}
			a.Differ = append(a.Differ, FidelityDiff{Case: rc.ID, Check: r.Check, Fake: f.Verdict, Real: r.Verdict,
				FakeActual: f.Actual, RealActual: r.Actual, Outcome: rc.Real.Outcome})
		}
	}
	return a
}

// WriteFidelityText writes the comparison for a terminal: per adapter the
// agreement, then every pair that differs with what each run found.
func WriteFidelityText(w io.Writer, f *Fidelity) error {
	if len(f.Adapters) == 0 {
		_, err := fmt.Fprintln(w, "fake vs real: no adapter ran on both the fakes and the real CLIs")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "fake vs real\tcases\tonly fakes\tpairs judged\tagree\tdiffer\tcontradict\tagreement\treal CLIs")
	for _, a := range f.Adapters {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f%%\t%s\n", a.Adapter, a.Cases, a.RealSkipped, a.Pairs, a.Agree, len(a.Differ), a.Contradict, 100*a.Agreement(), versionsText(a.RealVersions))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, a := range f.Adapters {
		for _, d := range a.Differ {
			fmt.Fprintf(w, "\n%s [%s] %s: fake %s, real %s\n", d.Check, d.Case, a.Adapter, d.Fake, d.Real)
			if d.FakeActual != "" {
				fmt.Fprintf(w, "  fake: %s\n", oneLine(d.FakeActual, 300))
			}
			if d.RealActual != "" {
				fmt.Fprintf(w, "  real: %s\n", oneLine(d.RealActual, 300))
			}
			if d.Outcome != "" {
				fmt.Fprintf(w, "  (%s)\n", oneLine(d.Outcome, 300))
			}
		}
	}
	return nil
}

// WriteFidelityMarkdown writes the comparison as a Markdown section.
func WriteFidelityMarkdown(w io.Writer, f *Fidelity) error {
	var b strings.Builder
	b.WriteString("## Fake vs real CLIs\n\n| adapter | cases | only fakes | pairs judged | agree | differ | contradict | agreement | real CLIs |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, a := range f.Adapters {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %.1f%% | %s |\n", mdText(a.Adapter), a.Cases, a.RealSkipped, a.Pairs, a.Agree, len(a.Differ), a.Contradict, 100*a.Agreement(), mdText(versionsText(a.RealVersions)))
	}
	for _, a := range f.Adapters {
		if len(a.Differ) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s: verdicts that differ\n\n| case | check | fake | real | real found |\n|---|---|---|---|---|\n", mdText(a.Adapter))
		for _, d := range a.Differ {
			fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s |\n", d.Case, d.Check, d.Fake, d.Real, mdText(oneLine(d.RealActual, 200)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func versionsText(v map[string]string) string {
	var parts []string
	for cli, ver := range v {
		parts = append(parts, cli+" "+ver)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
