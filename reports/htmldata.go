package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/conformance"
)

// pageData is what the results page builds a case's details from when the
// case is opened: every case's details, as compact JSON in one data block
// of the page, instead of markup for every cell. Text that repeats across
// cases (descriptions, the reasons a check does not apply, actuals and
// expecteds) is kept once in S and named by its index plus one (0: none);
// a check's ID, family, level, requirement and source are kept once per
// catalogue entry in K.
type pageData struct {
	// V names the verdicts that checks refer to by index.
	V []string `json:"v"`
	// S is the shared text.
	S []string `json:"s"`
	// K is the check catalogue: [check, family, level, requirement,
	// sources], sources as [text, address] pairs ("" for no link).
	K [][]any `json:"k"`
	// L holds the cases' check lists, each once: most cases of a run
	// share theirs with others (the same checks pass, the same do not
	// apply, for the same reasons).
	L [][][]any `json:"l"`
	// R describes the runs.
	R []dataRun `json:"r"`
	// D holds the cases' details; a cell's data-d is its index.
	D []dataCase `json:"d"`

	base    string
	strs    map[string]int
	checks  map[string]int
	lists   map[string]int
	runs    map[*conformance.Results]int
	verdict map[conformance.Verdict]int
}

// dataRun is a run as the details name it. Reproduce is the run's
// reproduce command around the case ID, [before, after], when its cases'
// commands differ only by the ID (a case's own command is then left out).
type dataRun struct {
	Column    string    `json:"col"`
	Tool      string    `json:"tool"`
	Seed      string    `json:"seed"`
	Shard     string    `json:"shard,omitempty"`
	Started   string    `json:"started,omitempty"`
	Reproduce [2]string `json:"rp"`
}

// dataCase is one case's details (Reproduce only when it is not its
// run's command for its ID). Checks names its check list in L, whose
// entries are [catalogue index, verdict index, actual, expected, diff,
// flags] with the trailing empty ones left out, worst verdict first;
// flags: 1 expected by the baseline, 2 a new failure.
type dataCase struct {
	Run         int     `json:"r"`
	ID          string  `json:"id"`
	Verdict     string  `json:"v"`
	Duration    string  `json:"t"`
	Agent       string  `json:"a,omitempty"`
	Version     string  `json:"ver,omitempty"`
	Fixture     string  `json:"fx,omitempty"`
	Faults      string  `json:"fl,omitempty"`
	Description int     `json:"ds,omitempty"`
	Adapter     int     `json:"ad,omitempty"`
	Reproduce   *string `json:"rp,omitempty"`
	Dir         string  `json:"dir,omitempty"`
	New         bool    `json:"n,omitempty"`
	Expected    bool    `json:"e,omitempty"`
	Checks      int     `json:"k"`
	Wire        string  `json:"w,omitempty"`
}

func newPageData(base string) *pageData {
	d := &pageData{base: base, strs: map[string]int{}, checks: map[string]int{}, lists: map[string]int{}, runs: map[*conformance.Results]int{},
		verdict: map[conformance.Verdict]int{}, S: []string{}, K: [][]any{}, L: [][][]any{}, R: []dataRun{}, D: []dataCase{}}
	for i, v := range verdictOrder {
		d.V = append(d.V, string(v))
		d.verdict[v] = i
	}
	return d
}

// str is the reference to s in S: its index plus one, 0 for "".
func (d *pageData) str(s string) int {
	if s == "" {
		return 0
	}
	if i, ok := d.strs[s]; ok {
		return i
	}
	d.S = append(d.S, s)
	d.strs[s] = len(d.S)
	return len(d.S)
}

// check is the catalogue index of a check result's check.
func (d *pageData) check(k conformance.CheckResult) int {
	key := k.Check + "\x00" + string(k.Family) + "\x00" + k.Level + "\x00" + k.Requirement + "\x00" + k.Source
	if i, ok := d.checks[key]; ok {
		return i
	}
	var sources [][2]string
	for _, p := range sourceParts(k.Source, d.base) {
		u := p.URL
		if !safeURL(u) {
			u = ""
		}
		sources = append(sources, [2]string{p.Text, u})
	}
	d.K = append(d.K, []any{k.Check, string(k.Family), k.Level, k.Requirement, sources})
	d.checks[key] = len(d.K) - 1
	return len(d.K) - 1
}

