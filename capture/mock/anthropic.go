package mock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropicRequest is the part of a Messages API request the mock reads.
type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// anthropic serves POST /v1/messages (streaming or not) and
// /v1/messages/count_tokens.
func (s *Server) anthropic(w http.ResponseWriter, r *http.Request, body []byte, rec *Request) {
	path := r.URL.Path
	if r.Method != http.MethodPost || !strings.HasSuffix(path, "/v1/messages") && !strings.HasSuffix(path, "/v1/messages/count_tokens") {
		notFound(w, rec)
		return
	}
	var req anthropicRequest
	if err := decode(body, &req); err != nil {
		rec.Kind = "other"
		anthropicError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error(), false)
		return
	}
	rec.Model = req.Model
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Name)
	}
	if strings.HasSuffix(path, "/count_tokens") {
		rec.Kind = "side"
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 100 + len(body)/16})
		return
	}
	model := req.Model
	if model == "" {
		model = "claude-mock"
	}
	if len(req.Tools) == 0 {
		// Not the conversation (a title, a summary, a quota probe).
		rec.Kind = "side"
		s.anthropicAnswer(w, r, req.Stream, model, Text("OK"))
		return
	}
	rec.Kind = "main"
	s.asking()
	n := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	rec.Turn = n
	t, fail := s.pick(n)
	if !hold(r, t.Wait) {
		return
	}
	if fail != nil {
		anthropicError(w, fail.Status, failureMessage(fail), fail.Times > 0)
		return
	}
	s.anthropicAnswer(w, r, req.Stream, model, t)
}

// anthropicError writes an error the way the Messages API does. retry
// sets x-should-retry, which the Anthropic SDK obeys in both directions.
func anthropicError(w http.ResponseWriter, status int, msg string, retry bool) {
	typ, _, _ := errorType(status)
	h := w.Header()
	h.Set("request-id", "req_mock_error")
	h.Set("x-should-retry", fmt.Sprint(retry))
	if status == http.StatusTooManyRequests || status == 529 {
		h.Set("retry-after", "0")
	}
	writeJSON(w, status, o("type", "error", "error", o("type", typ, "message", msg)))
}

type anthropicBlock struct {
	kind  string // "thinking", "text" or "tool_use"
	text  []string
	id    string
	name  string
	input any
}

func (s *Server) anthropicBlocks(t Turn, offered []string) []anthropicBlock {
	var blocks []anthropicBlock
	if t.Reasoning != "" {
		blocks = append(blocks, anthropicBlock{kind: "thinking", text: splitHalf(t.Reasoning)})
	}
	if len(t.Text) > 0 {
		blocks = append(blocks, anthropicBlock{kind: "text", text: t.Text})
	}
	for _, c := range t.Calls {
		if c.Custom != "" {
			continue
		}
		name, args := toolArgs(Anthropic, c, offered)
		blocks = append(blocks, anthropicBlock{kind: "tool_use", id: fmt.Sprintf("toolu_mock_%03d", s.nextID()), name: name, input: args})
	}
	if len(t.After) > 0 {
		blocks = append(blocks, anthropicBlock{kind: "text", text: t.After})
	}
	return blocks
}

