package reference

import (
	"encoding/json"
	"fmt"
)

// lineHeader holds the top-level members a parser dispatches a line on.
// Any of them may be absent (""); Codex and Gemini read only the type.
type lineHeader struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
}

// typeHeader is the header of Codex and Gemini lines.
type typeHeader struct {
	Type string `json:"type"`
}

// readHeader decodes the header of one stdout line, naming cli in the
// error of a line that is not JSON; typeOnly reads just the type. It gives
// exactly what json.Unmarshal into lineHeader (typeHeader) gives, but in
// one pass that checks the line is JSON, reads the header strings and
// skips every other value without decoding it. Every line is decoded
// again into the struct of its type, so decoding it whole here as well
// made the header a third of a translator's time on long lines. Whatever
// the pass is not sure of (an escaped or non-ASCII key, a key that
// matches only case-insensitively, a value that is not a plain ASCII
// string, nesting deeper than encoding/json allows, anything that is not
// JSON) goes to json.Unmarshal, which then decides; FuzzReadHeader holds
// the two to the same answers.
func readHeader(raw []byte, cli string, typeOnly bool) (lineHeader, error) {
	h, _, err := scanHeader(raw, cli, typeOnly)
	return h, err
}

// scanHeader is readHeader, and gives what its pass learned of the line
// besides: when the pass was sure, the line is valid JSON and the long
// strings it noted on the way are all of them, so that decoding the line
// (lineScan.decode) need not scan it again.
func scanHeader(raw []byte, cli string, typeOnly bool) (lineHeader, lineScan, error) {
	var h lineHeader
	var sc lineScan
	if h.scan(raw, typeOnly, &sc.longs) {
		sc.raw, sc.known = raw, true
		return h, sc, nil
	}
	h = lineHeader{}
	var err error
	if typeOnly {
		var t typeHeader
		err = json.Unmarshal(raw, &t)
		h.Type = t.Type
	} else {
		err = json.Unmarshal(raw, &h)
	}
	if err != nil {
		return lineHeader{}, lineScan{}, fmt.Errorf("%s: undecodable line: %w", cli, err)
	}
	return h, lineScan{}, nil
}

// scan reads the header, checking that b is one JSON object and nothing
// else, and adds its long strings to longs (as longStrings finds them);
// false means it could not be sure.
func (h *lineHeader) scan(b []byte, typeOnly bool, longs *[]span) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipWS(b, i+1) == len(b)
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		ks := i + 1
		ke := ks
		for ke < len(b) && b[ke] != '"' {
			if b[ke] == '\\' || b[ke] >= 0x80 || b[ke] < 0x20 {
				return false
			}
			ke++
		}
		if ke >= len(b) {
			return false
		}
		key := b[ks:ke]
		i = skipWS(b, ke+1)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		var dst *string
		switch {
		case string(key) == "type":
			dst = &h.Type
		case typeOnly:
		case string(key) == "subtype":
			dst = &h.Subtype
		case string(key) == "session_id":
			dst = &h.SessionID
		}
		if dst == nil && (foldsTo(key, "type") || !typeOnly && (foldsTo(key, "subtype") || foldsTo(key, "session_id"))) {
			return false
		}
		end := longValue(b, i, 1, longs) // jsonvalid.End, noting long strings
		if end < 0 {
			return false
		}
		if dst != nil {
			s, ok := plainString(b[i:end])
			if !ok {
				return false
			}
			*dst = s
		}
		i = skipWS(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		return i < len(b) && b[i] == '}' && skipWS(b, i+1) == len(b)
	}
	return false
}

// foldsTo reports whether the ASCII key equals name ignoring case, the
// way encoding/json matches a key to a field without an exact match.
func foldsTo(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range key {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// plainString returns the contents of a JSON string token without
// escapes and of ASCII only, whose value is its bytes.
func plainString(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' {
		return "", false
	}
	for _, c := range tok[1 : len(tok)-1] {
		if c == '\\' || c >= 0x80 {
			return "", false
		}
	}
	return string(tok[1 : len(tok)-1]), true
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
