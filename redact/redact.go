// Package redact removes secrets and personal paths from recorded CLI
// traffic before anything is saved.
//
// A Redactor replaces every secret with a stable placeholder: the same
// secret always becomes the same placeholder for as long as the Redactor
// lives (one recording, or every file of one recording session when the
// Redactor is reused), and two different secrets become two different
// placeholders. So ids and keys that pair up in the original still pair up
// in the redacted text, and a reader can tell how many distinct secrets
// there were without learning any of them.
//
// Placeholders look like <redacted:anthropic-key:1>. They contain no quote,
// backslash or control character, so redacting a raw JSON line (or a JSON
// document nested as an escaped string inside one) keeps it valid JSON, and
// a match never ends inside or starts in the middle of a JSON escape
// sequence. Input may be arbitrary bytes: invalid UTF-8 is passed through.
// Placeholders already in the text are never replaced again.
//
// What is found: API keys (Anthropic sk-ant-..., OpenAI sk-/sk-proj-...,
// Google AIza..., GitHub gh?_..., AWS AKIA...), the values of generic
// assignments such as FOO_API_KEY=value and JSON fields such as
// "api_key": "...", bearer and other Authorization tokens, e-mail
// addresses, the user's home directory and the working directory (also in
// JSON-escaped form and in the dash-separated form Claude Code uses for its
// project directories), and whatever literal strings and regular
// expressions Options adds.
package redact

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Kind names a class of redacted value in placeholders and in the Report.
type Kind string

// The kinds a Redactor reports.
const (
	// AnthropicKey is an Anthropic API or OAuth key (sk-ant-...).
	AnthropicKey Kind = "anthropic-key"
	// OpenAIKey is an OpenAI key (sk-..., sk-proj-..., sk-svcacct-...).
	OpenAIKey Kind = "openai-key"
	// GoogleKey is a Google API key (AIza...).
	GoogleKey Kind = "google-key"
	// GitHubToken is a GitHub token (ghp_..., gho_..., github_pat_...).
	GitHubToken Kind = "github-token"
	// AWSKey is an AWS access key id (AKIA..., ASIA...).
	AWSKey Kind = "aws-key"
	// APIKey is the value of a generic secret assignment (FOO_API_KEY=v,
	// "api_key": "v", "password": "v", ...).
	APIKey Kind = "api-key"
	// BearerToken is the credential of an Authorization header or a
	// "Bearer ..." string.
	BearerToken Kind = "bearer-token"
	// Email is an e-mail address.
	Email Kind = "email"
	// Home is the user's home directory, replaced by Options.HomeAs.
	Home Kind = "home"
	// Cwd is the working directory, replaced by Options.CwdAs.
	Cwd Kind = "cwd"
	// Secret is a value from Options.Secrets (for instance the value of an
	// environment variable named like a credential).
	Secret Kind = "secret"
	// Literal is a string from Options.Literals.
	Literal Kind = "literal"
	// Pattern is a match of a regular expression from Options.Patterns.
	Pattern Kind = "pattern"
)

// Default placeholders for the home and working directories.
const (
	DefaultHomeAs = "/home/user"
	DefaultCwdAs  = "<cwd>"
)

// Options say what a Redactor knows beyond the built-in patterns.
type Options struct {
	// Home is the user's home directory ($HOME); every occurrence of it as
	// a path prefix is replaced by HomeAs. Empty or "/" disables this.
	Home string
	// HomeAs replaces Home; empty means DefaultHomeAs ("/home/user").
	HomeAs string
	// Cwd is the working directory of the recorded process; it is replaced
	// by CwdAs wherever it appears as a path prefix (before Home, so a
	// working directory under the home directory becomes CwdAs). Empty or
	// "/" disables this.
	Cwd string
	// CwdAs replaces Cwd; empty means DefaultCwdAs ("<cwd>").
	CwdAs string
	// Secrets are values known to be secret, such as the values of
	// credential environment variables; each is replaced wherever it
	// occurs. Values shorter than 6 bytes are ignored: replacing "1" or
	// "true" everywhere would destroy the text and protect nothing.
	Secrets []string
	// Literals are further strings to replace wherever they occur (a user
	// name, a host name, a project code name), also in their JSON-escaped
	// forms. Empty strings are ignored. A literal holding a quote can
	// change the structure of a JSON document nested in a string (the
	// outer line stays valid JSON).
	Literals []string
	// Patterns are further regular expressions to redact. When a pattern
	// has capturing groups, only the text of the first group that took
	// part in the match is replaced (so `token=(\w+)` keeps "token=");
	// otherwise the whole match is.
	Patterns []*regexp.Regexp
}

