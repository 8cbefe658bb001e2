package jsonl

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
)

// unifiedLines generates n lines shaped like the unified events of
// the spec's §8.1 (docs/protocols/unified.md#events), as the throughput anchor script (bench/gen_unified.py)
// writes them: compact JSON, one event per line.
func unifiedLines(n int) [][]byte {
	rng := rand.New(rand.NewPCG(7, 7))
	var lines [][]byte
	i := 0
	ev := func(typ string, kv ...any) {
		i++
		var b bytes.Buffer
		b.WriteString(`{"id":"ev_` + strconv.Itoa(i) + `","sessionId":"sess_abc123","timestamp":"2025-12-03T10:00:00.000Z","type":` + strconv.Quote(typ))
		for k := 0; k+1 < len(kv); k += 2 {
			v, err := json.Marshal(kv[k+1])
			if err != nil {
				panic(err)
			}
			b.WriteString(`,"` + kv[k].(string) + `":`)
			b.Write(v)
		}
		b.WriteByte('}')
		lines = append(lines, b.Bytes())
	}
	ev("sessionStarted", "agentType", "claude", "config", map[string]any{"agentType": "claude", "model": "sonnet", "approvalMode": "autoAll"})
	for len(lines) < n {
		ev("textChunk", "content", strings.Repeat("I'll analyze the codebase and refactor the authentication module ", 1+rng.IntN(4)), "isPartial", rng.Float64() < 0.5, "role", "assistant")
		tid := "toolu_" + strconv.Itoa(i)
		ev("toolStarted", "toolId", tid, "toolName", "Edit", "arguments", map[string]any{"file_path": "/src/auth.ts", "old_string": "function login()", "new_string": "async function login()"})
		ev("toolProgress", "toolId", tid, "output", strings.Repeat("line of output\n", 1+rng.IntN(5)), "progress", 0.5)
		ev("toolCompleted", "toolId", tid, "success", true, "result", "File updated successfully")
		ev("fileChanged", "filePath", "/src/auth.ts", "changeType", "modified", "before", "function login()", "after", "async function login()")
		ev("turnCompleted", "usage", map[string]any{"inputTokens": 1250, "outputTokens": 487, "totalTokens": 1737}, "durationMs", 5000)
	}
	return lines[:n]
}

// joinLines joins lines with "\n" and a final "\n".
func joinLines(lines [][]byte) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
