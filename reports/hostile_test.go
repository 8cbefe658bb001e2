package reports

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/validate"
)

// hostile is text an adapter or a CLI might print: a terminal escape that
// turns the rest red and clears the screen, an OSC 8 hyperlink, a
// right-to-left override and an isolate that reorder what follows, NUL,
// a lone CR that overwrites the line, BEL, DEL, a C1 control, the Arabic
// letter mark and a byte that is not UTF-8.
const hostile = "ok \x1b[31mRED\x1b[2J \x1b]8;;https://evil.example/\x07link\x1b]8;;\x07 " +
	"\u202eevil.exe\u202c \u2066iso\u2069 \u200e\u200f\u061c nul\x00 cr\rOVER bel\x07 del\x7f c1\u0085 bad\xff end"

// shown are the escapes the reports must show for hostile.
var shown = []string{`\x1b[31mRED`, `\x1b[2J`, `\x1b]8;;https://evil.example/\x07link`, `\u202eevil.exe\u202c`,
	`\u2066iso\u2069`, `\u200e\u200f\u061c`, `nul\x00`, `cr\rOVER`, `bel\x07`, `del\x7f`, `c1\u0085`, `bad\xff`}

// rawControls returns the characters of out that a report must not carry
// raw: C0 controls but tab, newline (and the CR of a CRLF), DEL, C1
// controls, bidi controls, and bytes that are not UTF-8.
func rawControls(out []byte) []string {
	var bad []string
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRune(out[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			bad = append(bad, fmt.Sprintf("byte %#x", out[i]))
		case r == '\r' && i+1 < len(out) && out[i+1] == '\n':
		case mustShow(r):
			bad = append(bad, strings.ToUpper(strings.TrimPrefix(visible(string(r)), `\`)))
		}
		i += n
	}
	return bad
}

func hostileDoc(t *testing.T) *Document {
	t.Helper()
	a := "adapter " + hostile
	c := caseResult(a, "claude/plain-text", "claude/plain-text",
		check("output/hello", conformance.Fail, "expected "+hostile, "actual "+hostile))
	c.Checks[0].Diff = "-" + hostile + "\n+" + hostile + "\n"
	c.Wire += "   0.130s adapter stderr: " + hostile + "\n"
	c.Description = "description " + hostile
	c.Reproduce = "reproduce " + hostile
	c.Dir = "/tmp/" + hostile
	r := &conformance.Results{Meta: conformance.Meta{Tool: "agentconform", Version: "1", Adapter: a, Started: started,
		Hello: &conformance.Hello{Name: "hello " + hostile, Version: hostile, Profile: "unified", Agents: []string{"claude"}}}, Cases: []*conformance.CaseResult{c}}
	doc := NewDocument(r)
	ApplyBaseline(doc, nil, GateOptions{})
	return doc
}

// TestReportsShowControlCharacters renders results and validate findings
// carrying hostile text in every format for people (text, Markdown, HTML,
// JUnit, the gate, annotations, diffs and drift reports): no control
// character, bidi control or invalid byte gets through raw, and each shows
// as a visible escape. The JSON forms, for programs, are not touched.
func TestReportsShowControlCharacters(t *testing.T) {
	doc := hostileDoc(t)
	before, _ := jsonOf(doc)
	outputs := map[string]func(*bytes.Buffer) error{
		"results html": func(b *bytes.Buffer) error { return WriteResultsHTML(b, doc, HTMLOptions{Title: "title " + hostile}) },
		"results markdown": func(b *bytes.Buffer) error {
			return WriteResultsMarkdown(b, doc, MarkdownOptions{Title: "title " + hostile})
		},
		"results junit": func(b *bytes.Buffer) error { return WriteResultsJUnit(b, doc) },
		"summary":       func(b *bytes.Buffer) error { return WriteSummary(b, doc, SummaryOptions{}) },
		"gate":          func(b *bytes.Buffer) error { return WriteGate(b, doc, nil) },
		"annotations":   func(b *bytes.Buffer) error { return WriteAnnotations(b, doc, nil, "") },
		"diff text":     func(b *bytes.Buffer) error { return WriteDiffText(b, Diff(NewDocument(), doc)) },
		"diff markdown": func(b *bytes.Buffer) error { return WriteDiffMarkdown(b, Diff(NewDocument(), doc)) },
	}
	rule := &finding.Rule{ID: "unified/schema", Level: finding.Must, Requirement: "events match the schema", Source: "spec"}
	f := finding.Finding{Rule: rule, File: "logs/" + hostile + ".jsonl", Line: 3, Pointer: "/content/" + hostile,
		Message: "message " + hostile, Expected: "expected " + hostile, Actual: "actual " + hostile}
	res := &validate.Result{Name: "logs/" + hostile + ".jsonl", Dialect: "unified", Profile: "unified", CLIVersion: "9 " + hostile,
		Lines: 3, Violations: 1, Counts: map[string]int{rule.ID: 1}, Rules: map[string]*finding.Rule{rule.ID: rule}}
	res.Drift = []*validate.DriftEntry{{Rule: rule, RuleID: rule.ID, Dialect: "unified", CLIVersion: "9 " + hostile, Name: "field " + hostile,
		Pointer: "/x/" + hostile, Count: 2, FirstFile: res.Name, FirstLine: 2}}
	for _, format := range []Format{Text, JUnit, Markdown, HTML} {
		outputs["validate "+string(format)] = func(b *bytes.Buffer) error {
			w, err := NewFindingWriter(format, b)
			if err != nil {
				return err
			}
			w.Finding(f, finding.Violation)
			w.Stream(res)
			return w.Close()
		}
	}
	dc := NewDriftCollector(nil)
	dc.Add(res, nil)
	outputs["drift text"] = func(b *bytes.Buffer) error { return WriteDriftText(b, dc.Report()) }
	outputs["drift markdown"] = func(b *bytes.Buffer) error { return WriteDriftMarkdown(b, dc.Report()) }

	for name, write := range outputs {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := write(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.Bytes()
			if bad := rawControls(out); len(bad) > 0 {
				t.Errorf("raw %v in the report:\n%q", bad, clipText(string(out), 3000))
			}
			text := string(out)
			if strings.Contains(name, "html") || strings.Contains(name, "HTML") || strings.Contains(name, "junit") {
				text = html.UnescapeString(text)
			}
			if name == "results html" {
				// The case's details are text in the page's data.
				splitPageData(t, text)
				js := pageDataBlock(text)
				var strs []string
				var walk func(v any)
				walk = func(v any) {
					switch v := v.(type) {
					case string:
						strs = append(strs, v)
					case []any:
						for _, x := range v {
							walk(x)
						}
					case map[string]any:
						for _, x := range v {
							walk(x)
						}
					}
				}
				var all any
				json.Unmarshal([]byte(js), &all)
				walk(all)
				text = strings.Join(strs, "\n")
			}
			for _, s := range shown {
				// Markdown escapes brackets in table cells; fenced and
				// plain text keep them.
				if !strings.Contains(text, s) && !strings.Contains(text, strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s)) {
					t.Errorf("the report does not show %s", s)
				}
			}
		})
	}
	if after, _ := jsonOf(doc); after != before {
		t.Errorf("rendering changed the document")
	}
	if res.Name != "logs/"+hostile+".jsonl" || res.Drift[0].Name != "field "+hostile {
		t.Errorf("rendering changed the validate result")
	}
	// The JSON results keep the text as it was.
	var js bytes.Buffer
	if err := WriteResultsJSON(&js, doc); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(&js)
	if err != nil {
		t.Fatal(err)
	}
	if back.Runs[0].Cases[0].Checks[0].Actual != "actual "+strings.ToValidUTF8(hostile, "\uFFFD") && back.Runs[0].Cases[0].Checks[0].Actual != "actual "+hostile {
		t.Errorf("JSON results changed the text: %q", back.Runs[0].Cases[0].Checks[0].Actual)
	}
}

func jsonOf(doc *Document) (string, error) {
	var b bytes.Buffer
	err := WriteResultsJSON(&b, doc)
	return b.String(), err
}

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, tabs\tand\nnewlines; ünïcödé 日本 🎉": "plain text, tabs\tand\nnewlines; ünïcödé 日本 🎉",
		"\x1b[1;31mred\x1b[0m":                       `\x1b[1;31mred\x1b[0m`,
		"a\x00b\rc\x7fd\u0085e\u009bf":               `a\x00b\rc\x7fd\u0085e\u009bf`,
		"\u202a\u202b\u202c\u202d\u202e":             `\u202a\u202b\u202c\u202d\u202e`,
		"\u2066\u2067\u2068\u2069\u200e\u200f\u061c": `\u2066\u2067\u2068\u2069\u200e\u200f\u061c`,
		"\xff\xfe ok \xc3":                           `\xff\xfe ok \xc3`,
	} {
		if got := visible(in); got != want {
			t.Errorf("visible(%q) = %q, want %q", in, got, want)
		}
	}
}

// htmlTag is one start tag of a page, with its attributes unescaped.
type htmlTag struct {
	name  string
	attrs map[string]string
	// text is the raw text of a <script> or <style> element.
	text string
}

var (
	tagRE  = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*/?>`)
	attrRE = regexp.MustCompile(`([^\s"'>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?`)
)

// parseTags reads the start tags of an HTML page in order; the text of
// <script> and <style> (raw text in HTML) is taken whole, up to its end
// tag, and not searched for tags.
func parseTags(t *testing.T, page string) []htmlTag {
	t.Helper()
	var tags []htmlTag
	for rest := page; ; {
		loc := tagRE.FindStringSubmatchIndex(rest)
		if loc == nil {
			return tags
		}
		tag := htmlTag{name: strings.ToLower(rest[loc[2]:loc[3]]), attrs: map[string]string{}}
		for _, a := range attrRE.FindAllStringSubmatch(rest[loc[4]:loc[5]], -1) {
			v := a[2]
			if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
				v = v[1 : len(v)-1]
			}
			tag.attrs[strings.ToLower(a[1])] = html.UnescapeString(v)
		}
		rest = rest[loc[1]:]
		if tag.name == "script" || tag.name == "style" {
			end := strings.Index(strings.ToLower(rest), "</"+tag.name)
			if end < 0 {
				t.Fatalf("<%s> without its end tag", tag.name)
			}
			tag.text, rest = rest[:end], rest[end:]
		}
		tags = append(tags, tag)
	}
}

// TestHTMLContentSecurityPolicy parses both HTML pages (results and
// validate, with hostile text in them): the first element of the head
// after the charset is a CSP meta tag with default-src 'none', script and
// style allowed only by the sha256 of the page's one inline script and
// one inline style (no 'unsafe-inline', no host, scheme or wildcard), and
// the page has nothing the policy would block: no external resource, no
// inline event handler, no style attribute, no javascript: URL.
func TestHTMLContentSecurityPolicy(t *testing.T) {
	pages := map[string]func(*bytes.Buffer) error{
		"results": func(b *bytes.Buffer) error { return WriteResultsHTML(b, testDoc(t), HTMLOptions{Generated: started}) },
		"results with hostile text": func(b *bytes.Buffer) error {
			return WriteResultsHTML(b, hostileDoc(t), HTMLOptions{Generated: started})
		},
		"validate": func(b *bytes.Buffer) error {
			w := NewHTMLFindings(b, nil)
			rule := &finding.Rule{ID: "r/x", Level: finding.Must, Requirement: "req " + payload}
			w.Finding(finding.Finding{Rule: rule, File: "a.jsonl", Line: 1, Message: payload + hostile}, finding.Violation)
			w.Stream(&validate.Result{Name: "a.jsonl " + payload, Lines: 1, Violations: 1, Counts: map[string]int{"r/x": 1}, Rules: map[string]*finding.Rule{"r/x": rule}})
			return w.Close()
		},
	}
	for name, write := range pages {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := write(&buf); err != nil {
				t.Fatal(err)
			}
			tags := parseTags(t, buf.String())
			if len(tags) < 3 || tags[0].name != "html" || tags[1].name != "head" || tags[2].name != "meta" || tags[2].attrs["charset"] != "utf-8" {
				t.Fatalf("the page does not start with <html><head><meta charset>: %v", tags[:min(3, len(tags))])
			}
			meta := tags[3]
			if meta.name != "meta" || !strings.EqualFold(meta.attrs["http-equiv"], "Content-Security-Policy") {
				t.Fatalf("the tag after the charset is %v, not the CSP meta tag", meta)
			}
			policy := map[string][]string{}
			for _, d := range strings.Split(meta.attrs["content"], ";") {
				f := strings.Fields(d)
				if len(f) == 0 {
					continue
				}
				if _, dup := policy[f[0]]; dup {
					t.Errorf("directive %s twice", f[0])
				}
				policy[f[0]] = f[1:]
			}
			if got := policy["default-src"]; len(got) != 1 || got[0] != "'none'" {
				t.Errorf("default-src %v, want 'none'", got)
			}
			for _, d := range []string{"base-uri", "form-action", "img-src", "object-src"} {
				if got := policy[d]; len(got) != 1 || got[0] != "'none'" {
					t.Errorf("%s %v, want 'none'", d, got)
				}
			}
			for d, sources := range policy {
				for _, s := range sources {
					if s != "'none'" && !strings.HasPrefix(s, "'sha256-") {
						t.Errorf("%s allows %s: only 'none' and sha256 hashes are strict", d, s)
					}
				}
			}
			hash := func(s string) string {
				sum := sha256.Sum256([]byte(s))
				return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
			}
			var scripts, styles int
			for _, tag := range tags {
				for a, v := range tag.attrs {
					if strings.HasPrefix(a, "on") || a == "style" || a == "src" || a == "srcdoc" || a == "action" ||
						(a == "href" && !strings.HasPrefix(v, "#") && !(tag.name == "a" && docLink.MatchString(`href="`+v+`"`))) || strings.HasPrefix(strings.TrimSpace(strings.ToLower(v)), "javascript:") {
						t.Errorf("<%s %s=%q>: the policy would block it, or it loads something", tag.name, a, v)
					}
				}
				switch {
				case tag.name == "script" && tag.attrs["type"] == "application/json":
					// Data, which no policy runs: JSON, with nothing in it
					// that could end the block or start markup.
					if !json.Valid([]byte(tag.text)) || strings.ContainsAny(tag.text, "<>&") || tag.attrs["id"] != "data" {
						t.Errorf("the data block is not JSON free of <, > and &: %.200s", tag.text)
					}
				case tag.name == "script":
					scripts++
					if !contains(policy["script-src"], hash(tag.text)) {
						t.Errorf("script-src %v does not hold the hash of the page's script %s", policy["script-src"], hash(tag.text))
					}
				case tag.name == "style":
					styles++
					if !contains(policy["style-src"], hash(tag.text)) {
						t.Errorf("style-src %v does not hold the hash of the page's style %s", policy["style-src"], hash(tag.text))
					}
				case containsString([]string{"link", "img", "iframe", "object", "embed", "base", "form", "frame", "audio", "video", "source"}, tag.name):
					t.Errorf("the page has a <%s> element", tag.name)
				}
			}
			if scripts != 1 || styles != 1 || len(policy["script-src"]) != 1 || len(policy["style-src"]) != 1 {
				t.Errorf("%d scripts, %d styles; script-src %v, style-src %v: want one of each, each allowed by its hash alone",
					scripts, styles, policy["script-src"], policy["style-src"])
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The JUnit XML with hostile text stays well-formed.
func TestJUnitWithHostileTextParses(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteResultsJUnit(&buf, hostileDoc(t)); err != nil {
		t.Fatal(err)
	}
	var s jSuites
	if err := xml.Unmarshal(buf.Bytes(), &s); err != nil {
		t.Fatalf("JUnit XML does not parse: %v", err)
	}
	if s.Tests == 0 || !strings.Contains(s.Suites[0].Cases[0].Failure.Body, `\u202eevil.exe`) {
		t.Errorf("parsed: %+v", s)
	}
}
