package mock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	name string
	data map[string]any
	raw  string
}

// post sends body to the mock and returns the response.
func post(t *testing.T, s *Server, path string, body any, hdr map[string]string) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readSSE parses an event stream as the SDKs do (blank-line separated
// events of "event:" and "data:" lines, \n or \r\n line ends).
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case line == "":
			if cur.raw != "" {
				if err := json.Unmarshal([]byte(cur.raw), &cur.data); err != nil {
					t.Fatalf("data is not JSON: %v: %s", err, cur.raw)
				}
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.raw += strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func start(t *testing.T, api API, sc Script) *Server {
	t.Helper()
	s, err := Start(api, sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || s.Port() == 0 {
		t.Fatalf("the mock listens on %s, not loopback", s.URL)
	}
	return s
}

func str(v any) string { s, _ := v.(string); return s }

func get(m any, keys ...string) any {
	for _, k := range keys {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[k]
	}
	return m
}

var toolScript = Script{Turns: []Turn{
	{Text: []string{"I'll run ", "it."}, Calls: []Call{ShellCall("echo hi")}},
	Text("It printed ", "hi."),
}}

func anthropicBody(assistants int, tools bool) map[string]any {
	msgs := []any{map[string]any{"role": "user", "content": "run echo"}}
	for i := 0; i < assistants; i++ {
		msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "x"}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": "hi"}}})
	}
	b := map[string]any{"model": "claude-test", "max_tokens": 1000, "stream": true, "messages": msgs}
	if tools {
		b["tools"] = []any{map[string]any{"name": "Bash", "input_schema": map[string]any{"type": "object"}}}
	}
	return b
}

func TestAnthropicStreamsTextAndToolUse(t *testing.T) {
	s := start(t, Anthropic, toolScript)
	resp := post(t, s, "/v1/messages?beta=true", anthropicBody(0, true), map[string]string{"x-api-key": "k", "anthropic-version": "2023-06-01"})
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := readSSE(t, resp.Body)
	var names []string
	var text, partial string
	var tool map[string]any
	for _, e := range evs {
		if e.name != str(e.data["type"]) {
			t.Errorf("event %q carries type %q", e.name, e.data["type"])
		}
		names = append(names, e.name)
		switch e.name {
		case "content_block_start":
			if cb := e.data["content_block"].(map[string]any); cb["type"] == "tool_use" {
				tool = cb
			}
		case "content_block_delta":
			d := e.data["delta"].(map[string]any)
			text += str(d["text"])
			partial += str(d["partial_json"])
		case "message_delta":
			if got := get(e.data, "delta", "stop_reason"); got != "tool_use" {
				t.Errorf("stop_reason %v, want tool_use", got)
			}
		}
	}
	want := "message_start content_block_start ping content_block_delta content_block_delta content_block_stop content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if text != "I'll run it." {
		t.Errorf("text %q", text)
	}
	if tool == nil || tool["name"] != "Bash" || !strings.HasPrefix(str(tool["id"]), "toolu_") {
		t.Fatalf("tool_use block %v", tool)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(partial), &input); err != nil || input["command"] != "echo hi" {
		t.Errorf("input_json_delta pieces %q: %v", partial, err)
	}
	// The message object keeps the API's key order: the CLI passes it on.
	if !strings.HasPrefix(evs[0].raw, `{"type":"message_start","message":{"id":"msg_mock_`) {
		t.Errorf("message_start %s", evs[0].raw)
	}

	// The request after the tool result gets the second turn.
	evs = readSSE(t, post(t, s, "/v1/messages", anthropicBody(1, true), nil).Body)
	text = ""
	for _, e := range evs {
		if e.name == "content_block_delta" {
			text += str(get(e.data, "delta", "text"))
		}
	}
	if text != "It printed hi." {
		t.Errorf("second turn text %q", text)
	}
	if got := s.MainRequests(); got != 2 {
		t.Errorf("%d main requests, want 2", got)
	}
}

func TestAnthropicSideRequestsDoNotAdvance(t *testing.T) {
	s := start(t, Anthropic, toolScript)
	body := anthropicBody(0, false)
	body["stream"] = false
	resp := post(t, s, "/v1/messages", body, nil)
	var msg map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if got := get(msg, "content").([]any)[0].(map[string]any)["text"]; got != "OK" {
		t.Errorf("side request answered %v", got)
	}
	resp = post(t, s, "/v1/messages/count_tokens", anthropicBody(0, true), nil)
	var ct map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&ct); err != nil || ct["input_tokens"] == nil {
		t.Errorf("count_tokens: %v %v", ct, err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Kind != "side" || reqs[1].Kind != "side" || s.MainRequests() != 0 {
		t.Errorf("requests %+v", reqs)
	}
}

func TestAnthropicFailures(t *testing.T) {
	s := start(t, Anthropic, Script{Turns: []Turn{{Text: []string{"after retry"}, Fail: &Failure{Status: 429, Times: 1}}}})
	resp := post(t, s, "/v1/messages", anthropicBody(0, true), nil)
	if resp.StatusCode != 429 || resp.Header.Get("x-should-retry") != "true" {
		t.Fatalf("status %d, x-should-retry %q", resp.StatusCode, resp.Header.Get("x-should-retry"))
	}
	var e map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e["type"] != "error" || get(e, "error", "type") != "rate_limit_error" {
		t.Errorf("error body %v (%v)", e, err)
	}
	resp = post(t, s, "/v1/messages", anthropicBody(0, true), nil)
	if resp.StatusCode != 200 {
		t.Errorf("the retry got %d, want 200", resp.StatusCode)
	}
	// A failure without Times fails every time and says not to retry.
	s2 := start(t, Anthropic, Script{Turns: []Turn{{Fail: &Failure{Status: 401}}}})
	for i := 0; i < 2; i++ {
		resp := post(t, s2, "/v1/messages", anthropicBody(0, true), nil)
		if resp.StatusCode != 401 || resp.Header.Get("x-should-retry") != "false" {
			t.Errorf("attempt %d: status %d, x-should-retry %q", i+1, resp.StatusCode, resp.Header.Get("x-should-retry"))
		}
	}
}

func openaiBody(input []any) map[string]any {
	return map[string]any{"model": "gpt-test", "stream": true, "input": input,
		"tools": []any{map[string]any{"type": "function", "name": "exec_command"}, map[string]any{"type": "custom", "name": "apply_patch"}}}
}

func user(text string) any {
	return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}
}

func TestOpenAITurnCounting(t *testing.T) {
	call := map[string]any{"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"}
	out := map[string]any{"type": "function_call_output", "call_id": "c1", "output": "hi"}
	reasoning := map[string]any{"type": "reasoning", "summary": []any{}}
	answer := map[string]any{"type": "message", "role": "assistant", "content": []any{}}
	for _, tc := range []struct {
		input []any
		want  int
	}{
		{[]any{user("a")}, 0},
		{[]any{user("a"), reasoning, call, call, out, out}, 1},
		{[]any{user("a"), reasoning, call, out, answer}, 2},
		{[]any{user("a"), call, out, answer, user("b")}, 2},
		{[]any{user("a"), answer, user("b"), call, out, answer}, 3},
	} {
		var raw []json.RawMessage
		for _, it := range tc.input {
			b, _ := json.Marshal(it)
			raw = append(raw, b)
		}
		if got := openaiTurns(raw); got != tc.want {
			t.Errorf("%d turns in %v, want %d", got, tc.input, tc.want)
		}
	}
}

func TestOpenAIResponsesStream(t *testing.T) {
	s := start(t, OpenAI, Script{Turns: []Turn{
		{Reasoning: "thinking", Text: []string{"Let me ", "look."}, Calls: []Call{ShellCall("ls"), {Name: "apply_patch", Custom: "*** Begin Patch\n*** End Patch\n"}}},
	}})
	resp := post(t, s, "/v1/responses", openaiBody([]any{user("go")}), map[string]string{"Authorization": "Bearer k"})
	evs := readSSE(t, resp.Body)
	var done []map[string]any
	for i, e := range evs {
		if e.name != str(e.data["type"]) {
			t.Errorf("event %q carries type %q", e.name, e.data["type"])
		}
		if n, _ := e.data["sequence_number"].(float64); int(n) != i {
			t.Errorf("event %d has sequence_number %v", i, e.data["sequence_number"])
		}
		if !strings.HasPrefix(e.raw, `{"type":`) {
			t.Errorf("event %d does not start with its type: %s", i, e.raw)
		}
		if e.name == "response.output_item.done" {
			done = append(done, e.data["item"].(map[string]any))
		}
	}
	if first, last := evs[0].name, evs[len(evs)-1].name; first != "response.created" || last != "response.completed" {
		t.Errorf("stream from %s to %s", first, last)
	}
	if len(done) != 4 {
		t.Fatalf("%d output items, want reasoning, message, function_call, custom_tool_call", len(done))
	}
	if done[0]["type"] != "reasoning" || get(done[0], "summary").([]any)[0].(map[string]any)["text"] != "thinking" {
		t.Errorf("reasoning item %v", done[0])
	}
	if done[1]["type"] != "message" || done[1]["role"] != "assistant" || get(done[1], "content").([]any)[0].(map[string]any)["text"] != "Let me look." {
		t.Errorf("message item %v", done[1])
	}
	var args map[string]any
	if done[2]["type"] != "function_call" || done[2]["name"] != "exec_command" || json.Unmarshal([]byte(str(done[2]["arguments"])), &args) != nil || args["cmd"] != "ls" {
		t.Errorf("function_call item %v", done[2])
	}
	if done[3]["type"] != "custom_tool_call" || done[3]["name"] != "apply_patch" || !strings.HasPrefix(str(done[3]["input"]), "*** Begin Patch") {
		t.Errorf("custom_tool_call item %v", done[3])
	}
	usage := get(evs[len(evs)-1].data, "response", "usage").(map[string]any)
	if usage["input_tokens"] == nil || get(usage, "output_tokens_details", "reasoning_tokens") == nil {
		t.Errorf("usage %v", usage)
	}
}

func TestOpenAIToolMappingFollowsOfferedTools(t *testing.T) {
	name, args := toolArgs(OpenAI, ShellCall("ls"), []string{"shell"})
	b, _ := json.Marshal(args)
	if name != "shell" || string(b) != `{"command":["bash","-lc","ls"]}` {
		t.Errorf("shell tool: %s %s", name, b)
	}
	name, args = toolArgs(OpenAI, ShellCall("ls"), []string{"shell_command"})
	b, _ = json.Marshal(args)
	if name != "shell_command" || string(b) != `{"command":"ls"}` {
		t.Errorf("shell_command tool: %s %s", name, b)
	}
}

func TestOpenAIErrorsAndModels(t *testing.T) {
	s := start(t, OpenAI, Script{Turns: []Turn{{Fail: &Failure{Status: 500, Message: "boom"}}}})
	resp := post(t, s, "/v1/responses", openaiBody([]any{user("go")}), nil)
	var e map[string]any
	if resp.StatusCode != 500 || json.NewDecoder(resp.Body).Decode(&e) != nil || get(e, "error", "message") != "boom" {
		t.Errorf("status %d body %v", resp.StatusCode, e)
	}
	r, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 200 {
		t.Errorf("GET /v1/models: %d", r.StatusCode)
	}
	r, err = http.Get(s.URL + "/v1/nothing")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Errorf("unknown endpoint: %d", r.StatusCode)
	}
	reqs := s.Requests()
	if reqs[len(reqs)-1].Kind != "other" || reqs[len(reqs)-1].Status != 404 {
		t.Errorf("last request logged as %+v", reqs[len(reqs)-1])
	}
}

