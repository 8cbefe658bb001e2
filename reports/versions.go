package reports

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fixtures"
)

// The version matrix compares one adapter's runs at different versions of
// a CLI (agentconform run --cli-version): per adapter and CLI, one column
// per version the runs replayed, one row per case, and under a case whose
// verdict differs between versions, the checks that make the difference.
// The Markdown and HTML reports show it when the results hold such runs.

// versionMatrix is every adapter × CLI with runs at more than one version.
type versionMatrix struct {
	Groups []*versionGroup
}

// versionGroup is one adapter's runs of one CLI's cases.
type versionGroup struct {
	Adapter, CLI string
	Columns      []*versionColumn
	Rows         []*versionRow
	// Differ counts rows whose verdict differs between versions; Same
	// those with one verdict at the two or more versions they ran at;
	// Partial those that ran (were not SKIP) at one version only.
	Differ, Same, Partial int
}

// versionColumn is one run's cases of the group's CLI.
type versionColumn struct {
	// Label is the version ("2.1.329"), "2.1.331 (default)" for a run of
	// the default fixtures, or "default (2.1.197, 2.1.329)" when those
	// were of several versions.
	Label string
	// Pinned is the version the run was asked for ("" for the default).
	Pinned string
	Run    *conformance.Results
	// Col is the run's column in the main matrix.
	Col   int
	order string
	cases map[string]*conformance.CaseResult
}

// versionRow is one case across the group's columns.
type versionRow struct {
	Case  string
	Cells []*conformance.CaseResult // one per column; nil: not run there
	// Differs is true when the case's verdict is not the same at every
	// version where it ran (SKIP aside).
	Differs bool
	// Checks are the checks whose verdict differs, for a row that differs.
	Checks []*versionCheck
}

// versionCheck is one check's verdict per column ("" where the case did
// not run or the check was not there).
type versionCheck struct {
	Check    string
	Verdicts []conformance.Verdict
}

// buildVersionMatrix finds the adapters with runs of one CLI at more than
// one version and lines their cases up.
func buildVersionMatrix(doc *Document, m *matrix) *versionMatrix {
	type key struct{ adapter, cli string }
	var order []key
	groups := map[key]*versionGroup{}
	for col, r := range m.Runs {
		byCLI := map[string]map[string]*conformance.CaseResult{}
		for _, c := range r.Cases {
			if byCLI[c.Agent] == nil {
				byCLI[c.Agent] = map[string]*conformance.CaseResult{}
			}
			byCLI[c.Agent][c.ID] = c
		}
		for _, cli := range sortedKeys(byCLI) {
			k := key{r.Meta.Adapter, cli}
			g := groups[k]
			if g == nil {
				g = &versionGroup{Adapter: r.Meta.Adapter, CLI: cli}
				groups[k] = g
				order = append(order, k)
			}
			vc := &versionColumn{Run: r, Col: col, Pinned: r.Meta.CLIVersionPins[cli], cases: byCLI[cli]}
			vc.Label, vc.order = columnLabel(vc)
			g.Columns = append(g.Columns, vc)
		}
	}
	vm := &versionMatrix{}
	for _, k := range order {
		g := groups[k]
		labels := map[string]int{}
		for _, c := range g.Columns {
			labels[c.Label]++
		}
		if len(labels) < 2 {
			continue // one version: nothing to compare
		}
		sort.SliceStable(g.Columns, func(i, j int) bool {
			a, b := g.Columns[i], g.Columns[j]
			if c := fixtures.CompareVersions(a.order, b.order); c != 0 {
				return c < 0
			}
			return a.Pinned != "" && b.Pinned == ""
		})
		seen := map[string]int{}
		for _, c := range g.Columns {
			if seen[c.Label]++; labels[c.Label] > 1 {
				c.Label += fmt.Sprintf(" (%d)", seen[c.Label])
			}
		}
		g.rows()
		vm.Groups = append(vm.Groups, g)
	}
	return vm
}

// columnLabel names a run's column and gives the version it sorts by.
func columnLabel(c *versionColumn) (label, order string) {
	if c.Pinned != "" {
		return c.Pinned, c.Pinned
	}
	vs := map[string]bool{}
	for _, cr := range c.cases {
		if v := caseVersion(cr); v != "" {
			vs[v] = true
		}
	}
	list := sortedKeys(vs)
	sort.Slice(list, func(i, j int) bool { return fixtures.CompareVersions(list[i], list[j]) < 0 })
	switch len(list) {
	case 0:
		return "default", ""
	case 1:
		return list[0] + " (default)", list[0]
	}
	return "default (" + strings.Join(list, ", ") + ")", list[len(list)-1]
}

