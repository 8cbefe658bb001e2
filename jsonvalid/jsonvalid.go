// Package jsonvalid checks JSON text fast, without decoding it: where a
// value ends, and whether a value is valid and already compact. It
// accepts exactly what encoding/json accepts (FuzzEnd and FuzzCompact
// hold it to json.Valid and json.Compact), including encoding/json's
// nesting limit, and runs several times faster, because the translators
// and the fuzz harness check the same long lines over and over and
// encoding/json's byte-at-a-time scanner was a third of their time.
package jsonvalid

import "encoding/binary"

// MaxDepth is encoding/json's nesting limit: deeper values are invalid.
const MaxDepth = 10000

// End returns the end of the JSON value that starts at b[i] (no
// whitespace before it), or -1 when no valid value starts there. depth is
// how many arrays and objects the value is already inside, for the
// nesting limit.
func End(b []byte, i, depth int) int {
	s := scanner{b: b}
	return s.value(i, depth)
}

// Compact reports whether b is one valid JSON value without whitespace
// outside strings: what json.Compact would return unchanged.
func Compact(b []byte) bool {
	s := scanner{b: b}
	return s.value(0, 0) == len(b) && !s.spaced
}

// scanner walks valid JSON and notes whitespace between tokens.
type scanner struct {
	b      []byte
	spaced bool
}

func (s *scanner) ws(i int) int {
	for i < len(s.b) {
		switch s.b[i] {
		case ' ', '\t', '\n', '\r':
			s.spaced = true
			i++
		default:
			return i
		}
	}
	return i
}

func (s *scanner) value(i, depth int) int {
	b := s.b
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return s.str(i)
	case c == '{' || c == '[':
		if depth++; depth > MaxDepth {
			return -1
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = s.ws(i + 1)
		if i < len(b) && b[i] == closer {
			return i + 1
		}
		for {
			if c == '{' {
				if i = s.str(i); i < 0 {
					return -1
				}
				if i = s.ws(i); i >= len(b) || b[i] != ':' {
					return -1
				}
				i = s.ws(i + 1)
			}
			if i = s.value(i, depth); i < 0 {
				return -1
			}
			if i = s.ws(i); i >= len(b) {
				return -1
			}
			if b[i] == closer {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = s.ws(i + 1)
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return number(b, i)
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

// str checks the string token at i and returns its end.
func (s *scanner) str(i int) int {
	b := s.b
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		// Eight bytes at a time while none of them is a quote, a
		// backslash or a control character: string bodies are most of
		// a long line. Once a run is 64 bytes long, thirty-two at a
		// time (a run that short, in text escaped line by line, is not
		// slowed by tests that would fail).
		for n := 0; len(b)-i >= 8 && !special(binary.LittleEndian.Uint64(b[i:])); {
			i += 8
			if n++; n == 8 {
				i = plainRun(b, i)
			}
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		switch c {
		case '"':
			return i + 1
		case '\\':
			if i++; i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 {
					return -1
				}
				for _, x := range b[i+1 : i+5] {
					if !('0' <= x && x <= '9' || 'a' <= x && x <= 'f' || 'A' <= x && x <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
	return -1
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special reports whether any byte of the word is a quote, a backslash
// or below 0x20 (the classic has-zero-byte and has-less-than tests; a
// byte of 0x80 or more never counts).
func special(w uint64) bool { return specialBits(w) != 0 }

// specialBits is special before it is reduced to a bool, so that the
// tests of several words take one branch.
func specialBits(w uint64) uint64 {
	quote := w ^ (ones * '"')
	backslash := w ^ (ones * '\\')
	return ((quote-ones)&^quote | (backslash-ones)&^backslash | (w-ones*0x20)&^w) & highs
}

// plainRun skips b[i:] thirty-two bytes at a time while none of them is
// special, and returns where it stopped (at most 31 bytes before the next
// special one).
func plainRun(b []byte, i int) int {
	for len(b)-i >= 32 {
		w := b[i : i+32 : i+32]
		if specialBits(binary.LittleEndian.Uint64(w[0:8]))|specialBits(binary.LittleEndian.Uint64(w[8:16]))|
			specialBits(binary.LittleEndian.Uint64(w[16:24]))|specialBits(binary.LittleEndian.Uint64(w[24:32])) != 0 {
			break
		}
		i += 32
	}
	return i
}

// number checks the number at i and returns its end.
func number(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if i = digits(b, i); i < 0 {
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(b, i+1); i < 0 {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i = digits(b, i); i < 0 {
			return -1
		}
	}
	return i
}

// digits returns the end of one or more digits at i, or -1.
func digits(b []byte, i int) int {
	j := i
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
