// Package dialect names the kinds of JSONL stream agentconform knows (a
// real CLI's stdout or stdin, an adapter's unified or shim output) and
// tells them apart from their first events. It is small and has no
// dependencies, so that the fake CLIs can use it and still start fast.
package dialect

import (
	"fmt"
	"strings"
)

// Dialect names a kind of stream: which program wrote it, and in which direction.
type Dialect string

const (
	// Claude is Claude Code's stdout with --output-format stream-json.
	Claude Dialect = "claude"
	// ClaudeStdin is what a client writes to Claude Code's stdin with
	// --input-format stream-json.
	ClaudeStdin Dialect = "claude-stdin"
	// Codex is the stdout of codex exec --json.
	Codex Dialect = "codex"
	// Gemini is the stdout of gemini -p --output-format stream-json.
	Gemini Dialect = "gemini"
	// UnifiedEvents is the stream of §8.1 unified events an adapter emits.
	UnifiedEvents Dialect = "unified"
	// ShimEvents is the Claude-compatible stream a shim emits (docs/protocols/shim.md).
	ShimEvents Dialect = "shim"
)

// Dialects lists every dialect in a stable order, for help texts and tests.
var Dialects = []Dialect{Claude, ClaudeStdin, Codex, Gemini, UnifiedEvents, ShimEvents}

// Parse checks a dialect name given on a command line.
func Parse(s string) (Dialect, error) {
	for _, d := range Dialects {
		if string(d) == s {
			return d, nil
		}
	}
	return "", fmt.Errorf("unknown dialect %q (want one of %s)", s, joinDialects())
}

func joinDialects() string {
	names := make([]string, len(Dialects))
	for i, d := range Dialects {
		names[i] = string(d)
	}
	return strings.Join(names, ", ")
}

// Native reports whether d is a stream written or read by a real CLI (as
// opposed to an adapter's unified or shim output).
func (d Dialect) Native() bool {
	return d == Claude || d == ClaudeStdin || d == Codex || d == Gemini
}
