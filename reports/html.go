package reports

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"regexp"
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
// verdict counts, the new failures, and the matrix of adapters × CLI × CLI
// version × case colored by verdict, filterable by adapter, CLI, version,
// check family, verdict and case name. Each cell opens the case's details:
// every applicable check with its requirement, expected, actual and diff,
// the reproduce command, and the wire excerpt with its timing. Everything
// that comes from results (transcripts, adapters' output, names) is
// escaped by html/template; the page's script only moves that escaped
// content around.
func WriteResultsHTML(w io.Writer, doc *Document, o HTMLOptions) error {
	doc = visibleCopy(doc)
	o.Title, o.Intro = visible(o.Title), visible(o.Intro)
	v := buildHTMLView(doc, o)
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
	Fails                         []htmlFail
	Stale                         []htmlStale
	Rows                          []htmlRow
	Details                       []*htmlDetail
	CaseCount                     int
	// VersionGroups compare runs at different CLI versions.
	VersionGroups []htmlVersionGroup
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

type htmlFail struct {
	Detail                          int
	Column, Case, Check, Verdict, R string
}

type htmlStale struct{ Column, Entry string }

type htmlRow struct {
	// Version shows the CLI versions; Versions lists them, space-separated
	// (the version filter matches one).
	CLI, Version, Versions, Case, Description string
	Cells                                     []htmlCell
}

type htmlCell struct {
	Present         bool
	Col, Detail     int
	Verdict, Fam    string
	New, Expected   bool
	Title, Duration string
}

type htmlDetail struct {
	ID                                                  int
	Column, Case, Description, Verdict, Duration, Agent string
	Version, Fixture, Faults, Reproduce, Dir            string
	Wire                                                []htmlWireLine
	Checks                                              []htmlCheck
	Passed                                              []htmlCheck
	Skipped                                             []htmlCheck
	New, Expected                                       bool
	RunStarted, RunSeed, RunShard, ToolVersion, Adapter string
}

type htmlCheck struct {
	Check, Family, Level, Verdict, Requirement, Source, Expected, Actual string
	Sources                                                              []sourcePart
	Diff                                                                 []htmlDiffLine
	Baselined, New                                                       bool
}

type htmlDiffLine struct{ Class, Text string }

type htmlWireLine struct{ Time, Text string }

var wireTime = regexp.MustCompile(`^\s*\d+\.\d{3}s `)

func buildHTMLView(doc *Document, o HTMLOptions) *htmlView {
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
	base := SourceBase(o.SourceBase)
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
		for col, cell := range row.Cells {
			if cell == nil {
				hr.Cells = append(hr.Cells, htmlCell{Col: col})
				continue
			}
			d := buildDetail(len(v.Details), m.Columns[col], row, cell, base)
			v.Details = append(v.Details, d)
			detailOf[cell.Case] = d.ID
			var fam []string
			for _, f := range conformance.Families {
				if fv, ok := cell.Families[f]; ok {
					fam = append(fam, string(f)+":"+string(fv))
				}
			}
			title := string(cell.Case.Verdict)
			if cell.Expected {
				title += " (expected by the baseline)"
			} else if cell.New {
				title += " (new failure)"
			}
			hr.Cells = append(hr.Cells, htmlCell{Present: true, Col: col, Detail: d.ID, Verdict: string(cell.Case.Verdict),
				Fam: strings.Join(fam, " "), New: cell.New, Expected: cell.Expected, Title: title + " · " + m.Columns[col] + " · " + row.Case,
				Duration: fmt.Sprintf("%.2fs", cell.Case.Duration)})
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
	for _, f := range newFailures(m) {
		v.Fails = append(v.Fails, htmlFail{Detail: detailOf[f.Case], Column: f.Column, Case: f.Case.ID, Check: f.Check.Check,
			Verdict: string(f.Check.Verdict), R: f.Check.Requirement})
	}
	return v
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

func buildDetail(id int, column string, row *matrixRow, cell *matrixCell, base string) *htmlDetail {
	c, r := cell.Case, cell.Run
	d := &htmlDetail{ID: id, Column: column, Case: c.ID, Description: c.Description, Verdict: string(c.Verdict),
		Duration: fmt.Sprintf("%.3fs", c.Duration), Agent: c.Agent, Version: caseVersion(c), Fixture: c.Fixture, Faults: c.Faults,
		Reproduce: c.Reproduce, Dir: c.Dir, New: cell.New, Expected: cell.Expected, RunSeed: fmt.Sprint(r.Meta.Seed),
		RunShard: r.Meta.Shard, ToolVersion: strings.TrimSpace(r.Meta.Tool + " " + r.Meta.Version), Adapter: c.Adapter}
	if !r.Meta.Started.IsZero() {
		d.RunStarted = r.Meta.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	for _, l := range strings.Split(strings.TrimRight(c.Wire, "\n"), "\n") {
		if l == "" {
			continue
		}
		if loc := wireTime.FindStringIndex(l); loc != nil {
			d.Wire = append(d.Wire, htmlWireLine{Time: strings.TrimSpace(l[:loc[1]]), Text: l[loc[1]:]})
		} else {
			d.Wire = append(d.Wire, htmlWireLine{Text: l})
		}
	}
	checks := append([]conformance.CheckResult(nil), c.Checks...)
	sort.SliceStable(checks, func(i, j int) bool { return rankOf(checks[i].Verdict) > rankOf(checks[j].Verdict) })
	for _, k := range checks {
		hc := htmlCheck{Check: k.Check, Family: string(k.Family), Level: k.Level, Verdict: string(k.Verdict), Requirement: k.Requirement,
			Source: k.Source, Sources: sourceParts(k.Source, base), Expected: k.Expected, Actual: k.Actual, Baselined: k.Baselined, New: k.Verdict.Failed(r.Meta.Strict) && !k.Baselined}
		switch k.Verdict {
		case conformance.Skip:
			d.Skipped = append(d.Skipped, hc)
			continue
		case conformance.Pass:
			d.Passed = append(d.Passed, hc)
			continue
		}
		diff := k.Diff
		if diff == "" && k.Expected != "" && k.Actual != "" && k.Verdict != conformance.Pass {
			diff = lineDiff(k.Expected, k.Actual)
		}
		for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
			if diff == "" {
				break
			}
			cls := "ctx"
			switch {
			case strings.HasPrefix(l, "+"):
				cls = "ins"
			case strings.HasPrefix(l, "-"):
				cls = "del"
			}
			hc.Diff = append(hc.Diff, htmlDiffLine{cls, l})
		}
		d.Checks = append(d.Checks, hc)
	}
	return d
}

func verdictLabel(v string) string {
	if v == string(conformance.Informational) {
		return "INFO"
	}
	return v
}

var pageFuncs = template.FuncMap{"label": verdictLabel}

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
ul.fails{padding-left:1.2rem}ul.fails li{margin:.15rem 0}
.vm{margin:.3rem 0 .8rem}
.vm td.c{cursor:pointer;text-align:center;font-size:12px;font-weight:600;min-width:6.5rem;white-space:nowrap}
.vm td.c:hover,.vm td.c:focus{outline:2px solid #0969da;outline-offset:-2px}
.vm td.case{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.vm tr.differs td.case{font-weight:700}
.vm tr.chk td{font-size:12px;text-align:center}.vm tr.chk td.case{text-align:left;padding-left:1.4rem;font-weight:400}
`

// resultsJS makes the matrix filterable and opens a cell's details; it
// reads only attributes and templates the server wrote, escaped.
const resultsJS = `
(function(){
  var $ = function(id){return document.getElementById(id);};
  var dlg = $('dlg'), body = $('dlg-body'), title = $('dlg-title');
  function open(id){
    var t = $('d' + id);
    if (!t) return;
    body.textContent = '';
    body.appendChild(t.content.cloneNode(true));
    title.textContent = t.getAttribute('data-title');
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
  var fa = $('f-adapter'), fc = $('f-cli'), fv = $('f-version'), ff = $('f-family'), fd = $('f-verdict'), fs = $('f-search');
  var failing = {FAIL:1, CRASH:1, TIMEOUT:1};
  function famVerdict(spec, fam){
    var parts = spec.split(' ');
    for (var i = 0; i < parts.length; i++) { var kv = parts[i].split(':'); if (kv[0] === fam) return kv[1]; }
    return '';
  }
  function apply(){
    var a = fa.value, c = fc.value, ver = fv.value, fam = ff.value, vd = fd.value, s = fs.value.toLowerCase();
    var cols = document.querySelectorAll('#m [data-col]');
    for (var i = 0; i < cols.length; i++) cols[i].hidden = a !== '' && cols[i].getAttribute('data-col') !== a;
    var rows = document.querySelectorAll('#m tbody tr'), shown = 0;
    for (var r = 0; r < rows.length; r++) {
      var tr = rows[r], ok = (c === '' || tr.getAttribute('data-cli') === c) && (ver === '' || (' ' + tr.getAttribute('data-version') + ' ').indexOf(' ' + ver + ' ') >= 0) &&
        (s === '' || tr.getAttribute('data-case').toLowerCase().indexOf(s) >= 0);
      var any = vd === '', cells = tr.querySelectorAll('td[data-v]');
      for (var k = 0; k < cells.length; k++) {
        var td = cells[k], v = td.getAttribute('data-v');
        if (fam !== '') v = famVerdict(td.getAttribute('data-f'), fam) || 'SKIP';
        td.className = 'c v-' + v + (td.getAttribute('data-x') || '');
        td.textContent = v === 'INFORMATIONAL' ? 'INFO' : v;
        if (!td.hidden && (v === vd || (vd === 'failing' && failing[v]) || (vd === 'new' && td.getAttribute('data-x').indexOf('new') >= 0 && (fam === '' || failing[v])))) any = true;
      }
      tr.hidden = !(ok && any);
      if (!tr.hidden) shown++;
    }
    $('f-count').textContent = shown + ' of ' + rows.length + ' cases shown';
  }
  [fa, fc, fv, ff, fd].forEach(function(el){ el.addEventListener('change', apply); });
  fs.addEventListener('input', apply);
  apply();
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
{{if .Fails}}<section id="new">
<h2>New failures ({{len .Fails}})</h2>
<ul class="fails">
{{range .Fails}}<li><span class="badge v-{{.Verdict}}">{{label .Verdict}}</span> <button type="button" class="link" data-d="{{.Detail}}"><code>{{.Check}}</code> on <code>{{.Case}}</code></button> · {{.Column}} <span class="muted">— {{.R}}</span></li>
{{end}}</ul>
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
{{end}}</section>{{end}}
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
<thead><tr><th>CLI</th><th>version</th><th>case</th>{{range $i, $c := .Columns}}<th data-col="{{$i}}">{{$c}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr data-cli="{{.CLI}}" data-version="{{.Versions}}" data-case="{{.Case}}"><td>{{.CLI}}</td><td>{{if .Version}}{{.Version}}{{else}}<span class="muted">—</span>{{end}}</td><td class="case" title="{{.Description}}">{{.Case}}</td>{{range .Cells}}{{if .Present}}<td class="c v-{{.Verdict}}{{if .New}} new{{end}}{{if .Expected}} exp{{end}}" data-x="{{if .New}} new{{end}}{{if .Expected}} exp{{end}}" data-col="{{.Col}}" data-d="{{.Detail}}" data-v="{{.Verdict}}" data-f="{{.Fam}}" title="{{.Title}} · {{.Duration}}" tabindex="0">{{label .Verdict}}</td>{{else}}<td class="none" data-col="{{.Col}}" title="not run">·</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
<p class="muted">A red outline marks a new failure; stripes mark failures the baseline expects; · marks a case the adapter did not run.</p>
</section>
<dialog id="dlg" aria-labelledby="dlg-title">
<div class="dlg-head"><strong id="dlg-title"></strong><button type="button" id="dlg-close">Close</button></div>
<div class="dlg-body" id="dlg-body"></div>
</dialog>
{{range .Details}}<template id="d{{.ID}}" data-title="{{.Case}} · {{.Column}}">
<p><span class="badge v-{{.Verdict}}">{{label .Verdict}}</span>{{if .New}} <span class="bad">new failure</span>{{end}}{{if .Expected}} <span class="muted">failure expected by the baseline</span>{{end}} · {{.Duration}} · {{.Agent}}{{if .Version}} {{.Version}}{{end}}{{if .Fixture}} · fixture <code>{{.Fixture}}</code>{{end}}{{if .Faults}} · faults <code>{{.Faults}}</code>{{end}}</p>
{{if .Description}}<p>{{.Description}}</p>{{end}}
<dl class="kv"><dt>adapter</dt><dd>{{.Adapter}}</dd><dt>run</dt><dd>{{.ToolVersion}}, seed {{.RunSeed}}{{if .RunShard}}, shard {{.RunShard}}{{end}}{{if .RunStarted}}, started {{.RunStarted}}{{end}}</dd>{{if .Dir}}<dt>kept in</dt><dd class="mono">{{.Dir}}</dd>{{end}}</dl>
<h3>Reproduce</h3>
<pre>{{.Reproduce}}</pre>
<h3>Checks</h3>
{{range .Checks}}<div class="check">
<h3><span class="badge v-{{.Verdict}}">{{label .Verdict}}</span> <code>{{.Check}}</code> <span class="muted">{{.Level}} · {{.Family}}{{if .Baselined}} · expected by the baseline{{end}}{{if .New}} · new failure{{end}}</span></h3>
<dl class="kv"><dt>requirement</dt><dd>{{.Requirement}}</dd><dt>source</dt><dd>{{range $i, $s := .Sources}}{{if $i}}; {{end}}{{if $s.URL}}<a href="{{$s.URL}}">{{$s.Text}}</a>{{else}}{{$s.Text}}{{end}}{{end}}</dd>{{if .Expected}}<dt>expected</dt><dd class="mono">{{.Expected}}</dd>{{end}}{{if .Actual}}<dt>actual</dt><dd class="mono">{{.Actual}}</dd>{{end}}</dl>
{{if .Diff}}<pre class="diff">{{range .Diff}}<span class="{{.Class}}">{{.Text}}</span>{{end}}</pre>{{end}}
</div>
{{end}}{{if .Passed}}<table class="passed"><tbody>{{range .Passed}}<tr><td><span class="badge v-PASS">PASS</span></td><td><code>{{.Check}}</code></td><td>{{.Requirement}} <span class="muted">({{.Level}})</span></td></tr>
{{end}}</tbody></table>{{end}}{{if .Skipped}}<details><summary>{{len .Skipped}} checks not applicable</summary><ul>{{range .Skipped}}<li><code>{{.Check}}</code> <span class="muted">— {{.Actual}}</span></li>{{end}}</ul></details>{{end}}
<h3>Wire</h3>
{{if .Wire}}<pre class="wire">{{range .Wire}}{{if .Time}}<span class="t">{{.Time}}</span> {{end}}{{.Text}}
{{end}}</pre>{{else}}<p class="muted">No wire excerpt (the case did not run).</p>{{end}}
</template>
{{end}}<script>` + resultsJS + `</script>
</body>
</html>
{{- define "vhead"}}<thead><tr><th>case</th>{{range .Columns}}<th title="{{.Run}}">{{.Label}}</th>{{end}}</tr></thead>{{end}}
{{define "vrow"}}<tr{{if .Differs}} class="differs"{{end}}><td class="case">{{.Case}}</td>{{range .Cells}}{{if .Present}}<td class="c v-{{.Verdict}}" data-d="{{.Detail}}" title="{{.Title}}" tabindex="0">{{label .Verdict}}{{if .Version}} <span class="muted">{{.Version}}</span>{{end}}</td>{{else}}<td class="none" title="not run">·</td>{{end}}{{end}}</tr>
{{range .Checks}}<tr class="chk"><td class="case">↳ {{.Check}}</td>{{range .Verdicts}}{{if .}}<td class="v-{{.}}">{{label .}}</td>{{else}}<td class="none">·</td>{{end}}{{end}}</tr>
{{end}}{{end}}
{{- /* the page ends with </html> and a newline */ -}}`))
