package dialect

// Detect tells the dialect of a stream from its first decoded events: the
// first event whose shape belongs to one dialect only decides. It returns
// false when no event decides (for example a stream of keep_alive lines).
func Detect(events []map[string]any) (Dialect, bool) {
	for _, ev := range events {
		if d, ok := detectOne(ev); ok {
			return d, true
		}
	}
	return "", false
}

var codexTypes = map[string]bool{
	"thread.started": true, "turn.started": true, "turn.completed": true, "turn.failed": true,
	"item.started": true, "item.updated": true, "item.completed": true,
}

var unifiedTypes = map[string]bool{
	"sessionStarted": true, "textChunk": true, "toolStarted": true, "toolProgress": true,
	"toolCompleted": true, "fileChanged": true, "turnCompleted": true, "sessionEnded": true,
}

var shimOnlyTypes = map[string]bool{"text": true, "usage": true, "message_stop": true, "thinking": true, "interrupt": true}

var claudeOnlyTypes = map[string]bool{
	"assistant": true, "stream_event": true, "tool_progress": true, "tool_use_summary": true,
	"auth_status": true, "rate_limit_event": true, "prompt_suggestion": true,
	"conversation_reset": true, "active_goal": true, "control_cancel_request": true,
}

// cliRequests are the control_request subtypes the CLI sends to its client;
// any other subtype is a client's request on stdin.
var cliRequests = map[string]bool{
	"can_use_tool": true, "hook_callback": true, "mcp_message": true, "elicitation": true, "request_user_dialog": true,
}

func detectOne(ev map[string]any) (Dialect, bool) {
	t, _ := ev["type"].(string)
	has := func(k string) bool { _, ok := ev[k]; return ok }
	switch {
	case codexTypes[t]:
		return Codex, true
	case unifiedTypes[t]:
		return UnifiedEvents, true
	case shimOnlyTypes[t]:
		return ShimEvents, true
	case claudeOnlyTypes[t]:
		return Claude, true
	}
	switch t {
	case "init":
		return Gemini, true
	case "message":
		if has("timestamp") || has("delta") {
			return Gemini, true
		}
	case "tool_use":
		if has("tool_id") {
			return Gemini, true
		}
		if has("id") && has("name") {
			return ShimEvents, true
		}
	case "tool_result":
		if has("tool_id") {
			return Gemini, true
		}
		if has("tool_use_id") {
			return ShimEvents, true
		}
	case "system":
		if ev["subtype"] == "init" && !has("uuid") && !has("claude_code_version") && !has("apiKeySource") {
			return ShimEvents, true
		}
		if ev["subtype"] == "error" || ev["subtype"] == "session_id" {
			return ShimEvents, true
		}
		return Claude, true
	case "result":
		switch {
		case has("stats") || has("status"):
			return Gemini, true
		case has("uuid") || has("duration_api_ms") || has("modelUsage"):
			return Claude, true
		case has("is_error"):
			return ShimEvents, true
		}
	case "error":
		if has("severity") {
			return Gemini, true
		}
	case "user":
		if has("uuid") || has("tool_use_result") || has("isReplay") {
			return Claude, true
		}
		return ClaudeStdin, true
	case "control_request":
		req, _ := ev["request"].(map[string]any)
		st, _ := req["subtype"].(string)
		if cliRequests[st] {
			return Claude, true
		}
		if st != "" {
			return ClaudeStdin, true
		}
	case "control_response":
		resp, _ := ev["response"].(map[string]any)
		inner, _ := resp["response"].(map[string]any)
		if _, ok := inner["behavior"]; ok {
			return ClaudeStdin, true
		}
		return Claude, true
	}
	return "", false
}
