package fakecli

import "github.com/agentconform/agentconform/transcript"

// rpcLayer is the JSON-RPC layer of a fake that speaks JSON-RPC on stdio
// (`codex app-server`, codex_appserver.go; `gemini --acp`, gemini_acp.go):
// the engine replays the transcript's steps, and the layer answers what
// they do not take as the real program answers it. One engine replays
// JSONL and JSON-RPC transcripts alike; only these hooks differ.
type rpcLayer interface {
	// dispatch takes a stdin line the current "in" step (st; nil while
	// no step waits) did not match: it answers it, holds it for a later
	// step (engine.held), or logs it.
	dispatch(e *engine, m *stdinMsg, st *transcript.Step) flow
	// consumed follows a step (an "in" step, or a delay's case) taking m;
	// anything but flowNone ends the step there.
	consumed(e *engine, st *transcript.Step, m *stdinMsg) flow
	// eof is what happens when the replay would wait (kind) with stdin
	// closed; ok false lets the wait go on (a timed wait that sleeps its
	// time out).
	eof(e *engine, kind waitKind) (f flow, ok bool)
	// accepts reports whether an "in" step that matches m may take it.
	accepts(m *stdinMsg) bool
	// out edits stdout line i (templates filled) before it is written.
	out(e *engine, i int, text string) string
	// eager reports whether stdin is read between steps too, not only
	// while the replay waits.
	eager() bool
}
