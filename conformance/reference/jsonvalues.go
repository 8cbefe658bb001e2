package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// jsonInt decodes any JSON number (or null) into an int64, truncating a
// fraction, so that a CLI writing 12.0 or 1e3 for a count does not make a
// whole line undecodable.
type jsonInt int64

// UnmarshalJSON accepts a number or null.
func (n *jsonInt) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		*n = 0
		return nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = jsonInt(i)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("not a number: %.40s", s)
	}
	*n = jsonInt(f)
	return nil
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// compact returns raw without insignificant whitespace (raw itself if it
// is not valid JSON, which the decoder that produced it already ruled out).
func compact(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

// jsonString encodes s as a JSON string value.
func jsonString(s string) json.RawMessage {
	b, _ := marshalNoEscape(s) // a string always marshals
	return b
}

// object builds a JSON object from alternating keys and raw values,
// skipping null values, in the order given.
func object(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		var v json.RawMessage
		switch x := kv[i+1].(type) {
		case json.RawMessage:
			v = x
		case string:
			v = jsonString(x)
		default:
			enc, err := marshalNoEscape(x)
			if err != nil {
				continue
			}
			v = enc
		}
		if isNull(v) {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(k))
		b.WriteByte(':')
		b.Write(compact(v))
		n++
	}
	b.WriteByte('}')
	return b.Bytes()
}

// textOf renders a tool result for a human: a JSON string as itself, an
// array of content blocks as their text joined, anything else as JSON.
func textOf(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	var s string
	if isString(raw) && json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	return string(compact(raw))
}

// isString reports whether raw starts like a JSON string: decoding
// anything else into a string fails, but only after scanning it whole.
func isString(raw []byte) bool {
	i := skipWS(raw, 0)
	return i < len(raw) && raw[i] == '"'
}

// rawStrings renders a JSON array of error entries as strings: strings as
// themselves, anything else as compact JSON.
func rawStrings(raws []json.RawMessage) []string {
	var out []string
	for _, r := range raws {
		var s string
		if json.Unmarshal(r, &s) == nil {
			out = append(out, s)
			continue
		}
		if !isNull(r) {
			out = append(out, string(compact(r)))
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// decodeAs decodes a line into the struct of its type, naming the type in
// the error.
func decodeAs(raw []byte, v any, what string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: undecodable line: %w", what, err)
	}
	return nil
}

// marshalNoEscape is json.Marshal without the HTML escaping of <, > and &,
// which the CLIs do not do either.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
