package conformance

import "strings"

// shellKeywords are the words that begin something other than a program
// run by name: the shell's reserved words and its builtins that a script
// runs for their effect on the shell (exec of them would fail or mean
// something else).
var shellKeywords = map[string]bool{
	"!": true, "{": true, "}": true, "case": true, "do": true, "done": true, "elif": true, "else": true,
	"esac": true, "fi": true, "for": true, "if": true, "in": true, "then": true, "until": true, "while": true,
	".": true, ":": true, "break": true, "cd": true, "command": true, "continue": true, "eval": true,
	"exec": true, "exit": true, "export": true, "readonly": true, "return": true, "set": true, "shift": true,
	"source": true, "times": true, "trap": true, "unset": true, "alias": true, "umask": true, "wait": true,
	"function": true, "[[": true, "((": true,
}

// execable reports whether `/bin/sh -c CMD` may run `exec CMD` instead:
// CMD is one simple command that runs a program, whatever its words hold
// (quotes, $VAR, ${VAR:-x}, $(...), `...`, globs, redirections). Then the
// shell becomes the adapter, its pid the one the runner signals and the
// parent of the CLIs the adapter starts. Pipelines, lists (; && || &),
// subshells, groups, compound commands, a leading assignment (FOO=1 cmd)
// or a builtin (cd dir) are not: the shell stays.
func execable(cmd string) bool {
	var first strings.Builder // the first word as written
	words := 0
	inWord := false
	endWord := func() {
		if inWord {
			words++
			inWord = false
		}
	}
	addFirst := func(s string) {
		if words == 0 {
			first.WriteString(s)
		}
		inWord = true
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == ' ' || c == '\t':
			endWord()
		case c == '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 {
				return false
			}
			addFirst(cmd[i : i+j+2])
			i += j + 1
		case c == '"':
			j := closingQuote(cmd, i+1)
			if j < 0 {
				return false
			}
			addFirst(cmd[i : j+1])
			i = j
		case c == '\\':
			if i+1 >= len(cmd) || cmd[i+1] == '\n' {
				return false
			}
			addFirst(cmd[i : i+2])
			i++
		case c == '`':
			j := strings.IndexByte(cmd[i+1:], '`')
			if j < 0 {
				return false
			}
			addFirst(cmd[i : i+j+2])
			i += j + 1
		case c == '$' && i+1 < len(cmd) && (cmd[i+1] == '(' || cmd[i+1] == '{'):
			j := closingBracket(cmd, i+1)
			if j < 0 {
				return false
			}
			addFirst(cmd[i : j+1])
			i = j
		case c == '#' && !inWord:
			// A comment runs to the end of the line; a newline after it
			// would start another command.
			if strings.IndexByte(cmd[i:], '\n') >= 0 {
				return false
			}
			i = len(cmd)
		case c == '&' && i > 0 && (cmd[i-1] == '>' || cmd[i-1] == '<'):
			addFirst("&") // 2>&1, <&3: a redirection
		case strings.IndexByte("|&;()\n", c) >= 0:
			return false
		default:
			addFirst(cmd[i : i+1])
		}
	}
	endWord()
	w := first.String()
	switch {
	case words == 0, shellKeywords[w], strings.ContainsAny(w, "<>"):
		return false
	case isAssignment(w):
		return false
	}
	return true
}

// closingQuote returns the index of the double quote that closes the one
// before start (backslash escapes and substitutions inside skipped), or
// -1.
func closingQuote(s string, start int) int {
	for i := start; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '"':
			return i
		case s[i] == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'):
			j := closingBracket(s, i+1)
			if j < 0 {
				return -1
			}
			i = j
		case s[i] == '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				return -1
			}
			i += j + 1
		}
	}
	return -1
}

// closingBracket returns the index of the bracket that closes s[open]
// ('(' or '{'), counting nested ones and skipping quoted text, or -1.
func closingBracket(s string, open int) int {
	o := s[open]
	cl := byte(')')
	if o == '{' {
		cl = '}'
	}
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return -1
			}
			i += j + 1
		case '"':
			j := closingQuote(s, i+1)
			if j < 0 {
				return -1
			}
			i = j
		case o:
			depth++
		case cl:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// isAssignment reports whether a word is NAME=value, a variable assignment
// when it comes first.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
