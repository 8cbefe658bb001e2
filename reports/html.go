package reports

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fixtures"
)

// HTMLOptions adjust WriteResultsHTML.
type HTMLOptions struct {
	// Title heads the page; "" means "agentconform results".
	Title string
	// Intro is a paragraph under the title (plain text; escaped).
	Intro string
	// Generated is the time printed as the page's date; zero means now.
	Generated time.Time
	// SourceBase is where each check's source links to: the repository
	// root as a URL or as a path relative to the page, ending in '/'; ""
	// means the reference as published on GitHub (see SourceBase).
	SourceBase string
}

// WriteResultsHTML writes doc as one self-contained HTML page (inline CSS
// and script, no external assets, readable offline): the runs and their
// verdict counts, the new failures grouped into problems (Problems), and
// the matrix of adapters × CLI × CLI version × case colored by verdict,
// filterable by adapter, CLI, version, check family, verdict and case
// name. Each cell opens the case's details: every applicable check with
// its requirement, expected, actual and diff, the reproduce command, and
// the wire excerpt with its timing. The details are not markup in the
// page: they are data (one JSON block the page's script parses when a
// case is first opened), built into the dialog when their case is
// opened, so that a page of thousands of cases stays small and draws at
// once. Everything that comes from results (transcripts, adapters'
// output, names) is escaped: by html/template in the markup, by JSON (with
// <, > and & as \u escapes) in the data, which the script only ever puts
// into the page as text.
func WriteResultsHTML(w io.Writer, doc *Document, o HTMLOptions) error {
	doc = visibleCopy(doc)
	o.Title, o.Intro = visible(o.Title), visible(o.Intro)
	v, err := buildHTMLView(doc, o)
	if err != nil {
		return fmt.Errorf("writing HTML report: %w", err)
	}
	if err := resultsPage.Execute(w, v); err != nil {
		return fmt.Errorf("writing HTML report: %w", err)
	}
	return nil
}

type htmlView struct {
	Title, Intro, Generated, Tool string
	Runs                          []htmlRun
	Columns                       []string
	CLIs, Versions                []string
	Families, Verdicts            []string
	// Problems are the new failures by cause, Failures their count;
	// Expected and ExpectedFailures those the baseline expects.
	Problems, Expected         []htmlProblem
	Failures, ExpectedFailures int
	Stale                      []htmlStale
	Rows                       []htmlRow
	CaseCount                  int
	// VersionGroups compare runs at different CLI versions.
	VersionGroups []htmlVersionGroup
	// Fidelity compares adapters' runs on the fakes with their runs on
	// the real CLIs (CompareFidelity), where there are both.
	Fidelity []AdapterFidelity
	// Data is the details of every case, as JSON (pageData).
	Data template.JS
}

// htmlVersionGroup is one adapter's runs of one CLI at several versions.
type htmlVersionGroup struct {
	Adapter, CLI                 string
	Columns                      []htmlVersionColumn
	Rows                         []htmlVersionRow
	Differ, Same, Partial, Total int
}

type htmlVersionColumn struct{ Label, Run string }

type htmlVersionRow struct {
	Case    string
	Differs bool
	Cells   []htmlVersionCell
	Checks  []htmlVersionCheck
}

type htmlVersionCell struct {
	Present                 bool
	Detail                  int
	Verdict, Version, Title string
}

type htmlVersionCheck struct {
	Check    string
	Verdicts []string
}

type htmlRun struct {
	Column, Profile, Hello, Agents, Supports string
	Seed                                     int64
	Shard, Started, Duration                 string
	Incomplete                               bool
	CLIVersions                              []string
	Strict, Passed                           bool
	Cases, New, Expected, Stale              int
	Counts                                   []htmlCount
}

type htmlCount struct {
	Verdict string
	N       int
}

// htmlProblem is one new problem as the page lists it.
type htmlProblem struct {
	Column, Check, Verdict, Requirement, Level string
	Example                                    htmlCaseLink
	Expected, Actual, Reproduce                string
	Follows                                    []htmlFollow
	Cases                                      []htmlCaseLink
	Baselined                                  int
}

type htmlFollow struct {
	Why    string
	Checks []htmlFollowCheck
}

type htmlFollowCheck struct {
	Check string
	Cases int
}

// htmlCaseLink is a case that opens its details.
type htmlCaseLink struct {
	ID     string
	Detail int
}

type htmlStale struct{ Column, Entry string }

type htmlRow struct {
	// Version shows the CLI versions; Versions lists them, space-separated
	// (the version filter matches one).
	CLI, Version, Versions, Case, Description string
	Cells                                     []htmlCell
}

// htmlCell is a cell of the matrix. Its column is its position in the
// row; Fam is its worst verdict per check family, one letter per family
// of conformance.Families ('-': none of its checks), for the family
// filter; the page's script writes its title when it is pointed at.
type htmlCell struct {
	Present       bool
	Detail        int
	Verdict, Fam  string
	New, Expected bool
}

