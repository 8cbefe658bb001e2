package transcript

import (
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/jsonl"
)

// StdinConverter turns recorded stdin lines into "in" steps that a replay
// can match against whatever the next client sends. A Claude stream-json
// line becomes a subset match on its type (and a control request's
// subtype); the request ids the client chose are captured and templated
// into the stdout lines that echo them, so the replay answers the ids the
// next client picks; the request ids the CLI chose (answered by a
// control_response) are matched as recorded, since the replay writes them
// again. A JSON object without a type is matched whole; anything that is
// not a JSON object (Codex and Gemini read plain text) is matched as raw
// text. The transcript loader and the recorder share it.
type StdinConverter struct {
	ids   []string          // client request ids, in the order seen
	names map[string]string // client request id -> capture name
}

// NewStdinConverter returns a converter with no ids seen yet.
func NewStdinConverter() *StdinConverter {
	return &StdinConverter{names: map[string]string{}}
}

// Expect fills an OpIn step for one recorded stdin line.
func (c *StdinConverter) Expect(st *Step, text string) {
	st.Op = OpIn
	obj, _ := jsonl.Parse([]byte(text), jsonl.ParseOptions{})
	if obj == nil {
		st.Text = text
		return
	}
	typ, _ := obj["type"].(string)
	if typ == "" {
		st.Match = obj
		return
	}
	st.Match = map[string]any{"type": typ}
	switch typ {
	case "control_request":
		if req, ok := obj["request"].(map[string]any); ok {
			if sub, ok := req["subtype"].(string); ok {
				st.Match["request"] = map[string]any{"subtype": sub}
			}
		}
		if id, ok := obj["request_id"].(string); ok {
			name := "req" + strconv.Itoa(len(c.ids)+1)
			c.ids = append(c.ids, id)
			c.names[id] = name
			st.Capture = map[string]string{name: "/request_id"}
		}
	case "control_response":
		if resp, ok := obj["response"].(map[string]any); ok {
			if id, ok := resp["request_id"].(string); ok {
				st.Match["response"] = map[string]any{"request_id": id}
			}
		}
	}
}

// Template replaces the client's request ids echoed in a stdout line with
// the {{name}} of their capture.
func (c *StdinConverter) Template(text string) string {
	if len(c.ids) == 0 || !strings.Contains(text, `"request_id":"`) {
		return text
	}
	for _, id := range c.ids {
		text = strings.ReplaceAll(text, `"request_id":"`+id+`"`, `"request_id":"{{`+c.names[id]+`}}"`)
	}
	return text
}