// rule finds one kind of value.
type rule struct {
	kind Kind
	re   *regexp.Regexp // group 1, when the pattern has one and it matched, is the value
	lit  string         // or a literal
	// pathEnd makes a literal match only when the next byte cannot
	// continue a file name, so /home/al does not match /home/alice.
	pathEnd bool
	// slugEnd is pathEnd for the dash-separated project form: the next byte
	// must not be a letter or digit.
	slugEnd bool
	// hint is a substring the text must contain for re to be worth
	// running; hintFold is one it must contain ignoring ASCII case.
	hint, hintFold string
	// accept, when set, must approve the value.
	accept func(string) bool
	// fixed is the replacement for home and working directories; secrets
	// get numbered placeholders instead.
	fixed string
}

// Redactor replaces secrets with stable placeholders. It is safe for
// concurrent use.
type Redactor struct {
	rules []rule

	mu           sync.Mutex
	placeholders map[string]string // secret -> placeholder
	next         map[Kind]int      // placeholders handed out per kind
	counts       map[Kind]int      // replacements per kind
}

// Built-in patterns.
var (
	placeholderRE = regexp.MustCompile(`<redacted:[a-z-]+:[0-9]+>`)
	anthropicRE   = regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]+`)
	openAIRE      = regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{16,}`)
	googleRE      = regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)
	githubRE      = regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`)
	awsRE         = regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)
	// Authorization: Bearer x / Basic x / Token x, in headers, JSON and
	// escaped JSON.
	authHeaderRE = regexp.MustCompile(`(?i)authorization\\?["']?\s*[:=]\s*\\?["']?(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=-]+)`)
	bearerRE     = regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})`)
	// "api_key": "value" in JSON, and \"api_key\": \"value\" in JSON
	// nested as a string.
	secretName     = `[A-Za-z0-9_-]*(?i:api[_-]?key|secret|password|passwd|access[_-]?token|refresh[_-]?token|auth[_-]?token|id[_-]?token|session[_-]?token|private[_-]?key|client[_-]?secret)`
	jsonFieldRE    = regexp.MustCompile(`"` + secretName + `"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	escJSONFieldRE = regexp.MustCompile(`\\"` + secretName + `\\"\s*:\s*\\"((?:[^"\\]|\\[^"])*)\\"`)
	// NAME=value, NAME="value", NAME=\"value\" (in a JSON string) and
	// NAME='value'. A double-quoted value never starts with what may
	// follow a JSON string's closing quote, so `"X_TOKEN=","b"` is left
	// alone.
	assignmentRE = regexp.MustCompile(`(?i)\b[A-Za-z0-9_]*(?:api[_-]?key|apikey|secret|token|password|passwd|access[_-]?key)=` +
		`(?:"([^\s"\\,:}\]<$]+)"|\\"([^\s"\\<$]+)\\"|'([^\s'"\\<$]+)'|([^\s"'\\&;,<>$#][^\s"'\\&;,<>]*))`)
	emailRE         = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
	bearerLooksReal = func(s string) bool {
		return len(s) >= 20 || strings.ContainsAny(s, "0123456789._~+/=")
	}
)

