package redact

import (
	"encoding/base64"
	"strings"
)

// minBase64Run is the shortest run of base64 looked into: long enough
// to hide a credential.
const minBase64Run = 24

func isBase64Byte(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '_' || c == '-' }

// base64Runs finds the runs of base64 characters (either alphabet, with
// up to two '=' of padding) at least minBase64Run long.
func base64Runs(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		if !isBase64Byte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isBase64Byte(s[j]) {
			j++
		}
		if j-i >= minBase64Run {
			e := j
			for e < len(s) && e < j+2 && s[e] == '=' {
				e++
			}
			out = append(out, [2]int{i, e})
		}
		i = j
	}
	return out
}

// maxBase64Run bounds the runs decoded: longer ones are images and
// archives, not credentials.
const maxBase64Run = 256 << 10

// base64Spans finds runs of base64 whose decoded text holds a secret that
// another rule (other than e-mail and the directories) finds; the whole
// run is the value.
func (r *Redactor) base64Spans(s string) [][2]int {
	var out [][2]int
	for _, loc := range base64Runs(s) {
		run := s[loc[0]:loc[1]]
		if len(run) > maxBase64Run || !wordStart(s, loc[0]) || !mixedCase(run) {
			continue
		}
		text, ok := decodeBase64Text(run)
		if !ok {
			continue
		}
		if len(r.findWith(text, func(ru *rule) bool {
			return ru.kind == Base64Secret || ru.kind == Email || ru.kind == Home || ru.kind == Cwd
		})) > 0 {
			out = append(out, [2]int{loc[0], loc[1]})
		}
	}
	return out
}

// mixedCase reports whether s has both lower- and upper-case letters, as
// base64 of text has and hex digests and words do not.
func mixedCase(s string) bool {
	return strings.IndexFunc(s, func(c rune) bool { return c >= 'a' && c <= 'z' }) >= 0 &&
		strings.IndexFunc(s, func(c rune) bool { return c >= 'A' && c <= 'Z' }) >= 0
}

// decodeBase64Text decodes a run of base64 (padded or not, either
// alphabet) and reports whether it decodes to text: nearly all printable
// ASCII or whitespace.
func decodeBase64Text(run string) (string, bool) {
	raw := strings.TrimRight(run, "=")
	if len(raw)%4 == 1 {
		raw = raw[:len(raw)-1]
	}
	enc := base64.RawStdEncoding
	if strings.ContainsAny(raw, "-_") {
		if strings.ContainsAny(raw, "+/") {
			return "", false
		}
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(raw)
	if err != nil || len(b) < 12 {
		return "", false
	}
	bad := 0
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c >= 0x7f {
			bad++
		}
	}
	if bad*20 > len(b) {
		return "", false
	}
	return string(b), true
}