// familyLetter is a verdict as a letter of htmlCell.Fam.
var familyLetter = map[conformance.Verdict]byte{
	conformance.Pass: 'P', conformance.Fail: 'F', conformance.NonStrict: 'N', conformance.Crash: 'C',
	conformance.Timeout: 'T', conformance.Informational: 'I', conformance.Skip: 'S',
}

func buildHTMLView(doc *Document, o HTMLOptions) (*htmlView, error) {
	m := buildMatrix(doc)
	gen := o.Generated
	if gen.IsZero() {
		gen = time.Now()
	}
	v := &htmlView{Title: o.Title, Intro: o.Intro, Generated: gen.UTC().Format("2006-01-02 15:04 UTC"), Columns: m.Columns}
	if v.Title == "" {
		v.Title = "agentconform results"
	}
	tools := map[string]bool{}
	data := newPageData(SourceBase(o.SourceBase))
	for _, f := range conformance.Families {
		v.Families = append(v.Families, string(f))
	}
	for _, vd := range verdictOrder {
		v.Verdicts = append(v.Verdicts, string(vd))
	}
	for i, r := range m.Runs {
		tools[strings.TrimSpace(r.Meta.Tool+" "+r.Meta.Version)] = true
		hr := htmlRun{Column: m.Columns[i], Seed: r.Meta.Seed, Shard: r.Meta.Shard, Strict: r.Meta.Strict, Passed: r.Gate.Passed,
			Cases: len(r.Cases), New: len(r.Gate.New), Expected: len(r.Gate.Expected), Stale: len(r.Gate.Stale),
			Duration: fmt.Sprintf("%.1fs", r.Meta.Duration), Incomplete: r.Meta.Incomplete}
		if !r.Meta.Started.IsZero() {
			hr.Started = r.Meta.Started.UTC().Format("2006-01-02 15:04 UTC")
		}
		if h := r.Meta.Hello; h != nil {
			hr.Profile = h.Profile
			hr.Hello = strings.TrimSpace(h.Name + " " + h.Version)
			hr.Agents = strings.Join(h.Agents, ", ")
			hr.Supports = strings.Join(h.Supports, ", ")
		}
		var cv []string
		for cli, vs := range r.Meta.CLIVersions {
			cv = append(cv, cli+" "+strings.Join(vs, ", "))
		}
		sort.Strings(cv)
		hr.CLIVersions = cv
		_, cases := verdictCounts(r)
		for _, vd := range verdictOrder {
			hr.Counts = append(hr.Counts, htmlCount{string(vd), cases[vd]})
		}
		v.Runs = append(v.Runs, hr)
		for _, s := range r.Gate.Stale {
			v.Stale = append(v.Stale, htmlStale{m.Columns[i], s})
		}
		data.run(m.Columns[i], r)
	}
	var tl []string
	for t := range tools {
		tl = append(tl, t)
	}
	sort.Strings(tl)
	v.Tool = strings.Join(tl, ", ")
	clis, versions := map[string]bool{}, map[string]bool{}
	detailOf := map[*conformance.CaseResult]int{}
	for _, row := range m.Rows {
		hr := htmlRow{CLI: row.CLI, Version: row.Version, Versions: strings.Join(row.Versions, " "), Case: row.Case, Description: row.Description}
		clis[row.CLI] = true
		for _, ver := range row.Versions {
			versions[ver] = true
		}
		for _, cell := range row.Cells {
			if cell == nil {
				hr.Cells = append(hr.Cells, htmlCell{})
				continue
			}
			id := data.detail(cell)
			detailOf[cell.Case] = id
			fam := make([]byte, len(conformance.Families))
			for i, f := range conformance.Families {
				fam[i] = '-'
				if l, ok := familyLetter[cell.Families[f]]; ok {
					fam[i] = l
				}
			}
			hr.Cells = append(hr.Cells, htmlCell{Present: true, Detail: id, Verdict: string(cell.Case.Verdict),
				Fam: string(fam), New: cell.New, Expected: cell.Expected})
		}
		v.Rows = append(v.Rows, hr)
	}
	v.CaseCount = len(m.Rows)
	for c := range clis {
		v.CLIs = append(v.CLIs, c)
	}
	sort.Strings(v.CLIs)
	for ver := range versions {
		v.Versions = append(v.Versions, ver)
	}
	sort.Slice(v.Versions, func(i, j int) bool { return fixtures.CompareVersions(v.Versions[i], v.Versions[j]) < 0 })
	v.VersionGroups = htmlVersions(buildVersionMatrix(doc, m), m, detailOf)
	v.Fidelity = CompareFidelity(doc).Adapters
	v.Failures = len(newFailures(m))
	v.Problems = htmlProblems(m, allNewProblems(m), detailOf)
	expected := allExpectedProblems(m)
	v.Expected, v.ExpectedFailures = htmlProblems(m, expected, detailOf), failureCount(expected)
	js, err := data.json()
	if err != nil {
		return nil, err
	}
	v.Data = js
	return v, nil
}

