package conformance

import (
	"bytes"
	"encoding/json"
	"strings"
)

// wireFormat is what a CLI process was asked to write on stdout, read
// from its argv: checks judge an adapter against what it asked for.
type wireFormat string

const (
	// formatStream: one JSON event per line (Claude and Gemini
	// --output-format stream-json, Codex exec --json).
	formatStream wireFormat = "stream"
	// formatJSON: one JSON object at the end (--output-format json).
	formatJSON wireFormat = "json"
	// formatText: the answer as plain text (the CLIs' default).
	formatText wireFormat = "text"
	// formatNone: the process runs no turn (--version, --help, another
	// subcommand): adapters probe the CLI that way before they use it.
	formatNone wireFormat = "none"
)

// probeFlags make a CLI print something and exit without running a turn.
var probeFlags = map[string]bool{"--version": true, "-v": true, "-V": true, "--help": true, "-h": true}

// formatOf returns the stdout format a CLI invocation asks for.
func formatOf(agent string, argv []string) wireFormat {
	args := argv
	if len(args) > 0 {
		args = args[1:]
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if probeFlags[a] {
			return formatNone
		}
	}
	switch agent {
	case "codex":
		sub := firstOperand(args, map[string]bool{"-c": true, "--config": true, "-m": true, "--model": true, "-p": true, "--profile": true,
			"-s": true, "--sandbox": true, "-a": true, "--ask-for-approval": true, "-C": true, "--cd": true, "-i": true, "--image": true,
			"--add-dir": true, "--local-provider": true, "--enable": true, "--disable": true})
		if sub != "exec" && sub != "e" {
			return formatNone
		}
		for _, a := range args {
			if a == "--json" || a == "--experimental-json" {
				return formatStream
			}
		}
		return formatText
	case "claude":
		switch firstOperand(args, nil) {
		case "mcp", "config", "doctor", "update", "install", "migrate-installer", "setup-token", "plugin":
			return formatNone
		}
		return formatFlag(args, map[string]bool{"--output-format": true}, formatText)
	case "gemini":
		switch firstOperand(args, nil) {
		case "mcp", "extensions", "extension":
			return formatNone
		}
		return formatFlag(args, map[string]bool{"--output-format": true, "-o": true, "--outputFormat": true}, formatText)
	}
	return formatStream
}

// firstOperand returns the first argument that is not a flag (nor the
// value of one of valued); for Claude and Gemini a subcommand, and for
// Codex also the prompt when there is no subcommand.
func firstOperand(args []string, valued map[string]bool) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		}
		if strings.HasPrefix(a, "-") {
			if valued[a] {
				i++
			}
			continue
		}
		return a
	}
	return ""
}

// formatFlag reads an output-format flag (either "--flag value" or
// "--flag=value"); the last one given wins, as the CLIs' parsers do.
func formatFlag(args []string, names map[string]bool, def wireFormat) wireFormat {
	v := ""
	for i, a := range args {
		if a == "--" {
			break
		}
		if k, val, ok := strings.Cut(a, "="); ok && names[k] {
			v = val
			continue
		}
		if names[a] && i+1 < len(args) {
			v = args[i+1]
		}
	}
	switch v {
	case "":
		return def
	case "stream-json":
		return formatStream
	case "json":
		return formatJSON
	}
	return formatText
}

// turnWire is what the CLI wrote for one turn, in the format it was asked
// for.
type turnWire struct {
	format wireFormat
	pid    int
	// lines are the turn's JSON lines (formatStream).
	lines []WireLine
	// answer is the final text of a text or JSON turn; ok whether that
	// output said the turn succeeded (a JSON result without is_error, a
	// text turn that wrote anything).
	answer string
	ok     bool
}

// cliTurns splits what the CLIs wrote into turns: one per process for
// Codex and Gemini, and at each result for Claude (which keeps one
// process); processes that run no turn (a --version probe) are left out.
func (o *Observation) cliTurns() []turnWire {
	m := o.memoized()
	m.turnsOnce.Do(func() { m.turns = o.cutTurns() })
	return m.turns
}

// cutTurns is cliTurns, made once per observation (a dozen checks ask).
func (o *Observation) cutTurns() []turnWire {
	var out []turnWire
	procs := o.wireLines()
	for i, w := range o.Wire {
		f := formatOf(o.Case.Agent, w.Argv)
		switch f {
		case formatNone:
			continue
		case formatText, formatJSON:
			t := turnWire{format: f, pid: w.PID}
			t.answer, t.ok = parseAnswer(o.Case.Agent, f, w.Bytes)
			out = append(out, t)
			continue
		}
		if i >= len(procs) {
			continue
		}
		lines := procs[i]
		if o.Case.Agent != "claude" {
			out = append(out, turnWire{format: f, pid: w.PID, lines: lines})
			continue
		}
		var cur []WireLine
		for _, l := range lines {
			cur = append(cur, l)
			if l.Obj != nil && l.Obj["type"] == "result" {
				out = append(out, turnWire{format: f, pid: w.PID, lines: cur})
				cur = nil
			}
		}
		if len(cur) > 0 {
			if n := len(out); n > 0 && out[n-1].pid == w.PID && !startsTurn(cur) {
				// Lines after a result that begin no turn (the idle
				// session state, a rate limit notice) end the last one.
				out[n-1].lines = append(out[n-1].lines, cur...)
			} else {
				out = append(out, turnWire{format: f, pid: w.PID, lines: cur})
			}
		}
	}
	return out
}

// startsTurn reports whether Claude lines hold anything of a turn: a
// message, a partial message or a result, not only system notices.
func startsTurn(lines []WireLine) bool {
	for _, l := range lines {
		if l.Obj == nil {
			continue
		}
		switch str(l.Obj, "type") {
		case "assistant", "user", "stream_event", "result":
			return true
		}
	}
	return false
}

// parseAnswer reads the answer of a text or JSON turn: the whole text
// (trailing newlines aside), or the JSON result's text field (Claude
// "result", Gemini "response").
func parseAnswer(agent string, f wireFormat, b []byte) (string, bool) {
	if f == formatText {
		s := strings.TrimRight(string(b), "\r\n")
		return s, s != ""
	}
	b = bytes.TrimSpace(b)
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		// Claude --verbose --output-format json writes an array of
		// messages; a cut or absent object is no answer.
		return "", false
	}
	obj, _ := v.(map[string]any)
	if arr, ok := v.([]any); ok {
		for i := len(arr) - 1; i >= 0; i-- {
			if m, ok := arr[i].(map[string]any); ok && m["type"] == "result" {
				obj = m
				break
			}
		}
	}
	if obj == nil {
		return "", false
	}
	switch agent {
	case "claude":
		isErr, _ := obj["is_error"].(bool)
		s, _ := obj["result"].(string)
		return s, !isErr && obj["type"] == "result"
	case "gemini":
		s, _ := obj["response"].(string)
		return s, obj["error"] == nil
	}
	return "", false
}

// streams reports whether every turn the CLIs ran wrote a JSON stream
// (and at least one ran).
func (o *Observation) streams() bool {
	ts := o.cliTurns()
	for _, t := range ts {
		if t.format != formatStream {
			return false
		}
	}
	return len(ts) > 0
}

// turnStarts returns the start records of the CLI processes that ran a
// turn (not a --version probe).
func (o *Observation) turnStarts() []WireProcess {
	var out []WireProcess
	for _, w := range o.Wire {
		if formatOf(o.Case.Agent, w.Argv) != formatNone {
			out = append(out, w)
		}
	}
	return out
}