// run records a run under its column name.
func (d *pageData) run(column string, r *conformance.Results) {
	dr := dataRun{Column: column, Tool: strings.TrimSpace(r.Meta.Tool + " " + r.Meta.Version), Seed: fmt.Sprint(r.Meta.Seed), Shard: r.Meta.Shard}
	if !r.Meta.Started.IsZero() {
		dr.Started = r.Meta.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	for _, c := range r.Cases {
		if before, after, ok := strings.Cut(c.Reproduce, " --case "+c.ID+" "); ok {
			dr.Reproduce = [2]string{before + " --case ", " " + after}
			break
		}
	}
	d.runs[r] = len(d.R)
	d.R = append(d.R, dr)
}

// wireTime is the time at the start of a wire line, after its padding.
var wireTime = regexp.MustCompile(`(?m)^ +(\d+\.\d{3}s )`)

// detail records a cell's case and returns its index.
func (d *pageData) detail(cell *matrixCell) int {
	c, r := cell.Case, cell.Run
	dc := dataCase{Run: d.runs[r], ID: c.ID, Verdict: string(c.Verdict), Duration: fmt.Sprintf("%.3fs", c.Duration), Agent: c.Agent,
		Version: caseVersion(c), Fixture: c.Fixture, Faults: c.Faults, Description: d.str(c.Description), Adapter: d.str(c.Adapter),
		Dir: c.Dir, New: cell.New, Expected: cell.Expected, Wire: wireTime.ReplaceAllString(c.Wire, "$1")}
	if rp := d.R[dc.Run].Reproduce; c.Reproduce != rp[0]+c.ID+rp[1] {
		dc.Reproduce = &c.Reproduce
	}
	list := [][]any{}
	checks := append([]conformance.CheckResult(nil), c.Checks...)
	sort.SliceStable(checks, func(i, j int) bool { return rankOf(checks[i].Verdict) > rankOf(checks[j].Verdict) })
	for _, k := range checks {
		e := []any{d.check(k), d.verdict[k.Verdict]}
		switch k.Verdict {
		case conformance.Pass:
		case conformance.Skip:
			e = append(e, d.str(k.Actual))
		default:
			diff := k.Diff
			if diff == "" && k.Expected != "" && k.Actual != "" {
				diff = lineDiff(k.Expected, k.Actual)
			}
			flags := 0
			if k.Baselined {
				flags |= 1
			}
			if k.Verdict.Failed(r.Meta.Strict) && !k.Baselined {
				flags |= 2
			}
			e = append(e, d.str(k.Actual), d.str(k.Expected), diff, flags)
			for len(e) > 2 && isZero(e[len(e)-1]) {
				e = e[:len(e)-1]
			}
		}
		list = append(list, e)
	}
	key := listKey(list)
	i, ok := d.lists[key]
	if !ok {
		i = len(d.L)
		d.L = append(d.L, list)
		d.lists[key] = i
	}
	dc.Checks = i
	d.D = append(d.D, dc)
	return len(d.D) - 1
}

func isZero(v any) bool { return v == 0 || v == "" }

// listKey spells a check list unambiguously (strings quoted), to find the
// same list in L.
func listKey(list [][]any) string {
	var b strings.Builder
	for _, e := range list {
		for _, v := range e {
			if s, ok := v.(string); ok {
				b.WriteString(strconv.Quote(s))
			} else {
				fmt.Fprint(&b, v)
			}
			b.WriteByte(',')
		}
		b.WriteByte(';')
	}
	return b.String()
}

// json renders the data for the page's data block. encoding/json writes
// <, > and & as \u escapes (and U+2028, U+2029), so nothing in it can end
// the block or start markup.
func (d *pageData) json() (template.JS, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(d); err != nil {
		return "", fmt.Errorf("case details: %w", err)
	}
	return template.JS(bytes.TrimSpace(b.Bytes())), nil
}

// safeURL reports whether u may be a link's address: relative, or http,
// https or mailto, as html/template allows in href.
func safeURL(u string) bool {
	if u == "" {
		return false
	}
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch strings.ToLower(p.Scheme) {
	case "", "http", "https", "mailto":
		return true
	}
	return false
}
