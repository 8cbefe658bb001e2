package mock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// openaiRequest is the part of a Responses API request the mock reads.
type openaiRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

type openaiItem struct {
	Type string `json:"type"`
	Role string `json:"role"`
}

// openaiTurns counts the model responses in a Responses API input: runs of
// output items (assistant messages, function and custom tool calls,
// reasoning) between other items (user and developer messages, tool
// outputs).
func openaiTurns(input []json.RawMessage) int {
	n := 0
	inRun := false
	for _, raw := range input {
		var it openaiItem
		if json.Unmarshal(raw, &it) != nil {
			inRun = false
			continue
		}
		out := false
		switch it.Type {
		case "message":
			out = it.Role == "assistant"
		case "function_call", "custom_tool_call", "local_shell_call", "reasoning", "web_search_call":
			out = true
		}
		if out && !inRun {
			n++
		}
		inRun = out
	}
	return n
}

// openai serves POST .../responses and GET .../models.
func (s *Server) openai(w http.ResponseWriter, r *http.Request, body []byte, rec *Request) {
	path := r.URL.Path
	if r.Method == http.MethodGet && strings.HasSuffix(path, "/models") {
		rec.Kind = "side"
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(path, "/responses") {
		notFound(w, rec)
		return
	}
	var req openaiRequest
	if err := decode(body, &req); err != nil {
		rec.Kind = "other"
		openaiError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	rec.Model = req.Model
	for _, t := range req.Tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		rec.Tools = append(rec.Tools, name)
	}
	model := req.Model
	if model == "" {
		model = "gpt-mock"
	}
	if len(req.Tools) == 0 {
		rec.Kind = "side"
		s.openaiAnswer(w, r, model, Text("OK"), nil)
		return
	}
	rec.Kind = "main"
	s.asking()
	n := openaiTurns(req.Input)
	rec.Turn = n
	t, fail := s.pick(n)
	if !hold(r, t.Wait) {
		return
	}
	if fail != nil {
		openaiError(w, fail.Status, failureMessage(fail))
		return
	}
	s.openaiAnswer(w, r, model, t, rec.Tools)
}

func openaiError(w http.ResponseWriter, status int, msg string) {
	_, typ, _ := errorType(status)
	if status == http.StatusTooManyRequests {
		w.Header().Set("retry-after", "0")
	}
	writeJSON(w, status, o("error", o("message", msg, "type", typ, "param", nil, "code", typ)))
}

// openaiAnswer streams a Turn as Responses API events, with the keys in
// the API's order.
func (s *Server) openaiAnswer(w http.ResponseWriter, r *http.Request, model string, t Turn, offered []string) {
	u := usage(t.Usage, t)
	respID := fmt.Sprintf("resp_mock_%03d", s.nextID())
	created := time.Now().Unix()
	response := func(status string, output []any) obj {
		m := o("id", respID, "object", "response", "created_at", created, "status", status, "error", nil,
			"model", model, "output", output, "parallel_tool_calls", true, "tool_choice", "auto", "tools", []any{})
		if status == "completed" {
			return m.set("usage", o("input_tokens", u.Input, "input_tokens_details", o("cached_tokens", u.Cached),
				"output_tokens", u.Output, "output_tokens_details", o("reasoning_tokens", u.Reasoning),
				"total_tokens", u.Input+u.Output))
		}
		return m.set("usage", nil)
	}
	e := newSSE(w, r, t.ChunkDelay)
	seq := 0
	ev := func(typ string, pairs ...any) {
		e.event(typ, append(o("type", typ, "sequence_number", seq), o(pairs...)...))
		seq++
	}
	ev("response.created", "response", response("in_progress", []any{}))
	ev("response.in_progress", "response", response("in_progress", []any{}))
	output := []any{}
	idx := 0
	if t.Reasoning != "" {
		id := fmt.Sprintf("rs_mock_%03d", s.nextID())
		ev("response.output_item.added", "output_index", idx, "item", o("id", id, "type", "reasoning", "summary", []any{}))
		ev("response.reasoning_summary_part.added", "item_id", id, "output_index", idx, "summary_index", 0, "part", o("type", "summary_text", "text", ""))
		ev("response.reasoning_summary_text.delta", "item_id", id, "output_index", idx, "summary_index", 0, "delta", t.Reasoning)
		ev("response.reasoning_summary_text.done", "item_id", id, "output_index", idx, "summary_index", 0, "text", t.Reasoning)
		ev("response.reasoning_summary_part.done", "item_id", id, "output_index", idx, "summary_index", 0, "part", o("type", "summary_text", "text", t.Reasoning))
		item := o("id", id, "type", "reasoning", "summary", []any{o("type", "summary_text", "text", t.Reasoning)})
		ev("response.output_item.done", "output_index", idx, "item", item)
		output = append(output, item)
		idx++
	}
	if len(t.Text) > 0 {
		id := fmt.Sprintf("msg_mock_%03d", s.nextID())
		text := strings.Join(t.Text, "")
		ev("response.output_item.added", "output_index", idx, "item", o("id", id, "type", "message", "status", "in_progress", "content", []any{}, "role", "assistant"))
		ev("response.content_part.added", "item_id", id, "output_index", idx, "content_index", 0, "part", o("type", "output_text", "annotations", []any{}, "logprobs", []any{}, "text", ""))
		for _, chunk := range t.Text {
			ev("response.output_text.delta", "item_id", id, "output_index", idx, "content_index", 0, "delta", chunk, "logprobs", []any{})
		}
		ev("response.output_text.done", "item_id", id, "output_index", idx, "content_index", 0, "text", text, "logprobs", []any{})
		part := o("type", "output_text", "annotations", []any{}, "logprobs", []any{}, "text", text)
		ev("response.content_part.done", "item_id", id, "output_index", idx, "content_index", 0, "part", part)
		item := o("id", id, "type", "message", "status", "completed", "content", []any{part}, "role", "assistant")
		ev("response.output_item.done", "output_index", idx, "item", item)
		output = append(output, item)
		idx++
	}
	for _, c := range t.Calls {
		if c.Custom != "" {
			n := s.nextID()
			id, callID := fmt.Sprintf("ctc_mock_%03d", n), fmt.Sprintf("call_mock_%03d", n)
			ev("response.output_item.added", "output_index", idx, "item", o("id", id, "type", "custom_tool_call", "status", "in_progress", "call_id", callID, "input", "", "name", c.Name))
			for _, part := range splitHalf(c.Custom) {
				ev("response.custom_tool_call_input.delta", "item_id", id, "output_index", idx, "delta", part)
			}
			ev("response.custom_tool_call_input.done", "item_id", id, "output_index", idx, "input", c.Custom)
			item := o("id", id, "type", "custom_tool_call", "status", "completed", "call_id", callID, "input", c.Custom, "name", c.Name)
			ev("response.output_item.done", "output_index", idx, "item", item)
			output = append(output, item)
			idx++
			continue
		}
		name, args := toolArgs(OpenAI, c, offered)
		js, _ := json.Marshal(args)
		n := s.nextID()
		id, callID := fmt.Sprintf("fc_mock_%03d", n), fmt.Sprintf("call_mock_%03d", n)
		ev("response.output_item.added", "output_index", idx, "item", o("id", id, "type", "function_call", "status", "in_progress", "arguments", "", "call_id", callID, "name", name))
		for _, part := range splitHalf(string(js)) {
			ev("response.function_call_arguments.delta", "item_id", id, "output_index", idx, "delta", part)
		}
		ev("response.function_call_arguments.done", "item_id", id, "output_index", idx, "arguments", string(js))
		item := o("id", id, "type", "function_call", "status", "completed", "arguments", string(js), "call_id", callID, "name", name)
		ev("response.output_item.done", "output_index", idx, "item", item)
		output = append(output, item)
		idx++
	}
	ev("response.completed", "response", response("completed", output))
}
