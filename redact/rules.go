package redact

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// RulesFormat documents the rule files ParseRules reads (agentconform
// record --redact FILE, agentconform capture --redact FILE). The built-in
// rules always apply; a file adds to them.
const RulesFormat = `A redaction rule file holds one rule per line; blank lines and lines
starting with # are ignored. A rule is a name, then what it finds:

  NAME REGEXP
      redact what REGEXP matches (RE2 syntax, as Go's regexp package
      reads it), or only its first capturing group when it has one
  NAME key:KEYREGEXP
      redact the value of every field and assignment whose name KEYREGEXP
      matches: "NAME": "value" in JSON (also in JSON nested in a JSON
      string), and NAME=value, NAME = value or NAME: value in text
  NAME key:KEYREGEXP REGEXP
      the same, but only what REGEXP matches in such a value (or its
      first group)

NAME is the kind in the placeholders, as in <redacted:NAME:1>: lower-case
letters, digits and dashes, starting with a letter. KEYREGEXP ends at the
first space or tab; REGEXP is the rest of the line (it may hold spaces).
Matching is case-sensitive unless the regexp says (?i). Examples:

  # Acme's API tokens, wherever they appear
  acme-token     acme_(?:live|test)_[0-9a-f]{32}
  # whatever a field named like internal_password holds
  acme-password  key:(?i)^internal_pass(word)?$
  # only the digits of a ticket: ticket-<redacted:ticket:1>
  ticket         ticket-([0-9]{4,})
`

// Rule is a named redaction rule: Regexp finds values anywhere, Key finds
// the values of fields and assignments by their names (and Regexp, when
// set too, narrows those values). Name is the kind in placeholders.
type Rule struct {
	Name   string
	Regexp *regexp.Regexp
	Key    *regexp.Regexp
}

var ruleNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// ParseRules reads a rule file (see RulesFormat); file names it in error
// messages, which give the line of each problem.
func ParseRules(r io.Reader, file string) ([]Rule, error) {
	var rules []Rule
	var errs []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Sprintf("%s:%d: %s", file, n, fmt.Sprintf(format, args...)))
		}
		name, rest, _ := strings.Cut(line, " ")
		if i := strings.IndexAny(name, "\t"); i >= 0 {
			name, rest = name[:i], name[i+1:]+" "+rest
		}
		rest = strings.TrimSpace(rest)
		if !ruleNameRE.MatchString(name) {
			bad("rule name %q: want lower-case letters, digits and dashes, starting with a letter", name)
			continue
		}
		ru := Rule{Name: name}
		if k, ok := strings.CutPrefix(rest, "key:"); ok {
			keyText, more, _ := strings.Cut(strings.ReplaceAll(k, "\t", " "), " ")
			if keyText == "" {
				bad("key: needs a regexp for the names, as in key:(?i)password")
				continue
			}
			re, err := regexp.Compile(keyText)
			if err != nil {
				bad("key regexp: %v", err)
				continue
			}
			ru.Key = re
			rest = strings.TrimSpace(more)
		}
		if rest != "" {
			re, err := regexp.Compile(rest)
			if err != nil {
				bad("regexp: %v", err)
				continue
			}
			if re.MatchString("") {
				bad("regexp %q matches the empty string", rest)
				continue
			}
			ru.Regexp = re
		}
		if ru.Regexp == nil && ru.Key == nil {
			bad("rule %s has no regexp: want NAME REGEXP, NAME key:KEYREGEXP or NAME key:KEYREGEXP REGEXP", name)
			continue
		}
		rules = append(rules, ru)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return rules, nil
}

// ReadRulesFile reads the rule file at path (see RulesFormat).
func ReadRulesFile(path string) ([]Rule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading redaction rules: %w", err)
	}
	defer f.Close()
	return ParseRules(f, path)
}

// Fields and assignments, for key rules: "name": "value" in JSON, the same
// with escaped quotes in JSON nested in a string, and name=value,
// name = value, name: value in text (the value quoted or not).
var (
	jsonPairRE    = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	escJSONPairRE = regexp.MustCompile(`\\"((?:[^"\\]|\\[^"])*)\\"\s*:\s*\\"((?:[^"\\]|\\[^"])*)\\"`)
	assignPairRE  = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*(?::=|=>|=|:)[ \t]*(?:"([^"\\\s]+)"|\\"([^"\\\s]+)\\"|'([^'\\\s]+)'|([^\s"'\\,;&<>]+))`)
)

// rule turns a Rule into what find runs.
func (ru Rule) rule() rule {
	kind := Kind(ru.Name)
	if ru.Key == nil {
		return rule{kind: kind, re: ru.Regexp}
	}
	key, value := ru.Key, ru.Regexp
	return rule{kind: kind, spans: func(s string) [][2]int {
		var out [][2]int
		for _, re := range []*regexp.Regexp{jsonPairRE, escJSONPairRE, assignPairRE} {
			for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
				name := s[loc[2]:loc[3]]
				if re == assignPairRE && loc[2] > 0 && s[loc[2]-1] == '\\' && oddBackslashes(s, loc[2]-1) {
					name = name[1:] // the n of a \n escape before the name
				}
				if !key.MatchString(name) {
					continue
				}
				vs, ve := -1, -1
				for g := 4; g+1 < len(loc); g += 2 {
					if loc[g] >= 0 {
						vs, ve = loc[g], loc[g+1]
						break
					}
				}
				if vs < 0 || vs == ve {
					continue
				}
				if value == nil {
					out = append(out, [2]int{vs, ve})
					continue
				}
				for _, m := range value.FindAllStringSubmatchIndex(s[vs:ve], -1) {
					start, end := m[0], m[1]
					for g := 2; g+1 < len(m); g += 2 {
						if m[g] >= 0 {
							start, end = m[g], m[g+1]
							break
						}
					}
					if start < end {
						out = append(out, [2]int{vs + start, vs + end})
					}
				}
			}
		}
		return out
	}}
}
