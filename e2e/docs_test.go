package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/docs/protocols"
)

// docFiles are the README and the guides.
func docFiles(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob(filepath.Join("..", "docs", "guides", "*.md"))
	if err != nil || len(guides) == 0 {
		t.Fatalf("no guides: %v", err)
	}
	return append([]string{filepath.Join("..", "README.md")}, guides...)
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks: every relative link of the README and of the guides
// names a file of the repository, and an anchor of a Markdown file that
// the file has.
func TestDocsLinks(t *testing.T) {
	n := 0
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(target, "#")
			path := f
			if file != "" {
				path = filepath.Join(filepath.Dir(f), filepath.FromSlash(file))
			}
			data, err := os.ReadFile(path)
			if err != nil {
				if st, serr := os.Stat(path); serr == nil && st.IsDir() && anchor == "" {
					continue
				}
				t.Errorf("%s: link %s: %v", f, target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !protocols.MarkdownAnchors(string(data))[anchor] {
				t.Errorf("%s: link %s: %s has no anchor %q", f, target, path, anchor)
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d relative links checked", n)
	}
}

// licenseSHA256 is the SHA-256 of the Apache License 2.0 as the Apache
// Software Foundation publishes it (LICENSE-2.0.txt).
const licenseSHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// TestReadmeShape: the README starts with the main job and the tests,
// stays a first screen and a map (under 250 lines, a Layout and a License
// section), and LICENSE is the Apache License 2.0 as published.
func TestReadmeShape(t *testing.T) {
	text := readme(t)
	const top = "# agentconform\n\n```sh\ngo run ./cmd/agentconform run "
	if !strings.HasPrefix(text, top) {
		t.Errorf("the README does not start with the main job, go run ./cmd/agentconform run:\n%.200s", text)
	}
	lines := strings.Split(text, "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[4], "go test ./... ") {
		t.Errorf("the README's second command is not go test ./...: %q", lines[4])
	}
	if n := strings.Count(text, "\n"); n >= 250 {
		t.Errorf("the README has %d lines; it stays under 250 (the rest goes into docs/guides)", n)
	}
	for _, h := range []string{"\n## Install\n", "\n## Test an adapter in three commands\n", "\n## Guides\n", "\n## Layout\n", "\n## License\n"} {
		if !strings.Contains(text, h) {
			t.Errorf("the README has no section %q", strings.TrimSpace(h))
		}
	}
	license, err := os.ReadFile(filepath.Join("..", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(license); hex.EncodeToString(sum[:]) != licenseSHA256 {
		t.Errorf("LICENSE is not the Apache License 2.0 word for word (sha256 %x)", sum)
	}
	if !strings.Contains(text, "[Apache License, Version 2.0](LICENSE)") {
		t.Error("the README's License section does not name the license and link LICENSE")
	}
}
