package redact

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentconform/agentconform/redact/redacttest"
)

// Made-up credentials in the shapes of the real ones.
var (
	antKey1   = "sk-ant-api03-" + strings.Repeat("Ab1_", 10)
	antKey2   = "sk-ant-oat01-" + strings.Repeat("Zz9-", 10)
	openKey   = "sk-proj-" + strings.Repeat("q7W", 12)
	oldOpen   = "sk-" + strings.Repeat("x4Y", 16)
	googleKey = "AIza" + strings.Repeat("Sy8_", 8) + "abc"
	ghToken   = "ghp_" + strings.Repeat("a1B2", 9)
	awsKey    = "AKIA" + "IOSFODNN7EXAMPLE"
	jwt       = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
)

func TestKnownSecretsAreReplaced(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name, in, secret string
		kind             Kind
	}{
		{"anthropic", `{"key":"` + antKey1 + `"}`, antKey1, AnthropicKey},
		{"openai project", "OPENAI " + openKey + " end", openKey, OpenAIKey},
		{"openai legacy", "key " + oldOpen, oldOpen, OpenAIKey},
		{"google", "?key=" + googleKey + "&x=1", googleKey, GoogleKey},
		{"github", "token " + ghToken, ghToken, GitHubToken},
		{"aws", "id " + awsKey + " ok", awsKey, AWSKey},
		{"env assignment", "MY_SERVICE_API_KEY=hunter2hunter2 next", "hunter2hunter2", APIKey},
		{"quoted assignment", `export GEMINI_API_KEY="g3m1n1-secret" ;`, "g3m1n1-secret", APIKey},
		{"query string", "https://x.test/v1?api_key=q9q9q9q9&b=2", "q9q9q9q9", APIKey},
		{"json field", `{"api_key": "abc def 123", "n": 1}`, "abc def 123", APIKey},
		{"json field camel", `{"apiKey":"zzz-top"}`, "zzz-top", APIKey},
		{"json password", `{"user":"u","password":"p@ss\"word"}`, `p@ss\"word`, APIKey},
		{"escaped json field", `{"text":"{\"client_secret\": \"s3cr3t-val\"}"}`, "s3cr3t-val", APIKey},
		{"authorization header", "Authorization: Bearer tok_" + "12345", "tok_12345", BearerToken},
		{"authorization basic", `"authorization":"Basic dXNlcjpwYXNz"`, "dXNlcjpwYXNz", BearerToken},
		{"bearer in json", `{"headers":["Bearer ` + jwt + `"]}`, jwt, BearerToken},
		{"email", "mail alice.smith+cli@example.co.uk now", "alice.smith+cli@example.co.uk", Email},
		{"email after escape", `{"t":"hi\nbob@example.org"}`, "bob@example.org", Email},
		{"email after unicode escape", `{"t":"\u003cbob@example.org\u003e"}`, "bob@example.org", Email},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.String(tt.in)
			if strings.Contains(got, tt.secret) {
				t.Fatalf("secret survived: %s", got)
			}
			if !strings.Contains(got, "<redacted:"+string(tt.kind)+":") {
				t.Errorf("no %s placeholder in %s", tt.kind, got)
			}
			if json.Valid([]byte(tt.in)) && !json.Valid([]byte(got)) {
				t.Errorf("redaction broke the JSON: %s", got)
			}
		})
	}
}

func TestNotSecrets(t *testing.T) {
	r := New(Options{})
	for _, s := range []string{
		`{"type":"result","usage":{"input_tokens":12,"output_tokens":3},"apiKeySource":"ANTHROPIC_API_KEY"}`,
		`task-assessment-and-other-long-words risk-sk-short`,
		`env_key = "OPENAI_API_KEY"`,
		`echo $OPENAI_API_KEY; max_tokens=1024`,
		`bearer tokens are documented`,
		`{"session_id":"4f1c2a9e-8d7b-4c3a-9e1f-0a2b3c4d5e6f","uuid":"x"}`,
		"plain \xff\xfe invalid utf-8",
	} {
		if got := r.String(s); got != s {
			t.Errorf("changed a harmless line:\n in: %s\nout: %s", s, got)
		}
	}
	if rep := r.Report(); len(rep) != 0 {
		t.Errorf("report after harmless lines = %v", rep)
	}
}

