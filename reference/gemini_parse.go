package reference

import (
	"encoding/json"
)

// Gemini CLI stream-json events (docs/protocols/gemini.md#events: init, message,
// tool_use, tool_result, error, result) are decoded in two steps, the type
// and then the struct of that type.
type geminiInit struct {
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
}

type geminiMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Delta   bool   `json:"delta"`
}

type geminiToolUse struct {
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
}

type geminiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type geminiToolResult struct {
	ToolID string       `json:"tool_id"`
	Status string       `json:"status"`
	Output *string      `json:"output"`
	Error  *geminiError `json:"error"`
}

type geminiErrorEvent struct {
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

type geminiResult struct {
	Status string       `json:"status"`
	Error  *geminiError `json:"error"`
	Stats  *geminiStats `json:"stats"`
}

type geminiStats struct {
	TotalTokens  *jsonInt `json:"total_tokens"`
	InputTokens  jsonInt  `json:"input_tokens"`
	OutputTokens jsonInt  `json:"output_tokens"`
	Cached       jsonInt  `json:"cached"`
	DurationMs   *jsonInt `json:"duration_ms"`
}

// geminiParser reads `gemini -p ... -o stream-json` output: one process
// per turn, resumed by session id, stats per process.
type geminiParser struct {
	opts Options
	sid  string
	term *terminal
}

func newGeminiParser(opts Options) *geminiParser { return &geminiParser{opts: opts} }

func (p *geminiParser) sessionID() string   { return p.sid }
func (p *geminiParser) terminal() *terminal { return p.term }

func (p *geminiParser) beginTurn(int, string) []fact {
	p.term = nil
	return nil
}

func (p *geminiParser) line(raw []byte, owned bool) ([]fact, error) {
	h, sc, err := scanHeader(raw, "gemini", true)
	if err != nil {
		return nil, err
	}
	switch h.Type {
	case "init":
		var l geminiInit
		if err := sc.decode(raw, owned, &l, "gemini init"); err != nil {
			return nil, err
		}
		p.sid = l.SessionID
		approval := ""
		if p.opts.Permission == PermissionAllow {
			approval = "autoAll" // started with -y
		}
		return []fact{factSession{id: l.SessionID, model: first(l.Model, p.opts.Model), cwd: p.opts.Cwd, approvalMode: approval}}, nil
	case "message":
		var l geminiMessage
		if err := sc.decode(raw, owned, &l, "gemini message"); err != nil {
			return nil, err
		}
		if l.Role == "user" {
			return []fact{factPrompt{text: l.Content}}, nil
		}
		if l.Content == "" {
			return nil, nil
		}
		return []fact{factText{kind: textAnswer, text: l.Content, partial: l.Delta}}, nil
	case "tool_use":
		var l geminiToolUse
		if err := sc.decode(raw, owned, &l, "gemini tool_use"); err != nil {
			return nil, err
		}
		return []fact{factToolStart{id: l.ToolID, name: l.ToolName, shimName: l.ToolName, input: toolInput(l.Parameters)}}, nil
	case "tool_result":
		var l geminiToolResult
		if err := sc.decode(raw, owned, &l, "gemini tool_result"); err != nil {
			return nil, err
		}
		return []fact{geminiToolEnd(&l, &sc)}, nil
	case "error":
		var l geminiErrorEvent
		if err := sc.decode(raw, owned, &l, "gemini error"); err != nil {
			return nil, err
		}
		return []fact{factText{kind: textNotice, text: l.Message}}, nil
	case "result":
		var l geminiResult
		if err := sc.decode(raw, owned, &l, "gemini result"); err != nil {
			return nil, err
		}
		p.term = geminiTerminal(&l)
	}
	return nil, nil
}

// geminiToolEnd: status success is success; an error carries its message.
// sc is the scan of the line.
func geminiToolEnd(l *geminiToolResult, sc *lineScan) factToolEnd {
	end := factToolEnd{id: l.ToolID, ok: l.Status == "success"}
	if l.Output != nil {
		end.result, end.text, end.isText = sc.jsonString(*l.Output), *l.Output, true
	}
	if !end.ok {
		switch {
		case l.Error != nil && l.Error.Message != "":
			end.errText = l.Error.Message
			if l.Output != nil {
				end.detail = l.Error.Message
			}
		case l.Output != nil && *l.Output != "":
			end.errText = *l.Output
		default:
			end.errText = "tool " + l.Status
		}
	}
	return end
}

// geminiTerminal reads a result: status error fails the turn; stats are
// the process's (that is, the turn's) usage.
func geminiTerminal(l *geminiResult) *terminal {
	t := &terminal{failed: l.Status != "success"}
	if t.failed {
		t.errText = "gemini: result status " + l.Status
		if l.Error != nil && l.Error.Message != "" {
			t.errText = l.Error.Message
		}
		if l.Error != nil {
			// The error classes of packages/cli/src/nonInteractiveCli.ts:
			// an abort (exit 130) and the session's turn limit (exit 53).
			t.aborted = l.Error.Type == "FatalCancellationError"
			t.maxTurns = l.Error.Type == "FatalTurnLimitedError"
		}
	}
	if s := l.Stats; s != nil {
		in, cached := int64(s.InputTokens), int64(s.Cached)
		t.usage = &usage{uncached: clamp(in - cached), cacheRead: cached, output: int64(s.OutputTokens)}
		if s.TotalTokens != nil {
			t.usage.total = ptr(int64(*s.TotalTokens))
		}
		if s.DurationMs != nil {
			t.durationMs = ptr(int64(*s.DurationMs))
		}
	}
	return t
}
