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
// What is found: API keys and tokens by their shapes (Anthropic
// sk-ant-..., OpenAI sk-/sk-proj-..., Google AIza..., GitHub gh?_... and
// github_pat_..., AWS AKIA.../ASIA..., Slack xox?-... and webhook URLs,
// Stripe sk_live_..., npm npm_..., Hugging Face hf_..., GitLab glpat-...,
// Twilio SK..., SendGrid SG...., DigitalOcean dop_v1_..., Mailgun key-...,
// Shopify shpat_..., PyPI pypi-..., JWTs), PEM private key bodies (also
// inside JSON strings, where their newlines are \n escapes), Azure
// storage account keys and SAS signatures, the values of generic
// assignments such as FOO_API_KEY=value, "aws_secret_access_key = ..." and
// "password: ...", of JSON fields such as "api_key": "..." and
// "SecretAccessKey": "...", bearer and other Authorization tokens, the
// password of a URL (scheme://user:password@host, whatever characters
// RFC 3986 lets it hold, also JSON-escaped),
// base64-encoded text holding any of these, e-mail addresses, the user's
// home directory, the working directory and further directories of the
// machine (also in JSON-escaped form and in the dash-separated form Claude
// Code uses for its project directories), and whatever literal strings,
// regular expressions and rules (see Rule and ParseRules) Options adds.
//
// Lines redacts the lines of an output stream together, so that a secret
// split across consecutive streamed text deltas is found too.
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
	// URLPassword is the password of a URL's userinfo
	// (scheme://user:password@host).
	URLPassword Kind = "url-password"
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
	// JWT is a JSON Web Token (eyJ....eyJ....sig).
	JWT Kind = "jwt"
	// PrivateKey is the body of a PEM private key (the BEGIN and END lines
	// are kept).
	PrivateKey Kind = "private-key"
	// SlackToken is a Slack token (xoxb-..., xoxp-..., xapp-...).
	SlackToken Kind = "slack-token"
	// SlackWebhook is the secret path of a Slack webhook URL.
	SlackWebhook Kind = "slack-webhook"
	// StripeKey is a Stripe secret or restricted key (sk_live_...,
	// rk_live_...) or webhook secret (whsec_...).
	StripeKey Kind = "stripe-key"
	// NpmToken is an npm access token (npm_...).
	NpmToken Kind = "npm-token"
	// HuggingFaceToken is a Hugging Face token (hf_..., api_org_...).
	HuggingFaceToken Kind = "huggingface-token"
	// GitLabToken is a GitLab token (glpat-..., gldt-, glrt-, ...).
	GitLabToken Kind = "gitlab-token"
	// TwilioKey is a Twilio API key (SK and 32 hex digits).
	TwilioKey Kind = "twilio-key"
	// SendGridKey is a SendGrid API key (SG.x.y).
	SendGridKey Kind = "sendgrid-key"
	// DigitalOceanToken is a DigitalOcean token (dop_v1_..., doo_v1_,
	// dor_v1_).
	DigitalOceanToken Kind = "digitalocean-token"
	// MailgunKey is a Mailgun API key (key-... and pubkey-...).
	MailgunKey Kind = "mailgun-key"
	// ShopifyToken is a Shopify token (shpat_..., shpss_, shpca_, shppa_).
	ShopifyToken Kind = "shopify-token"
	// PyPIToken is a PyPI upload token (pypi-AgEIcHlwaS5vcmc...).
	PyPIToken Kind = "pypi-token"
	// AzureKey is an Azure storage account key, shared access key or SAS
	// signature.
	AzureKey Kind = "azure-key"
	// Base64Secret is base64-encoded text that holds a secret.
	Base64Secret Kind = "base64-secret"
	// Path is a directory of the user's machine from Options.Dirs.
	Path Kind = "path"
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
	// Rules are further named rules, such as a rule file holds (see
	// ParseRules); their names are the kinds in placeholders.
	Rules []Rule
	// Dirs are further directories that name the user's machine (the
	// directories above a throwaway home, a git repository holding it,
	// the real home when Home is a throwaway one, the temporary
	// directory, a socket directory), each replaced as Home and Cwd are:
	// wherever it appears as a path prefix, also JSON-escaped, resolved
	// through symbolic links, and in Claude Code's dash-separated form
	// when it has two components or more. Cwd and Home win where they
	// overlap, then the longer directory.
	Dirs []Dir
}