// htmlProblems are problems as the page lists them, each case a link to
// its details: a problem with new failures lists its new cases (and counts
// those the baseline expects), one the baseline expects all of lists them
// all.
func htmlProblems(m *matrix, problems []runProblem, detailOf map[*conformance.CaseResult]int) []htmlProblem {
	byID := map[string]map[string]int{}
	for i, r := range m.Runs {
		ids := map[string]int{}
		for _, c := range r.Cases {
			ids[c.ID] = detailOf[c]
		}
		byID[m.Columns[i]] = ids
	}
	var out []htmlProblem
	for _, rp := range problems {
		p, k, ids := rp.Problem, rp.result, byID[rp.Column]
		hp := htmlProblem{Column: rp.Column, Check: p.Check, Verdict: string(p.Verdict), Requirement: k.Requirement, Level: k.Level,
			Example: htmlCaseLink{p.Example, ids[p.Example]}, Expected: clipText(k.Expected, 1500), Actual: clipText(k.Actual, 1500),
			Reproduce: p.Reproduce}
		cases := p.newCases()
		if p.New() == 0 {
			cases = p.Cases
		} else {
			hp.Baselined = len(p.Expected)
		}
		for _, c := range cases {
			hp.Cases = append(hp.Cases, htmlCaseLink{c, ids[c]})
		}
		for _, why := range followReasons(p) {
			f := htmlFollow{Why: why}
			for _, c := range p.Follows {
				if c.Why == why {
					f.Checks = append(f.Checks, htmlFollowCheck{c.Check, len(c.Cases)})
				}
			}
			hp.Follows = append(hp.Follows, f)
		}
		out = append(out, hp)
	}
	return out
}

// htmlVersions is the version matrix for the page; a cell opens the
// case's details.
func htmlVersions(vm *versionMatrix, m *matrix, detailOf map[*conformance.CaseResult]int) []htmlVersionGroup {
	var out []htmlVersionGroup
	for _, g := range vm.Groups {
		hg := htmlVersionGroup{Adapter: g.Adapter, CLI: g.CLI, Differ: g.Differ, Same: g.Same, Partial: g.Partial, Total: len(g.Rows)}
		for _, c := range g.Columns {
			hg.Columns = append(hg.Columns, htmlVersionColumn{Label: c.Label, Run: m.Columns[c.Col]})
		}
		for _, r := range g.Rows {
			hr := htmlVersionRow{Case: r.Case, Differs: r.Differs}
			for i, cr := range r.Cells {
				if cr == nil {
					hr.Cells = append(hr.Cells, htmlVersionCell{})
					continue
				}
				title := string(cr.Verdict) + " · " + r.Case + " · " + g.Columns[i].Label
				if cr.Verdict == conformance.Skip {
					title += " · " + skipWhy(cr)
				}
				hr.Cells = append(hr.Cells, htmlVersionCell{Present: true, Detail: detailOf[cr], Verdict: string(cr.Verdict),
					Version: g.Columns[i].cellVersion(cr), Title: title})
			}
			for _, k := range r.Checks {
				hk := htmlVersionCheck{Check: k.Check}
				for _, vd := range k.Verdicts {
					hk.Verdicts = append(hk.Verdicts, string(vd))
				}
				hr.Checks = append(hr.Checks, hk)
			}
			hg.Rows = append(hg.Rows, hr)
		}
		out = append(out, hg)
	}
	return out
}

func verdictLabel(v string) string {
	if v == string(conformance.Informational) {
		return "INFO"
	}
	return v
}

var pageFuncs = template.FuncMap{"label": verdictLabel, "agreement": func(a AdapterFidelity) float64 { return 100 * a.Agreement() }}

// cspHash is the CSP source expression ('sha256-...') that allows the
// inline <style> or <script> element whose text is exactly s.
func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// pageCSP is the Content-Security-Policy of a self-contained page whose
// only style and script are the inline ones with text css and js: nothing
// else loads or runs (no other script, no inline event handler or style
// attribute, no image, font, frame, connection, form target or <base>),
// so text that came from an adapter or a CLI cannot do anything even if
// it ever got past the escaping.
func pageCSP(css, js string) template.HTMLAttr {
	return template.HTMLAttr("default-src 'none'; script-src " + cspHash(js) + "; style-src " + cspHash(css) +
		"; img-src 'none'; font-src 'none'; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'")
}

// resultsCSP is the policy of the results page.
var resultsCSP = pageCSP(pageCSS, resultsJS)

