package reference

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Claude Code stream-json lines (docs/protocols/claude.md#stdout) are decoded in two
// steps: the header, then the struct of the line's type, so that a field
// that means something else in another type (system/permission_denied has
// a string "message") cannot make a line undecodable. Unknown fields and
// types are ignored, as the SDKs do.
type claudeInit struct {
	Model          string   `json:"model"`
	Cwd            string   `json:"cwd"`
	PermissionMode string   `json:"permissionMode"`
	Tools          []string `json:"tools"`
}

type claudeMessageLine struct {
	Message  *claudeMessage `json:"message"`
	IsReplay bool           `json:"isReplay"`
}

type claudeStreamLine struct {
	Event *claudeStreamEvent `json:"event"`
}

type claudeResult struct {
	Subtype        string            `json:"subtype"`
	SessionID      string            `json:"session_id"`
	IsError        bool              `json:"is_error"`
	Result         *string           `json:"result"`
	Errors         []json.RawMessage `json:"errors"`
	DurationMs     *jsonInt          `json:"duration_ms"`
	TotalCostUSD   *float64          `json:"total_cost_usd"`
	Usage          *claudeUsage      `json:"usage"`
	TerminalReason string            `json:"terminal_reason"`
}

type claudeToolProgress struct {
	ToolUseID string `json:"tool_use_id"`
}

type claudeMessage struct {
	ID      string          `json:"id"`
	Content json.RawMessage `json:"content"` // a string or an array of blocks
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type claudeStreamEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		ID string `json:"id"`
	} `json:"message"`
	ContentBlock *struct {
		Type string `json:"type"`
	} `json:"content_block"`
	Delta *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
}

