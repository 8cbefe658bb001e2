package fuzz

import (
	"math/rand"
	"strconv"
	"strings"
	"sync"

	"github.com/agentconform/agentconform/transcript"
)

// The JSON-RPC surface of `codex app-server`: its clients (adapters whose
// hello names the agent codex-app-server) are fuzzed on the app-server
// fixtures, with the mutations that make sense on a JSON-RPC session. The
// fakes' faults apply as they do to any stream where they act on the pipe
// (slicer, exit_mid_line, die, stall, ...) and where they know JSON-RPC
// (answer_twice, answer_never, unknown_method); the fakes' drop,
// duplicate and reorder pick any stdout line, and on a JSON-RPC session
// that would make the server reuse a request id, a server bug rather than
// one a client must survive, so the surface has JSON-RPC aware edits of
// its own instead (editVocabulary): drop, duplicate or reorder a
// notification, and rename the method of a notification or a request (a
// newer or older server). The edits are made to the transcript the fake
// replays, before its faults apply.

// editVocabulary are the JSON-RPC aware edits: operations of the mutator
// that the fuzzer makes to the transcript itself, not faults of the
// fakes. Append, never reorder.
var editVocabulary = []opSpec{
	{op: "rpc_drop", params: []paramSpec{{"nth", pNth}}},
	{op: "rpc_duplicate", params: []paramSpec{{"nth", pNth}}},
	{op: "rpc_reorder", params: []paramSpec{{"nth", pNth}}},
	{op: "rpc_rename", params: []paramSpec{{"nth", pNth}}},
}

// isEdit reports whether op is one of the JSON-RPC aware edits.
func isEdit(op string) bool { return strings.HasPrefix(op, "rpc_") }

// appServerOpNames are the operations of app-server inputs, in encoding
// order (append, never reorder): the fakes' faults that act on a JSON-RPC
// session, the caller's interrupt, and the JSON-RPC aware edits. The
// faults that need the events of a CLI's JSONL stream (types, tool ids,
// content blocks, text to pad) or that write lines no JSON-RPC server
// writes (a banner, bytes that are not UTF-8) are left out.
var appServerOpNames = []string{
	"slicer", "crlf", "unknown_field", "answer_twice", "answer_never", "unknown_method",
	"exit_mid_line", "exit_code", "die", "stall", "stderr_flood", "ignore_signal", OpInterrupt,
	"latency", "bandwidth", "start_delay", "limit_data",
	"rpc_drop", "rpc_duplicate", "rpc_reorder", "rpc_rename",
}

// appServerNeutral are the app-server operations that change nothing the
// client must hand over: how the bytes are cut and timed, stderr, what a
// signal does, members and notifications no client knows, and an answer
// written twice (the second names no pending request).
var appServerNeutral = map[string]bool{
	"slicer": true, "crlf": true, "unknown_field": true, "unknown_method": true, "answer_twice": true,
	"stderr_flood": true, "ignore_signal": true, "latency": true, "bandwidth": true, "start_delay": true,
}

// appServerOps is the vocabulary of app-server inputs.
var appServerOps = sync.OnceValue(func() []opSpec {
	out := make([]opSpec, len(appServerOpNames))
	for i, name := range appServerOpNames {
		s, ok := opSpecOf(name)
		if !ok {
			panic("fuzz: no operation " + name)
		}
		out[i] = s
	}
	return out
})

// opsFor is the vocabulary of inputs of an agent.
func opsFor(agent string) []opSpec {
	if agent == AgentAppServer {
		return appServerOps()
	}
	return vocabulary
}

// applyEdits makes the JSON-RPC aware edits among muts to a copy of t,
// in order (their own random choices from seed); t is returned unchanged
// when there are none.
func applyEdits(t *transcript.Transcript, muts []Mutation, seed int64) *transcript.Transcript {
	has := false
	for _, m := range muts {
		has = has || isEdit(m.Op)
	}
	if !has {
		return t
	}
	out := &transcript.Transcript{Header: t.Header, Name: t.Name, Steps: append([]transcript.Step(nil), t.Steps...)}
	rng := rand.New(rand.NewSource(seed))
	for _, m := range muts {
		if !isEdit(m.Op) {
			continue
		}
		nth := 0
		for _, p := range m.Params {
			if p.Key == "nth" {
				nth, _ = strconv.Atoi(p.Value)
			}
		}
		out.Steps = editSteps(m.Op, nth, rng, out.Steps)
	}
	return out
}

// rpcStep is one stdout step of a transcript read as a JSON-RPC message.
type rpcStep struct {
	i      int // index of the step
	kind   transcript.RPCKind
	method string
}

// rpcSteps are the stdout steps that are JSON-RPC messages (templates,
// the client's ids echoed, read as 0).
func rpcSteps(steps []transcript.Step) []rpcStep {
	var out []rpcStep
	for i, s := range steps {
		if s.Op != transcript.OpOut {
			continue
		}
		m, err := transcript.ParseRPC([]byte(templateRE.ReplaceAllString(s.Text, "0")))
		if err == nil {
			out = append(out, rpcStep{i: i, kind: m.Kind, method: m.Method})
		}
	}
	return out
}

// editSteps makes one edit: to the nth eligible step (1-based; 0: the
// seed's choice), none when there is no such step.
func editSteps(op string, nth int, rng *rand.Rand, steps []transcript.Step) []transcript.Step {
	var cands []int
	for _, r := range rpcSteps(steps) {
		switch {
		case r.kind == transcript.RPCNotification:
			cands = append(cands, r.i)
		case op == "rpc_rename" && r.kind == transcript.RPCRequest:
			cands = append(cands, r.i)
		}
	}
	if op == "rpc_reorder" {
		// A notification followed by another stdout line of the same
		// stretch (nothing but stderr between).
		var ok []int
		for _, i := range cands {
			if nextOut(steps, i) > 0 {
				ok = append(ok, i)
			}
		}
		cands = ok
	}
	if len(cands) == 0 {
		return steps
	}
	k := rng.Intn(len(cands))
	if nth > 0 {
		if nth > len(cands) {
			return steps
		}
		k = nth - 1
	}
	i := cands[k]
	switch op {
	case "rpc_drop":
		return append(steps[:i:i], steps[i+1:]...)
	case "rpc_duplicate":
		dup := steps[i]
		dup.T = nil
		out := append(steps[:i+1:i+1], dup)
		return append(out, steps[i+1:]...)
	case "rpc_reorder":
		j := nextOut(steps, i)
		steps[i].Text, steps[j].Text = steps[j].Text, steps[i].Text
		steps[i].NoNewline, steps[j].NoNewline = steps[j].NoNewline, steps[i].NoNewline
	case "rpc_rename":
		steps[i].Text = renameMethod(steps[i].Text)
	}
	return steps
}

// nextOut is the index of the stdout step right after step i (only
// stderr between), or -1.
func nextOut(steps []transcript.Step, i int) int {
	for j := i + 1; j < len(steps); j++ {
		switch steps[j].Op {
		case transcript.OpOut:
			return j
		case transcript.OpErr:
			continue
		}
		return -1
	}
	return -1
}

// renamedPrefix is what rpc_rename puts before a method: a method of the
// same name in a namespace no client knows.
const renamedPrefix = "agentconform_renamed/"

// renameMethod renames the method of a JSON-RPC line as written by the
// server (compact JSON: "method":"x").
func renameMethod(text string) string {
	const key = `"method":"`
	i := strings.Index(text, key)
	if i < 0 {
		return text
	}
	i += len(key)
	return text[:i] + renamedPrefix + text[i:]
}