// pageCSS is shared by the results page and the validate page.
const pageCSS = `
:root{--fg:#1f2328;--mute:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;padding:1rem 1.5rem 3rem;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.15rem;margin:1.6rem 0 .5rem}h3{font-size:1rem;margin:1rem 0 .3rem}
.sub{color:var(--mute);margin:.2rem 0 1rem}
table{border-collapse:collapse}
th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:var(--soft);border:1px solid var(--line);padding:.5rem;overflow:auto;max-height:28rem;white-space:pre-wrap;word-break:break-word;margin:.3rem 0}
.v-PASS{background:#dafbe1;color:#116329}.v-FAIL{background:#ffebe9;color:#a40e26}.v-CRASH{background:#a40e26;color:#fff}
.v-TIMEOUT{background:#fff1e5;color:#953800}.v-NON-STRICT{background:#fff8c5;color:#7d4e00}.v-INFORMATIONAL{background:#ddf4ff;color:#0550ae}
.v-SKIP{background:#f6f8fa;color:#818b98}.none{color:#c4cbd3;text-align:center}
.badge{display:inline-block;padding:0 .4rem;border-radius:.6rem;font-size:12px;font-weight:600}
.ok{color:#116329;font-weight:600}.bad{color:#a40e26;font-weight:600}
#m td.c{cursor:pointer;text-align:center;font-size:12px;font-weight:600;min-width:6.5rem;white-space:nowrap}
#m td.c:hover,#m td.c:focus{outline:2px solid #0969da;outline-offset:-2px}
#m td.new{box-shadow:inset 0 0 0 2px #a40e26}
#m td.exp{background-image:repeating-linear-gradient(135deg,transparent 0 6px,rgba(255,255,255,.55) 6px 12px)}
#m td.case{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
#m thead th{position:sticky;top:0;z-index:1}
.filters{display:flex;flex-wrap:wrap;gap:.6rem;align-items:end;margin:.5rem 0 .8rem}
.filters label{display:flex;flex-direction:column;font-size:12px;color:var(--mute)}
.filters select,.filters input{font:inherit;padding:.15rem .3rem}
button.link{background:none;border:0;padding:0;color:#0969da;cursor:pointer;font:inherit;text-align:left}
button.link:hover{text-decoration:underline}
dialog{width:min(1100px,96vw);max-height:92vh;border:1px solid var(--line);border-radius:8px;padding:0;box-shadow:0 10px 40px rgba(0,0,0,.25)}
dialog::backdrop{background:rgba(0,0,0,.35)}
.dlg-head{display:flex;justify-content:space-between;align-items:center;padding:.5rem 1rem;border-bottom:1px solid var(--line);background:var(--soft);position:sticky;top:0}
.dlg-body{padding:.4rem 1rem 1rem}
.check{border:1px solid var(--line);border-radius:6px;margin:.6rem 0;padding:.4rem .7rem}
.check h3{margin:.1rem 0 .3rem;font-size:.95rem}
.kv{display:grid;grid-template-columns:7rem 1fr;gap:.15rem .8rem;margin:.3rem 0}
.kv dt{color:var(--mute)}.kv dd{margin:0;white-space:pre-wrap;word-break:break-word}
.diff .ins{background:#dafbe1;display:block}.diff .del{background:#ffebe9;display:block}.diff .ctx{display:block}
.wire .t{color:var(--mute);display:inline-block;min-width:5.5rem}
.muted{color:var(--mute)}
table.passed{margin:.4rem 0;width:100%}table.passed td{border-width:0 0 1px 0;padding:.15rem .4rem}
table.passed td:nth-child(-n+2){width:1%;white-space:nowrap}
#runs td.when{white-space:nowrap}
ol.problems{padding-left:1.6rem}#expected summary h2{display:inline}ol.problems>li{margin:.2rem 0 .8rem}ol.problems .kv{margin:.2rem 0}p.cases{margin:.3rem 0;line-height:1.9}
.vm{margin:.3rem 0 .8rem}
.vm td.c{cursor:pointer;text-align:center;font-size:12px;font-weight:600;min-width:6.5rem;white-space:nowrap}
.vm td.c:hover,.vm td.c:focus{outline:2px solid #0969da;outline-offset:-2px}
.vm td.case{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.vm tr.differs td.case{font-weight:700}
.vm tr.chk td{font-size:12px;text-align:center}.vm tr.chk td.case{text-align:left;padding-left:1.4rem;font-weight:400}
`

