package reports

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentconform/agentconform/conformance"
)

// Merge joins the results of `agentconform run --shard i/n` runs into one
// document: the runs of each adapter become one run whose cases are the
// union of the shards' cases (sorted by ID) and whose gate adds the shards'
// gates up. The shards must agree on seed and strictness, and no case may
// appear twice for one adapter. When the shards of an adapter do not cover
// 1/n..n/n, the merged run keeps the list of shards it has in Meta.Shard
// ("1/4+3/4") and a warning names the missing ones. Runs of different
// adapters, or of one adapter at different CLI versions (--cli-version),
// stay separate runs, in the order they first appear.
func Merge(docs ...*Document) (*Document, []string, error) {
	var order []string
	groups := map[string][]*conformance.Results{}
	for _, d := range docs {
		for _, r := range d.Runs {
			// Runs at other CLI versions are other runs, not shards.
			a := r.Meta.Adapter + "\x00" + pinLabel(r.Meta.CLIVersionPins)
			if _, ok := groups[a]; !ok {
				order = append(order, a)
			}
			groups[a] = append(groups[a], r)
		}
	}
	out := NewDocument()
	var warnings []string
	for _, a := range order {
		m, w, err := mergeRuns(groups[a][0].Meta.Adapter, groups[a])
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, w...)
		out.Runs = append(out.Runs, m)
	}
	return out, warnings, nil
}

func mergeRuns(adapter string, runs []*conformance.Results) (*conformance.Results, []string, error) {
	var warnings []string
	first := runs[0]
	m := &conformance.Results{Meta: first.Meta}
	m.Meta.CLIVersions = map[string][]string{}
	m.Gate = conformance.Gate{Counts: map[conformance.Verdict]int{}}
	seenCase := map[string]string{} // case ID -> shard it came from
	var shards []string
	var end time.Time
	for i, r := range runs {
		if r.Meta.Seed != first.Meta.Seed {
			return nil, nil, fmt.Errorf("merge %s: runs with different seeds (%d and %d) are not shards of one run", adapter, first.Meta.Seed, r.Meta.Seed)
		}
		if r.Meta.Strict != first.Meta.Strict {
			return nil, nil, fmt.Errorf("merge %s: one run is --strict and another is not", adapter)
		}
		if r.Meta.Version != first.Meta.Version {
			warnings = append(warnings, fmt.Sprintf("%s: shards ran different agentconform versions (%s and %s)", adapter, first.Meta.Version, r.Meta.Version))
		}
		shard := r.Meta.Shard
		if shard == "" {
			shard = "run " + strconv.Itoa(i+1)
		} else {
			shards = append(shards, shard)
		}
		if m.Meta.Hello == nil {
			m.Meta.Hello = r.Meta.Hello
		}
		if !r.Meta.Started.IsZero() && (m.Meta.Started.IsZero() || r.Meta.Started.Before(m.Meta.Started)) {
			m.Meta.Started = r.Meta.Started
		}
		if e := r.Meta.Started.Add(time.Duration(r.Meta.Duration * float64(time.Second))); e.After(end) {
			end = e
		}
		for cli, vs := range r.Meta.CLIVersions {
			for _, v := range vs {
				if !containsString(m.Meta.CLIVersions[cli], v) {
					m.Meta.CLIVersions[cli] = append(m.Meta.CLIVersions[cli], v)
				}
			}
		}
		for _, c := range r.Cases {
			if prev, dup := seenCase[c.ID]; dup {
				return nil, nil, fmt.Errorf("merge %s: case %s is in two runs (%s and %s); merge each shard once", adapter, c.ID, prev, shard)
			}
			seenCase[c.ID] = shard
			m.Cases = append(m.Cases, c)
		}
		for v, n := range r.Gate.Counts {
			m.Gate.Counts[v] += n
		}
		m.Gate.New = append(m.Gate.New, r.Gate.New...)
		m.Gate.Expected = append(m.Gate.Expected, r.Gate.Expected...)
		m.Gate.Stale = append(m.Gate.Stale, r.Gate.Stale...)
	}
	for cli := range m.Meta.CLIVersions {
		sort.Strings(m.Meta.CLIVersions[cli])
	}
	if len(m.Meta.CLIVersions) == 0 {
		m.Meta.CLIVersions = nil
	}
	sort.SliceStable(m.Cases, func(i, j int) bool { return m.Cases[i].ID < m.Cases[j].ID })
	sort.Strings(m.Gate.New)
	sort.Strings(m.Gate.Expected)
	m.Gate.Stale = dedupe(m.Gate.Stale)
	m.Gate.Passed = len(m.Gate.New) == 0
	if !m.Meta.Started.IsZero() && end.After(m.Meta.Started) {
		m.Meta.Duration = end.Sub(m.Meta.Started).Seconds()
	}
	m.Meta.Shard = ""
	if len(shards) > 0 {
		shard, w := coverage(adapter, shards)
		m.Meta.Shard = shard
		warnings = append(warnings, w...)
	}
	return m, warnings, nil
}