// rows lines the group's cases up, marks those whose verdict differs and
// finds the checks that differ.
func (g *versionGroup) rows() {
	ids := map[string]bool{}
	for _, c := range g.Columns {
		for id := range c.cases {
			ids[id] = true
		}
	}
	for _, id := range sortedKeys(ids) {
		row := &versionRow{Case: id, Cells: make([]*conformance.CaseResult, len(g.Columns))}
		verdicts := map[conformance.Verdict]bool{}
		ran := 0
		for i, c := range g.Columns {
			cr := c.cases[id]
			row.Cells[i] = cr
			if cr != nil && cr.Verdict != conformance.Skip {
				ran++
				verdicts[cr.Verdict] = true
			}
		}
		row.Differs = len(verdicts) > 1
		switch {
		case row.Differs:
			g.Differ++
			row.Checks = differingChecks(row.Cells)
		case ran > 1:
			g.Same++
		default:
			g.Partial++
		}
		g.Rows = append(g.Rows, row)
	}
}

// differingChecks are the checks whose verdict is not the same in every
// cell where the case ran (a check SKIP there aside).
func differingChecks(cells []*conformance.CaseResult) []*versionCheck {
	var order []string
	byCheck := map[string]*versionCheck{}
	for i, cr := range cells {
		if cr == nil || cr.Verdict == conformance.Skip {
			continue
		}
		for _, k := range cr.Checks {
			vc := byCheck[k.Check]
			if vc == nil {
				vc = &versionCheck{Check: k.Check, Verdicts: make([]conformance.Verdict, len(cells))}
				byCheck[k.Check] = vc
				order = append(order, k.Check)
			}
			vc.Verdicts[i] = k.Verdict
		}
	}
	var out []*versionCheck
	for _, id := range order {
		vc := byCheck[id]
		seen := map[conformance.Verdict]bool{}
		for _, v := range vc.Verdicts {
			if v != "" && v != conformance.Skip {
				seen[v] = true
			}
		}
		if len(seen) > 1 {
			out = append(out, vc)
		}
	}
	return out
}

// cellVersion is what a cell shows besides the verdict: the version the
// case ran at, when the column does not say it alone.
func (c *versionColumn) cellVersion(cr *conformance.CaseResult) string {
	if cr == nil || c.Pinned != "" {
		return ""
	}
	if v := caseVersion(cr); v != "" && !strings.HasPrefix(c.Label, v+" ") {
		return v
	}
	return ""
}

// skipWhy is why a case was SKIP (the first check's reason).
func skipWhy(cr *conformance.CaseResult) string {
	for _, k := range cr.Checks {
		if k.Actual != "" {
			return k.Actual
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mdVersions renders the version matrix in Markdown: per adapter and CLI,
// the cases whose verdict differs between versions (at most maxRows of
// them per group, all with maxRows < 0), each followed by the checks that
// differ, and a count of the others.
func mdVersions(vm *versionMatrix, maxRows int) string {
	if len(vm.Groups) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("### CLI versions\n\nThe same cases replayed from fixtures of different CLI versions (`agentconform run --cli-version`): the cases whose verdict differs between versions, each with the checks that make the difference.\n\n")
	for _, g := range vm.Groups {
		fmt.Fprintf(&b, "#### %s · %s\n\n", mdText(g.Adapter), mdText(g.CLI))
		if g.Differ > 0 {
			b.WriteString("| case |")
			for _, c := range g.Columns {
				fmt.Fprintf(&b, " %s |", mdText(c.Label))
			}
			b.WriteString("\n|---|")
			for range g.Columns {
				b.WriteString(":-:|")
			}
			b.WriteString("\n")
			shown := 0
			for _, r := range g.Rows {
				if !r.Differs {
					continue
				}
				if maxRows >= 0 && shown >= maxRows {
					fmt.Fprintf(&b, "\n… and %s more; the HTML report has them all.\n", plural(g.Differ-shown, "case"))
					break
				}
				shown++
				fmt.Fprintf(&b, "| `%s` |", mdCodeText(r.Case))
				for i, cr := range r.Cells {
					fmt.Fprintf(&b, " %s |", mdVersionCell(g.Columns[i], cr))
				}
				b.WriteString("\n")
				for _, k := range r.Checks {
					fmt.Fprintf(&b, "| ↳ `%s` |", mdCodeText(k.Check))
					for _, v := range k.Verdicts {
						if v == "" {
							b.WriteString(" · |")
						} else {
							fmt.Fprintf(&b, " %s %s |", verdictEmoji[v], v)
						}
					}
					b.WriteString("\n")
				}
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s: %d with a different verdict at another version, %d with the same verdict at every version they ran at, %d that ran at one version only (absent or SKIP at the others: not captured at that version, not applicable, or not selected).\n\n",
			plural(len(g.Rows), "case"), g.Differ, g.Same, g.Partial)
	}
	return b.String()
}

func mdVersionCell(c *versionColumn, cr *conformance.CaseResult) string {
	if cr == nil {
		return "·"
	}
	s := verdictEmoji[cr.Verdict] + " " + string(cr.Verdict)
	if cr.Verdict.Failed(c.Run.Meta.Strict) {
		s = verdictEmoji[cr.Verdict] + " **" + string(cr.Verdict) + "**"
	}
	if v := c.cellVersion(cr); v != "" {
		s += " (" + mdText(v) + ")"
	}
	return s
}