func geminiBody(models int, tools bool) map[string]any {
	contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "run"}}}}
	for i := 0; i < models; i++ {
		contents = append(contents,
			map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]any{}}}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "run_shell_command", "response": map[string]any{}}}}})
	}
	b := map[string]any{"contents": contents}
	if tools {
		b["tools"] = []any{map[string]any{"functionDeclarations": []any{
			map[string]any{"name": "run_shell_command"}, map[string]any{"name": "read_file"}}}}
	}
	return b
}

func TestGeminiStream(t *testing.T) {
	s := start(t, Gemini, Script{Turns: []Turn{
		{Text: []string{"I'll look ", "first."}, Calls: []Call{{Tool: ReadFile, Path: "notes.txt"}, ShellCall("ls -1")}},
		Text("Done."),
	}})
	resp := post(t, s, "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", geminiBody(0, true), map[string]string{"x-goog-api-key": "k"})
	body, _ := io.ReadAll(resp.Body)
	if !bytes.Contains(body, []byte("\r\n\r\n")) {
		t.Errorf("events are not separated by CRLF CRLF as the Gemini API does")
	}
	evs := readSSE(t, bytes.NewReader(body))
	if len(evs) != 3 {
		t.Fatalf("%d chunks, want 3 (two text chunks, one with both calls)", len(evs))
	}
	for i, e := range evs {
		cand := e.data["candidates"].([]any)[0].(map[string]any)
		_, final := cand["finishReason"]
		if final != (i == len(evs)-1) {
			t.Errorf("chunk %d: finishReason present %v", i, final)
		}
	}
	parts := get(evs[2].data["candidates"].([]any)[0], "content", "parts").([]any)
	if len(parts) != 2 || get(parts[0], "functionCall", "name") != "read_file" || get(parts[1], "functionCall", "args", "command") != "ls -1" {
		t.Errorf("calls %v", parts)
	}
	if get(evs[2].data, "usageMetadata", "candidatesTokenCount") == nil {
		t.Errorf("the last chunk has no final usage: %v", evs[2].data["usageMetadata"])
	}
	evs = readSSE(t, post(t, s, "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", geminiBody(1, true), nil).Body)
	if got := get(evs[0].data["candidates"].([]any)[0], "content", "parts").([]any)[0].(map[string]any)["text"]; got != "Done." {
		t.Errorf("second turn %v", got)
	}
}