// Dir is a directory to redact and its replacement.
type Dir struct {
	// Path is the directory; "", "/" and relative paths are ignored.
	Path string
	// As replaces it; "" means a placeholder <redacted:path:N>, numbered
	// per directory (its dash-separated form gets the same one).
	As string
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
	// running; hintFold is one it must contain ignoring ASCII case; and
	// the text must contain one of hints, when there are any.
	hint, hintFold string
	hints          []string
	// accept, when set, must approve the value.
	accept func(string) bool
	// wordStart makes a match count only where a word starts: at the
	// start of the text, after a byte that cannot be part of a word, or
	// after a JSON escape such as \n (where the regexp's \b would see the
	// n of the escape as part of the word).
	wordStart bool
	// spans, when set, finds the values itself (start, end pairs).
	spans func(s string) [][2]int
	// fixed is the replacement for home and working directories; secrets
	// get numbered placeholders instead.
	fixed string
	// key, when set, is what the numbered placeholder is handed out for
	// instead of the matched text (a directory's spellings share one).
	key string
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
	placeholderRE = regexp.MustCompile(`<redacted:[a-z0-9-]+:[0-9]+>`)
	anthropicRE   = regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]+`)
	openAIRE      = regexp.MustCompile(`sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{16,}`)
	googleRE      = regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`)
	githubRE      = regexp.MustCompile(`(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`)
	awsRE         = regexp.MustCompile(`(?:AKIA|ASIA)[0-9A-Z]{16}\b`)
	// Token shapes after the public rule sets of secret scanners.
	jwtRE          = regexp.MustCompile(`ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*`)
	slackTokenRE   = regexp.MustCompile(`(?:xox[abposre]|xapp|xoxe\.xox[bp])-[0-9A-Za-z-]{10,}`)
	slackWebhookRE = regexp.MustCompile(`hooks\.slack\.com(?:\\?/)+(?:services|workflows|triggers)(?:\\?/)+((?:[A-Za-z0-9_+-]|\\?/)+)`)
	stripeRE       = regexp.MustCompile(`(?:(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z]{20,})`)
	npmRE          = regexp.MustCompile(`npm_[A-Za-z0-9]{36}\b`)
	huggingFaceRE  = regexp.MustCompile(`(?:hf_|api_org_)[A-Za-z0-9]{30,}`)
	gitlabRE       = regexp.MustCompile(`gl(?:pat|dt|ptt|rt|soat|ft|imt|cbt|oas|agent)-[0-9A-Za-z_-]{20,}`)
	twilioRE       = regexp.MustCompile(`SK[0-9a-fA-F]{32}\b`)
	sendGridRE     = regexp.MustCompile(`SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`)
	digitalOceanRE = regexp.MustCompile(`do[por]_v1_[a-f0-9]{64}\b`)
	mailgunRE      = regexp.MustCompile(`(?:pub)?key-[0-9a-f]{32}\b`)
	shopifyRE      = regexp.MustCompile(`shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`)
	pypiRE         = regexp.MustCompile(`pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`)
	azureKeyRE     = regexp.MustCompile(`(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})`)
	azureSigRE     = regexp.MustCompile(`[?&;]sig=([A-Za-z0-9%+/=]{20,})`)
	// A PEM private key: the body between the BEGIN and END lines, whose
	// line breaks are real, or \n escapes in a JSON string (\\n in one
	// nested in another); and the body after a BEGIN line whose END did
	// not come (a cut-off key).
	pemRE    = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----((?:[A-Za-z0-9+/=\s:,.-]|\\+[nrt])+?)-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	pemCutRE = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----((?:[A-Za-z0-9+/=\s]|\\+[nrt]){40,})`)
	// Authorization: Bearer x / Basic x / Token x, in headers, JSON and
	// escaped JSON.
	authHeaderRE = regexp.MustCompile(`(?i)authorization\\?["']?\s*[:=]\s*\\?["']?(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=-]+)`)
	bearerRE     = regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})`)
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

	// Where two matches start at the same byte, the earlier rule names the
	// kind. A rule file's rules come first, so that their names win over
	// the built-in ones; then specific shapes before generic ones.
	for _, ru := range opts.Rules {
		add(ru.rule())
	}
	add(rule{kind: PrivateKey, re: pemRE, hint: "PRIVATE KEY"})
	add(rule{kind: PrivateKey, re: pemCutRE, hint: "PRIVATE KEY"})
	add(rule{kind: AnthropicKey, re: anthropicRE, hint: "sk-ant-"})
	add(rule{kind: OpenAIKey, re: openAIRE, hint: "sk-", wordStart: true})
	add(rule{kind: GoogleKey, re: googleRE, hint: "AIza", wordStart: true})
	add(rule{kind: GitHubToken, re: githubRE, hints: []string{"gh", "github_pat_"}, wordStart: true})
	add(rule{kind: AWSKey, re: awsRE, hints: []string{"AKIA", "ASIA"}, wordStart: true})
	add(rule{kind: SlackToken, re: slackTokenRE, hints: []string{"xox", "xapp-"}, wordStart: true})
	add(rule{kind: SlackWebhook, re: slackWebhookRE, hint: "hooks.slack.com"})
	add(rule{kind: StripeKey, re: stripeRE, hints: []string{"_live_", "_test_", "_prod_", "whsec_"}, wordStart: true})
	add(rule{kind: NpmToken, re: npmRE, hint: "npm_", wordStart: true})
	add(rule{kind: HuggingFaceToken, re: huggingFaceRE, hints: []string{"hf_", "api_org_"}, wordStart: true})
	add(rule{kind: GitLabToken, re: gitlabRE, hint: "gl", wordStart: true})
	add(rule{kind: TwilioKey, re: twilioRE, hint: "SK", wordStart: true})
	add(rule{kind: SendGridKey, re: sendGridRE, hint: "SG.", wordStart: true})
	add(rule{kind: DigitalOceanToken, re: digitalOceanRE, hint: "_v1_", wordStart: true})
	add(rule{kind: MailgunKey, re: mailgunRE, hint: "key-", wordStart: true})
	add(rule{kind: ShopifyToken, re: shopifyRE, hint: "shp", wordStart: true})
	add(rule{kind: PyPIToken, re: pypiRE, hint: "pypi-", wordStart: true})
	add(rule{kind: AzureKey, re: azureKeyRE, hintFold: "key="})
	add(rule{kind: AzureKey, re: azureSigRE, hint: "sig="})
	add(rule{kind: BearerToken, re: authHeaderRE, hintFold: "authorization"})
	add(rule{kind: BearerToken, re: bearerRE, hintFold: "bearer", accept: bearerLooksReal})
	add(rule{kind: JWT, re: jwtRE, hint: "ey", wordStart: true})
	// "api_key": "value" in JSON (also nested as a string), and
	// aws_secret_access_key = value, password: value in text.
	add(rule{kind: APIKey, spans: fieldSpans})
	add(rule{kind: APIKey, re: assignmentRE, hint: "="})
	add(rule{kind: URLPassword, spans: urlSpans, hint: "@", hints: []string{"://", `:\`}})
	add(rule{kind: Base64Secret, spans: r.base64Spans})
	add(rule{kind: Email, spans: emailSpans, hint: "@"})

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
	dirs := usableDirs(opts.Dirs)
	for _, d := range dirs {
		for _, p := range pathForms(d.Path) {
			add(rule{kind: Path, lit: p, pathEnd: true, fixed: d.As, key: dirKey(d.Path)})
		}
	}
	for _, d := range dirs {
		if deep(d.Path) {
			fixed := d.As
			if fixed != "" {
				fixed = slug(fixed)
			}
			add(rule{kind: Path, lit: slug(d.Path), slugEnd: true, fixed: fixed, key: dirKey(d.Path)})
		}
	}
	return r
}

// usableDirs returns the absolute directories of dirs, without a trailing
// slash or duplicates, longest first.
func usableDirs(dirs []Dir) []Dir {
	var out []Dir
	seen := map[string]bool{}
	for _, d := range dirs {
		d.Path = strings.TrimRight(d.Path, "/")
		if d.Path == "" || !filepath.IsAbs(d.Path) || seen[d.Path] {
			continue
		}
		seen[d.Path] = true
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Path) > len(out[j].Path) })
	return out
}

// dirKey is what a directory's placeholder is handed out for; it cannot
// be a secret's text.
func dirKey(p string) string { return "\x00dir:" + p }

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
		switch {
		case rep == "" && ru.key != "":
			rep = r.placeholderLocked(ru.kind, ru.key)
		case rep == "":
			rep = r.placeholderLocked(ru.kind, value)
		case ru.key != "":
			// A directory with a fixed replacement still counts once.
			if _, ok := r.placeholders[ru.key]; !ok {
				r.placeholders[ru.key] = rep
				r.next[ru.kind]++
			}
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
	return r.findWith(s, nil)
}

// findWith is find with the rules skip approves left out.
func (r *Redactor) findWith(s string, skip func(*rule) bool) []span {
	var all []span
	for i := range r.rules {
		ru := &r.rules[i]
		if skip != nil && skip(ru) {
			continue
		}
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
		if ru.hint != "" && !strings.Contains(s, ru.hint) || ru.hintFold != "" && !containsFold(s, ru.hintFold) || !containsAny(s, ru.hints) {
			continue
		}
		if ru.spans != nil {
			for _, sp := range ru.spans(s) {
				all = appendSpan(all, s, sp[0], sp[1], i)
			}
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
			if ru.wordStart && !wordStart(s, loc[0]) {
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

// wordStart reports whether a word can start at byte i of s: at the start,
// after a byte that is not a letter, digit or underscore, or right after
// a JSON escape such as \n or \t.
func wordStart(s string, i int) bool {
	if i == 0 || !isWordByte(s[i-1]) {
		return true
	}
	if i >= 2 && s[i-2] == '\\' && strings.IndexByte("nrtbf", s[i-1]) >= 0 {
		run := 0
		for j := i - 2; j >= 0 && s[j] == '\\'; j-- {
			run++
		}
		return run%2 == 1
	}
	return false
}

func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

// valueLooksSecret approves the value of a "name = value" match: not a
// variable or template reference, not a plain word, and not a number,
// since prose and code mention passwords and tokens without giving one.
func valueLooksSecret(v string) bool {
	if len(v) < 8 || strings.ContainsAny(v[:1], "$%{<*") || strings.HasPrefix(v, "<redacted:") {
		return false
	}
	var lower, upper, digit, other bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	if !lower && !upper {
		return false // a number, or punctuation
	}
	if !lower && !digit && strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "" {
		return false // the name of a variable: OPENAI_API_KEY
	}
	n := 0
	for _, b := range []bool{lower, upper, digit, other} {
		if b {
			n++
		}
	}
	return n >= 2
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

// containsAny reports whether s contains one of subs, or subs is empty.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return len(subs) == 0
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
