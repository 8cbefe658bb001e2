package broken

import (
	"encoding/json"
)

// claudeQuirkLines is what the naive adapter reads for one stdout line of
// Claude under a bug about its text: the lines it translates instead
// (none, the line itself, or others). seen is the message ids of the
// assistant lines read so far (FirstBlockPerMessage).
func claudeQuirkLines(bug Bug, line []byte, seen map[string]bool) [][]byte {
	var ev map[string]any
	if json.Unmarshal(line, &ev) != nil {
		return [][]byte{line}
	}
	switch ev["type"] {
	case "assistant":
		msg, _ := ev["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		switch bug {
		case FirstBlockPerMessage:
			id, _ := msg["id"].(string)
			if id != "" && seen[id] {
				return nil
			}
			seen[id] = true
		case ResultTextOnly:
			var keep []any
			for _, b := range blocks {
				if m, _ := b.(map[string]any); m["type"] != "text" {
					keep = append(keep, b)
				}
			}
			if len(keep) == 0 {
				return nil
			}
			msg["content"] = keep
			return remarshalLine(ev, line)
		case ThinkingAsText:
			changed := false
			for i, b := range blocks {
				if m, _ := b.(map[string]any); m["type"] == "thinking" {
					blocks[i] = map[string]any{"type": "text", "text": m["thinking"]}
					changed = true
				}
			}
			if changed {
				return remarshalLine(ev, line)
			}
		}
	case "result":
		if bug != ResultTextOnly {
			break
		}
		// The answer is the result's text, shown as one assistant text.
		text, _ := ev["result"].(string)
		if text == "" {
			break
		}
		answer, err := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{
			"id": "msg_result", "type": "message", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}},
			"parent_tool_use_id": nil, "session_id": ev["session_id"]})
		if err != nil {
			break
		}
		return [][]byte{answer, line}
	}
	return [][]byte{line}
}

// remarshalLine encodes ev, or keeps line when that fails.
func remarshalLine(ev map[string]any, line []byte) [][]byte {
	b, err := json.Marshal(ev)
	if err != nil {
		return [][]byte{line}
	}
	return [][]byte{b}
}
