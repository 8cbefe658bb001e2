package faults

import (
	"regexp"
	"strconv"

	"github.com/agentconform/agentconform/transcript"
)

// The JSON-RPC faults act on `codex app-server` transcripts (JSON-RPC in
// both directions): the server's answers to the client's requests, and
// notifications of methods no client knows.

// templates matches the {{name}} and {{json:name}} templates of a line.
var templates = regexp.MustCompile(`\{\{[^{}]*\}\}`)

// rpcOf decodes a stdout line as a JSON-RPC message, its templates (the
// client's ids echoed) taken as 0; nil when it is none.
func rpcOf(text string) *transcript.RPCMessage {
	m, err := transcript.ParseRPC([]byte(templates.ReplaceAllString(text, "0")))
	if err != nil {
		return nil
	}
	return m
}

// answers are the out steps that answer a request of the client.
func answers(steps []transcript.Step) []int {
	var idx []int
	for i, s := range steps {
		if s.Op != transcript.OpOut {
			continue
		}
		if m := rpcOf(s.Text); m != nil && (m.Kind == transcript.RPCResponse || m.Kind == transcript.RPCError) {
			idx = append(idx, i)
		}
	}
	return idx
}

const answersWhat = "JSON-RPC answer to a client request (codex app-server)"

func stepsAnswerTwice(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx := answers(steps)
	k, ok := c.choose("nth", len(idx), answersWhat)
	if !ok {
		return steps
	}
	i := idx[k]
	c.record("answered twice: "+where(steps, i), "nth", strconv.Itoa(k+1))
	dup := steps[i]
	dup.T = nil
	return insert(steps, i+1, dup)
}

func stepsAnswerNever(c *stepCtx, steps []transcript.Step) []transcript.Step {
	idx := answers(steps)
	k, ok := c.choose("nth", len(idx), answersWhat)
	if !ok {
		return steps
	}
	i := idx[k]
	c.record("never answered: dropped "+where(steps, i), "nth", strconv.Itoa(k+1))
	return append(steps[:i:i], steps[i+1:]...)
}

// unknownMethod is the notification unknown_method inserts.
const unknownMethod = `{"method":"agentconform/unknownNotification","params":{"added_by":"agentconform","values":[1,"two",true,null]}}`

func stepsUnknownMethod(c *stepCtx, steps []transcript.Step) []transcript.Step {
	o := outs(steps)
	rpc := false
	for _, i := range o {
		rpc = rpc || rpcOf(steps[i].Text) != nil
	}
	if !rpc {
		c.record("no eligible event: this process's stdout is not JSON-RPC (codex app-server); nothing changed")
		return steps
	}
	after, note := c.chooseAfter("after", len(o))
	c.record("inserted "+unknownMethod+" "+afterWhat(steps, o, after)+note, "after", strconv.Itoa(after))
	return insert(steps, afterOut(o, after), transcript.Step{Op: transcript.OpOut, Text: unknownMethod})
}
