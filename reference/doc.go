// Package reference holds agentconform's reference adapters: translators
// from the real streams of Claude Code, Codex CLI and Gemini CLI to the
// unified event model (package reference/unified) and to the
// Claude-compatible shim stream, process drivers that run the CLIs the way
// their own SDKs do, and the harness server behind `agentconform adapter`.
//
// # Translators
//
// A Translator turns one CLI's stdout lines into events of a profile. It is
// pure and deterministic given Options.Clock and Options.NewID, so the same
// input gives the same output. The conformance judge does not use it: its
// lossless checks compare every adapter, this one included, with a model
// of the CLI's output of their own (package conformance/oracle). The caller
// drives it turn by turn:
//
//	tr, _ := reference.NewUnified(reference.Codex, reference.Options{})
//	tr.BeginTurn(prompt)
//	for each stdout line { events, err := tr.Line(line) }
//	events, result := tr.EndTurn(reference.TurnEnd{})
//	... more turns ...
//	events = tr.EndSession(nil)
//
// MAPPING.md is the full translation table and the reasons for its choices.
//
// # Sessions
//
// StartUnified and StartShim (or Start with any Translator) run a CLI:
//
//	s, err := reference.StartUnified(ctx, reference.Config{Agent: reference.Claude, Cwd: dir,
//		Permission: reference.PermissionAllow}, func(ev unified.Event) { ... })
//	res, err := s.Turn(ctx, "fix the bug")   // or s.Send + t.Wait, with s.Interrupt meanwhile
//	err = s.Close(ctx)
//
// Claude runs as one long-lived bidirectional process (stream-json on both
// sides, the control protocol for initialize, permission prompts and
// interrupts); Codex and Gemini run one process per turn, resumed by session
// id. Every process runs in its own process group, is stopped with
// SIGINT/SIGTERM/SIGKILL escalation when it must be, and is always reaped.
// Run is the one-prompt shortcut.
//
// # Harness
//
// Serve speaks the adapter harness protocol of conformance/HARNESS.md on a
// reader and a writer; `agentconform adapter` is Serve on stdin and stdout.
package reference
