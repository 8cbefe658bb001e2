package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/validate"
)

// maxListedFindings bounds the findings the Markdown and HTML reports of
// validate list one by one; all are counted.
const (
	maxListedFindingsMarkdown = 100
	maxListedFindingsHTML     = 5000
)

// listedFinding is a finding kept for a page.
type listedFinding struct {
	Severity, Level, Rule, Location, Pointer, Message, Expected, Actual string
}

// pageWriter collects what the Markdown and HTML reports of validate show:
// the streams, the findings (the first ones listed, all counted per rule)
// and the drift report.
type pageWriter struct {
	w        io.Writer
	max      int
	streams  []*validate.Result
	t        totals
	listed   []listedFinding
	unlisted int
	drift    *DriftCollector
	ownDrift bool
	render   func(p *pageWriter) error
}

func newPageWriter(w io.Writer, max int, dc *DriftCollector, render func(*pageWriter) error) *pageWriter {
	p := &pageWriter{w: w, max: max, drift: dc, render: render}
	if dc == nil {
		p.drift, p.ownDrift = NewDriftCollector(nil), true
	}
	return p
}

// Finding keeps the finding for the list.
func (p *pageWriter) Finding(f finding.Finding, sev finding.Severity) {
	if len(p.listed) >= p.max {
		p.unlisted++
		return
	}
	f = visibleFinding(f)
	lf := listedFinding{Severity: sev.String(), Location: f.Location(), Pointer: f.Pointer, Message: f.Message, Expected: f.Expected, Actual: f.Actual}
	if f.Rule != nil {
		lf.Rule, lf.Level = f.Rule.ID, f.Rule.Level.String()
	}
	p.listed = append(p.listed, lf)
}

// Stream records a stream's result (and its drift, when the collector is
// the writer's own; a caller-supplied collector is fed by the caller).
func (p *pageWriter) Stream(r *validate.Result) {
	r = visibleCopy(r)
	p.streams = append(p.streams, r)
	p.t.add(r)
	if p.ownDrift {
		p.drift.Add(r, nil)
	}
}

// Close renders the page.
func (p *pageWriter) Close() error { return p.render(p) }

// NewMarkdownFindings returns the Markdown writer of validate: the verdict,
// a table of streams, the findings by rule with their requirements, the
// first findings, and the drift report. dc supplies the drift report with
// counted event kinds (nil: drift without the never-seen part).
func NewMarkdownFindings(w io.Writer, dc *DriftCollector) FindingWriter {
	return newPageWriter(w, maxListedFindingsMarkdown, dc, renderValidateMarkdown)
}

// NewHTMLFindings returns the HTML writer of validate: one self-contained
// page with the streams, the findings by rule, the findings (filterable by
// severity, rule and text) and the drift report.
func NewHTMLFindings(w io.Writer, dc *DriftCollector) FindingWriter {
	return newPageWriter(w, maxListedFindingsHTML, dc, renderValidateHTML)
}

func renderValidateMarkdown(p *pageWriter) error {
	var b bytes.Buffer
	tot := &p.t
	if tot.violations == 0 {
		fmt.Fprintf(&b, "## agentconform validate: ✅ %s, no violations\n\n", plural(tot.streams, "stream"))
	} else {
		fmt.Fprintf(&b, "## agentconform validate: ❌ %s in %s\n\n", plural(tot.violations, "violation"), plural(tot.streams, "stream"))
	}
	fmt.Fprintf(&b, "%s, %d bytes; %s, %s.\n\n", plural(tot.lines, "line"), tot.bytes, plural(tot.violations, "violation"), plural(tot.warnings, "warning"))
	if len(p.streams) > 0 {
		b.WriteString("| stream | dialect | profile | schema | CLI version | lines | violations | warnings |\n|---|---|---|---|---|---:|---:|---:|\n")
		for _, r := range p.streams {
			fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s | %d | %d | %d |\n", mdCodeText(displayFile(r.Name)), mdText(orDash(string(r.Dialect))),
				mdText(orDash(string(r.Profile))), mdCodeText(orDash(r.SchemaFile)), mdText(orDash(r.CLIVersion)), r.Lines, r.Violations, r.Warnings)
		}
		b.WriteString("\n")
	}
	if ids := tot.ruleIDs(); len(ids) > 0 {
		b.WriteString("### Findings by rule\n\n| level | count | rule | requirement | source |\n|---|---:|---|---|---|\n")
		base := SourceBase("")
		for _, id := range ids {
			r := tot.rules[id]
			fmt.Fprintf(&b, "| %s | %d | `%s` | %s | %s |\n", r.Level, tot.counts[id], mdCodeText(id), mdText(r.Requirement), mdSource(r.Source, base))
		}
		b.WriteString("\n")
	}
	if len(p.listed) > 0 {
		fmt.Fprintf(&b, "### Findings\n\n")
		var l strings.Builder
		for _, f := range p.listed {
			fmt.Fprintf(&l, "%s: %s: %s: %s", f.Location, f.Severity, f.Rule, f.Message)
			if f.Expected != "" {
				fmt.Fprintf(&l, " (expected %s", f.Expected)
				if f.Actual != "" {
					fmt.Fprintf(&l, "; found %s", f.Actual)
				}
				l.WriteString(")")
			}
			l.WriteString("\n")
		}
		if p.unlisted > 0 {
			fmt.Fprintf(&l, "... and %d more\n", p.unlisted)
		}
		b.WriteString(fenced(l.String(), "text"))
	}
	if err := WriteDriftMarkdown(&b, p.drift.Report()); err != nil {
		return err
	}
	_, err := p.w.Write(b.Bytes())
	return err
}