// resultsJS makes the matrix filterable and opens a case's details: it
// builds them from the page's data block (pageData) when the case is
// opened, putting every text from the data into the page as text (text
// nodes, textContent), never as markup; the only attribute it sets from
// the data is a source's href, which the server checked (safeURL). A
// matrix cell's column is its place in the row (after CLI, version and
// case); its verdict and the marks new and exp it was written with (its
// class) are kept when a family filter first recolors it; its title is
// written when it is pointed at. (No
// comments inside the script: html/template drops them, and the page's
// CSP holds the hash of the script as written here.)
const resultsJS = `
(function(){
  var $ = function(id){return document.getElementById(id);};
  var dlg = $('dlg'), body = $('dlg-body'), title = $('dlg-title'), data = null;
  function D(){ if (!data) data = JSON.parse($('data').textContent); return data; }
  function str(i){ return i ? D().s[i - 1] : ''; }
  function el(tag, cls, text){ var e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e; }
  function add(p){
    for (var i = 1; i < arguments.length; i++) { var c = arguments[i]; if (c != null) p.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); }
    return p;
  }
  function label(v){ return v === 'INFORMATIONAL' ? 'INFO' : v; }
  function badge(v){ return el('span', 'badge v-' + v, label(v)); }
  function kv(dl, k, v, cls){ add(dl, el('dt', null, k), add(el('dd', cls), v)); }
  function source(parts){
    var f = document.createDocumentFragment();
    for (var i = 0; i < parts.length; i++) {
      if (i) add(f, '; ');
      if (parts[i][1]) { var a = el('a', null, parts[i][0]); a.setAttribute('href', parts[i][1]); add(f, a); } else add(f, parts[i][0]);
    }
    return f;
  }
  function details(id){
    var d = D(), c = d.d[id];
    if (!c) return null;
    var run = d.r[c.r], f = document.createDocumentFragment();
    var head = add(el('p'), badge(c.v));
    if (c.n) add(head, ' ', el('span', 'bad', 'new failure'));
    if (c.e) add(head, ' ', el('span', 'muted', 'failure expected by the baseline'));
    add(head, ' · ' + c.t + ' · ' + (c.a || '') + (c.ver ? ' ' + c.ver : ''));
    if (c.fx) add(head, ' · fixture ', el('code', null, c.fx));
    if (c.fl) add(head, ' · faults ', el('code', null, c.fl));
    add(f, head);
    if (c.ds) add(f, el('p', null, str(c.ds)));
    var dl = el('dl', 'kv');
    kv(dl, 'adapter', str(c.ad));
    kv(dl, 'run', run.tool + ', seed ' + run.seed + (run.shard ? ', shard ' + run.shard : '') + (run.started ? ', started ' + run.started : ''));
    if (c.dir) kv(dl, 'kept in', c.dir, 'mono');
    add(f, dl, el('h3', null, 'Reproduce'), el('pre', null, c.rp != null ? c.rp : run.rp[0] + c.id + run.rp[1]), el('h3', null, 'Checks'));
    var passed = el('tbody'), skipped = el('ul'), np = 0, ns = 0, ks = d.l[c.k];
    for (var i = 0; i < ks.length; i++) {
      var k = ks[i], cat = d.k[k[0]], v = d.v[k[1]];
      if (v === 'SKIP') { ns++; add(skipped, add(el('li'), el('code', null, cat[0]), ' ', el('span', 'muted', '— ' + str(k[2])))); continue; }
      if (v === 'PASS') {
        np++;
        add(passed, add(el('tr'), add(el('td'), badge('PASS')), add(el('td'), el('code', null, cat[0])), add(el('td'), cat[3] + ' ', el('span', 'muted', '(' + cat[2] + ')'))));
        continue;
      }
      var fl = k[5] || 0, box = el('div', 'check');
      add(box, add(el('h3'), badge(v), ' ', el('code', null, cat[0]), ' ',
        el('span', 'muted', cat[2] + ' · ' + cat[1] + (fl & 1 ? ' · expected by the baseline' : '') + (fl & 2 ? ' · new failure' : ''))));
      var kd = el('dl', 'kv');
      kv(kd, 'requirement', cat[3]);
      kv(kd, 'source', source(cat[4] || []));
      if (k[3]) kv(kd, 'expected', str(k[3]), 'mono');
      if (k[2]) kv(kd, 'actual', str(k[2]), 'mono');
      add(box, kd);
      if (k[4]) {
        var pre = el('pre', 'diff'), lines = k[4].replace(/\n+$/, '').split('\n');
        for (var j = 0; j < lines.length; j++) add(pre, el('span', lines[j][0] === '+' ? 'ins' : lines[j][0] === '-' ? 'del' : 'ctx', lines[j]));
        add(box, pre);
      }
      add(f, box);
    }
    if (np) add(f, add(el('table', 'passed'), passed));
    if (ns) add(f, add(el('details'), el('summary', null, ns + ' checks not applicable'), skipped));
    add(f, el('h3', null, 'Wire'));
    if (c.w) {
      var w = el('pre', 'wire'), wl = c.w.split('\n');
      for (var j = 0; j < wl.length; j++) {
        if (!wl[j]) continue;
        var m = /^\s*\d+\.\d{3}s /.exec(wl[j]);
        if (m) add(w, el('span', 't', m[0].trim()), ' ' + wl[j].slice(m[0].length) + '\n'); else add(w, wl[j] + '\n');
      }
      add(f, w);
    } else add(f, el('p', 'muted', 'No wire excerpt (the case did not run).'));
    return {body: f, title: c.id + ' · ' + run.col};
  }
  function open(id){
    var t = details(+id);
    if (!t) return;
    body.textContent = '';
    body.appendChild(t.body);
    title.textContent = t.title;
    if (!dlg.open) { if (dlg.showModal) dlg.showModal(); else dlg.setAttribute('open', ''); }
    if (history.replaceState) history.replaceState(null, '', '#d' + id);
  }
  function close(){ if (dlg.open) { if (dlg.close) dlg.close(); else dlg.removeAttribute('open'); } }
  $('dlg-close').addEventListener('click', close);
  dlg.addEventListener('close', function(){ if (history.replaceState) history.replaceState(null, '', location.pathname + location.search); });
  document.addEventListener('click', function(e){
    var el = e.target.closest ? e.target.closest('[data-d]') : null;
    if (el) { e.preventDefault(); open(el.getAttribute('data-d')); }
  });
  document.addEventListener('keydown', function(e){
    if (e.key !== 'Enter' && e.key !== ' ') return;
    var el = e.target.closest ? e.target.closest('td[data-d]') : null;
    if (el) { e.preventDefault(); open(el.getAttribute('data-d')); }
  });
  var lead = 3, letters = {P:'PASS', F:'FAIL', N:'NON-STRICT', C:'CRASH', T:'TIMEOUT', I:'INFORMATIONAL', S:'SKIP', '-':'SKIP'};
  function marks(td){
    if (td.x == null) {
      td.x = (td.classList.contains('new') ? ' new' : '') + (td.classList.contains('exp') ? ' exp' : '');
      td.v = /\bv-(\S+)/.exec(td.className)[1];
    }
    return td.x;
  }
  function cellTitle(td){
    var tr = td.parentNode, m = marks(td), th = $('m').tHead.rows[0].cells[td.cellIndex];
    return td.v + (m.indexOf('exp') >= 0 ? ' (expected by the baseline)' : m.indexOf('new') >= 0 ? ' (new failure)' : '') +
      ' · ' + th.textContent + ' · ' + tr.getAttribute('data-case');
  }
  function titled(e){
    var td = e.target.closest ? e.target.closest('#m td[data-d]') : null;
    if (td && !td.title) td.title = cellTitle(td);
  }
  document.addEventListener('mouseover', titled);
  document.addEventListener('focusin', titled);
  var fa = $('f-adapter'), fc = $('f-cli'), fv = $('f-version'), ff = $('f-family'), fd = $('f-verdict'), fs = $('f-search');
  var failing = {FAIL:1, CRASH:1, TIMEOUT:1};
  function apply(){
    var a = fa.value, c = fc.value, ver = fv.value, fam = ff.selectedIndex - 1, vd = fd.value, s = fs.value.toLowerCase();
    var heads = $('m').tHead.rows[0].cells;
    for (var i = lead; i < heads.length; i++) heads[i].hidden = a !== '' && String(i - lead) !== a;
    var rows = $('m').tBodies[0].rows, shown = 0;
    for (var r = 0; r < rows.length; r++) {
      var tr = rows[r], ok = (c === '' || tr.getAttribute('data-cli') === c) && (ver === '' || (' ' + tr.getAttribute('data-version') + ' ').indexOf(' ' + ver + ' ') >= 0) &&
        (s === '' || tr.getAttribute('data-case').toLowerCase().indexOf(s) >= 0);
      var any = vd === '', cells = tr.cells;
      for (var k = lead; k < cells.length; k++) {
        var td = cells[k];
        td.hidden = a !== '' && String(k - lead) !== a;
        if (!td.hasAttribute('data-d')) continue;
        var m = marks(td), v = td.v;
        if (fam >= 0) v = letters[td.getAttribute('data-f').charAt(fam)] || 'SKIP';
        td.className = 'c v-' + v + m;
        td.textContent = v === 'INFORMATIONAL' ? 'INFO' : v;
        if (!td.hidden && (v === vd || (vd === 'failing' && failing[v]) || (vd === 'new' && m.indexOf('new') >= 0 && (fam < 0 || failing[v])))) any = true;
      }
      tr.hidden = !(ok && any);
      if (!tr.hidden) shown++;
    }
    $('f-count').textContent = shown + ' of ' + rows.length + ' cases shown';
  }
  [fa, fc, fv, ff, fd].forEach(function(el){ el.addEventListener('change', apply); });
  fs.addEventListener('input', apply);
  if (fa.value || fc.value || fv.value || ff.value || fd.value || fs.value) apply();
  else $('f-count').textContent = $('m').tBodies[0].rows.length + ' of ' + $('m').tBodies[0].rows.length + ' cases shown';
  var m = /^#d(\d+)$/.exec(location.hash);
  if (m) open(m[1]);
})();
`

