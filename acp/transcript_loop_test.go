package acp

import (
	"strings"
	"testing"

	"github.com/agentconform/agentconform/transcript"
)

// TestPathsLoop: a transcript whose replay loops (a goto back to the
// session/prompt it serves, for any number of prompts) has paths that end
// after one round, each prompt answered; it used to be an error without a
// location ("loops"), which made validate give up on the file. Found by
// FuzzACP.
func TestPathsLoop(t *testing.T) {
	const src = `{"transcript":"agentconform/v1","cli":"gemini","cli_version":"0.61.0","argv":["gemini","--acp"]}
{"in":{"method":"initialize"},"capture":{"i":"/id"},"recorded":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}"}
{"out":"{\"jsonrpc\":\"2.0\",\"id\":{{json:i}},\"result\":{\"protocolVersion\":1}}"}
{"label":"prompt"}
{"in":{"method":"session/prompt"},"capture":{"p":"/id"},"recorded":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s\",\"prompt\":[]}}","cases":[{"match":{"params":{"sessionId":"other"}},"goto":"other"}]}
{"out":"{\"jsonrpc\":\"2.0\",\"id\":{{json:p}},\"result\":{\"stopReason\":\"end_turn\"}}"}
{"goto":"prompt"}
{"label":"other"}
{"out":"{\"jsonrpc\":\"2.0\",\"id\":{{json:p}},\"error\":{\"code\":-32002,\"message\":\"no session\"}}"}
{"goto":"prompt"}
`
	tr, err := transcript.Load(strings.NewReader(src), "loop.jsonl", transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := Paths(tr)
	if err != nil {
		t.Fatalf("Paths: %v", err)
	}
	if len(paths) != 2 {
		t.Fatalf("%d paths, want the main path and the case's", len(paths))
	}
	for _, p := range paths {
		var prompts, answers int
		for _, entries := range p.Processes {
			for _, e := range entries {
				switch {
				case e.Msg != nil && e.Msg.Method == MethodSessionPrompt:
					prompts++
				case e.Msg != nil && e.Msg.Kind == Response && e.From == Agent && e.Msg.IDKey() == "n:1":
					answers++
				}
			}
		}
		if prompts == 0 || prompts != answers {
			t.Errorf("path %q: %d prompts, %d answers", p.Name, prompts, answers)
		}
	}
}