type validateView struct {
	Title, Generated                         string
	Streams                                  []*validate.Result
	Violations, Warnings, Lines, StreamCount int
	Bytes                                    int64
	Rules                                    []ruleRow
	Findings                                 []listedFinding
	Unlisted                                 int
	Drift                                    *DriftReport
	RuleIDs                                  []string
}

type ruleRow struct {
	Level, ID, Requirement, Source string
	Sources                        []sourcePart
	Count                          int
}

func renderValidateHTML(p *pageWriter) error {
	tot := &p.t
	v := validateView{Title: "agentconform validate", Generated: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Streams: p.streams,
		Violations: tot.violations, Warnings: tot.warnings, Lines: tot.lines, StreamCount: tot.streams, Bytes: tot.bytes,
		Findings: p.listed, Unlisted: p.unlisted, Drift: visibleCopy(p.drift.Report())}
	for _, id := range tot.ruleIDs() {
		r := tot.rules[id]
		v.Rules = append(v.Rules, ruleRow{Level: r.Level.String(), ID: id, Requirement: r.Requirement, Source: r.Source,
			Sources: sourceParts(r.Source, SourceBase("")), Count: tot.counts[id]})
		v.RuleIDs = append(v.RuleIDs, id)
	}
	if err := validatePage.Execute(p.w, v); err != nil {
		return fmt.Errorf("writing HTML report: %w", err)
	}
	return nil
}

// validateCSS is the style of the validate page.
const validateCSS = pageCSS + `
.sev-violation{color:#a40e26;font-weight:600}.sev-warning{color:#7d4e00;font-weight:600}
`

// validateCSP is the policy of the validate page.
var validateCSP = pageCSP(validateCSS, validateJS)

const validateJS = `
(function(){
  var fs = document.getElementById('f-sev'), fr = document.getElementById('f-rule'), ft = document.getElementById('f-text');
  if (!fs) return;
  function apply(){
    var s = fs.value, r = fr.value, t = ft.value.toLowerCase(), rows = document.querySelectorAll('#findings tbody tr'), n = 0;
    for (var i = 0; i < rows.length; i++) {
      var tr = rows[i];
      tr.hidden = !((s === '' || tr.getAttribute('data-sev') === s) && (r === '' || tr.getAttribute('data-rule') === r) &&
        (t === '' || tr.textContent.toLowerCase().indexOf(t) >= 0));
      if (!tr.hidden) n++;
    }
    document.getElementById('f-count').textContent = n + ' of ' + rows.length + ' findings shown';
  }
  fs.addEventListener('change', apply); fr.addEventListener('change', apply); ft.addEventListener('input', apply);
  apply();
})();
`