func TestPlaceholdersAreStable(t *testing.T) {
	r := New(Options{})
	a := r.String("first " + antKey1 + " and " + antKey2 + " and " + antKey1)
	b := r.String(`{"again":"` + antKey2 + `"}`)
	want := "first <redacted:anthropic-key:1> and <redacted:anthropic-key:2> and <redacted:anthropic-key:1>"
	if a != want {
		t.Errorf("got  %s\nwant %s", a, want)
	}
	if b != `{"again":"<redacted:anthropic-key:2>"}` {
		t.Errorf("second call: %s", b)
	}
	// The same value found by a generic rule keeps the placeholder it got
	// first.
	if c := r.String("ANTHROPIC_API_KEY=" + antKey1); c != "ANTHROPIC_API_KEY=<redacted:anthropic-key:1>" {
		t.Errorf("assignment: %s", c)
	}
	rep := r.Report()
	if len(rep) != 1 || rep[0] != (Count{Kind: AnthropicKey, Replacements: 5, Distinct: 2}) {
		t.Errorf("report = %+v", rep)
	}
	if s := rep.String(); s != "anthropic-key 5 (2 distinct)" || strings.Contains(s, "sk-") {
		t.Errorf("report string = %q", s)
	}
	// A new Redactor starts numbering again.
	if got := New(Options{}).String(antKey2); got != "<redacted:anthropic-key:1>" {
		t.Errorf("fresh redactor: %s", got)
	}
}

func TestIdempotent(t *testing.T) {
	r := New(Options{Home: "/home/alice", Cwd: "/home/alice/proj", Literals: []string{"red"}})
	in := `{"k":"` + openKey + `","p":"/home/alice/proj/a.go","h":"/home/alice/.x","e":"a@b.io","a":"X_TOKEN=abcdef123","b":"Bearer ` + jwt + `"}`
	once := r.String(in)
	twice := r.String(once)
	if once != twice {
		t.Errorf("second pass changed the text:\n%s\n%s", once, twice)
	}
	// The literal "red" must not have eaten into a placeholder.
	rest := regexp.MustCompile(`<redacted:[a-z-]+:[0-9]+>|<cwd>`).ReplaceAllString(once, "")
	if strings.ContainsAny(rest, "<>") {
		t.Errorf("placeholders damaged: %s", once)
	}
	want := `{"k":"<redacted:openai-key:1>","p":"<cwd>/a.go","h":"/home/user/.x","e":"<redacted:email:1>","a":"X_TOKEN=<redacted:api-key:1>","b":"Bearer <redacted:bearer-token:1>"}`
	if once != want {
		t.Errorf("got  %s\nwant %s", once, want)
	}
}

func TestHomeAndCwd(t *testing.T) {
	r := New(Options{Home: "/home/alice", Cwd: "/home/alice/work/proj"})
	tests := map[string]string{
		`{"cwd":"/home/alice/work/proj"}`:                                    `{"cwd":"<cwd>"}`,
		`{"file_path":"/home/alice/work/proj/src/a.go"}`:                     `{"file_path":"<cwd>/src/a.go"}`,
		`cat /home/alice/.bashrc`:                                            `cat /home/user/.bashrc`,
		`/home/alice`:                                                        `/home/user`,
		`/home/alicex/file and /home/alice-old`:                              `/home/alicex/file and /home/alice-old`,
		`/home/alice/work/project2`:                                          `/home/user/work/project2`,
		`{"m":"/home/alice/.claude/projects/-home-alice-work-proj/memory/"}`: `{"m":"/home/user/.claude/projects/-cwd-/memory/"}`,
		`{"m":"-home-alice-other"}`:                                          `{"m":"-home-user-other"}`,
		`{"p":"\/home\/alice\/work\/proj\/x"}`:                               `{"p":"<cwd>\/x"}`,
	}
	for in, want := range tests {
		if got := r.String(in); got != want {
			t.Errorf("String(%s)\n got %s\nwant %s", in, got, want)
		}
	}
	rep := r.Report()
	if len(rep) != 2 || rep[0].Kind != Cwd || rep[1].Kind != Home {
		t.Errorf("report = %+v", rep)
	}

	custom := New(Options{Home: "/Users/bob", HomeAs: "~", Cwd: "/srv/app/", CwdAs: "/work"})
	if got := custom.String("/Users/bob/x /srv/app"); got != "~/x /work" {
		t.Errorf("custom placeholders: %s", got)
	}
	// A home that is already the placeholder is left alone and not counted.
	same := New(Options{Home: "/home/user"})
	if got := same.String("/home/user/x"); got != "/home/user/x" || len(same.Report()) != 0 {
		t.Errorf("identity home: %s %v", got, same.Report())
	}
	if got := New(Options{Home: "/", Cwd: "/"}).String("/etc/passwd"); got != "/etc/passwd" {
		t.Errorf("root home: %s", got)
	}
	// A one-component home is replaced as a path, not as a slug.
	if got := New(Options{Home: "/root"}).String("/root/.claude non-root-user /rootfs"); got != "/home/user/.claude non-root-user /rootfs" {
		t.Errorf("/root home: %s", got)
	}
}

