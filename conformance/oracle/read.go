package oracle

import "fmt"

// Read builds the model of a session of agent (claude, codex or gemini)
// from the output of each of its turns, in order. Only an unknown agent is
// an error: whatever the CLI wrote is read as far as it can be.
func Read(agent string, turns []Output) (*Session, error) {
	var cli cliReader
	switch agent {
	case "claude":
		cli = &claudeReader{}
	case "codex":
		cli = &codexReader{}
	case "gemini":
		cli = &geminiReader{}
	default:
		return nil, fmt.Errorf("oracle: no model of agent %q", agent)
	}
	r := &reader{s: &Session{Agent: agent}, latest: map[string]*Tool{}, open: map[*Tool]bool{}}
	for _, out := range turns {
		r.turn = &Turn{Format: out.Format}
		r.s.Turns = append(r.s.Turns, r.turn)
		if out.Format != Stream {
			r.turn.Answer = out.Answer
			continue
		}
		cli.begin(r)
		for _, l := range out.Lines {
			if l == nil {
				continue // not a JSON object: no event (docs/protocols/jsonl.md#not-json)
			}
			cli.line(r, l)
		}
		// A call the turn left open has no outcome, and nothing after the
		// turn ends it (docs/protocols/unified.md#tools).
		clear(r.open)
	}
	return r.s, nil
}

// cliReader reads one CLI's lines into the model.
type cliReader interface {
	// begin starts a turn (a new process for Codex and Gemini).
	begin(r *reader)
	// line reads one decoded line.
	line(r *reader, l map[string]any)
}

// reader is the state shared by the CLIs' readers: the session being
// built, the current turn, and the tool calls by id.
type reader struct {
	s    *Session
	turn *Turn
	// latest is the last call started under each id; open holds the
	// calls not yet ended in this turn. A call's end goes to the last call
	// started with its id, if that one is still open: a second result, or
	// a result for an id no open call has, ends nothing.
	latest map[string]*Tool
	open   map[*Tool]bool
}

func (r *reader) add(it Item) { r.turn.Items = append(r.turn.Items, it) }

// text adds a text item; an empty one says nothing.
func (r *reader) text(kind ItemKind, s string, partial bool) {
	if s != "" {
		r.add(Item{Kind: kind, Text: s, Partial: partial})
	}
}

// start starts a call under key (the CLI's id, qualified where the CLI
// reuses ids) and returns it.
func (r *reader) start(key, id, name string, input any) *Tool {
	t := &Tool{ID: id, Name: name, Input: input, Turn: len(r.s.Turns) - 1}
	r.s.Tools = append(r.s.Tools, t)
	r.latest[key] = t
	r.open[t] = true
	r.add(Item{Kind: ToolStart, Tool: t})
	return t
}

// running returns the open call key names, or nil.
func (r *reader) running(key string) *Tool {
	if t := r.latest[key]; t != nil && r.open[t] {
		return t
	}
	return nil
}

// end ends the open call key names with its outcome; an end for no open
// call is dropped.
func (r *reader) end(key string, success bool, result any, errText string) *Tool {
	t := r.running(key)
	if t == nil {
		return nil
	}
	delete(r.open, t)
	t.Ended, t.Success, t.Result, t.Error = true, success, result, errText
	r.add(Item{Kind: ToolEnd, Tool: t})
	return t
}

// progress reports a running call's progress.
func (r *reader) progress(t *Tool, output string, state any) {
	r.add(Item{Kind: ToolProgress, Tool: t, Text: output, State: state})
}