func TestGeminiSideRequests(t *testing.T) {
	s := start(t, Gemini, toolScript)
	// The routing classifier and the next-speaker check ask for JSON.
	body := geminiBody(0, false)
	body["generationConfig"] = map[string]any{"responseMimeType": "application/json", "responseJsonSchema": map[string]any{
		"type": "OBJECT", "properties": map[string]any{
			"reasoning":        map[string]any{"type": "STRING"},
			"next_speaker":     map[string]any{"type": "STRING", "enum": []any{"model", "user"}},
			"complexity_score": map[string]any{"type": "INTEGER"},
		}}}
	resp := post(t, s, "/v1beta/models/gemini-lite:generateContent", body, nil)
	var r map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	text := str(get(r["candidates"].([]any)[0], "content", "parts").([]any)[0].(map[string]any)["text"])
	var answer map[string]any
	if err := json.Unmarshal([]byte(text), &answer); err != nil || answer["next_speaker"] != "user" || answer["complexity_score"] != float64(10) || answer["reasoning"] == nil {
		t.Errorf("structured answer %q (%v)", text, err)
	}
	resp = post(t, s, "/v1beta/models/gemini-lite:countTokens", geminiBody(0, false), nil)
	if resp.StatusCode != 200 {
		t.Errorf("countTokens: %d", resp.StatusCode)
	}
	if s.MainRequests() != 0 {
		t.Errorf("side requests advanced the script")
	}
}

