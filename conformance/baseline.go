package conformance

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// Baseline lists failures that are expected, so that a CI gate passes on
// them and fails only on new ones. Each line is "<case-id>" (every check
// of that case) or "<case-id> <check-id>"; "#" starts a comment. Either
// part may be a glob ("codex/* invocation/prompt", "*/single-tool/line-*
// buffer/line-intact"), matched as --case matches case IDs (a case's
// variants included) and as path.Match matches check IDs, so that one
// line states one bug seen in many cases.
type Baseline struct {
	entries  map[string]bool
	patterns []baselinePattern
	order    []string
	lines    map[string]int // the 1-based line of each entry
	// File is where the baseline came from, for messages.
	File string
}

// ReadBaseline parses a baseline file.
func ReadBaseline(path string) (*Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading baseline: %w", err)
	}
	defer f.Close()
	b, err := ParseBaseline(f)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	b.File = path
	return b, nil
}

// ParseBaseline parses baseline lines.
func ParseBaseline(r io.Reader) (*Baseline, error) {
	b := &Baseline{entries: map[string]bool{}, lines: map[string]int{}}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) > 2 {
			return nil, fmt.Errorf("line %d: want \"<case-id>\" or \"<case-id> <check-id>\", got %d fields", n, len(f))
		}
		key := strings.Join(f, " ")
		if !b.entries[key] {
			b.entries[key] = true
			b.lines[key] = n
			b.order = append(b.order, key)
			if strings.ContainsAny(key, "*?[") {
				p := baselinePattern{key: key, caseGlob: f[0]}
				if len(f) == 2 {
					p.checkGlob = f[1]
				}
				if _, err := path.Match(p.caseGlob, ""); err != nil {
					return nil, fmt.Errorf("line %d: case pattern %q: %w", n, p.caseGlob, err)
				}
				if _, err := path.Match(p.checkGlob, ""); err != nil {
					return nil, fmt.Errorf("line %d: check pattern %q: %w", n, p.checkGlob, err)
				}
				b.patterns = append(b.patterns, p)
			}
		}
	}
	return b, sc.Err()
}

// BaselineEntry is one expected failure and where the file lists it.
type BaselineEntry struct {
	// Key is "<case-id>" (every check of the case) or "<case-id> <check-id>".
	Key string
	// Line is the entry's 1-based line in the file.
	Line int
}

// Entries returns the entries in file order, without duplicates (nil for
// a nil baseline).
func (b *Baseline) Entries() []BaselineEntry {
	if b == nil {
		return nil
	}
	out := make([]BaselineEntry, len(b.order))
	for i, k := range b.order {
		out[i] = BaselineEntry{Key: k, Line: b.lines[k]}
	}
	return out
}

func (b *Baseline) expects(caseID, check string) (string, bool) {
	if b == nil {
		return "", false
	}
	if b.entries[caseID+" "+check] {
		return caseID + " " + check, true
	}
	if b.entries[caseID] {
		return caseID, true
	}
	for _, p := range b.patterns {
		if p.matches(caseID, check) {
			return p.key, true
		}
	}
	return "", false
}

// baselinePattern is a baseline entry with a glob in it.
type baselinePattern struct {
	key, caseGlob, checkGlob string // checkGlob "" is every check
}

func (p baselinePattern) matches(caseID, check string) bool {
	if !matchCase(caseID, []string{p.caseGlob}) {
		return false
	}
	if p.checkGlob == "" || check == "" {
		return true
	}
	ok, _ := path.Match(p.checkGlob, check)
	return ok
}

// Gate is the verdict of a run against its baseline.
type Gate struct {
	// Passed is true when no failure is new.
	Passed bool `json:"passed"`
	// Counts counts check results per verdict.
	Counts map[Verdict]int `json:"counts"`
	// New lists failures the baseline does not expect ("case check").
	New []string `json:"new,omitempty"`
	// Expected lists failures the baseline expects.
	Expected []string `json:"expected,omitempty"`
	// Stale lists baseline entries that now pass (or did not run failing):
	// remove them from the baseline.
	Stale []string `json:"stale,omitempty"`
}

// ApplyBaseline computes r.Gate against b (nil: every failure is new)
// with r's strictness: a failure b lists is expected and marked Baselined,
// any other failure is new, and an entry whose case (or case and check)
// ran without failing is stale. The runner calls it; so do the report
// commands that re-gate saved results.
func (r *Results) ApplyBaseline(b *Baseline) {
	r.Gate = gate(r, b, r.Meta.Strict)
}

// gate marks baselined results and computes the gate.
func gate(res *Results, b *Baseline, strict bool) Gate {
	g := Gate{Counts: map[Verdict]int{}}
	used := map[string]bool{}
	ran := map[string]bool{}
	for _, c := range res.Cases {
		ran[c.ID] = true
		for i := range c.Checks {
			r := &c.Checks[i]
			ran[c.ID+" "+r.Check] = true
			g.Counts[r.Verdict]++
			r.Baselined = false
			if !r.Verdict.Failed(strict) {
				continue
			}
			key := c.ID + " " + r.Check
			if entry, ok := b.expects(c.ID, r.Check); ok {
				r.Baselined = true
				used[entry] = true
				g.Expected = append(g.Expected, key)
				continue
			}
			g.New = append(g.New, key)
		}
	}
	if b != nil {
		patterns := map[string]baselinePattern{}
		for _, p := range b.patterns {
			patterns[p.key] = p
		}
		for _, e := range b.order {
			if used[e] {
				continue
			}
			p, isPattern := patterns[e]
			if !isPattern && ran[e] {
				g.Stale = append(g.Stale, e)
				continue
			}
			if isPattern {
				// Stale when a case it names ran and nothing it names failed.
				for _, c := range res.Cases {
					if p.matches(c.ID, "") {
						g.Stale = append(g.Stale, e)
						break
					}
				}
			}
		}
	}
	sort.Strings(g.New)
	g.Passed = len(g.New) == 0
	return g
}

// WriteBaseline writes the failures of a run as a baseline file.
func WriteBaseline(w io.Writer, res *Results, strict bool) error {
	fmt.Fprintln(w, "# agentconform baseline: expected failures, one \"<case-id> <check-id>\" per line")
	for _, c := range res.Cases {
		for _, r := range c.Checks {
			if r.Verdict.Failed(strict) {
				if _, err := fmt.Fprintf(w, "%s %s\n", c.ID, r.Check); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