// New returns a Redactor for opts.
func New(opts Options) *Redactor {
	r := &Redactor{placeholders: map[string]string{}, next: map[Kind]int{}, counts: map[Kind]int{}}
	add := func(ru rule) { r.rules = append(r.rules, ru) }

	// Specific shapes first: where two matches start at the same byte, the
	// earlier rule names the kind.
	add(rule{kind: AnthropicKey, re: anthropicRE, hint: "sk-ant-"})
	add(rule{kind: OpenAIKey, re: openAIRE, hint: "sk-"})
	add(rule{kind: GoogleKey, re: googleRE, hint: "AIza"})
	add(rule{kind: GitHubToken, re: githubRE, hint: "_"})
	add(rule{kind: AWSKey, re: awsRE, hint: "A"})
	add(rule{kind: BearerToken, re: authHeaderRE, hintFold: "authorization"})
	add(rule{kind: BearerToken, re: bearerRE, hintFold: "bearer", accept: bearerLooksReal})
	add(rule{kind: APIKey, re: jsonFieldRE, hint: `"`})
	add(rule{kind: APIKey, re: escJSONFieldRE, hint: `\"`})
	add(rule{kind: APIKey, re: assignmentRE, hint: "="})
	add(rule{kind: Email, re: emailRE, hint: "@"})

	for _, s := range opts.Secrets {
		if len(s) >= 6 {
			for _, f := range stringForms(s) {
				add(rule{kind: Secret, lit: f})
			}
		}
	}
	for _, s := range opts.Literals {
		if s != "" {
			for _, f := range stringForms(s) {
				add(rule{kind: Literal, lit: f})
			}
		}
	}
	for _, re := range opts.Patterns {
		if re != nil {
			add(rule{kind: Pattern, re: re})
		}
	}

	homeAs, cwdAs := opts.HomeAs, opts.CwdAs
	if homeAs == "" {
		homeAs = DefaultHomeAs
	}
	if cwdAs == "" {
		cwdAs = DefaultCwdAs
	}
	// The working directory before the home directory: it is usually
	// under it, and the longer match must win.
	for _, p := range pathForms(opts.Cwd) {
		add(rule{kind: Cwd, lit: p, pathEnd: true, fixed: cwdAs})
	}
	for _, p := range pathForms(opts.Home) {
		add(rule{kind: Home, lit: p, pathEnd: true, fixed: homeAs})
	}
	// Claude Code names project directories after the path with every
	// non-alphanumeric byte replaced by '-'. A one-component path
	// ("/root" as "-root") is too likely to be a word in a name.
	if deep(opts.Cwd) {
		add(rule{kind: Cwd, lit: slug(opts.Cwd), slugEnd: true, fixed: slug(cwdAs)})
	}
	if deep(opts.Home) {
		add(rule{kind: Home, lit: slug(opts.Home), slugEnd: true, fixed: slug(homeAs)})
	}
	return r
}

// pathForms returns the spellings of a directory to look for: as it is, as
// JSON escapes it, with non-ASCII escaped, with slashes escaped, and its
// symlink-free form (a child may report its resolved working directory).
func pathForms(p string) []string {
	p = strings.TrimRight(p, "/")
	if p == "" {
		return nil
	}
	bases := []string{p}
	if resolved, err := filepath.EvalSymlinks(p); err == nil && resolved != p && resolved != "/" && resolved != "." {
		bases = append(bases, resolved)
	}
	var out []string
	for _, b := range bases {
		out = append(out, stringForms(b)...)
	}
	for _, f := range out {
		if strings.Contains(f, "/") {
			out = appendNew(out, strings.ReplaceAll(f, "/", `\/`))
		}
	}
	return out
}

// stringForms returns s, its JSON-escaped form and its JSON-escaped form
// with non-ASCII as \uXXXX (as Python's json.dumps writes it), without
// duplicates.
func stringForms(s string) []string {
	out := []string{s}
	out = appendNew(out, jsonEscape(s))
	out = appendNew(out, asciiEscape(jsonEscape(s)))
	return out
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// jsonEscape returns s as it appears inside a JSON string.
func jsonEscape(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return s
	}
	q := strings.TrimSuffix(b.String(), "\n")
	if len(q) < 2 {
		return s
	}
	return q[1 : len(q)-1]
}

// asciiEscape rewrites every non-ASCII rune as \uXXXX (surrogate pairs
// above the BMP).
func asciiEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// slug is Claude Code's project-directory form of a path: every byte that
// is not an ASCII letter or digit becomes '-'.
func slug(p string) string {
	p = strings.TrimRight(p, "/")
	if p == "" {
		return ""
	}
	b := []byte(p)
	for i, c := range b {
		if !isAlnum(c) {
			b[i] = '-'
		}
	}
	return string(b)
}

// deep reports whether an absolute path has at least two components.
func deep(p string) bool {
	p = strings.Trim(p, "/")
	return p != "" && strings.Contains(p, "/")
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isNameByte reports whether c can continue a file name.
func isNameByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '-' || c >= 0x80
}

