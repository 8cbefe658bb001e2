// Package mock serves scripted model APIs on 127.0.0.1, so the real AI
// coding CLIs can run headless without an account, without paying for
// model calls and without any connection leaving the machine: the
// Anthropic Messages API with SSE streaming (Claude Code), the OpenAI
// Responses API with SSE (Codex CLI) and the Gemini API's
// streamGenerateContent?alt=sse (Gemini CLI).
//
// A Script plays the model: one Turn per model response of the main
// conversation (text chunks, tool calls, an HTTP error, a slow stream).
// Which Turn a request gets is told by the conversation history the
// request carries (the number of model responses in it), so the CLI's
// retries, resumed sessions and later user turns all land on the right
// Turn. Requests that are not the main conversation (no tools offered: a
// title, a routing classifier, a next-speaker check, token counting) get a
// short fitting answer and do not advance the script.
//
// Tools are named abstractly (Shell, ReadFile, WriteFile) and mapped to
// each CLI's own tool names and arguments: Bash for Claude, exec_command
// (or shell_command, shell) for Codex, run_shell_command, read_file and
// write_file for Gemini.
package mock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// API names a model API the mock speaks.
type API string

// The APIs, one per CLI.
const (
	// Anthropic is the Messages API (POST /v1/messages, SSE), for Claude
	// Code through ANTHROPIC_BASE_URL.
	Anthropic API = "anthropic"
	// OpenAI is the Responses API (POST /v1/responses, SSE), for Codex
	// through a model_providers entry.
	OpenAI API = "openai"
	// Gemini is the Gemini API (POST /v1beta/models/M:streamGenerateContent?alt=sse),
	// for Gemini CLI through GOOGLE_GEMINI_BASE_URL.
	Gemini API = "gemini"
)

// ForCLI returns the API a CLI ("claude", "codex", "gemini") speaks.
func ForCLI(cli string) (API, error) {
	switch cli {
	case "claude":
		return Anthropic, nil
	case "codex":
		return OpenAI, nil
	case "gemini":
		return Gemini, nil
	}
	return "", fmt.Errorf("mock: no model API for CLI %q", cli)
}

// Tool is an abstract tool the scripted model calls; each API maps it to
// its CLI's tool.
type Tool string

// The tools.
const (
	// Shell runs Call.Command.
	Shell Tool = "shell"
	// ReadFile reads Call.Path.
	ReadFile Tool = "read_file"
	// WriteFile writes Call.Content to Call.Path.
	WriteFile Tool = "write_file"
)

// Call is one tool call of a scripted model response.
type Call struct {
	// Tool is the abstract tool; Name and Args, when set, override the
	// mapping with an exact tool name and arguments.
	Tool Tool
	// Command is the Shell command line.
	Command string
	// Path and Content are the ReadFile and WriteFile arguments (a path
	// relative to the CLI's working directory).
	Path, Content string
	// Name and Args call a tool by its exact name for this API.
	Name string
	Args map[string]any
	// Custom, with Name, makes the call a free-form (custom) tool call of
	// the Responses API whose input is this text, as Codex's apply_patch
	// is; other APIs ignore such a call.
	Custom string
}

// Failure makes a Turn answer with an HTTP error instead of a response.
type Failure struct {
	// Status is the HTTP status (429, 500, 401, ...).
	Status int
	// Message is the error message in the body.
	Message string
	// Times is how many requests for the Turn fail before it is served
	// normally; 0 means every one fails.
	Times int
}

// Usage are the token counts a response reports.
type Usage struct {
	Input, Output, Cached, Reasoning int
}

// Turn is one scripted model response.
type Turn struct {
	// Reasoning is a reasoning summary streamed first (Responses API
	// reasoning item; Gemini thought part; Anthropic a thinking block with
	// a mock signature, which nothing on loopback verifies).
	Reasoning string
	// Text is streamed chunk by chunk, before the calls.
	Text []string
	// Calls are the tool calls, in order, all in this one response
	// (parallel calls when there are several).
	Calls []Call
	// After is a second text block streamed after the calls (Anthropic
	// only: one response with text, tool_use and text blocks, or two text
	// blocks when there are no calls).
	After []string
	// ChunkDelay is the pause before each streamed event after the first
	// (slow streaming).
	ChunkDelay time.Duration
	// Wait is how long the mock holds the request before it answers at
	// all (a model slow to respond); it stops waiting when the client goes
	// away.
	Wait time.Duration
	// Fail answers with an HTTP error instead.
	Fail *Failure
	// Usage is reported; zero values get defaults.
	Usage Usage
}