func TestNonASCIIPathInEscapedJSON(t *testing.T) {
	cwd := "/home/zoë/projé"
	r := New(Options{Cwd: cwd})
	py := `{"cwd": "/home/zo\u00eb/proj\u00e9/a"}` // Python's json.dumps
	if got := r.String(py); got != `{"cwd": "<cwd>/a"}` {
		t.Errorf("got %s", got)
	}
	raw, _ := json.Marshal(map[string]string{"cwd": cwd + "/b"})
	if got := r.String(string(raw)); got != `{"cwd":"<cwd>/b"}` {
		t.Errorf("got %s", got)
	}
}

func TestSymlinkedCwd(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	resolved, err := filepath.EvalSymlinks(link)
	if err != nil {
		t.Fatal(err)
	}
	r := New(Options{Cwd: link})
	if got := r.String(resolved + "/f " + link + "/g"); got != "<cwd>/f <cwd>/g" {
		t.Errorf("got %s", got)
	}
}

func TestLiteralsPatternsSecrets(t *testing.T) {
	r := New(Options{
		Literals: []string{"Project Nightjar", `C:\Users\eve`},
		Patterns: []*regexp.Regexp{regexp.MustCompile(`ticket-(\d+)`), regexp.MustCompile(`internal\.corp\.example`)},
		Secrets:  []string{"gw-key-12345", "1", "true"},
	})
	in := `{"t":"Project Nightjar ticket-4711 on internal.corp.example, dir C:\\Users\\eve, key gw-key-12345; true 1"}`
	got := r.String(in)
	for _, s := range []string{"Nightjar", "4711", "corp", `eve`, "gw-key"} {
		if strings.Contains(got, s) {
			t.Errorf("%q survived: %s", s, got)
		}
	}
	if !strings.Contains(got, "ticket-<redacted:pattern:") || !strings.Contains(got, "true 1") {
		t.Errorf("got %s", got)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("invalid JSON: %s", got)
	}
	kinds := map[Kind]bool{}
	for _, c := range r.Report() {
		kinds[c.Kind] = true
	}
	if !kinds[Literal] || !kinds[Pattern] || !kinds[Secret] {
		t.Errorf("report = %v", r.Report())
	}
}

func TestArbitraryBytes(t *testing.T) {
	r := New(Options{Home: "/home/alice"})
	in := []byte("\xff/home/alice/\xfe " + antKey1 + "\x00\xc3")
	got := r.Bytes(in)
	want := []byte("\xff/home/user/\xfe <redacted:anthropic-key:1>\x00\xc3")
	if string(got) != string(want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestConcurrentUseIsConsistent(t *testing.T) {
	r := New(Options{})
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprintf("sk-ant-k%02d-%s", i, strings.Repeat("x", 20))
	}
	var wg sync.WaitGroup
	results := make([][]string, 8)
	for g := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, k := range keys {
				results[g] = append(results[g], r.String(k))
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range keys {
		for g := range results {
			if results[g][i] != results[0][i] {
				t.Fatalf("key %d: %s vs %s", i, results[g][i], results[0][i])
			}
		}
		if seen[results[0][i]] {
			t.Fatalf("two keys share %s", results[0][i])
		}
		seen[results[0][i]] = true
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "OPENAI_API_KEY": true, "GEMINI_API_KEY": true, "ANTHROPIC_AUTH_TOKEN": true,
		"AWS_SECRET_ACCESS_KEY": true, "DB_PASSWORD": true, "PROXY_AUTHORIZATION": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
		"HOME": false, "PATH": false, "GIT_AUTHOR_NAME": false, "CLAUDE_CODE_ENTRYPOINT": false, "TERM": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%s) = %v", name, got)
		}
	}
	got := EnvSecrets([]string{"HOME=/root", "OPENAI_API_KEY=abc", "EMPTY_TOKEN=", "X=Y=Z"})
	if len(got) != 1 || got[0] != "abc" {
		t.Errorf("EnvSecrets = %v", got)
	}
}