type claudeUsage struct {
	InputTokens              jsonInt `json:"input_tokens"`
	OutputTokens             jsonInt `json:"output_tokens"`
	CacheCreationInputTokens jsonInt `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     jsonInt `json:"cache_read_input_tokens"`
}

// claudeParser reads Claude Code's stdout (--output-format stream-json
// --verbose, with or without --include-partial-messages).
type claudeParser struct {
	opts   Options
	sid    string
	term   *terminal
	deltas claudeDeltas
}

func newClaudeParser(opts Options) *claudeParser { return &claudeParser{opts: opts} }

func (p *claudeParser) sessionID() string   { return p.sid }
func (p *claudeParser) terminal() *terminal { return p.term }

func (p *claudeParser) beginTurn(int, string) []fact {
	p.term = nil
	p.deltas.reset()
	return nil
}

func (p *claudeParser) line(raw []byte, owned bool) ([]fact, error) {
	h, sc, err := scanHeader(raw, "claude", false)
	if err != nil {
		return nil, err
	}
	if h.SessionID != "" && p.sid == "" {
		p.sid = h.SessionID
	}
	switch h.Type {
	case "system":
		if h.Subtype != "init" {
			return nil, nil
		}
		var l claudeInit
		if err := sc.decode(raw, owned, &l, "claude system/init"); err != nil {
			return nil, err
		}
		if h.SessionID != "" {
			p.sid = h.SessionID
		}
		return []fact{factSession{
			id: h.SessionID, model: l.Model, cwd: l.Cwd,
			permissionMode: l.PermissionMode, tools: l.Tools,
			approvalMode: claudeApproval(l.PermissionMode),
		}}, nil
	case "assistant", "user":
		var l claudeMessageLine
		if err := sc.decode(raw, owned, &l, "claude "+h.Type); err != nil {
			return nil, err
		}
		if h.Type == "assistant" {
			return p.assistant(&l, &sc)
		}
		return p.user(&l, &sc)
	case "stream_event":
		var l claudeStreamLine
		if err := sc.decode(raw, owned, &l, "claude stream_event"); err != nil {
			return nil, err
		}
		return p.streamEvent(l.Event), nil
	case "tool_progress":
		var l claudeToolProgress
		if err := sc.decode(raw, owned, &l, "claude tool_progress"); err != nil {
			return nil, err
		}
		if l.ToolUseID != "" {
			return []fact{factToolProgress{id: l.ToolUseID}}, nil
		}
	case "result":
		var l claudeResult
		if err := sc.decode(raw, owned, &l, "claude result"); err != nil {
			return nil, err
		}
		p.result(&l)
	}
	return nil, nil
}

// claudeApproval maps Claude's permissionMode to a unified approvalMode.
func claudeApproval(mode string) string {
	switch mode {
	case "default", "manual":
		return "ask"
	case "acceptEdits":
		return "autoEdit"
	case "bypassPermissions":
		return "autoAll"
	}
	return ""
}

// blocks decodes message content: an array of blocks, or a string as one
// text block. sc is the scan of the line the message came from.
func blocks(m *claudeMessage, sc *lineScan) ([]claudeBlock, error) {
	if m == nil || isNull(m.Content) {
		return nil, nil
	}
	if s, ok := jsonStringValue(m.Content); ok {
		return []claudeBlock{{Type: "text", Text: s}}, nil
	}
	// Decoded whole when it can be (one pass instead of three); block by
	// block when a block is broken, to keep the others.
	var all []claudeBlock
	if sc.unmarshal(m.Content, &all, true) == nil { // Content is the parser's own copy, or part of an owned line
		return all, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(m.Content, &raws); err != nil {
		return nil, fmt.Errorf("claude: undecodable message content: %w", err)
	}
	bs := make([]claudeBlock, 0, len(raws))
	var bad error
	for i, r := range raws {
		var b claudeBlock
		if err := json.Unmarshal(r, &b); err != nil {
			// Keep the other blocks; report the broken one.
			bad = fmt.Errorf("claude: undecodable content block %d: %w", i, err)
			continue
		}
		bs = append(bs, b)
	}
	return bs, bad
}

func (p *claudeParser) assistant(l *claudeMessageLine, sc *lineScan) ([]fact, error) {
	bs, err := blocks(l.Message, sc)
	var out []fact
	for _, b := range bs {
		switch {
		case b.Type == "text":
			out = append(out, p.deltas.complete(l.Message.ID, textAnswer, b.Text)...)
		case b.Type == "thinking":
			out = append(out, p.deltas.complete(l.Message.ID, textReasoning, b.Thinking)...)
		case b.Type == "tool_use" || b.Type == "server_tool_use" || b.Type == "mcp_tool_use":
			out = append(out, factToolStart{id: b.ID, name: b.Name, shimName: b.Name, input: toolInput(b.Input)})
		case strings.HasSuffix(b.Type, "_tool_result"):
			out = append(out, toolResultFact(b))
		}
	}
	return out, err
}

func (p *claudeParser) user(l *claudeMessageLine, sc *lineScan) ([]fact, error) {
	bs, err := blocks(l.Message, sc)
	var out []fact
	for _, b := range bs {
		switch {
		case b.Type == "text" && l.IsReplay:
			out = append(out, factPrompt{text: b.Text})
		case b.Type == "text":
			out = append(out, factText{kind: textUser, text: b.Text})
		case strings.HasSuffix(b.Type, "tool_result"):
			out = append(out, toolResultFact(b))
		}
	}
	return out, err
}

// toolResultFact turns a tool_result block (or a server tool's result
// block) into the end of its tool.
func toolResultFact(b claudeBlock) fact {
	f := factToolEnd{id: b.ToolUseID, ok: !b.IsError, result: compact(b.Content)}
	if b.IsError {
		f.errText = textOf(b.Content)
		if f.errText == "" {
			f.errText = "tool error"
		}
	}
	return f
}

// toolInput keeps a tool's input if it is an object, and wraps any other
// value as {"input": value} so that unified arguments stay an object.
func toolInput(raw json.RawMessage) json.RawMessage {
	switch {
	case isNull(raw):
		return nil
	case isObject(raw):
		return compact(raw)
	}
	return object("input", raw)
}

func (p *claudeParser) streamEvent(ev *claudeStreamEvent) []fact {
	if ev == nil {
		return nil
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			p.deltas.message(ev.Message.ID)
		}
	case "content_block_start":
		if ev.ContentBlock != nil {
			switch ev.ContentBlock.Type {
			case "text":
				p.deltas.start(ev.Index, textAnswer)
			case "thinking":
				p.deltas.start(ev.Index, textReasoning)
			}
		}
	case "content_block_delta":
		if ev.Delta == nil {
			return nil
		}
		switch ev.Delta.Type {
		case "text_delta":
			return p.deltas.delta(ev.Index, textAnswer, ev.Delta.Text)
		case "thinking_delta":
			return p.deltas.delta(ev.Index, textReasoning, ev.Delta.Thinking)
		}
	}
	return nil
}

func (p *claudeParser) result(l *claudeResult) {
	t := &terminal{
		failed:  l.IsError,
		aborted: l.IsError && strings.HasPrefix(l.TerminalReason, "aborted"),
		// -p --max-turns: subtype error_max_turns, terminal_reason max_turns.
		maxTurns: l.IsError && (l.Subtype == "error_max_turns" || l.TerminalReason == "max_turns"),
		errors:   rawStrings(l.Errors),
		subtype:  l.Subtype,
		costUSD:  l.TotalCostUSD,
	}
	if l.DurationMs != nil {
		t.durationMs = ptr(int64(*l.DurationMs))
	}
	if u := l.Usage; u != nil {
		t.usage = &usage{
			uncached:   int64(u.InputTokens),
			cacheRead:  int64(u.CacheReadInputTokens),
			cacheWrite: int64(u.CacheCreationInputTokens),
			output:     int64(u.OutputTokens),
		}
	}
	if t.failed {
		switch {
		case len(t.errors) > 0:
			t.errText = strings.Join(t.errors, "; ")
		case l.Result != nil && *l.Result != "":
			t.errText = *l.Result
		default:
			t.errText = "claude: result " + l.Subtype + " with is_error true"
		}
	}
	if l.SessionID != "" {
		p.sid = l.SessionID
	}
	p.term = t
	p.deltas.reset()
}