var resultsPage = template.Must(template.New("results").Funcs(pageFuncs).Funcs(template.FuncMap{"csp": func() template.HTMLAttr { return resultsCSP }}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="{{.Tool}}">
<title>{{.Title}}</title>
<style>` + pageCSS + `</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<p class="sub">Generated {{.Generated}}{{if .Tool}} by {{.Tool}}{{end}}. {{.CaseCount}} cases × {{len .Columns}} adapter runs. Click a cell for the case's checks, diff and wire log.</p>
{{if .Intro}}<p>{{.Intro}}</p>{{end}}
</header>
<section id="runs">
<h2>Runs</h2>
<table>
<thead><tr><th>adapter</th><th>declares</th><th>CLI versions (fixtures)</th><th>cases</th>{{range $.Verdicts}}<th class="v-{{.}}">{{label .}}</th>{{end}}<th>new</th><th>baseline</th><th>stale</th><th>gate</th></tr></thead>
<tbody>
{{range .Runs}}<tr><td><b>{{.Column}}</b><br><span class="muted when">{{.Started}} · {{.Duration}} · seed {{.Seed}}{{if .Shard}} · shard {{.Shard}}{{end}}{{if .Strict}} · strict{{end}}{{if .Incomplete}} · <b>incomplete</b> (interrupted){{end}}</span></td><td title="{{if .Supports}}supports {{.Supports}}{{end}}">{{.Hello}}{{if .Profile}}<br><span class="muted">{{.Profile}} profile</span>{{end}}</td><td>{{range .CLIVersions}}{{.}}<br>{{end}}</td><td class="n">{{.Cases}}</td>{{range .Counts}}<td class="n">{{.N}}</td>{{end}}<td class="n">{{.New}}</td><td class="n">{{.Expected}}</td><td class="n">{{.Stale}}</td><td>{{if .Passed}}<span class="ok">pass</span>{{else}}<span class="bad">fail</span>{{end}}</td></tr>
{{end}}</tbody>
</table>
<p class="muted">Cases by their worst check verdict; new, baseline and stale count checks.</p>
</section>
{{if .Problems}}<section id="new">
<h2>New failures: {{.Failures}} in {{len .Problems}} problem{{if ne (len .Problems) 1}}s{{end}}</h2>
<p class="muted">Each problem is one check failing for the same reason across cases (what differs from case to case, such as ids, numbers, quoted texts and paths, set aside), the one with the most cases first; failures that follow from it in its cases are listed with it. Click a case for its checks, diff and wire log.</p>
{{template "problems" .Problems}}
</section>{{end}}{{if .Expected}}
<section id="expected">
<details{{if not .Problems}} open{{end}}><summary><h2>Failures the baseline expects: {{.ExpectedFailures}} in {{len .Expected}} problem{{if ne (len .Expected) 1}}s{{end}}</h2></summary>
<p class="muted">Known failures, listed in the baseline: they do not fail the gate. Grouped as the new failures are.</p>
{{template "problems" .Expected}}
</details>
</section>{{end}}
{{if .Stale}}<section id="stale">
<h2>Stale baseline entries ({{len .Stale}})</h2>
<p>These no longer fail: delete them from the baseline.</p>
<ul>{{range .Stale}}<li><code>{{.Entry}}</code> · {{.Column}}</li>{{end}}</ul>
</section>{{end}}{{if .VersionGroups}}
<section id="versions">
<h2>CLI versions</h2>
<p>The same cases replayed from fixtures of different CLI versions (<code>agentconform run --cli-version</code>), per adapter and CLI: the cases whose verdict differs between versions, each with the checks that make the difference (the full table below). Click a cell for the case's checks, diff and wire log.</p>
{{range .VersionGroups}}<h3>{{.Adapter}} · {{.CLI}}</h3>
<p class="muted">{{.Total}} cases: {{.Differ}} with a different verdict at another version, {{.Same}} with the same verdict at every version they ran at, {{.Partial}} that ran at one version only (absent or SKIP at the others: not captured at that version, not applicable, or not selected).</p>
{{if .Differ}}<table class="vm">{{template "vhead" .}}<tbody>
{{range .Rows}}{{if .Differs}}{{template "vrow" .}}{{end}}{{end}}</tbody></table>{{end}}
<details><summary>every case of {{.CLI}} at every version ({{.Total}})</summary><table class="vm">{{template "vhead" .}}<tbody>
{{range .Rows}}{{template "vrow" .}}{{end}}</tbody></table></details>
{{end}}</section>{{end}}{{if .Fidelity}}
<section id="fidelity">
<h2>Fake vs real CLIs</h2>
<p>The adapters that ran on the fake CLIs and on the real ones (<code>agentconform run --cli fake,real</code>): the (case, check) pairs either run judged, and every pair whose verdicts differ. A difference is a fidelity bug of a fake, or a real CLI that does not do the same thing every run (docs/protocols/fidelity.md).</p>
<table class="fid"><thead><tr><th>adapter</th><th>cases</th><th>only fakes</th><th>pairs judged</th><th>agree</th><th>differ</th><th>contradict</th><th>agreement</th></tr></thead><tbody>
{{range .Fidelity}}<tr><td>{{.Adapter}}</td><td>{{.Cases}}</td><td>{{.RealSkipped}}</td><td>{{.Pairs}}</td><td>{{.Agree}}</td><td>{{len .Differ}}</td><td>{{.Contradict}}</td><td>{{printf "%.1f%%" (agreement .)}}</td></tr>{{end}}</tbody></table>
{{range .Fidelity}}{{if .Differ}}<h3>{{.Adapter}}</h3><table class="fid"><thead><tr><th>case</th><th>check</th><th>fake</th><th>real</th><th>real found</th></tr></thead><tbody>
{{range .Differ}}<tr><td><code>{{.Case}}</code></td><td><code>{{.Check}}</code></td><td class="v-{{.Fake}}">{{label (print .Fake)}}</td><td class="v-{{.Real}}">{{label (print .Real)}}</td><td>{{.RealActual}}</td></tr>{{end}}</tbody></table>{{end}}{{end}}
</section>{{end}}
<section id="matrix">
<h2>Matrix</h2>
<div class="filters" id="filters">
<label>adapter<select id="f-adapter"><option value="">all</option>{{range $i, $c := .Columns}}<option value="{{$i}}">{{$c}}</option>{{end}}</select></label>
<label>CLI<select id="f-cli"><option value="">all</option>{{range .CLIs}}<option>{{.}}</option>{{end}}</select></label>
<label>CLI version<select id="f-version"><option value="">all</option>{{range .Versions}}<option>{{.}}</option>{{end}}</select></label>
<label>check family<select id="f-family"><option value="">all</option>{{range .Families}}<option>{{.}}</option>{{end}}</select></label>
<label>verdict<select id="f-verdict"><option value="">any</option><option value="new">new failure</option><option value="failing">failing</option>{{range .Verdicts}}<option value="{{.}}">{{.}}</option>{{end}}</select></label>
<label>case<input id="f-search" type="search" placeholder="filter case IDs"></label>
<span class="muted" id="f-count"></span>
</div>
<table id="m">
<thead><tr><th>CLI</th><th>version</th><th>case</th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr data-cli="{{.CLI}}" data-version="{{.Versions}}" data-case="{{.Case}}"><td>{{.CLI}}</td><td>{{if .Version}}{{.Version}}{{else}}<span class="muted">—</span>{{end}}</td><td class="case" title="{{.Description}}">{{.Case}}</td>{{range .Cells}}{{if .Present}}<td class="c v-{{.Verdict}}{{if .New}} new{{end}}{{if .Expected}} exp{{end}}" data-d="{{.Detail}}" data-f="{{.Fam}}" tabindex="0">{{label .Verdict}}</td>{{else}}<td class="none" title="not run">·</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
<p class="muted">A red outline marks a new failure; stripes mark failures the baseline expects; · marks a case the adapter did not run.</p>
</section>
<dialog id="dlg" aria-labelledby="dlg-title">
<div class="dlg-head"><strong id="dlg-title"></strong><button type="button" id="dlg-close">Close</button></div>
<div class="dlg-body" id="dlg-body"></div>
</dialog>
<script type="application/json" id="data">{{.Data}}</script>
<script>` + resultsJS + `</script>
</body>
</html>
{{define "problems"}}<ol class="problems">
{{range .}}<li><div><span class="badge v-{{.Verdict}}">{{label .Verdict}}</span> <code>{{.Check}}</code> in {{if eq (len .Cases) 1}}<button type="button" class="link" data-d="{{.Example.Detail}}"><code>{{.Example.ID}}</code></button>{{else}}<b>{{len .Cases}} cases</b>{{end}} · {{.Column}}{{if .Baselined}} <span class="muted">(and {{.Baselined}} expected by the baseline)</span>{{end}} <span class="muted">— {{.Requirement}} ({{.Level}})</span></div>
<dl class="kv">{{if gt (len .Cases) 1}}<dt>in</dt><dd><button type="button" class="link" data-d="{{.Example.Detail}}"><code>{{.Example.ID}}</code></button> <span class="muted">(one of them)</span></dd>{{end}}{{if .Expected}}<dt>expected</dt><dd class="mono">{{.Expected}}</dd>{{end}}{{if .Actual}}<dt>actual</dt><dd class="mono">{{.Actual}}</dd>{{end}}{{range .Follows}}<dt>with it</dt><dd>{{.Why}}: {{range $i, $c := .Checks}}{{if $i}}, {{end}}<code>{{$c.Check}}</code> in {{$c.Cases}} case{{if ne $c.Cases 1}}s{{end}}{{end}}</dd>{{end}}<dt>reproduce</dt><dd class="mono">{{.Reproduce}}</dd></dl>
{{if gt (len .Cases) 1}}<details><summary>its {{len .Cases}} cases</summary><p class="cases">{{range .Cases}}<button type="button" class="link" data-d="{{.Detail}}"><code>{{.ID}}</code></button> {{end}}</p></details>{{end}}</li>
{{end}}</ol>{{end}}
{{- define "vhead"}}<thead><tr><th>case</th>{{range .Columns}}<th title="{{.Run}}">{{.Label}}</th>{{end}}</tr></thead>{{end}}
{{define "vrow"}}<tr{{if .Differs}} class="differs"{{end}}><td class="case">{{.Case}}</td>{{range .Cells}}{{if .Present}}<td class="c v-{{.Verdict}}" data-d="{{.Detail}}" title="{{.Title}}" tabindex="0">{{label .Verdict}}{{if .Version}} <span class="muted">{{.Version}}</span>{{end}}</td>{{else}}<td class="none" title="not run">·</td>{{end}}{{end}}</tr>
{{range .Checks}}<tr class="chk"><td class="case">↳ {{.Check}}</td>{{range .Verdicts}}{{if .}}<td class="v-{{.}}">{{label .}}</td>{{else}}<td class="none">·</td>{{end}}{{end}}</tr>
{{end}}{{end}}
{{- /* the page ends with </html> and a newline */ -}}`))