// FuzzJSONStaysValid checks that redacting a valid JSON line, even one
// with a JSON document nested in a string, never makes it invalid, and
// that (without user literals, which can change what surrounds a key) a
// second pass changes nothing.
func FuzzJSONStaysValid(f *testing.F) {
	for _, s := range []string{"plain", antKey1, "\n" + "bob@example.org", `a\b@c.io`, "Bearer " + jwt, "X_API_KEY=" + openKey,
		`{"api_key":"` + googleKey + `"}`, "/home/alice/work/proj/é", "\\u00e9/home/alice", `"password":"x\"`, "\x7f\u2028"} {
		f.Add(s)
	}
	for _, c := range redacttest.Corpus() {
		for _, l := range c.Lines {
			f.Add(l)
		}
	}
	plain := New(Options{Home: "/home/alice", Cwd: "/home/alice/work/proj"})
	withLiterals := New(Options{Home: "/home/alice", Cwd: "/home/alice/work/proj", Literals: []string{`a\`, "q"}})
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for _, v := range []any{s, map[string]any{"t": s, "api_key": s}} {
			line, err := json.Marshal(v)
			if err != nil {
				return
			}
			nested, _ := json.Marshal(map[string]string{"nested": string(line)})
			for _, l := range []string{string(line), string(nested)} {
				got := plain.String(l)
				if !json.Valid([]byte(got)) {
					t.Fatalf("invalid JSON after redaction:\n in: %s\nout: %s", l, got)
				}
				if again := plain.String(got); again != got {
					t.Fatalf("not idempotent:\n%s\n%s", got, again)
				}
				if got := withLiterals.String(l); !json.Valid([]byte(got)) {
					t.Fatalf("invalid JSON after redaction with literals:\n in: %s\nout: %s", l, got)
				}
			}
		}
	})
}

// TestDirs: further directories of the machine, such as a git repository
// holding a throwaway home (Claude Code names its memory directory after
// the repository's root), are replaced in every spelling; the home and
// working directory inside them keep their own placeholders.
func TestDirs(t *testing.T) {
	r := New(Options{Home: "/srv/me/repo/work/run-1/home", HomeAs: "/home/user", Cwd: "/srv/me/repo/work/run-1/home/project",
		CwdAs: "/home/user/project", Dirs: []Dir{{Path: "/srv/me/repo"}, {Path: "/srv/me/repo/work/"}, {Path: "/s/x1", As: "/home/user/tmp"},
			{Path: "relative/dir"}, {Path: "/"}}})
	tests := map[string]string{
		`{"cwd":"/srv/me/repo/work/run-1/home/project"}`:                                          `{"cwd":"/home/user/project"}`,
		`{"auto":"/srv/me/repo/work/run-1/home/.claude/projects/-srv-me-repo/memory/"}`:           `{"auto":"/home/user/.claude/projects/<redacted:path:1>/memory/"}`,
		`{"root":"/srv/me/repo","work":"\/srv\/me\/repo\/work\/x"}`:                               `{"root":"<redacted:path:1>","work":"<redacted:path:2>\/x"}`,
		`{"sock":"/s/x1/cc-socks/123.sock"}`:                                                      `{"sock":"/home/user/tmp/cc-socks/123.sock"}`,
		`/srv/me/repository and /srv/me/repo-old and -srv-me-repository`:                          `/srv/me/repository and /srv/me/repo-old and -srv-me-repository`,
		`{"slug":"-srv-me-repo-work-run-1-home-project","w":"-srv-me-repo-work-x","s":"-s-x1-y"}`: `{"slug":"-home-user-project","w":"<redacted:path:2>-x","s":"-home-user-tmp-y"}`,
		`relative/dir /etc/passwd`:                                                                `relative/dir /etc/passwd`,
	}
	// Feed them in an order that numbers the repository 1.
	order := []string{`{"root":"/srv/me/repo","work":"\/srv\/me\/repo\/work\/x"}`}
	for in := range tests {
		order = append(order, in)
	}
	for _, in := range order {
		if got := r.String(in); got != tests[in] {
			t.Errorf("String(%s)\n got %s\nwant %s", in, got, tests[in])
		}
	}
	for _, c := range r.Report() {
		if c.Kind == Path && c.Distinct != 3 {
			t.Errorf("report %v: want 3 distinct paths", r.Report())
		}
	}
}