// anthropicAnswer writes a Turn as a Messages API response, with the keys
// in the API's order.
func (s *Server) anthropicAnswer(w http.ResponseWriter, r *http.Request, stream bool, model string, t Turn) {
	blocks := s.anthropicBlocks(t, nil)
	u := usage(t.Usage, t)
	id := fmt.Sprintf("msg_mock_%03d", s.nextID())
	stop := "end_turn"
	if len(t.Calls) > 0 {
		stop = "tool_use"
	}
	w.Header().Set("request-id", fmt.Sprintf("req_mock_%03d", s.nextID()))
	usageObj := func(out int) obj {
		return o("input_tokens", u.Input, "cache_creation_input_tokens", 0, "cache_read_input_tokens", u.Cached, "output_tokens", out)
	}
	if !stream {
		content := []any{}
		for _, b := range blocks {
			switch b.kind {
			case "thinking":
				content = append(content, o("type", "thinking", "thinking", strings.Join(b.text, ""), "signature", mockSignature))
			case "text":
				content = append(content, o("type", "text", "text", strings.Join(b.text, "")))
			default:
				content = append(content, o("type", "tool_use", "id", b.id, "name", b.name, "input", b.input))
			}
		}
		writeJSON(w, http.StatusOK, o("id", id, "type", "message", "role", "assistant", "model", model,
			"content", content, "stop_reason", stop, "stop_sequence", nil, "usage", usageObj(u.Output)))
		return
	}
	e := newSSE(w, r, t.ChunkDelay)
	e.event("message_start", o("type", "message_start", "message", o(
		"id", id, "type", "message", "role", "assistant", "model", model, "content", []any{},
		"stop_reason", nil, "stop_sequence", nil, "usage", usageObj(1))))
	for i, b := range blocks {
		if b.kind == "thinking" {
			e.event("content_block_start", o("type", "content_block_start", "index", i, "content_block", o("type", "thinking", "thinking", "", "signature", "")))
			if i == 0 {
				e.event("ping", o("type", "ping"))
			}
			for _, chunk := range b.text {
				e.event("content_block_delta", o("type", "content_block_delta", "index", i, "delta", o("type", "thinking_delta", "thinking", chunk)))
			}
			e.event("content_block_delta", o("type", "content_block_delta", "index", i, "delta", o("type", "signature_delta", "signature", mockSignature)))
		} else if b.kind == "text" {
			e.event("content_block_start", o("type", "content_block_start", "index", i, "content_block", o("type", "text", "text", "")))
			if i == 0 {
				e.event("ping", o("type", "ping"))
			}
			for _, chunk := range streamedText(b.text) {
				e.event("content_block_delta", o("type", "content_block_delta", "index", i, "delta", o("type", "text_delta", "text", chunk)))
			}
		} else {
			e.event("content_block_start", o("type", "content_block_start", "index", i, "content_block", o("type", "tool_use", "id", b.id, "name", b.name, "input", o())))
			js, _ := json.Marshal(b.input)
			for _, part := range splitHalf(string(js)) {
				e.event("content_block_delta", o("type", "content_block_delta", "index", i, "delta", o("type", "input_json_delta", "partial_json", part)))
			}
		}
		e.event("content_block_stop", o("type", "content_block_stop", "index", i))
	}
	e.event("message_delta", o("type", "message_delta", "delta", o("stop_reason", stop, "stop_sequence", nil),
		"usage", o("output_tokens", u.Output)))
	e.event("message_stop", o("type", "message_stop"))
}

// mockSignature is the signature of the mock's thinking blocks (the API's
// is an opaque base64 string it checks when the block comes back; the
// mock checks nothing).
const mockSignature = "bW9jay1zaWduYXR1cmU="

// splitHalf cuts s in two (at a rune boundary), as streamed JSON arrives
// in pieces.
// streamedText is how a text block's chunks are streamed: as scripted,
// but a block scripted in one chunk goes out in two, cut at the space
// nearest its middle, as the API streams text in pieces of a few tokens
// (a Claude asked for partial messages shows each as a delta; a block in
// one delta would show an adapter's handling of deltas nothing).
func streamedText(chunks []string) []string {
	if len(chunks) != 1 {
		return chunks
	}
	s := chunks[0]
	best := -1
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' && (best < 0 || abs(i-len(s)/2) < abs(best-len(s)/2)) {
			best = i
		}
	}
	if best < 0 {
		return chunks
	}
	return []string{s[:best], s[best:]}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func splitHalf(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	i := len(s) / 2
	for i > 0 && (s[i]&0xC0) == 0x80 {
		i--
	}
	return []string{s[:i], s[i:]}
}