// Script is a scripted model: Turns[i] answers a request whose history
// already holds i model responses. A request beyond the last Turn gets
// Final (or "Done." when Final is empty).
type Script struct {
	// Name identifies the script in logs.
	Name  string
	Turns []Turn
	// Final is the text of a request beyond the script.
	Final string
}

// Text makes a Turn that streams text in chunks.
func Text(chunks ...string) Turn { return Turn{Text: chunks} }

// ShellCall is a Call of the Shell tool.
func ShellCall(command string) Call { return Call{Tool: Shell, Command: command} }

// Request is what the mock logged about one HTTP request.
type Request struct {
	// Method and Path are the request line (path with query).
	Method, Path string
	// Kind is "main" (the scripted conversation), "side" (a request the
	// script does not cover, answered generically) or "other" (an
	// endpoint the mock does not serve: 404).
	Kind string
	// Turn is the script index served (main requests), -1 otherwise.
	Turn int
	// Status is the HTTP status answered.
	Status int
	// Model is the model the request named.
	Model string
	// Tools are the tool names the request offered.
	Tools []string
	// Body is the request body (for tests and debugging), cut at 1 MiB.
	Body []byte `json:"-"`
}

// Server is a running mock of one model API.
type Server struct {
	// API is the API served.
	API API
	// URL is the base URL (http://127.0.0.1:PORT) to point the CLI at.
	URL string

	script Script
	ln     net.Listener
	srv    *http.Server
	done   chan struct{}

	mu     sync.Mutex
	log    []Request
	asked  int         // main requests received, answered or not
	failed map[int]int // failures served per turn
	seq    int         // id counter
}

// Start serves script for api on a free port of 127.0.0.1 until Close.
func Start(api API, script Script) (*Server, error) {
	switch api {
	case Anthropic, OpenAI, Gemini:
	default:
		return nil, fmt.Errorf("mock: unknown API %q", api)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mock: listening on 127.0.0.1: %w", err)
	}
	s := &Server{API: api, URL: "http://" + ln.Addr().String(), script: script, ln: ln,
		failed: map[int]int{}, done: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // ErrServerClosed after Close
	}()
	return s, nil
}

// Port is the port the server listens on.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops the server, cutting off streams still running.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	return err
}

// Requests returns what was requested so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// MainAsked counts the requests of the scripted conversation received so
// far, answered or not: a request held by its Turn's Wait counts at once,
// so a driver can tell that the CLI has asked the model (it is in its
// turn) before the answer comes.
func (s *Server) MainAsked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked
}

// asking notes a request of the scripted conversation as received.
func (s *Server) asking() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked++
}

// MainRequests counts the requests of the scripted conversation.
func (s *Server) MainRequests() int {
	n := 0
	for _, r := range s.Requests() {
		if r.Kind == "main" {
			n++
		}
	}
	return n
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, r)
}

func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// pick returns the Turn for a request whose history holds n model
// responses, and the failure to answer with, if any.
func (s *Server) pick(n int) (Turn, *Failure) {
	var t Turn
	if n < len(s.script.Turns) {
		t = s.script.Turns[n]
	} else {
		final := s.script.Final
		if final == "" {
			final = "Done."
		}
		t = Text(final)
	}
	if t.Fail == nil {
		return t, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.Fail.Times == 0 || s.failed[n] < t.Fail.Times {
		s.failed[n]++
		return t, t.Fail
	}
	return t, nil
}

const maxBody = 64 << 20

// ServeHTTP routes a request to the API's handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	rec := Request{Method: r.Method, Path: r.URL.RequestURI(), Turn: -1}
	if len(body) > 1<<20 {
		rec.Body = body[:1<<20]
	} else {
		rec.Body = body
	}
	rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	switch s.API {
	case Anthropic:
		s.anthropic(rw, r, body, &rec)
	case OpenAI:
		s.openai(rw, r, body, &rec)
	case Gemini:
		s.gemini(rw, r, body, &rec)
	}
	rec.Status = rw.status
	s.record(rec)
}

// notFound answers an endpoint the mock does not serve.
func notFound(w http.ResponseWriter, rec *Request) {
	rec.Kind = "other"
	writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
		"message": "agentconform mock: no such endpoint: " + rec.Method + " " + rec.Path, "type": "not_found_error", "code": 404}})
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

