package redact

import "strings"

// A URL's userinfo (RFC 3986, section 3.2.1) may hold a password:
// scheme://user:password@host/. The password may be made of any
// character the RFC allows in userinfo (letters, digits, "-._~", the
// sub-delims "!$&'()*+,;=", ':' and percent-escapes) and, in practice, of
// non-ASCII letters too, so no shape finds it: the URL's syntax does.

// urlSpans finds the passwords of URLs with a userinfo (urlPasswords).
func urlSpans(s string) [][2]int {
	var out [][2]int
	for _, u := range urlUserinfos(s) {
		if u.pass[0] < u.pass[1] {
			out = append(out, u.pass)
		}
	}
	return out
}

// userinfo is where one URL's userinfo lies in the text.
type userinfo struct {
	// pass is the password: from after the first ':' of the userinfo to
	// its '@'; empty (pass[0] == pass[1]) when the userinfo has none, or
	// names a variable that holds it ($TOKEN).
	pass [2]int
	// hasPass reports whether the userinfo has a password, or a variable
	// in its place.
	hasPass bool
	// at is where the '@' that ends the userinfo starts (a byte '@', or
	// the escape \u0040).
	at int
}

// urlUserinfos finds every URL authority with a userinfo in s: after a
// scheme and "://" (its slashes also JSON-escaped, "\/", at any depth of
// nesting), up to the first byte that cannot be in an authority ('/', '?',
// '#', a space, a quote, ...), the userinfo being what comes before the
// last '@'. s may be a raw JSON line: an escape \uXXXX of a character the
// authority allows is read as that character, any other escape ends the
// authority.
func urlUserinfos(s string) []userinfo {
	var out []userinfo
	for from := 0; ; {
		k := strings.Index(s[from:], ":")
		if k < 0 {
			return out
		}
		colon := from + k
		from = colon + 1
		start, ok := afterSchemeSlashes(s, colon)
		if !ok {
			continue
		}
		u, end, ok := scanAuthority(s, start)
		from = max(from, end)
		if ok {
			out = append(out, u)
		}
	}
}

// afterSchemeSlashes reports whether the ':' at colon ends a URL scheme
// followed by two slashes (each perhaps escaped), and where the authority
// starts.
func afterSchemeSlashes(s string, colon int) (int, bool) {
	b := colon
	for b > 0 && isSchemeByte(s[b-1]) {
		b--
	}
	for b < colon && !isAlpha(s[b]) {
		b++ // a scheme starts with a letter
	}
	if b == colon {
		return 0, false
	}
	i := colon + 1
	for n := 0; n < 2; n++ {
		for i < len(s) && s[i] == '\\' {
			i++
		}
		if i >= len(s) || s[i] != '/' {
			return 0, false
		}
		i++
	}
	return i, true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isSchemeByte(c byte) bool { return isAlnum(c) || c == '+' || c == '-' || c == '.' }

// isAuthorityByte reports whether an authority may hold c: the userinfo's
// characters (unreserved, sub-delims, ':' and '%' of percent-escapes), '@',
// the brackets of an IPv6 host, and the bytes of non-ASCII letters.
func isAuthorityByte(c byte) bool {
	return isAlnum(c) || c >= 0x80 || strings.IndexByte("-._~!$&'()*+,;=:%@[]", c) >= 0
}

// scanAuthority reads the authority that starts at i: it returns the
// userinfo, if the authority has one, and where the authority ends.
func scanAuthority(s string, i int) (userinfo, int, bool) {
	firstColon, lastAt := -1, -1
	for i < len(s) {
		c, n := s[i], 1
		if c == '\\' {
			// An escape: \uXXXX (after any number of backslashes, in a
			// string nested in a string) of a byte the authority allows
			// stands for that byte; any other ends the authority.
			j := i
			for j < len(s) && s[j] == '\\' {
				j++
			}
			if j+5 > len(s) || s[j] != 'u' || !isHex(s[j+1:j+5]) {
				break
			}
			if r := hexValue(s[j+1 : j+5]); r < 0x80 {
				c = byte(r)
			} else {
				c = 0x80 // a non-ASCII letter
			}
			if !isAuthorityByte(c) {
				break
			}
			n = j + 5 - i
		} else if !isAuthorityByte(c) {
			break
		}
		switch {
		case c == ':' && firstColon < 0:
			firstColon = i + n
		case c == '@':
			lastAt = i
		}
		i += n
	}
	if lastAt < 0 {
		return userinfo{}, i, false
	}
	u := userinfo{at: lastAt, pass: [2]int{lastAt, lastAt}}
	if firstColon >= 0 && firstColon < lastAt {
		u.hasPass = true
		if !shellVariable(s[firstColon:lastAt]) {
			u.pass = [2]int{firstColon, lastAt}
		}
	}
	return u, i, true
}

// emailSpans finds e-mail addresses, but for the password and host of a
// URL's userinfo (user:password@host), which the URL's rule redacts: its
// password (or the variable in its place) is no e-mail's local part.
func emailSpans(s string) [][2]int {
	locs := emailRE.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return nil
	}
	var skip map[int]bool
	if strings.Contains(s, ":") {
		for _, u := range urlUserinfos(s) {
			if u.hasPass {
				if skip == nil {
					skip = map[int]bool{}
				}
				skip[u.at] = true
			}
		}
	}
	out := make([][2]int, 0, len(locs))
	for _, l := range locs {
		if !skip[l[0]+strings.IndexByte(s[l[0]:l[1]], '@')] {
			out = append(out, [2]int{l[0], l[1]})
		}
	}
	return out
}

// shellVariable reports whether v is a reference to a variable ($NAME),
// which a command line holds instead of the password.
func shellVariable(v string) bool {
	if len(v) < 2 || v[0] != '$' || !(isAlpha(v[1]) || v[1] == '_') {
		return false
	}
	for i := 2; i < len(v); i++ {
		if !isWordByte(v[i]) {
			return false
		}
	}
	return true
}

// hexValue is the value of four hex digits.
func hexValue(h string) int {
	v := 0
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a'+10)
		default:
			v = v*16 + int(c-'A'+10)
		}
	}
	return v
}
