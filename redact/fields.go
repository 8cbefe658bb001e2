package redact

import "strings"

// Names that say their value is secret, compared without case, '_' and
// '-': a name ending in one of these is a secret's ("aws_secret_access_key",
// "SecretAccessKey", "client_secret", "DB_PASSWORD", "npmToken").
var (
	// jsonSecretNames end the names of JSON fields.
	jsonSecretNames = []string{"apikey", "secret", "password", "passwd", "passphrase", "token", "privatekey", "accesskey",
		"secretkey", "accountkey", "signingkey", "credential", "credentials"}
	// textSecretNames end the names of "name = value" and "name: value"
	// in text.
	textSecretNames = []string{"secret", "password", "passwd", "passphrase", "token", "apikey", "accesskey", "secretkey",
		"privatekey", "accountkey", "authkey", "credential"}
)

// saysSecret reports whether name ends in one of names, ignoring ASCII
// case, '_' and '-'.
func saysSecret(name string, names []string) bool {
	if len(name) < 3 {
		return false
	}
	var b [64]byte
	n := 0
	for i := len(name) - 1; i >= 0 && n < len(b); i-- {
		c := name[i]
		switch {
		case c == '_' || c == '-':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b[n] = c
		n++
	}
	// b[:n] is the name reversed.
	for _, w := range names {
		if len(w) > n {
			continue
		}
		ok := true
		for i := 0; i < len(w); i++ {
			if b[i] != w[len(w)-1-i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func isNameChar(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

// fieldSpans finds the values of fields and assignments whose names say
// they are secret, scanning from each ':' and '=':
//
//	"name": "value"      in JSON (any value);
//	\"name\": \"value\"  in JSON nested in a JSON string (any value);
//	name = value, name: value, name := value, name => value in text,
//	the value quoted or not, when the value looks like a secret
//	(valueLooksSecret).
//
// NAME=value without spaces is assignmentRE's.
func fieldSpans(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != ':' && c != '=' {
			continue
		}
		sepStart, sepEnd := i, i+1
		switch {
		case c == ':' && i+1 < len(s) && s[i+1] == '=':
			sepEnd = i + 2
		case c == '=' && i+1 < len(s) && s[i+1] == '>':
			sepEnd = i + 2
		case c == '=' && i > 0 && s[i-1] == ':':
			continue // the second byte of :=
		}
		// Back over blanks to the end of the name.
		j := sepStart
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		if c == ':' && sepEnd == i+1 && j > 0 && s[j-1] == '"' {
			if sp, ok := jsonFieldValue(s, j-1, sepEnd); ok {
				out = append(out, sp)
			}
			continue
		}
		k := j
		for k > 0 && (isNameChar(s[k-1]) || s[k-1] == '.') {
			k--
		}
		if k == j || !saysSecret(s[k:j], textSecretNames) {
			continue
		}
		if c == '=' && sepEnd == i+1 && j == sepStart && sepEnd < len(s) && s[sepEnd] != ' ' && s[sepEnd] != '\t' {
			continue // NAME=value: assignmentRE
		}
		v := sepEnd
		for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
			v++
		}
		if v < len(s) && s[v] == '\\' && v+1 < len(s) && (s[v+1] == '"' || s[v+1] == '\'') {
			v += 2
		} else if v < len(s) && (s[v] == '"' || s[v] == '\'') {
			v++
		}
		e := v
		for e < len(s) && !strings.ContainsRune(" \t\r\n\"'\\,;&<>(){}[]", rune(s[e])) {
			e++
		}
		if e-v >= 8 && valueLooksSecret(s[v:e]) {
			out = append(out, [2]int{v, e})
		}
	}
	return out
}

// jsonFieldValue reads the field whose name's closing quote is at q and
// whose ':' ends before sepEnd: "name": "value", or \"name\": \"value\"
// when the quote is escaped. It returns the value when the name says
// secret.
func jsonFieldValue(s string, q, sepEnd int) ([2]int, bool) {
	escaped := q > 0 && s[q-1] == '\\' && oddBackslashes(s, q-1)
	nameEnd := q
	if escaped {
		nameEnd = q - 1
	}
	k := nameEnd
	for k > 0 && isNameChar(s[k-1]) {
		k--
	}
	// The opening quote.
	if escaped {
		if k < 2 || s[k-1] != '"' || s[k-2] != '\\' {
			return [2]int{}, false
		}
	} else if k < 1 || s[k-1] != '"' {
		return [2]int{}, false
	}
	if !saysSecret(s[k:nameEnd], jsonSecretNames) {
		return [2]int{}, false
	}
	v := sepEnd
	for v < len(s) && (s[v] == ' ' || s[v] == '\t' || s[v] == '\n' || s[v] == '\r') {
		v++
	}
	if escaped {
		if v+1 >= len(s) || s[v] != '\\' || s[v+1] != '"' {
			return [2]int{}, false
		}
		v += 2
		for e := v; e < len(s); e++ {
			switch s[e] {
			case '"':
				return [2]int{}, false
			case '\\':
				if e+1 < len(s) && s[e+1] == '"' {
					return [2]int{v, e}, true
				}
				e++
			}
		}
		return [2]int{}, false
	}
	if v >= len(s) || s[v] != '"' {
		return [2]int{}, false
	}
	v++
	for e := v; e < len(s); e++ {
		switch s[e] {
		case '"':
			return [2]int{v, e}, true
		case '\\':
			e++
		}
	}
	return [2]int{}, false
}

// oddBackslashes reports whether the run of backslashes ending at i is of
// odd length (so the byte after it is escaped).
func oddBackslashes(s string, i int) bool {
	n := 0
	for ; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}
