package reports

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fixtures"
)

// matrix is the view the Markdown and HTML reports share: one column per
// adapter run (named by the adapter, and the CLI versions it was asked to
// replay), one row per case (CLI, CLI versions it ran at, case ID).
type matrix struct {
	Columns []string
	Runs    []*conformance.Results
	Rows    []*matrixRow
}

type matrixRow struct {
	// Version lists the CLI versions the case ran at, " / " between them
	// (Versions) when the runs replayed different versions.
	CLI, Version, Case, Description string
	Versions                        []string
	Cells                           []*matrixCell // one per column; nil: not run there
}

type matrixCell struct {
	Run  *conformance.Results
	Case *conformance.CaseResult
	// New is true when the case has a failure the baseline does not expect.
	New bool
	// Expected is true when the case failed and the baseline expects every
	// failing check.
	Expected bool
	// Families is the worst verdict per family.
	Families map[conformance.Family]conformance.Verdict
}

func buildMatrix(doc *Document) *matrix {
	m := &matrix{}
	used := map[string]int{}
	rows := map[string]*matrixRow{}
	for _, r := range doc.Runs {
		name := RunLabel(r)
		used[name]++
		if used[name] > 1 {
			name = fmt.Sprintf("%s (%d)", name, used[name])
		}
		m.Columns = append(m.Columns, name)
		m.Runs = append(m.Runs, r)
	}
	for col, r := range m.Runs {
		for _, c := range r.Cases {
			row, ok := rows[c.ID]
			if !ok {
				row = &matrixRow{CLI: c.Agent, Case: c.ID, Description: c.Description, Cells: make([]*matrixCell, len(m.Runs))}
				rows[c.ID] = row
				m.Rows = append(m.Rows, row)
			}
			// A case SKIP for want of a fixture at its version did not run there.
			if v := caseVersion(c); v != "" && (c.Fixture != "" || c.Verdict != conformance.Skip) && !containsString(row.Versions, v) {
				row.Versions = append(row.Versions, v)
			}
			cell := &matrixCell{Run: r, Case: c, Families: map[conformance.Family]conformance.Verdict{}}
			failing, expected := 0, 0
			for _, k := range c.Checks {
				if rankOf(k.Verdict) > rankOf(cell.Families[k.Family]) || cell.Families[k.Family] == "" {
					cell.Families[k.Family] = k.Verdict
				}
				if k.Verdict.Failed(r.Meta.Strict) {
					failing++
					if k.Baselined {
						expected++
					}
				}
			}
			cell.New = failing > expected
			cell.Expected = failing > 0 && failing == expected
			row.Cells[col] = cell
		}
	}
	for _, row := range m.Rows {
		sort.Slice(row.Versions, func(i, j int) bool { return fixtures.CompareVersions(row.Versions[i], row.Versions[j]) < 0 })
		row.Version = strings.Join(row.Versions, " / ")
	}
	sort.SliceStable(m.Rows, func(i, j int) bool {
		a, b := m.Rows[i], m.Rows[j]
		if a.CLI != b.CLI {
			return a.CLI < b.CLI
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Case < b.Case
	})
	return m
}

// rankOf orders verdicts from best to worst, as the runner does.
func rankOf(v conformance.Verdict) int {
	switch v {
	case conformance.Skip:
		return 0
	case conformance.Pass:
		return 1
	case conformance.Informational:
		return 2
	case conformance.NonStrict:
		return 3
	case conformance.Fail:
		return 4
	case conformance.Crash:
		return 5
	case conformance.Timeout:
		return 6
	}
	return -1
}

var (
	versionMu    sync.Mutex
	versionCache = map[string]string{}
)

// caseVersion is the CLI version the case replayed: as the results say,
// else (results written before they said) the version its fixture was
// recorded with ("" for a case that replays a transcript file).
func caseVersion(c *conformance.CaseResult) string {
	if c.CLIVersion != "" {
		return c.CLIVersion
	}
	if c.Fixture == "" {
		return ""
	}
	versionMu.Lock()
	defer versionMu.Unlock()
	if v, ok := versionCache[c.Fixture]; ok {
		return v
	}
	v := ""
	if t, err := fixtures.Load(c.Fixture); err == nil {
		v = t.Header.CLIVersion
	}
	versionCache[c.Fixture] = v
	return v
}

// verdictCounts counts check verdicts and case verdicts of one run.
func verdictCounts(r *conformance.Results) (checks, cases map[conformance.Verdict]int) {
	checks, cases = map[conformance.Verdict]int{}, map[conformance.Verdict]int{}
	for _, c := range r.Cases {
		cases[c.Verdict]++
		for _, k := range c.Checks {
			checks[k.Verdict]++
		}
	}
	return checks, cases
}

// newFailure is one failing check the baseline does not expect.
type newFailure struct {
	Column string
	Run    *conformance.Results
	Case   *conformance.CaseResult
	Check  conformance.CheckResult
}

func newFailures(m *matrix) []newFailure {
	var out []newFailure
	for i, r := range m.Runs {
		for _, c := range r.Cases {
			for _, k := range c.Checks {
				if k.Verdict.Failed(r.Meta.Strict) && !k.Baselined {
					out = append(out, newFailure{Column: m.Columns[i], Run: r, Case: c, Check: k})
				}
			}
		}
	}
	return out
}

// lineDiff renders a line diff of expected and actual ("-" expected only,
// "+" actual only, " " both), for checks that give no diff of their own.
func lineDiff(expected, actual string) string {
	a := strings.Split(strings.TrimRight(expected, "\n"), "\n")
	b := strings.Split(strings.TrimRight(actual, "\n"), "\n")
	if len(a)*len(b) > 250000 {
		var s strings.Builder
		for _, l := range a {
			s.WriteString("-" + l + "\n")
		}
		for _, l := range b {
			s.WriteString("+" + l + "\n")
		}
		return s.String()
	}
	// Longest common subsequence table, from the end.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var s strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			s.WriteString(" " + a[i] + "\n")
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			s.WriteString("-" + a[i] + "\n")
			i++
		default:
			s.WriteString("+" + b[j] + "\n")
			j++
		}
	}
	return s.String()
}

// RunLabel names a run in reports: its adapter, and the CLI versions it
// was asked to replay ("reference/unified @ claude 2.1.329").
func RunLabel(r *conformance.Results) string {
	name := r.Meta.Adapter
	if name == "" {
		name = "adapter"
	}
	if p := pinLabel(r.Meta.CLIVersionPins); p != "" {
		name += " @ " + p
	}
	return name
}

// pinLabel renders the CLI versions a run was asked to replay
// ("claude 2.1.329, codex 0.169.0"; "" for none).
func pinLabel(pins map[string]string) string {
	var parts []string
	for _, cli := range sortedKeys(pins) {
		parts = append(parts, cli+" "+pins[cli])
	}
	return strings.Join(parts, ", ")
}
