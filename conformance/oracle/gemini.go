package oracle

// geminiReader reads `gemini -p ... -o stream-json` output: one process
// per turn, six event types (docs/protocols/gemini.md#events).
type geminiReader struct{}

func (geminiReader) begin(*reader) {}

func (geminiReader) line(r *reader, l map[string]any) {
	switch getStr(l, "type") {
	case "message":
		// The user's prompt once, then the assistant's text in chunks.
		if getStr(l, "role") == "user" {
			r.text(Echo, getStr(l, "content"), false)
			return
		}
		r.text(Answer, getStr(l, "content"), getBool(l, "delta"))
	case "tool_use":
		id := getStr(l, "tool_id")
		r.start(id, id, getStr(l, "tool_name"), l["parameters"])
	case "tool_result":
		// status success or error; output only when the tool's display is
		// text; a failed tool's error.message besides
		// (docs/protocols/gemini.md#tool-pairing, #tool-errors).
		ok := getStr(l, "status") == "success"
		var result any
		if s, isStr := l["output"].(string); isStr {
			result = s
		}
		msg := ""
		if !ok {
			msg = getStr(getObj(l, "error"), "message")
		}
		r.end(getStr(l, "tool_id"), ok, result, msg)
	case "error":
		r.text(Notice, getStr(l, "message"), false)
	case "result":
		r.turn.End = geminiEnd(l)
	}
}

// geminiEnd reads a result (docs/protocols/gemini.md#result, #stats):
// status error fails the turn with error.message; stats count this
// process, that is this turn.
func geminiEnd(l map[string]any) *End {
	status := getStr(l, "status")
	e := &End{Failed: status != "success"}
	if e.Failed {
		errObj := getObj(l, "error")
		e.Message = getStr(errObj, "message")
		if e.Message == "" {
			e.Message = "result status " + status
		}
		e.Aborted = getStr(errObj, "type") == "FatalCancellationError"
		e.MaxTurns = getStr(errObj, "type") == "FatalTurnLimitedError"
	}
	if s := getObj(l, "stats"); s != nil {
		cached := getInt(s, "cached")
		e.Usage = &Usage{
			InputTokens: getInt(s, "input_tokens"),
			Uncached:    clampSub(getInt(s, "input_tokens"), cached),
			CacheRead:   cached,
			Output:      getInt(s, "output_tokens"),
			Total:       getIntPtr(s, "total_tokens"),
		}
		e.TurnUsage = e.Usage
		e.DurationMs = getIntPtr(s, "duration_ms")
	}
	return e
}