// WriteHeader remembers the first status.
func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write passes p on.
func (w *statusWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

// Flush passes flushes on, so SSE events leave at once.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes Server-Sent Events, flushing each, with the turn's pause
// before every event after the first.
type sse struct {
	w     http.ResponseWriter
	ctx   context.Context
	delay time.Duration
	n     int
	err   error
	crlf  bool
}

func newSSE(w http.ResponseWriter, r *http.Request, delay time.Duration) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, ctx: r.Context(), delay: delay}
}

// event writes one event: "event: NAME" (when name is not empty) and
// "data: JSON".
func (e *sse) event(name string, data any) {
	if e.err != nil {
		return
	}
	if e.n > 0 && e.delay > 0 {
		t := time.NewTimer(e.delay)
		select {
		case <-t.C:
		case <-e.ctx.Done():
			t.Stop()
			e.err = e.ctx.Err()
			return
		}
	}
	e.n++
	b, err := json.Marshal(data)
	if err != nil {
		e.err = err
		return
	}
	nl := "\n"
	if e.crlf {
		nl = "\r\n"
	}
	var sb strings.Builder
	if name != "" {
		sb.WriteString("event: " + name + nl)
	}
	sb.WriteString("data: ")
	sb.Write(b)
	sb.WriteString(nl + nl)
	if _, err := io.WriteString(e.w, sb.String()); err != nil {
		e.err = err
		return
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// toolArgs maps an abstract call to the exact tool name and arguments of
// one API, given the tool names the request offered. The arguments keep
// the order the CLIs' own tool schemas give them.
func toolArgs(api API, c Call, offered []string) (string, any) {
	if c.Name != "" {
		return c.Name, c.Args
	}
	has := func(n string) bool {
		for _, o := range offered {
			if o == n {
				return true
			}
		}
		return false
	}
	desc := describe(c)
	switch api {
	case Anthropic:
		switch c.Tool {
		case ReadFile:
			return "Read", o("file_path", c.Path)
		case WriteFile:
			return "Write", o("file_path", c.Path, "content", c.Content)
		}
		return "Bash", o("command", c.Command, "description", desc)
	case OpenAI:
		cmd := c.Command
		switch c.Tool {
		case ReadFile:
			cmd = "cat " + shellQuote(c.Path)
		case WriteFile:
			cmd = "printf '%s' " + shellQuote(c.Content) + " > " + shellQuote(c.Path)
		}
		switch {
		case has("exec_command") || len(offered) == 0:
			return "exec_command", o("cmd", cmd)
		case has("shell_command"):
			return "shell_command", o("command", cmd)
		default:
			return "shell", o("command", []any{"bash", "-lc", cmd})
		}
	default: // Gemini
		switch c.Tool {
		case ReadFile:
			return "read_file", o("file_path", c.Path)
		case WriteFile:
			return "write_file", o("file_path", c.Path, "content", c.Content)
		}
		return "run_shell_command", o("command", c.Command, "description", desc)
	}
}

func describe(c Call) string {
	switch c.Tool {
	case ReadFile:
		return "Read " + c.Path
	case WriteFile:
		return "Write " + c.Path
	}
	return "Run " + c.Command
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// usage fills defaults into u.
func usage(u Usage, t Turn) Usage {
	if u.Input == 0 {
		u.Input = 200
	}
	if u.Output == 0 {
		n := 0
		for _, c := range t.Text {
			n += len(c)
		}
		u.Output = 10 + n/4 + 20*len(t.Calls)
	}
	return u
}

// errorType names an HTTP status the way the Anthropic and OpenAI APIs do.
func errorType(status int) (anthropic, openai, google string) {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error", "invalid_request_error", "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "authentication_error", "invalid_api_key", "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "permission_error", "permission_denied", "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "not_found_error", "not_found", "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "rate_limit_error", "rate_limit_exceeded", "RESOURCE_EXHAUSTED"
	case 529:
		return "overloaded_error", "server_error", "UNAVAILABLE"
	case http.StatusServiceUnavailable:
		return "api_error", "server_error", "UNAVAILABLE"
	}
	if status >= 500 {
		return "api_error", "server_error", "INTERNAL"
	}
	return "invalid_request_error", "invalid_request_error", "FAILED_PRECONDITION"
}

func failureMessage(f *Failure) string {
	if f.Message != "" {
		return f.Message
	}
	return fmt.Sprintf("agentconform mock: scripted HTTP %d", f.Status)
}

// decode decodes a JSON request body into v.
func decode(body []byte, v any) error {
	if len(body) == 0 {
		return errors.New("empty body")
	}
	return json.Unmarshal(body, v)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// hold waits d before a request is answered, and reports false when the
// client went away meanwhile (nothing is to be written then).
func hold(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
