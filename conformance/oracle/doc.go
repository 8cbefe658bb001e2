// Package oracle reads what a CLI said in a session straight from the lines
// it wrote, into a model neutral between the ways an adapter may hand it
// on: per turn, the texts (answer, thinking, notices, echoes of the user)
// in the order they came, the tool calls with their input, result, success
// and error, the files changed, and the turn's end with its usage, cost and
// errors. The lossless checks of package conformance judge every adapter
// against this model, the reference adapter (package reference) as much as
// any other: the model shares no code with an adapter, so a translation bug
// cannot hide by being the judge's too.
//
// Each mapping follows the protocol reference in docs/protocols, cited
// where it is read:
//
//   - Claude Code stream-json (with or without --include-partial-messages):
//     docs/protocols/claude.md#stdout, #tool-pairing, #result,
//     #partial-messages, #thinking.
//   - Codex exec --json: docs/protocols/codex.md#events, #items, #item-ids,
//     #usage, #errors, #items-at-turn-end.
//   - Gemini CLI stream-json: docs/protocols/gemini.md#events,
//     #tool-pairing, #tool-errors, #result, #stats, #error-events.
//   - The text and JSON output formats: a turn's answer alone
//     (docs/protocols/claude.md#result-text, docs/protocols/gemini.md#result).
//
// Read builds a Session from the output of each turn; it never fails on
// what a CLI wrote (a line it cannot read, an unknown type or field, is
// passed over, docs/protocols/unified.md#forward-compat).
package oracle
