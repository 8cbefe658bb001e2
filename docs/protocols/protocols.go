// Package protocols is the project's protocol reference: the Markdown files
// of docs/protocols, embedded, and what it takes to cite them. Every check
// and rule names its source as "docs/protocols/<file>.md#<anchor>" (several
// joined with "; "); this package parses such a source, tells whether each
// file and anchor exists, and turns a reference into a link a report can
// show. The files themselves say what the CLIs do, each statement with its
// evidence.
package protocols

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// Dir is where the reference lives in the repository, and the prefix of
// every reference.
const Dir = "docs/protocols"

// RepositoryURL is the project's repository on GitHub, where the reference
// is published.
const RepositoryURL = "https://github.com/agentconform/agentconform"

//go:embed *.md
var files embed.FS

// releaseVersion is a toolkit version that has a tag of its own.
var releaseVersion = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+$`)

// PublishedBase returns where the reference of a toolkit version is
// published: the repository's tree at the version's tag ("v1.2.0") for a
// release, at main for anything else (a development build, "0.1.0-dev").
// The result ends in '/' and stands for the repository root, as Ref.URL
// wants.
func PublishedBase(version string) string {
	ref := "main"
	if releaseVersion.MatchString(version) {
		ref = "v" + strings.TrimPrefix(version, "v")
	}
	return RepositoryURL + "/blob/" + ref + "/"
}

// Ref is one reference into the protocol reference: a file of Dir and an
// anchor in it.
type Ref struct {
	// File is the file's name in Dir, e.g. "claude.md".
	File string
	// Anchor is the anchor in the file, without '#', e.g. "turn-order".
	Anchor string
}

// String returns the reference as sources spell it:
// "docs/protocols/claude.md#turn-order".
func (r Ref) String() string { return Dir + "/" + r.File + "#" + r.Anchor }

// URL returns the reference's address under base, which ends in '/' and
// stands for the repository root: a URL ("https://…/blob/main/") or a path
// relative to a report ("../../").
func (r Ref) URL(base string) string { return base + r.String() }

// refPattern is one reference: the file name and the anchor are restricted
// to the characters the reference's own names use, so a reference can be
// placed in a link without escaping.
var refPattern = regexp.MustCompile(`^` + regexp.QuoteMeta(Dir) + `/([a-z0-9][a-z0-9-]*\.md)#([A-Za-z0-9][A-Za-z0-9_-]*)$`)

// ParseRef parses one reference ("docs/protocols/claude.md#turn-order").
// It does not check that the file or the anchor exists (see Check).
func ParseRef(s string) (Ref, error) {
	m := refPattern.FindStringSubmatch(s)
	if m == nil {
		return Ref{}, fmt.Errorf("protocols: %q is not a reference of the form %s/<file>.md#<anchor>", s, Dir)
	}
	return Ref{File: m[1], Anchor: m[2]}, nil
}

// Part is one part of a source: a reference, or text that is not one.
type Part struct {
	// Text is the part as written, trimmed.
	Text string
	// Ref is the parsed reference; OK says whether Text is one.
	Ref Ref
	OK  bool
}

// Split cuts a source at "; " into its parts, in order, parsing those that
// are references. It never fails: a part that is not a reference is kept
// as text (a report shows it as is; Check rejects it).
func Split(source string) []Part {
	var out []Part
	for _, p := range strings.Split(source, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		r, err := ParseRef(p)
		out = append(out, Part{Text: p, Ref: r, OK: err == nil})
	}
	return out
}

// Check reports whether source is a valid source: one or more references
// joined with "; ", each naming a file of the reference and an anchor that
// file defines. The error says which part is wrong and why.
func Check(source string) error {
	parts := Split(source)
	if len(parts) == 0 {
		return fmt.Errorf("protocols: empty source")
	}
	for _, p := range parts {
		if !p.OK {
			return fmt.Errorf("protocols: source %q: part %q is not a reference of the form %s/<file>.md#<anchor>", source, p.Text, Dir)
		}
		anchors, err := Anchors(p.Ref.File)
		if err != nil {
			return fmt.Errorf("protocols: source %q: %w", source, err)
		}
		if !anchors[p.Ref.Anchor] {
			return fmt.Errorf("protocols: source %q: %s has no anchor %q", source, Dir+"/"+p.Ref.File, p.Ref.Anchor)
		}
	}
	return nil
}

// Files lists the Markdown files of the reference, sorted.
func Files() []string {
	names, _ := fs.Glob(files, "*.md") // the pattern is valid
	sort.Strings(names)
	return names
}

// Read returns the content of one file of the reference.
func Read(name string) ([]byte, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("protocols: no file %s/%s", Dir, name)
	}
	return b, nil
}

var (
	anchorsOnce sync.Once
	anchorsOf   map[string]map[string]bool
	anchorsErr  error
)

// Anchors returns the anchors file name defines: its explicit ones
// (<a id="…">) and the slugs GitHub gives its headings.
func Anchors(name string) (map[string]bool, error) {
	anchorsOnce.Do(func() {
		anchorsOf = map[string]map[string]bool{}
		for _, f := range Files() {
			b, err := files.ReadFile(f)
			if err != nil {
				anchorsErr = fmt.Errorf("protocols: reading %s: %w", f, err)
				return
			}
			anchorsOf[f] = MarkdownAnchors(string(b))
		}
	})
	if anchorsErr != nil {
		return nil, anchorsErr
	}
	a, ok := anchorsOf[name]
	if !ok {
		return nil, fmt.Errorf("protocols: no file %s/%s", Dir, name)
	}
	return a, nil
}

// idAttr matches an HTML id or name attribute, the explicit anchors;
// codeSpan matches inline code, where such a tag is only shown.
var (
	idAttr   = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	codeSpan = regexp.MustCompile("`[^`]*`")
)

// MarkdownAnchors returns the anchors a Markdown text defines, as GitHub
// renders it: explicit <a id="…"> (or name) anchors, and one slug per
// heading outside code blocks (lower case, punctuation dropped, spaces
// turned into '-', a repeated slug numbered "-1", "-2", …).
func MarkdownAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range idAttr.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			out[m[1]] = true
		}
		if h := strings.TrimLeft(line, "#"); len(h) < len(line) && len(line)-len(h) <= 6 && strings.HasPrefix(h, " ") {
			s := Slug(h)
			if n := seen[s]; n > 0 {
				out[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				out[s] = true
			}
			seen[s]++
		}
	}
	return out
}

// htmlTag and mdLink strip inline markup from a heading before its slug is
// made: tags go, a link keeps its text.
var (
	htmlTag = regexp.MustCompile(`<[^>]*>`)
	mdLink  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// Slug returns the anchor GitHub gives a heading with text h.
func Slug(h string) string {
	h = htmlTag.ReplaceAllString(h, "")
	h = mdLink.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 0x7f && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		}
	}
	return b.String()
}
