package fakecli

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/agentconform/agentconform/jsonl"
)

// jsonStringField returns the top-level string field key of a JSON line,
// or "".
func jsonStringField(line, key string) string {
	if !strings.Contains(line, `"`+key+`"`) {
		return ""
	}
	s, _ := parseString(line)[key].(string)
	return s
}

// parseString decodes a JSON object line held in a string, in place: the
// long strings of the result share the line's memory (a line the ladder
// made 64 MiB long is neither copied nor decoded into a copy).
func parseString(line string) map[string]any {
	obj, _ := jsonl.Parse(unsafe.Slice(unsafe.StringData(line), len(line)), jsonl.ParseOptions{ShareMin: 1}) // read only
	return obj
}

// field is one member to set in editObject. A member the line does not
// have is appended, or inserted right after the member named by after
// when the line has that one.
type field struct {
	key   string
	val   any
	after string
}

// editObject rewrites the top-level members of a JSON object line,
// keeping the order of the members it leaves (a synthesized event then
// looks like the recorded one it was made from): set replaces a member in
// place or appends it, del removes members. ok is false when line is not
// an object.
func editObject(line string, set []field, del ...string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	type member struct {
		key string
		raw []byte
	}
	var ms []member
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, ok := kt.(string)
		if !ok {
			return "", false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return "", false
		}
		ms = append(ms, member{k, raw})
	}
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	put := func(k string, raw []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.Write(raw)
	}
	done := map[string]bool{}
	present := map[string]bool{}
	for _, m := range ms {
		if !slices.Contains(del, m.key) {
			present[m.key] = true
		}
	}
	for _, m := range ms {
		if slices.Contains(del, m.key) {
			continue
		}
		raw := m.raw
		for _, f := range set {
			if f.key == m.key {
				v, err := marshalJSON(f.val)
				if err != nil {
					return "", false
				}
				raw = v
				done[f.key] = true
			}
		}
		put(m.key, raw)
		for _, f := range set {
			if f.after != m.key || present[f.key] || done[f.key] {
				continue
			}
			v, err := marshalJSON(f.val)
			if err != nil {
				return "", false
			}
			put(f.key, v)
			done[f.key] = true
		}
	}
	for _, f := range set {
		if done[f.key] {
			continue
		}
		v, err := marshalJSON(f.val)
		if err != nil {
			return "", false
		}
		put(f.key, v)
	}
	b.WriteByte('}')
	return b.String(), true
}

// marshalJSON encodes v without escaping <, > and & (the CLIs do not).
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