// coverage checks that shards ("i/n") cover 1..n once; it returns "" when
// they do, else the shards present joined by "+".
func coverage(adapter string, shards []string) (string, []string) {
	have := map[int]bool{}
	total := -1
	var warnings []string
	for _, s := range shards {
		a, b, ok := strings.Cut(s, "/")
		i, err1 := strconv.Atoi(a)
		n, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil {
			return strings.Join(shards, "+"), []string{fmt.Sprintf("%s: shard %q is not i/n", adapter, s)}
		}
		if total >= 0 && n != total {
			warnings = append(warnings, fmt.Sprintf("%s: shards of different splits (%d and %d)", adapter, total, n))
		}
		total = n
		have[i] = true
	}
	var missing []string
	for i := 1; i <= total; i++ {
		if !have[i] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, total))
		}
	}
	if len(missing) == 0 && len(warnings) == 0 {
		return "", nil
	}
	sorted := append([]string(nil), shards...)
	sort.Strings(sorted)
	if len(missing) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: shards %s are missing; the merged results are partial", adapter, strings.Join(missing, ", ")))
	}
	return strings.Join(sorted, "+"), warnings
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func dedupe(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Change is one check whose verdict differs between two results.
type Change struct {
	// Adapter, Case and Check say which check on which case of which run.
	Adapter string `json:"adapter"`
	Case    string `json:"case"`
	Check   string `json:"check"`
	// Old and New are the verdicts; "" means the check did not run there.
	Old conformance.Verdict `json:"old,omitempty"`
	New conformance.Verdict `json:"new,omitempty"`
	// Requirement, Expected and Actual come from the newer result (the
	// older one for a fixed check), so a new failure explains itself.
	Requirement string `json:"requirement,omitempty"`
	Expected    string `json:"expected,omitempty"`
	Actual      string `json:"actual,omitempty"`
	Reproduce   string `json:"reproduce,omitempty"`
}

// ResultsDiff is what changed between two results.
type ResultsDiff struct {
	// NewFailures failed in the new results and did not fail (or did not
	// run) in the old ones.
	NewFailures []Change `json:"new_failures"`
	// Fixed failed in the old results and ran without failing in the new.
	Fixed []Change `json:"fixed"`
	// Changed lists every other verdict change (PASS to SKIP, FAIL to
	// CRASH, NON-STRICT to PASS, ...), and checks that ran only in one of
	// the two without failing.
	Changed []Change `json:"changed"`
	// Unchanged counts checks with the same verdict in both.
	Unchanged int `json:"unchanged"`
}

// Diff compares two results check by check, keyed by adapter, case and
// check. Whether a verdict is a failure follows each side's strictness.
func Diff(old, cur *Document) *ResultsDiff {
	type entry struct {
		v      conformance.Verdict
		failed bool
		cr     *conformance.CaseResult
		k      conformance.CheckResult
	}
	index := func(d *Document) (map[string]entry, []string) {
		m := map[string]entry{}
		var keys []string
		for _, r := range d.Runs {
			for _, c := range r.Cases {
				for _, k := range c.Checks {
					key := r.Meta.Adapter + "\x00" + c.ID + "\x00" + k.Check
					if _, dup := m[key]; !dup {
						keys = append(keys, key)
					}
					m[key] = entry{v: k.Verdict, failed: k.Verdict.Failed(r.Meta.Strict), cr: c, k: k}
				}
			}
		}
		return m, keys
	}
	om, okeys := index(old)
	nm, nkeys := index(cur)
	d := &ResultsDiff{NewFailures: []Change{}, Fixed: []Change{}, Changed: []Change{}}
	change := func(key string, o, n entry, from entry) Change {
		p := strings.SplitN(key, "\x00", 3)
		return Change{Adapter: p[0], Case: p[1], Check: p[2], Old: o.v, New: n.v, Requirement: from.k.Requirement,
			Expected: from.k.Expected, Actual: from.k.Actual, Reproduce: reproduceOf(from.cr)}
	}
	for _, key := range nkeys {
		n := nm[key]
		o, inOld := om[key]
		switch {
		case n.failed && (!inOld || !o.failed):
			d.NewFailures = append(d.NewFailures, change(key, o, n, n))
		case inOld && o.failed && !n.failed:
			d.Fixed = append(d.Fixed, change(key, o, n, o))
		case !inOld || o.v != n.v:
			d.Changed = append(d.Changed, change(key, o, n, n))
		default:
			d.Unchanged++
		}
	}
	for _, key := range okeys {
		if _, ok := nm[key]; ok {
			continue
		}
		o := om[key]
		d.Changed = append(d.Changed, change(key, o, entry{}, o))
	}
	for _, l := range [][]Change{d.NewFailures, d.Fixed, d.Changed} {
		sort.SliceStable(l, func(i, j int) bool {
			if l[i].Adapter != l[j].Adapter {
				return l[i].Adapter < l[j].Adapter
			}
			if l[i].Case != l[j].Case {
				return l[i].Case < l[j].Case
			}
			return l[i].Check < l[j].Check
		})
	}
	return d
}

func reproduceOf(c *conformance.CaseResult) string {
	if c == nil {
		return ""
	}
	return c.Reproduce
}

// WriteDiffText prints a diff for a terminal.
func WriteDiffText(w io.Writer, d *ResultsDiff) error {
	d = visibleCopy(d)
	ew := &errWriter{w: w}
	section := func(title string, l []Change, detail bool) {
		ew.printf("%s (%d)\n", title, len(l))
		for _, c := range l {
			ew.printf("  %s → %s  %s [%s] (%s)\n", verdictOrNone(c.Old), verdictOrNone(c.New), c.Check, c.Case, c.Adapter)
			if detail {
				ew.printf("      Requirement: %s\n", c.Requirement)
				if c.Expected != "" {
					ew.printf("      Expected: %s\n", oneLine(c.Expected, 300))
				}
				if c.Actual != "" {
					ew.printf("      Actual: %s\n", oneLine(c.Actual, 300))
				}
				if c.Reproduce != "" {
					ew.printf("      Reproduce: %s\n", c.Reproduce)
				}
			}
		}
	}
	section("New failures", d.NewFailures, true)
	section("Fixed", d.Fixed, false)
	section("Changed verdicts", d.Changed, false)
	ew.printf("%d checks unchanged.\n", d.Unchanged)
	return ew.err
}

// WriteDiffMarkdown renders a diff as GitHub-flavored Markdown.
func WriteDiffMarkdown(w io.Writer, d *ResultsDiff) error {
	d = visibleCopy(d)
	ew := &errWriter{w: w}
	if len(d.NewFailures) == 0 {
		ew.printf("## agentconform diff: ✅ no new failures\n\n")
	} else {
		ew.printf("## agentconform diff: ❌ %s\n\n", plural(len(d.NewFailures), "new failure"))
	}
	ew.printf("%d new failures, %d fixed, %d other changes, %d unchanged.\n\n", len(d.NewFailures), len(d.Fixed), len(d.Changed), d.Unchanged)
	section := func(title string, l []Change, detail bool) {
		if len(l) == 0 {
			return
		}
		ew.printf("### %s (%d)\n\n| adapter | case | check | old | new |\n|---|---|---|---|---|\n", title, len(l))
		for _, c := range l {
			ew.printf("| %s | `%s` | `%s` | %s | %s |\n", mdText(c.Adapter), mdCodeText(c.Case), mdCodeText(c.Check), mdVerdict(c.Old), mdVerdict(c.New))
		}
		ew.printf("\n")
		if detail {
			for _, c := range l {
				ew.printf("<details><summary><code>%s</code> on <code>%s</code> · %s</summary>\n\n", html.EscapeString(c.Check), html.EscapeString(c.Case), html.EscapeString(c.Adapter))
				ew.printf("**Requirement:** %s\n\n", mdText(c.Requirement))
				if c.Expected != "" {
					ew.printf("**Expected:** %s\n\n", mdText(clipText(c.Expected, 1500)))
				}
				if c.Actual != "" {
					ew.printf("**Actual:** %s\n\n", mdText(clipText(c.Actual, 1500)))
				}
				if c.Reproduce != "" {
					ew.printf("%s", fenced(c.Reproduce, "sh"))
				}
				ew.printf("</details>\n\n")
			}
		}
	}
	section("New failures", d.NewFailures, true)
	section("Fixed", d.Fixed, false)
	section("Changed verdicts", d.Changed, false)
	return ew.err
}

func verdictOrNone(v conformance.Verdict) string {
	if v == "" {
		return "(not run)"
	}
	return string(v)
}

func mdVerdict(v conformance.Verdict) string {
	if v == "" {
		return "—"
	}
	return verdictEmoji[v] + " " + string(v)
}

func oneLine(s string, n int) string {
	return clipText(strings.Join(strings.Fields(s), " "), n)
}

// Scrub rewrites every free-text field of doc (adapter names, wire
// excerpts, reproduce commands, expected, actual, diffs, kept directories,
// descriptions) with f, to take the paths of one machine out of results
// that get published.
func Scrub(doc *Document, f func(string) string) {
	for _, run := range doc.Runs {
		run.Meta.Adapter = f(run.Meta.Adapter)
		for _, c := range run.Cases {
			c.Adapter = f(c.Adapter)
			c.Wire = f(c.Wire)
			c.Reproduce = f(c.Reproduce)
			c.Dir = f(c.Dir)
			c.Description = f(c.Description)
			for i := range c.Checks {
				k := &c.Checks[i]
				k.Expected, k.Actual, k.Diff = f(k.Expected), f(k.Actual), f(k.Diff)
			}
		}
		for i, s := range run.Gate.New {
			run.Gate.New[i] = f(s)
		}
	}
}

// Refresh replaces what results say about the checks and cases rather than
// about the run: each check's source with source[check ID], and each case's
// description with description[case ID], where the maps have the ID (a
// check or case that no longer exists keeps its own). Verdicts, expected,
// actual and wire stay as they were. It returns how many fields changed. A
// published example made by an older build so points at today's reference
// without being run again.
func Refresh(doc *Document, source, description map[string]string) int {
	n := 0
	for _, run := range doc.Runs {
		for _, c := range run.Cases {
			if d, ok := description[c.ID]; ok && d != c.Description {
				c.Description = d
				n++
			}
			for i := range c.Checks {
				k := &c.Checks[i]
				if s, ok := source[k.Check]; ok && s != k.Source {
					k.Source = s
					n++
				}
			}
		}
	}
	return n
}