// span is one value found in the text.
type span struct {
	start, end int
	rule       int
}

// String returns s with every secret replaced by its placeholder and the
// home and working directories by theirs.
func (r *Redactor) String(s string) string {
	spans := r.find(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sp := range spans {
		ru := &r.rules[sp.rule]
		b.WriteString(s[last:sp.start])
		last = sp.end
		value := s[sp.start:sp.end]
		rep := ru.fixed
		if rep == "" {
			rep = r.placeholderLocked(ru.kind, value)
		}
		if rep != value {
			r.counts[ru.kind]++
		}
		b.WriteString(rep)
	}
	b.WriteString(s[last:])
	return b.String()
}

// Bytes is String for a byte slice.
func (r *Redactor) Bytes(p []byte) []byte {
	return []byte(r.String(string(p)))
}

// placeholderLocked returns the placeholder of value, handing out the next
// number of kind for a value not seen before.
func (r *Redactor) placeholderLocked(kind Kind, value string) string {
	if p, ok := r.placeholders[value]; ok {
		return p
	}
	r.next[kind]++
	p := "<redacted:" + string(kind) + ":" + strconv.Itoa(r.next[kind]) + ">"
	r.placeholders[value] = p
	return p
}

// find returns the non-overlapping spans to replace, in order. Where
// matches overlap, the one starting first wins (then the earlier rule,
// then the longer match) and the later one keeps only what reaches past
// it, so no byte of any found value survives. Existing placeholders are
// never replaced, nor split.
func (r *Redactor) find(s string) []span {
	var all []span
	for i := range r.rules {
		ru := &r.rules[i]
		if ru.lit != "" {
			for from := 0; ; {
				j := strings.Index(s[from:], ru.lit)
				if j < 0 {
					break
				}
				start := from + j
				end := start + len(ru.lit)
				from = start + 1
				if ru.pathEnd && end < len(s) && isNameByte(s[end]) {
					continue
				}
				if ru.slugEnd && end < len(s) && isAlnum(s[end]) {
					continue
				}
				if skipEscape(s, start) != start || finishEscape(s, end) != end {
					// Not the literal, but part of a JSON escape
					// sequence (the n of \n, the \ of \").
					continue
				}
				all = append(all, span{start, end, i})
			}
			continue
		}
		if ru.hint != "" && !strings.Contains(s, ru.hint) || ru.hintFold != "" && !containsFold(s, ru.hintFold) {
			continue
		}
		for _, loc := range ru.re.FindAllStringSubmatchIndex(s, -1) {
			// The first group that took part is the value; with none,
			// the whole match.
			start, end := loc[0], loc[1]
			for g := 2; g+1 < len(loc); g += 2 {
				if loc[g] >= 0 {
					start, end = loc[g], loc[g+1]
					break
				}
			}
			if ru.accept != nil && !ru.accept(s[start:end]) {
				continue
			}
			all = appendSpan(all, s, start, end, i)
		}
	}
	if len(all) == 0 {
		return nil
	}
	sort.Slice(all, func(a, b int) bool {
		x, y := all[a], all[b]
		if x.start != y.start {
			return x.start < y.start
		}
		if x.rule != y.rule {
			return x.rule < y.rule
		}
		return x.end > y.end
	})
	var keep [][]int
	if strings.Contains(s, "<redacted:") {
		keep = placeholderRE.FindAllStringIndex(s, -1)
	}
	var out []span
	done := 0
	for _, sp := range all {
		if sp.start < done {
			sp.start = done
		}
		if sp.start >= sp.end {
			continue
		}
		done = sp.end
		// Cut the placeholders out of the span.
		for _, k := range keep {
			if k[1] <= sp.start || k[0] >= sp.end {
				continue
			}
			if k[0] > sp.start {
				out = append(out, span{sp.start, k[0], sp.rule})
			}
			sp.start = k[1]
		}
		if sp.start < sp.end {
			out = append(out, sp)
		}
	}
	return out
}

// appendSpan adds a match, widened so that it neither starts nor ends
// inside a JSON escape sequence.
func appendSpan(all []span, s string, start, end, rule int) []span {
	start = skipEscape(s, start)
	end = finishEscape(s, end)
	if start >= end {
		return all
	}
	return append(all, span{start, end, rule})
}

// escapeAround reports whether a cut before byte p would fall inside a
// JSON escape sequence (\n, \", \u00e9), and if so where that escape ends.
func escapeAround(s string, p int) (end int, inside bool) {
	for b := p - 1; b >= 0 && b >= p-5; b-- {
		if s[b] != '\\' {
			continue
		}
		run := 0
		for i := b; i >= 0 && s[i] == '\\'; i-- {
			run++
		}
		if run%2 == 0 {
			// s[b] is the second half of an escaped backslash, which ends
			// at b+1: p is inside it only if p == b+1, and p > b+1 here
			// unless b == p-1, where an even run means no open escape.
			return p, false
		}
		if b == p-1 {
			if p < len(s) && s[p] == 'u' && p+5 <= len(s) && isHex(s[p+1:p+5]) {
				return p + 5, true
			}
			return p + 1, true
		}
		if s[b+1] == 'u' && b+6 <= len(s) && isHex(s[b+2:b+6]) {
			return b + 6, true
		}
		return p, false
	}
	return p, false
}

// skipEscape moves a match start that falls inside a JSON escape past
// the escape, so a replacement never splits one.
func skipEscape(s string, start int) int {
	if end, inside := escapeAround(s, start); inside && start < len(s) {
		return end
	}
	return start
}

// finishEscape moves a match end that falls inside a JSON escape past
// the rest of the escape.
func finishEscape(s string, end int) int {
	if e, inside := escapeAround(s, end); inside && end < len(s) {
		return e
	}
	return end
}

// containsFold reports whether s contains lower (lower-case ASCII),
// ignoring ASCII case, without copying s.
func containsFold(s, lower string) bool {
	first, upper := lower[0], lower[0]-'a'+'A'
	for i := 0; i+len(lower) <= len(s); i++ {
		if c := s[i]; (c == first || c == upper) && strings.EqualFold(s[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// Count is how often one kind of value was replaced.
type Count struct {
	// Kind is what was replaced.
	Kind Kind
	// Replacements counts every replacement.
	Replacements int
	// Distinct counts the different values replaced (placeholders handed
	// out); 1 for the home and working directories.
	Distinct int
}

// Report lists what a Redactor replaced, by kind, never the values.
type Report []Count

// Report returns what was replaced so far, sorted by kind.
func (r *Redactor) Report() Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	var rep Report
	for k, n := range r.counts {
		d := r.next[k]
		if k == Home || k == Cwd {
			d = 1
		}
		rep = append(rep, Count{Kind: k, Replacements: n, Distinct: d})
	}
	sort.Slice(rep, func(i, j int) bool { return rep[i].Kind < rep[j].Kind })
	return rep
}

// Total is the number of replacements of every kind.
func (rep Report) Total() int {
	n := 0
	for _, c := range rep {
		n += c.Replacements
	}
	return n
}

// String renders the report as "anthropic-key 2 (1 distinct), home 5", or
// "nothing" when nothing was replaced.
func (rep Report) String() string {
	if len(rep) == 0 {
		return "nothing"
	}
	parts := make([]string, len(rep))
	for i, c := range rep {
		if c.Kind == Home || c.Kind == Cwd {
			parts[i] = fmt.Sprintf("%s %d", c.Kind, c.Replacements)
		} else {
			parts[i] = fmt.Sprintf("%s %d (%d distinct)", c.Kind, c.Replacements, c.Distinct)
		}
	}
	return strings.Join(parts, ", ")
}

// EnvSecrets returns the values of the variables in environ (KEY=VALUE
// entries, as os.Environ gives them) whose names look like credentials
// (they contain KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or AUTH),
// for Options.Secrets.
func EnvSecrets(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || value == "" {
			continue
		}
		if SecretName(name) {
			out = append(out, value)
		}
	}
	return out
}

// SecretName reports whether an environment variable name looks like it
// holds a credential.
func SecretName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	// AUTH and AUTHORIZATION, but not AUTHOR (GIT_AUTHOR_NAME).
	return strings.Contains(u, "AUTHORIZ") || strings.Contains(strings.ReplaceAll(u, "AUTHOR", ""), "AUTH")
}
