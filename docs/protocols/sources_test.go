package protocols_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/docs/protocols"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/sequence"
	"github.com/agentconform/agentconform/validate"
)

// repoRoot is the repository root, seen from this directory.
const repoRoot = "../.."

// allRules is every rule and check the project reports: the conformance
// checks, the JSONL, schema, stream and transcript rules of validate, and
// the ordering rules of sequence.
func allRules() []finding.Rule {
	var out []finding.Rule
	for _, c := range conformance.Catalog() {
		out = append(out, c.Rule)
	}
	var ptrs []*finding.Rule
	ptrs = append(ptrs, jsonl.Rules...)
	ptrs = append(ptrs, validate.RuleUnknownDialect, validate.RuleNoKnownEvents, validate.RuleNoSchema,
		validate.RuleTranscriptLine, validate.RuleTranscriptPaths)
	for _, p := range []schemas.Profile{schemas.Spec, schemas.Observed, schemas.Shim, schemas.Unified} {
		for _, d := range schemas.Dialects {
			ptrs = append(ptrs, validate.RulesFor(p, d)...)
		}
	}
	ptrs = append(ptrs, sequence.AllRules...)
	ptrs = append(ptrs, acp.Rules...)
	ptrs = append(ptrs, appserver.Rules()...)
	ptrs = append(ptrs, appserver.RuleTranscriptPaths)
	for _, r := range ptrs {
		out = append(out, *r)
	}
	return out
}

// badSources returns one line per rule whose source does not name existing
// sections of the protocol reference.
func badSources(rules []finding.Rule) []string {
	var bad []string
	seen := map[string]bool{}
	for _, r := range rules {
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		if err := protocols.Check(r.Source); err != nil {
			bad = append(bad, r.ID+": "+err.Error())
		}
	}
	return bad
}

// TestSources checks that every check and rule names its source as
// sections of docs/protocols that exist: each file and anchor it cites.
func TestSources(t *testing.T) {
	rules := allRules()
	if len(rules) < 100 {
		t.Fatalf("only %d rules found; the catalogue is incomplete", len(rules))
	}
	for _, b := range badSources(rules) {
		t.Error(b)
	}
}

// TestSourcesCatchBreakage proves the check above fails on a source that
// names a missing anchor, a missing file, or a document outside the
// repository, and passes on good ones.
func TestSourcesCatchBreakage(t *testing.T) {
	good := []finding.Rule{{ID: "a", Source: "docs/protocols/codex.md#items"}, {ID: "b", Source: "docs/protocols/claude.md#interrupt; docs/protocols/unified.md#lines"}}
	if bad := badSources(good); len(bad) != 0 {
		t.Errorf("good sources rejected: %v", bad)
	}
	for _, src := range []string{"docs/protocols/codex.md#no-anchor", "docs/protocols/missing.md#items", "protocols" + ".md §2.3", "seed" + " 001 §2"} {
		if bad := badSources([]finding.Rule{{ID: "x", Source: src}}); len(bad) != 1 {
			t.Errorf("source %q accepted", src)
		}
	}
}

// Citations of documents that are not in the repository: the notes the
// project started from and its issue tracker. Spelled in pieces so that this
// file does not match itself.
var outsideCitations = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bprotocols` + `\.md\b`),
	regexp.MustCompile(`/work/` + `shared`),
	regexp.MustCompile(`(?i)\bseeds?` + ` 0\d\d\b`),
	regexp.MustCompile(`(?i)\bissues?` + ` #?\d+\b`),
}

// allowedMentions are matches that cite nothing: the MCP fixture's prompt
// asks a model about an issue of a made-up project.
var allowedMentions = map[string]bool{"issue 42": true}

// scanCitations walks root and returns "path:line: text" for every line that
// cites a document outside the repository. It skips version control,
// installed packages and binary files.
func scanCitations(root string) ([]string, error) {
	var hits []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(b, 0) >= 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, len(b)+1)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			for _, re := range outsideCitations {
				for _, m := range re.FindAllString(line, -1) {
					if allowedMentions[strings.ToLower(m)] {
						continue
					}
					hits = append(hits, fmt.Sprintf("%s:%d: %q", filepath.ToSlash(rel), n, m))
				}
			}
		}
		return sc.Err()
	})
	return hits, err
}

// TestNoOutsideCitations checks that no file of the project cites a document
// that is not in it (the reference in docs/protocols replaces them). An
// upstream issue is cited as owner/repo#N, never as "issue N".
func TestNoOutsideCitations(t *testing.T) {
	hits, err := scanCitations(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		t.Error("cites a document outside the repository (cite docs/protocols instead): " + h)
	}
}