func TestGeminiError(t *testing.T) {
	s := start(t, Gemini, Script{Turns: []Turn{{Fail: &Failure{Status: 429}}}})
	resp := post(t, s, "/v1beta/models/m:streamGenerateContent?alt=sse", geminiBody(0, true), nil)
	var e map[string]any
	if resp.StatusCode != 429 || json.NewDecoder(resp.Body).Decode(&e) != nil || get(e, "error", "status") != "RESOURCE_EXHAUSTED" || get(e, "error", "code") != float64(429) {
		t.Errorf("status %d body %v", resp.StatusCode, e)
	}
}

func TestSlowStreamAndCancel(t *testing.T) {
	turn := Text("a", "b", "c", "d")
	turn.ChunkDelay = 50 * time.Millisecond
	s := start(t, Gemini, Script{Turns: []Turn{turn}})
	t0 := time.Now()
	evs := readSSE(t, post(t, s, "/v1beta/models/m:streamGenerateContent?alt=sse", geminiBody(0, true), nil).Body)
	if len(evs) != 4 || time.Since(t0) < 150*time.Millisecond {
		t.Errorf("%d chunks in %v; want 4 chunks over at least 150ms", len(evs), time.Since(t0))
	}
	// A client that goes away mid-stream does not keep the handler.
	turn.ChunkDelay = time.Hour
	s2 := start(t, Anthropic, Script{Turns: []Turn{turn}})
	ctx, cancel := context.WithCancel(context.Background())
	b, _ := json.Marshal(anthropicBody(0, true))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s2.URL+"/v1/messages", bytes.NewReader(b))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	done := make(chan struct{})
	go func() { s2.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs on a stream whose client left")
	}
}

