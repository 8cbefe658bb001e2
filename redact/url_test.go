package redact

import (
	"encoding/json"
	"testing"
)

// TestURLPasswords: the password of a URL's userinfo is replaced, whatever
// RFC 3986 characters it holds and however the line escapes it, and
// nothing else of the URL is: user, host, port and path stay readable.
func TestURLPasswords(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"tilde and bang", "git clone https://deploy:Fake~Pass!word@git.example.test/team/app.git",
			"git clone https://deploy:<redacted:url-password:1>@git.example.test/team/app.git"},
		{"every sub-delim", "rediss://default:a$&'()*+,;=b@cache.example.test:6380/0",
			"rediss://default:<redacted:url-password:1>@cache.example.test:6380/0"},
		{"percent-escapes", "amqps://svc:%21%40%23x@mq.example.test/v", "amqps://svc:<redacted:url-password:1>@mq.example.test/v"},
		{"colons in the password", "mongodb+srv://admin:a:b:c@db.example.test/", "mongodb+srv://admin:<redacted:url-password:1>@db.example.test/"},
		{"no user", "https://:tok~en@git.example.test/x", "https://:<redacted:url-password:1>@git.example.test/x"},
		{"an '@' in the password, the last one ends the userinfo", "https://u:p@ss@host.example.test/",
			"https://u:<redacted:url-password:1>@host.example.test/"},
		{"an e-mail address as the user", "https://alice@example.com:pw~1@host.example.test/",
			"https://<redacted:email:1>:<redacted:url-password:1>@host.example.test/"},
		{"non-ASCII", "https://reader:Pässwörd!@feeds.example.test/x", "https://reader:<redacted:url-password:1>@feeds.example.test/x"},
		{"JSON-escaped", `{"o":"https:\/\/deploy:F\u0026P~w\u00f6rd!@git.example.test\/t.git"}`,
			`{"o":"https:\/\/deploy:<redacted:url-password:1>@git.example.test\/t.git"}`},
		{"nested in a JSON string", `{"line":"{\"url\":\"https:\\\/\\\/u:p\\u0026w~x@h.example.test\\\/\"}"}`,
			`{"line":"{\"url\":\"https:\\\/\\\/u:<redacted:url-password:1>@h.example.test\\\/\"}"}`},
		{"ends at the quote", `"https://u:p~w@h.example.test" and "x@y"`, `"https://u:<redacted:url-password:1>@h.example.test" and "x@y"`},
		{"two URLs", "https://a:one!@h.example.test/?next=https://b:two!@i.example.test/",
			"https://a:<redacted:url-password:1>@h.example.test/?next=https://b:<redacted:url-password:2>@i.example.test/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := New(Options{}).String(c.in); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
			if json.Valid([]byte(c.in)) && !json.Valid([]byte(New(Options{}).String(c.in))) {
				t.Errorf("no longer JSON")
			}
		})
	}
}

// TestURLsWithoutPasswords: URLs without a password, and text that only
// looks like one, keep what they had (an e-mail-like user@host is still an
// e-mail address, as before).
func TestURLsWithoutPasswords(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"port", "https://host.example.test:8080/path", "https://host.example.test:8080/path"},
		{"e-mail in the path", "https://example.test/users/a:b@example.com", "https://example.test/users/a:<redacted:email:1>"},
		{"user only", "ssh://git@github.com/org/repo.git", "ssh://<redacted:email:1>/org/repo.git"},
		{"a shell variable", `git clone "https://deploy:$DEPLOY_TOKEN@git.example.test/x.git"`, `git clone "https://deploy:$DEPLOY_TOKEN@git.example.test/x.git"`},
		{"no scheme", "user:pass@host.example.test is how it reads", "user:<redacted:email:1> is how it reads"},
		{"a placeholder", "https://u:<redacted:url-password:7>@h.example.test/", "https://u:<redacted:url-password:7>@h.example.test/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := New(Options{}).String(c.in); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}