var validatePage = template.Must(template.New("validate").Funcs(pageFuncs).Funcs(template.FuncMap{"csp": func() template.HTMLAttr { return validateCSP }}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>` + validateCSS + `</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<p class="sub">Generated {{.Generated}}. {{.StreamCount}} streams, {{.Lines}} lines, {{.Bytes}} bytes: {{if .Violations}}<span class="bad">{{.Violations}} violations</span>{{else}}<span class="ok">no violations</span>{{end}}, {{.Warnings}} warnings.</p>
</header>
<section id="streams">
<h2>Streams</h2>
<table>
<thead><tr><th>stream</th><th>dialect</th><th>profile</th><th>schema</th><th>CLI version</th><th>lines</th><th>violations</th><th>warnings</th><th>drift entries</th></tr></thead>
<tbody>{{range .Streams}}<tr><td class="mono">{{if .Name}}{{.Name}}{{else}}&lt;stdin&gt;{{end}}</td><td>{{.Dialect}}</td><td>{{.Profile}}</td><td class="mono">{{.SchemaFile}}</td><td>{{.CLIVersion}}</td><td class="n">{{.Lines}}</td><td class="n">{{.Violations}}</td><td class="n">{{.Warnings}}</td><td class="n">{{len .Drift}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{if .Rules}}<section id="rules">
<h2>Findings by rule</h2>
<table><thead><tr><th>level</th><th>count</th><th>rule</th><th>requirement</th><th>source</th></tr></thead>
<tbody>{{range .Rules}}<tr><td>{{.Level}}</td><td class="n">{{.Count}}</td><td class="mono">{{.ID}}</td><td>{{.Requirement}}</td><td class="muted">{{range $i, $s := .Sources}}{{if $i}}; {{end}}{{if $s.URL}}<a href="{{$s.URL}}">{{$s.Text}}</a>{{else}}{{$s.Text}}{{end}}{{end}}</td></tr>
{{end}}</tbody></table>
</section>{{end}}
{{if .Findings}}<section id="list">
<h2>Findings</h2>
<div class="filters">
<label>severity<select id="f-sev"><option value="">any</option><option value="violation">violation</option><option value="warning">warning</option></select></label>
<label>rule<select id="f-rule"><option value="">any</option>{{range .RuleIDs}}<option>{{.}}</option>{{end}}</select></label>
<label>text<input id="f-text" type="search" placeholder="filter"></label>
<span class="muted" id="f-count"></span>
</div>
<table id="findings"><thead><tr><th>where</th><th>severity</th><th>rule</th><th>message</th><th>expected</th><th>actual</th></tr></thead>
<tbody>{{range .Findings}}<tr data-sev="{{.Severity}}" data-rule="{{.Rule}}"><td class="mono">{{.Location}}{{if .Pointer}}<br><span class="muted">{{.Pointer}}</span>{{end}}</td><td class="sev-{{.Severity}}">{{.Severity}}</td><td class="mono">{{.Rule}}</td><td>{{.Message}}</td><td class="mono">{{.Expected}}</td><td class="mono">{{.Actual}}</td></tr>
{{end}}</tbody></table>
{{if .Unlisted}}<p class="muted">… and {{.Unlisted}} more findings, counted above.</p>{{end}}
</section>{{end}}
<section id="drift">
<h2>Drift</h2>
<p class="muted">Per dialect and CLI version: what the logs carry that the schema does not know, and the event kinds the schema declares that no log carried, with their required fields (never seen).</p>
{{range .Drift.Groups}}<h3>{{.Dialect}} {{.CLIVersion}}</h3>
<p>{{.Streams}} streams, {{.Events}} events; schema <code>{{.Schema}}</code>{{if .SchemaVersion}} ({{.SchemaVersion}}){{end}}.</p>
{{if .Unknown}}<table><thead><tr><th>unknown</th><th>name</th><th>at</th><th>count</th><th>first seen</th></tr></thead><tbody>
{{range .Unknown}}<tr><td>{{.What}}</td><td class="mono">{{.Name}}</td><td class="mono">{{.Pointer}}</td><td class="n">{{.Count}}</td><td class="mono">{{.First}}</td></tr>
{{end}}</tbody></table>{{else}}<p>Nothing the schema does not know.</p>{{end}}
{{if .KindsCounted}}{{if .NeverSeen}}<details><summary>{{len .NeverSeen}} kinds the schema declares were never seen</summary><table><thead><tr><th>kind</th><th>required fields never seen</th></tr></thead><tbody>
{{range .NeverSeen}}<tr><td class="mono">{{.Kind}}</td><td class="mono">{{range $i, $f := .Required}}{{if $i}}, {{end}}{{$f}}{{end}}</td></tr>
{{end}}</tbody></table></details>{{else}}<p>Every kind the schema declares was seen.</p>{{end}}{{end}}
{{else}}<p>No stream of a known dialect.</p>{{end}}
</section>
<script>` + validateJS + `</script>
</body>
</html>
`))
