package fakecli

import (
	"bytes"
	"encoding/json"
	"strings"
)

// rawMember returns the raw value of the top-level member key of a JSON
// object line (nil when it has none), as json.Decoder reads it: the first
// member of that name (escapes in names decoded), its value without the
// white space around it. The value is a part of line, not a copy: a
// member of a 64 MiB line costs nothing. Values are skipped, not
// validated: the lines are ones jsonl.Parse read.
func rawMember(line []byte, key string) json.RawMessage {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != '"' {
			return nil // '}': no such member
		}
		kend := skipString(line, i)
		if kend < 0 {
			return nil
		}
		name := line[i+1 : kend-1]
		i = skipSpace(line, kend)
		if i >= len(line) || line[i] != ':' {
			return nil
		}
		i = skipSpace(line, i+1)
		vend := skipValue(line, i)
		if vend < 0 {
			return nil
		}
		if nameIs(name, key) {
			return line[i:vend:vend]
		}
		i = skipSpace(line, vend)
		if i >= len(line) || line[i] != ',' {
			return nil
		}
		i++
	}
}

// rawElements returns the raw elements of a JSON array (parts of raw, as
// json.Unmarshal into a []json.RawMessage would copy them); ok is false
// when raw is not an array (or is null, or missing).
func rawElements(raw []byte) (elems []json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return []json.RawMessage{}, true
	}
	for {
		end := skipValue(raw, i)
		if end < 0 {
			return nil, false
		}
		elems = append(elems, raw[i:end:end])
		i = skipSpace(raw, end)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipSpace(raw, i+1)
		case i < len(raw) && raw[i] == ']':
			return elems, true
		default:
			return nil, false
		}
	}
}

// nameIs reports whether the raw member name (between its quotes) is key.
func nameIs(name []byte, key string) bool {
	if bytes.IndexByte(name, '\\') < 0 {
		return string(name) == key
	}
	var s string
	quoted := make([]byte, 0, len(name)+2)
	quoted = append(append(append(quoted, '"'), name...), '"')
	return json.Unmarshal(quoted, &s) == nil && s == key
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string that starts at b[i] (a quote),
// or -1 when it does not end.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return -1
		}
		j += q
		bs := 0
		for k := j - 1; k > i && b[k] == '\\'; k-- {
			bs++
		}
		j++
		if bs%2 == 0 {
			return j
		}
	}
}

// skipValue returns the end of the JSON value that starts at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && strings.IndexByte(",}] \t\r\n", b[j]) < 0 {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
