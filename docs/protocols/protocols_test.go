package protocols

import (
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	r, err := ParseRef("docs/protocols/claude.md#turn-order")
	if err != nil || r.File != "claude.md" || r.Anchor != "turn-order" {
		t.Fatalf("ParseRef = %+v, %v", r, err)
	}
	if got := r.String(); got != "docs/protocols/claude.md#turn-order" {
		t.Errorf("String = %q", got)
	}
	if got := r.URL("../../"); got != "../../docs/protocols/claude.md#turn-order" {
		t.Errorf("URL = %q", got)
	}
	for _, bad := range []string{
		"", "claude.md#turn-order", "docs/protocols/claude.md", "docs/protocols/claude.md#",
		"docs/protocols/../README.md#x", "docs/protocols/claude.md#a b", "docs/protocols/claude.md#x\"><script>",
		"javascript:alert(1)", "protocols" + ".md §1.4",
	} {
		if _, err := ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q) accepted", bad)
		}
	}
}

func TestSplit(t *testing.T) {
	parts := Split(" docs/protocols/claude.md#stdout;RFC 8259 §4 ; docs/protocols/codex.md#events ;")
	if len(parts) != 3 {
		t.Fatalf("Split: %d parts, want 3: %+v", len(parts), parts)
	}
	if !parts[0].OK || parts[0].Ref.Anchor != "stdout" || parts[1].OK || parts[1].Text != "RFC 8259 §4" || !parts[2].OK {
		t.Errorf("Split = %+v", parts)
	}
}

func TestCheck(t *testing.T) {
	for _, good := range []string{
		"docs/protocols/claude.md#turn-order",
		"docs/protocols/claude.md#turn-order; docs/protocols/gemini.md#exit-codes",
		"docs/protocols/codex.md#items-at-turn-end",
		"docs/protocols/claude.md#claude-code", // a heading's slug
	} {
		if err := Check(good); err != nil {
			t.Errorf("Check(%q): %v", good, err)
		}
	}
	for bad, want := range map[string]string{
		"":                                     "empty source",
		"docs/protocols/claude.md#no-such":     `no anchor "no-such"`,
		"docs/protocols/nothing.md#stdout":     "no file docs/protocols/nothing.md",
		"docs/protocols/claude.md#stdout; x":   `part "x" is not a reference`,
		"protocols" + ".md §1.2":               "is not a reference",
		"conformance/HARNESS.md":               "is not a reference",
		"docs/protocols/claude.md#turn-order;": "", // a trailing separator is harmless
	} {
		err := Check(bad)
		if want == "" {
			if err != nil {
				t.Errorf("Check(%q): %v", bad, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%q) = %v, want an error containing %q", bad, err, want)
		}
	}
}

func TestMarkdownAnchors(t *testing.T) {
	md := "# Title\n\n<a id=\"explicit\"></a>\n## Tool calls, and `their` results\n\n" +
		"```\n## not a heading\n<a id=\"in-code\"></a>\n```\n\n## Tool calls, and their results\nShown: `<a id=\"in-span\"></a>`.\n" +
		"### [Linked](http://x) §8.1 <b>bold</b>\n#NoSpace\n<a name=\"named\"></a>\n"
	got := MarkdownAnchors(md)
	for _, want := range []string{"title", "explicit", "tool-calls-and-their-results", "tool-calls-and-their-results-1", "linked-81-bold", "named"} {
		if !got[want] {
			t.Errorf("anchor %q missing from %v", want, got)
		}
	}
	for _, not := range []string{"not-a-heading", "in-code", "in-span", "nospace"} {
		if got[not] {
			t.Errorf("anchor %q should not exist", not)
		}
	}
}

func TestFilesAndAnchors(t *testing.T) {
	want := []string{"README.md", "acp.md", "claude.md", "codex-app-server.md", "codex.md", "fidelity.md", "gemini.md", "jsonl.md", "shim.md", "spec.md", "unified.md"}
	if got := strings.Join(Files(), " "); got != strings.Join(want, " ") {
		t.Errorf("Files = %s, want %s", got, strings.Join(want, " "))
	}
	if _, err := Anchors("none.md"); err == nil {
		t.Error("Anchors of a missing file succeeded")
	}
	if _, err := Read("claude.md"); err != nil {
		t.Error(err)
	}
}

func TestPublishedBase(t *testing.T) {
	for v, want := range map[string]string{
		"0.1.0-dev": RepositoryURL + "/blob/main/",
		"":          RepositoryURL + "/blob/main/",
		"1.2.0":     RepositoryURL + "/blob/v1.2.0/",
		"v1.2.0":    RepositoryURL + "/blob/v1.2.0/",
		"(devel)":   RepositoryURL + "/blob/main/",
	} {
		if got := PublishedBase(v); got != want {
			t.Errorf("PublishedBase(%q) = %q, want %q", v, got, want)
		}
	}
}
