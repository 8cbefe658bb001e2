package reports

import (
	"strings"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/docs/protocols"
)

// sourcePart is one part of a check's or rule's source as a page shows it:
// its text, and the address of the section it names when it is a reference
// into the protocol reference (docs/protocols/<file>.md#<anchor>). Other
// text (a source written by an older toolkit) gets no address.
type sourcePart struct {
	Text, URL string
}

// sourceParts splits source at "; " and gives each reference its address
// under base (see SourceBase).
func sourceParts(source, base string) []sourcePart {
	var out []sourcePart
	for _, p := range protocols.Split(source) {
		sp := sourcePart{Text: p.Text}
		if p.OK {
			sp.URL = p.Ref.URL(base)
		}
		out = append(out, sp)
	}
	return out
}

// SourceBase returns the address that references to the protocol reference
// are resolved against: base itself, ending in '/' ("../../" for a report
// written two directories below the repository root, or a URL of the
// repository tree), or, when base is "", the reference as published for
// this toolkit version on GitHub, which works wherever the report is read.
func SourceBase(base string) string {
	if base == "" {
		return protocols.PublishedBase(conformance.Version)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return base
}

// mdSource renders a source for Markdown: each reference as a link to its
// section, other text escaped.
func mdSource(source, base string) string {
	var parts []string
	for _, p := range sourceParts(source, base) {
		if p.URL == "" {
			parts = append(parts, mdText(p.Text))
			continue
		}
		// A reference holds only [a-z0-9./#_-]; the URL is base plus it.
		parts = append(parts, "["+p.Text+"]("+mdLinkURL(p.URL)+")")
	}
	return strings.Join(parts, "; ")
}

// mdLinkURL makes a URL safe inside a Markdown link's parentheses.
func mdLinkURL(u string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E").Replace(u)
}