// TestScanCatchesCitations proves the scan finds each kind of outside
// citation, in Go and in documentation, and lets a clean tree pass.
func TestScanCatchesCitations(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package a\n\n// See docs/protocols/claude.md#stdout and owner/repo#12.\n// What is issue 42 about?\n")
	write("node_modules/x/README.md", "protocols"+".md §1\n")
	if hits, err := scanCitations(dir); err != nil || len(hits) != 0 {
		t.Fatalf("clean tree: %v %v", hits, err)
	}
	write("b.go", "package a\n\nconst src = \"protocols"+".md §1.5\"\n")
	write("doc/README.md", "Text.\n\nAs in Seed"+" 001 §7, see issue"+" 4 and /work/"+"shared/x.\n")
	hits, err := scanCitations(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`b.go:3: "protocols` + `.md"`, `doc/README.md:3: "/work/` + `shared"`, `doc/README.md:3: "Seed` + ` 001"`, `doc/README.md:3: "issue` + ` 4"`}
	sort.Strings(hits)
	sort.Strings(want)
	if strings.Join(hits, "\n") != strings.Join(want, "\n") {
		t.Errorf("hits:\n%s\nwant:\n%s", strings.Join(hits, "\n"), strings.Join(want, "\n"))
	}
}

var (
	mdLinkTarget = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	lineFragment = regexp.MustCompile(`^L(\d+)(?:-L(\d+))?$`)
	githubLink   = regexp.MustCompile(`^https://github\.com/[^/]+/[^/]+/(?:blob|tree)/([^/]+)/`)
	fullCommit   = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// checkLinks checks the links of the Markdown files in dir (a directory of
// the repository at root): a link into the repository names a file that
// exists, lines that file has (#L9, #L9-L12) and anchors Markdown files
// define; a link to GitHub source pins a full commit, so that evidence does
// not move. It returns one line per broken link.
func checkLinks(dir, root string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		for n, line := range strings.Split(string(b), "\n") {
			for _, m := range mdLinkTarget.FindAllStringSubmatch(line, -1) {
				if msg := checkLink(m[1], name, root); msg != "" {
					bad = append(bad, fmt.Sprintf("%s:%d: %s: %s", filepath.Base(name), n+1, m[1], msg))
				}
			}
		}
	}
	return bad, nil
}

func checkLink(target, from, root string) string {
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		if m := githubLink.FindStringSubmatch(target); m != nil && !fullCommit.MatchString(m[1]) {
			return "GitHub source must be cited at a full commit, not " + m[1]
		}
		return ""
	}
	path, frag, _ := strings.Cut(target, "#")
	file := from
	if path != "" {
		file = filepath.Join(filepath.Dir(from), path)
	}
	absRoot, err1 := filepath.Abs(root)
	absFile, err2 := filepath.Abs(file)
	rel, err := filepath.Rel(absRoot, absFile)
	if err1 != nil || err2 != nil || err != nil || strings.HasPrefix(rel, "..") {
		return "points outside the repository"
	}
	b, err := os.ReadFile(file)
	if err != nil {
		if info, serr := os.Stat(file); serr == nil && info.IsDir() && frag == "" {
			return ""
		}
		return "no such file"
	}
	if frag == "" {
		return ""
	}
	if m := lineFragment.FindStringSubmatch(frag); m != nil {
		last, _ := strconv.Atoi(m[1])
		if m[2] != "" {
			end, _ := strconv.Atoi(m[2])
			if end < last {
				return "line range ends before it starts"
			}
			last = end
		}
		if lines := bytes.Count(b, []byte("\n")) + 1; last > lines {
			return fmt.Sprintf("the file has %d lines", lines-1)
		}
		return ""
	}
	if strings.HasSuffix(file, ".md") && !protocols.MarkdownAnchors(string(b))[frag] {
		return "no anchor " + frag
	}
	return ""
}

// TestDocLinks checks every link of the protocol reference: its captures
// and lines, its anchors, its upstream commits.
func TestDocLinks(t *testing.T) {
	bad, err := checkLinks(".", repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestLinksCatchBreakage proves the link check fails on a missing file, a
// line past the end, a missing anchor and an unpinned GitHub link.
func TestLinksCatchBreakage(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "docs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "cap.jsonl"), []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := "<a id=\"here\"></a>\n## Head\n[x](../cap.jsonl#L2-L3) [y](#here) [z](#head) [w](https://github.com/o/r/blob/0123456789abcdef0123456789abcdef01234567/f.go#L1) [v](https://example.com/x)\n"
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if bad, err := checkLinks(dir, root); err != nil || len(bad) != 0 {
		t.Fatalf("good links rejected: %v %v", bad, err)
	}
	broken := "[a](../missing.jsonl#L1) [b](../cap.jsonl#L9) [c](#nowhere) [d](https://github.com/o/r/blob/main/f.go) [e](a.md#gone) [f](../../outside.md)\n"
	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	bad, err := checkLinks(dir, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 6 {
		t.Errorf("%d broken links found, want 6:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}
