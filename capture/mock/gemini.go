package mock

import (
	"fmt"
	"net/http"
	"strings"
)

// geminiRequest is the part of a generateContent request the mock reads.
type geminiRequest struct {
	Contents []struct {
		Role string `json:"role"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string         `json:"responseMimeType"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
		ResponseSchema     map[string]any `json:"responseSchema"`
	} `json:"generationConfig"`
}

// gemini serves POST /v1beta/models/MODEL:streamGenerateContent,
// :generateContent and :countTokens.
func (s *Server) gemini(w http.ResponseWriter, r *http.Request, body []byte, rec *Request) {
	path := r.URL.Path
	i := strings.LastIndex(path, "/models/")
	if r.Method != http.MethodPost || i < 0 {
		notFound(w, rec)
		return
	}
	model, method, ok := strings.Cut(path[i+len("/models/"):], ":")
	if !ok {
		notFound(w, rec)
		return
	}
	rec.Model = model
	switch method {
	case "streamGenerateContent", "generateContent", "countTokens":
	default:
		notFound(w, rec)
		return
	}
	var req geminiRequest
	if err := decode(body, &req); err != nil {
		rec.Kind = "other"
		geminiError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			rec.Tools = append(rec.Tools, f.Name)
		}
	}
	if method == "countTokens" {
		rec.Kind = "side"
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": 100 + len(body)/16})
		return
	}
	stream := method == "streamGenerateContent"
	if len(rec.Tools) == 0 {
		rec.Kind = "side"
		schema := req.GenerationConfig.ResponseJSONSchema
		if schema == nil {
			schema = req.GenerationConfig.ResponseSchema
		}
		text := "OK"
		if schema != nil || req.GenerationConfig.ResponseMimeType == "application/json" {
			text = jsonText(fill(schema))
		}
		s.geminiAnswer(w, r, stream, model, Text(text), nil)
		return
	}
	rec.Kind = "main"
	s.asking()
	n := 0
	for _, c := range req.Contents {
		if c.Role == "model" {
			n++
		}
	}
	rec.Turn = n
	t, fail := s.pick(n)
	if !hold(r, t.Wait) {
		return
	}
	if fail != nil {
		geminiError(w, fail.Status, failureMessage(fail))
		return
	}
	s.geminiAnswer(w, r, stream, model, t, rec.Tools)
}

func geminiError(w http.ResponseWriter, status int, msg string) {
	_, _, st := errorType(status)
	writeJSON(w, status, o("error", o("code", status, "message", msg, "status", st)))
}

// geminiAnswer writes a Turn as GenerateContentResponse chunks (SSE) or as
// one response.
func (s *Server) geminiAnswer(w http.ResponseWriter, r *http.Request, stream bool, model string, t Turn, offered []string) {
	u := usage(t.Usage, t)
	respID := fmt.Sprintf("mock-%03d", s.nextID())
	var chunks [][]any
	if t.Reasoning != "" {
		chunks = append(chunks, []any{map[string]any{"text": t.Reasoning, "thought": true}})
	}
	for _, c := range t.Text {
		chunks = append(chunks, []any{map[string]any{"text": c}})
	}
	if len(t.Calls) > 0 {
		var parts []any
		for _, c := range t.Calls {
			if c.Custom != "" {
				continue
			}
			name, args := toolArgs(Gemini, c, offered)
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": name, "args": args}})
		}
		chunks = append(chunks, parts)
	}
	if len(chunks) == 0 {
		chunks = append(chunks, []any{map[string]any{"text": ""}})
	}
	meta := func(final bool) obj {
		if !final {
			return o("promptTokenCount", u.Input, "totalTokenCount", u.Input)
		}
		m := o("promptTokenCount", u.Input, "candidatesTokenCount", u.Output, "totalTokenCount", u.Input+u.Output)
		if u.Cached > 0 {
			m = m.set("cachedContentTokenCount", u.Cached)
		}
		if u.Reasoning > 0 {
			m = m.set("thoughtsTokenCount", u.Reasoning)
		}
		return m
	}
	chunk := func(parts []any, final bool) obj {
		cand := o("content", o("parts", parts, "role", "model"))
		if final {
			cand = cand.set("finishReason", "STOP")
		}
		cand = cand.set("index", 0)
		return o("candidates", []any{cand}, "usageMetadata", meta(final), "modelVersion", model, "responseId", respID)
	}
	if !stream {
		var all []any
		for _, c := range chunks {
			all = append(all, c...)
		}
		all = mergeText(all)
		writeJSON(w, http.StatusOK, chunk(all, true))
		return
	}
	e := newSSE(w, r, t.ChunkDelay)
	e.crlf = true
	for i, c := range chunks {
		e.event("", chunk(c, i == len(chunks)-1))
	}
}

// mergeText joins consecutive plain text parts into one.
func mergeText(parts []any) []any {
	var out []any
	for _, p := range parts {
		m := p.(map[string]any)
		if txt, ok := m["text"].(string); ok && m["thought"] == nil && len(out) > 0 {
			if prev, ok := out[len(out)-1].(map[string]any); ok {
				if pt, ok := prev["text"].(string); ok && prev["thought"] == nil {
					prev["text"] = pt + txt
					continue
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// fill makes a value that satisfies a (Gemini-style, upper-case typed)
// JSON schema, for the CLI's structured side requests: the routing
// classifier gets a low complexity and "flash", the next-speaker check
// "user".
func fill(schema map[string]any) any {
	if schema == nil {
		return map[string]any{}
	}
	typ := strings.ToLower(fmt.Sprint(schema["type"]))
	switch typ {
	case "object", "<nil>":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			ps, _ := p.(map[string]any)
			switch name {
			case "next_speaker":
				out[name] = "user"
			case "model_choice":
				out[name] = "flash"
			case "complexity_score":
				out[name] = 10
			default:
				out[name] = fill(ps)
			}
		}
		return out
	case "string":
		if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
			return e[0]
		}
		return "agentconform mock"
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	}
	return nil
}

func jsonText(v any) string {
	b, err := jsonMarshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}