func TestForCLI(t *testing.T) {
	for cli, want := range map[string]API{"claude": Anthropic, "codex": OpenAI, "gemini": Gemini} {
		if got, err := ForCLI(cli); err != nil || got != want {
			t.Errorf("ForCLI(%s) = %s, %v", cli, got, err)
		}
	}
	if _, err := ForCLI("copilot"); err == nil {
		t.Error("ForCLI(copilot) did not fail")
	}
}

// TestWaitHoldsEveryAPI: a Turn's Wait holds the answer on each API, the
// held request is counted at once (a driver sees the CLI has asked), and a
// client that goes away while held frees the handler.
func TestWaitHoldsEveryAPI(t *testing.T) {
	for _, tc := range []struct {
		api  API
		path string
		body any
	}{
		{Anthropic, "/v1/messages", anthropicBody(0, true)},
		{OpenAI, "/v1/responses", openaiBody([]any{user("a")})},
		{Gemini, "/v1beta/models/m:streamGenerateContent?alt=sse", geminiBody(0, true)},
	} {
		t.Run(string(tc.api), func(t *testing.T) {
			turn := Text("held")
			turn.Wait = time.Hour
			s := start(t, tc.api, Script{Turns: []Turn{turn}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b, _ := json.Marshal(tc.body)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+tc.path, bytes.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			got := make(chan error, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				got <- err
			}()
			deadline := time.Now().Add(30 * time.Second)
			for s.MainAsked() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the held request was never counted")
				}
				time.Sleep(5 * time.Millisecond)
			}
			select {
			case err := <-got:
				t.Fatalf("answered while held (err %v)", err)
			case <-time.After(100 * time.Millisecond):
			}
			cancel()
			if err := <-got; err == nil {
				t.Error("the cancelled client got an answer")
			}
			done := make(chan struct{})
			go func() { s.Close(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Close hangs on a request held for a client that left")
			}
		})
	}
}

// TestStreamedText: a text block scripted in one chunk goes out in two,
// cut at the space nearest its middle; one scripted in chunks, or with
// no space to cut at, as scripted.
func TestStreamedText(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"Hello! How can I help you today?"}, []string{"Hello! How can I", " help you today?"}},
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"word"}, []string{"word"}},
	} {
		if got := streamedText(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("streamedText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
