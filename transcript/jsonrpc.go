package transcript

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/jsonl"
)

// JSON-RPC transcripts (`codex app-server`): both sides send requests,
// responses and notifications, one JSON object per line, without the
// "jsonrpc":"2.0" member. The client picks the ids of its requests, so a
// replay must answer whatever ids the next client picks; the server picks
// the ids of its own requests (approvals), which a replay writes again as
// recorded.

// RPCKind classifies one JSON-RPC message.
type RPCKind string

// The kinds of JSON-RPC message.
const (
	// RPCRequest has a method and an id: it must be answered.
	RPCRequest RPCKind = "request"
	// RPCNotification has a method and no id.
	RPCNotification RPCKind = "notification"
	// RPCResponse has an id and a result.
	RPCResponse RPCKind = "response"
	// RPCError has an id and an error.
	RPCError RPCKind = "error"
)

// RPCMessage is one decoded JSON-RPC message.
type RPCMessage struct {
	Kind   RPCKind
	Method string
	// ID is the id's JSON text ("3", `"abc"`), "" when it has none.
	ID string
	// Obj is the decoded object.
	Obj map[string]any
}

// ParseRPC decodes one line as a JSON-RPC message; the error says what
// keeps it from being one.
func ParseRPC(line []byte) (*RPCMessage, error) {
	obj, fs := jsonl.Parse(line, jsonl.ParseOptions{})
	if obj == nil {
		if len(fs) > 0 {
			return nil, fmt.Errorf("not a JSON object: %s", fs[0].Message)
		}
		return nil, fmt.Errorf("not a JSON object")
	}
	return RPCFromObject(obj)
}

// RPCFromObject classifies a decoded JSON object as a JSON-RPC message.
func RPCFromObject(obj map[string]any) (*RPCMessage, error) {
	m := &RPCMessage{Obj: obj}
	if raw, ok := obj["id"]; ok {
		id, err := rpcIDText(raw)
		if err != nil {
			return nil, err
		}
		m.ID = id
	}
	method, hasMethod := obj["method"]
	if hasMethod {
		s, ok := method.(string)
		if !ok || s == "" {
			return nil, fmt.Errorf("at /method: the method must be a non-empty string")
		}
		m.Method = s
		if m.ID != "" {
			m.Kind = RPCRequest
		} else {
			m.Kind = RPCNotification
		}
		if _, ok := obj["result"]; ok {
			return nil, fmt.Errorf("at /result: a request or notification has no result")
		}
		return m, nil
	}
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	switch {
	case m.ID == "" && !hasResult && !hasError:
		return nil, fmt.Errorf("neither a request, a notification nor a response: no method and no id")
	case hasResult && hasError:
		return nil, fmt.Errorf("a response has a result or an error, not both")
	case hasResult:
		m.Kind = RPCResponse
	case hasError:
		m.Kind = RPCError
	default:
		return nil, fmt.Errorf("at /id: a response needs a result or an error")
	}
	if m.ID == "" && m.Kind == RPCResponse {
		return nil, fmt.Errorf("a response needs an id")
	}
	return m, nil
}

// rpcIDText is the JSON text of an id: a string or an integer (JSON-RPC
// allows null only in an error answering an unreadable request).
func rpcIDText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		b, _ := json.Marshal(x)
		return string(b), nil
	case json.Number:
		if _, err := x.Int64(); err != nil {
			return "", fmt.Errorf("at /id: the id %s is not an integer", x)
		}
		return x.String(), nil
	case float64:
		if x != float64(int64(x)) {
			return "", fmt.Errorf("at /id: the id %v is not an integer", x)
		}
		return strconv.FormatInt(int64(x), 10), nil
	case nil:
		return "null", nil
	}
	return "", fmt.Errorf("at /id: the id must be a string or an integer")
}

// JSONRPCSteps turns the raw stdin lines of a recorded JSON-RPC session
// into matches a replay can hold any client to, and templates the ids the
// client chose into the responses that echo them:
//   - a client request becomes {"in":{"method":M},"capture":{"idN":"/id"}}
//     and the server's response to it begins {"id":{{json:idN}},...};
//   - a client notification becomes {"in":{"method":M}};
//   - a client response (to a server request, whose id the server chose)
//     becomes {"in":{"id":ID,"result":R}} with the result as sent (an
//     approval's decision), and an error answer {"in":{"id":ID,"error":{}}}.
//
// Lines that are not JSON-RPC messages stay raw text. The ids are tracked
// per process part (next_process resets them).
func JSONRPCSteps(steps []Step) ([]Step, error) {
	out := make([]Step, len(steps))
	copy(out, steps)
	names := map[string]string{} // client request id text -> capture name
	n := 0
	for i := range out {
		st := &out[i]
		switch st.Op {
		case OpNextProcess:
			names = map[string]string{}
		case OpIn:
			if st.Match != nil {
				continue
			}
			m, err := ParseRPC([]byte(st.Text))
			if err != nil {
				continue
			}
			switch m.Kind {
			case RPCRequest:
				n++
				name := "id" + strconv.Itoa(n)
				names[m.ID] = name
				st.Match = map[string]any{"method": m.Method}
				st.Capture = map[string]string{name: "/id"}
			case RPCNotification:
				st.Match = map[string]any{"method": m.Method}
			case RPCResponse:
				st.Match = map[string]any{"id": m.Obj["id"], "result": m.Obj["result"]}
			default:
				st.Match = map[string]any{"id": m.Obj["id"], "error": map[string]any{}}
			}
			st.Text = ""
		case OpOut:
			m, err := ParseRPC([]byte(st.Text))
			if err != nil || (m.Kind != RPCResponse && m.Kind != RPCError) {
				continue
			}
			name, ok := names[m.ID]
			if !ok {
				continue
			}
			text, ok := templateID(st.Text, m.ID, name)
			if !ok {
				return nil, fmt.Errorf("step %d: the response to the client's request %s does not begin or end with its id", i+1, m.ID)
			}
			st.Text = text
			delete(names, m.ID)
		}
	}
	return out, nil
}

// templateID replaces the top-level "id" member of a response line (its
// first or its last member) with the template {{json:name}}.
func templateID(text, id, name string) (string, bool) {
	tmpl := `"id":{{json:` + name + `}}`
	if p := `{"id":` + id; strings.HasPrefix(text, p) {
		rest := text[len(p):]
		if strings.HasPrefix(rest, ",") || strings.HasPrefix(rest, "}") {
			return "{" + tmpl + rest, true
		}
	}
	if s := `,"id":` + id + `}`; strings.HasSuffix(text, s) {
		return text[:len(text)-len(s)] + "," + tmpl + "}", true
	}
	return "", false
}
