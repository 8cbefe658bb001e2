package transcript

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/jsonl"
)

// RPCConverter turns the recorded stdin lines of a JSON-RPC 2.0 session
// (the client's side of the Agent Client Protocol, one JSON object per
// line) into "in" steps that a replay can match against whatever the next
// client sends, and templates the ids the client chose into the stdout
// lines that answer them:
//
//   - a client request ({"id","method"}) is matched by its method; its id
//     is captured as rpcN (N counts the client's requests from 1) and the
//     server's response to it, `"id":<id>` at the top level of a stdout
//     line with a result or an error, becomes `"id":{{json:rpcN}}`, so
//     that the replay answers the id the next client picks, a number or a
//     string;
//   - a client notification ({"method"} without an id) is matched by its
//     method;
//   - a client response ({"id"} with a result or an error) answers a
//     request of the server, whose id the replay writes again as recorded:
//     it is matched by that id.
//
// Anything else (not a JSON object) is matched as raw text. The capture of
// ACP sessions and the conversion of captures into fixtures share it.
type RPCConverter struct {
	names map[string]string // the JSON text of a client request id -> its capture name
	n     int
}

// NewRPCConverter returns a converter with no requests seen yet.
func NewRPCConverter() *RPCConverter {
	return &RPCConverter{names: map[string]string{}}
}

// Expect fills an OpIn step for one recorded stdin line.
func (c *RPCConverter) Expect(st *Step, text string) {
	st.Op = OpIn
	st.Text, st.Match, st.Capture, st.Recorded = "", nil, nil, ""
	obj, _ := jsonl.Parse([]byte(text), jsonl.ParseOptions{})
	if obj == nil {
		st.Text = text
		return
	}
	st.Recorded = text
	method, _ := obj["method"].(string)
	id, hasID := obj["id"]
	switch {
	case method != "" && hasID:
		c.n++
		name := "rpc" + strconv.Itoa(c.n)
		c.names[idKey(id)] = name
		st.Match = map[string]any{"method": method}
		st.Capture = map[string]string{name: "/id"}
	case method != "":
		st.Match = map[string]any{"method": method}
	case hasID:
		st.Match = map[string]any{"id": id}
	default:
		st.Match = obj
	}
}

// Name is the capture name of the client request id id (as decoded from
// JSON), or "" when no request had it.
func (c *RPCConverter) Name(id any) string { return c.names[idKey(id)] }

// Template replaces the id of a response to a client request in a stdout
// line with the {{json:rpcN}} template of its capture; any other line is
// returned as it is.
func (c *RPCConverter) Template(text string) string {
	if len(c.names) == 0 || !strings.Contains(text, `"id"`) {
		return text
	}
	obj, _ := jsonl.Parse([]byte(text), jsonl.ParseOptions{})
	if obj == nil {
		return text
	}
	if _, ok := obj["method"]; ok {
		return text // a request or notification of the server
	}
	_, res := obj["result"]
	_, bad := obj["error"]
	id, ok := obj["id"]
	if !ok || !res && !bad {
		return text
	}
	name := c.names[idKey(id)]
	if name == "" {
		return text
	}
	start, end, ok := TopLevelValue(text, "id")
	if !ok {
		return text
	}
	return text[:start] + "{{json:" + name + "}}" + text[end:]
}

// idKey is the JSON text of a decoded id, the key ids are compared by (1
// and "1" are different ids).
func idKey(id any) string {
	if n, ok := id.(json.Number); ok {
		return n.String()
	}
	b, err := json.Marshal(id)
	if err != nil {
		return ""
	}
	return string(b)
}

// TopLevelValue finds the value of key at the top level of the JSON
// object text: its byte offsets [start, end). ok is false when text is not
// a JSON object or has no such key.
func TopLevelValue(text, key string) (start, end int, ok bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return 0, 0, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		ks, _ := k.(string)
		// The value starts after the colon that follows the key.
		off := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, false
		}
		if ks == key {
			end := int(dec.InputOffset())
			i := bytes.IndexByte([]byte(text[off:end]), ':')
			if i < 0 {
				return 0, 0, false
			}
			start := off + i + 1
			for start < end && (text[start] == ' ' || text[start] == '\t' || text[start] == '\n' || text[start] == '\r') {
				start++
			}
			return start, end, true
		}
	}
	return 0, 0, false
}
