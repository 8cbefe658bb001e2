package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentconform/agentconform/conformance/oracle"
)

// model returns the oracle's model of what the CLIs said in the case
// (conformance/oracle), read once from the wire: a turn the CLI ran
// with a JSON stream as its lines, a text or JSON turn as its answer.
func (o *Observation) model() (*oracle.Session, error) {
	m := o.memoized()
	m.modelOnce.Do(func() {
		var outs []oracle.Output
		for _, t := range o.cliTurns() {
			switch t.format {
			case formatStream:
				lines := make([]map[string]any, len(t.lines))
				for i, l := range t.lines {
					lines[i] = l.Obj
				}
				outs = append(outs, oracle.Output{Format: oracle.Stream, Lines: lines})
			case formatJSON:
				outs = append(outs, oracle.Output{Format: oracle.JSON, Answer: t.answer})
			default:
				outs = append(outs, oracle.Output{Format: oracle.Text, Answer: t.answer})
			}
		}
		m.model, m.modelErr = oracle.Read(o.Case.Agent, outs)
	})
	return m.model, m.modelErr
}

// expectedSummary is what an adapter of profile (unified or shim; a native
// adapter is judged against the unified view) must hand on of the model.
func expectedSummary(o *Observation, profile string) (summary, error) {
	s, err := o.model()
	if err != nil {
		return summary{}, err
	}
	switch profile {
	case "unified":
		return unifiedView(s), nil
	case "shim":
		return shimView(s), nil
	}
	return summary{}, fmt.Errorf("profile %q has no view of the CLI's output", profile)
}

// textView gathers a view's text: the whole text, the answer, and the
// answer cut into pieces where something else came between.
type textView struct {
	text, answer strings.Builder
	piece        []string
	pieces       [][]string
}

// say adds answer text.
func (v *textView) say(s string) {
	v.text.WriteString(s)
	v.answer.WriteString(s)
	if s != "" {
		v.piece = append(v.piece, s)
	}
}

// aside adds text that is not the answer (thinking, notices, errors): it
// ends the piece.
func (v *textView) aside(s string) {
	v.cut()
	v.text.WriteString(s)
}

// cut ends the current piece.
func (v *textView) cut() {
	if len(v.piece) > 0 {
		v.pieces = append(v.pieces, v.piece)
		v.piece = nil
	}
}

// answerTurn adds the answer of a text or JSON turn, a piece of its own.
func (v *textView) answerTurn(s string) {
	v.cut()
	v.say(s)
	v.cut()
}

// walk goes through the model's turns in order: the answer of a text or
// JSON turn, and a stream's Answer items, are said; every other item goes
// to item and each closed turn's end to end; a turn's end ends the piece.
func (v *textView) walk(s *oracle.Session, item func(oracle.Item), end func(*oracle.End)) {
	for _, t := range s.Turns {
		if t.Format != oracle.Stream {
			v.answerTurn(t.Answer)
			continue
		}
		for _, it := range t.Items {
			if it.Kind == oracle.Answer {
				v.say(it.Text)
				continue
			}
			item(it)
		}
		if t.End != nil {
			end(t.End)
		}
		v.cut()
	}
}

// into sets the summary's texts.
func (v *textView) into(s *summary) {
	v.cut()
	s.Text, s.Answer, s.Pieces = v.text.String(), v.answer.String(), v.pieces
}

// unifiedView is what a unified adapter hands on of the model
// (docs/protocols/unified.md#lossless): the answer as assistant text, and
// thinking, notices and the error strings of a failed Claude turn as text
// of no role, all in order; every tool call with its input, result,
// success and the CLI's error; every file changed; each closed turn's
// usage (docs/protocols/unified.md#usage: Codex's running total made the
// turn's own).
func unifiedView(s *oracle.Session) summary {
	var out summary
	var v textView
	v.walk(s, func(it oracle.Item) {
		switch it.Kind {
		case oracle.Thinking, oracle.Notice:
			v.aside(it.Text)
		case oracle.Echo:
			// The user's words: not the assistant's text.
		case oracle.FileChange:
			v.cut()
			out.Files = append(out.Files, file{Path: it.File.Path, Change: it.File.Change})
		default:
			v.cut()
		}
	}, func(e *oracle.End) {
		if e.Failed {
			for _, msg := range e.Errors {
				v.aside(msg)
			}
		}
		if u := e.TurnUsage; u != nil {
			out.Usage = append(out.Usage, usage{Input: u.Input(), Output: u.Output, Cached: u.CacheRead, Reasoning: deref(u.Reasoning), Total: u.TotalTokens()})
		}
	})
	v.into(&out)
	for _, t := range s.Tools {
		out.Tools = append(out.Tools, tool{ID: t.ID, Name: t.Name, Input: t.Input, Result: t.Result, Success: t.Success, Error: t.Error, LeftOpen: !t.Ended})
	}
	sort.SliceStable(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	return out
}

// shimBudget is what of a long tool result a shim must keep: the shim's
// lines have a budget of about 100 KB, so a shim may cut a long result
// (docs/protocols/shim.md#chunking); it keeps at least the first 16 KiB,
// which fit the budget however many of its bytes need a six-byte escape.
const shimBudget = 16 << 10

// shimView is what a translation shim hands on of the model
// (docs/protocols/shim.md#message-types): the answer as text lines (not
// thinking, not notices, which have lines of their own); every tool call
// with its input and its result or, for a failed call with none, the
// CLI's error, a long result cut to the shim's budget; each closed turn's
// usage in Claude's terms (input_tokens without the cached ones). A Codex
// plan (todo_list) is a call per state, each answered at once, as Claude's
// TodoWrite is: the shim's calls are sequential (docs/protocols/shim.md#order),
// and a plan open all turn would hold the stream back.
func shimView(s *oracle.Session) summary {
	var out summary
	var v textView
	plans := map[*oracle.Tool]string{} // a plan's last state shown
	plan := func(t *oracle.Tool, state any) {
		text := jsonTextOf(state)
		if last, ok := plans[t]; ok && last == text {
			return
		}
		plans[t] = text
		out.Tools = append(out.Tools, tool{ID: t.ID, Name: t.Name, Input: state, Result: "ok", Success: true})
	}
	v.walk(s, func(it oracle.Item) {
		switch it.Kind {
		case oracle.ToolStart:
			if isPlan(s, it.Tool) {
				plan(it.Tool, it.Tool.Input)
			} else {
				out.Tools = append(out.Tools, shimTool(it.Tool))
			}
		case oracle.ToolProgress:
			if isPlan(s, it.Tool) && it.State != nil {
				plan(it.Tool, it.State)
			}
		case oracle.ToolEnd:
			if isPlan(s, it.Tool) && it.Tool.Success {
				plan(it.Tool, it.Tool.Result)
			}
		}
		v.cut()
	}, func(e *oracle.End) {
		if u := e.TurnUsage; u != nil {
			out.Usage = append(out.Usage, usage{Input: u.Uncached, Output: u.Output, Cached: u.CacheRead})
		}
	})
	v.into(&out)
	return out
}

// isPlan reports whether t is a Codex plan.
func isPlan(s *oracle.Session, t *oracle.Tool) bool {
	return s.Agent == "codex" && t.Name == "todo_list"
}

// shimTool is a tool call as a shim must hand it on.
func shimTool(t *oracle.Tool) tool {
	w := tool{ID: t.ID, Name: t.Name, Input: t.Input, Success: t.Success, LeftOpen: !t.Ended}
	if len(jsonTextOf(t.Input)) > 4*shimBudget {
		// An input too long for a line may be cut or summarised
		// (docs/protocols/shim.md#chunking).
		w.Input = nil
	}
	switch r := t.Result.(type) {
	case nil:
		if t.Error != "" {
			w.Result = clipBudget(t.Error)
		}
	case string:
		w.Result = clipBudget(r)
	case map[string]any:
		if len(jsonTextOf(r)) <= shimBudget {
			w.Result = r
		}
	case []any:
		// Content blocks are shown as their text.
		if text, ok := blocksText(r); ok {
			w.Result = clipBudget(text)
		} else if len(jsonTextOf(r)) <= shimBudget {
			w.Result = r
		}
	default:
		w.Result = jsonTextOf(r)
	}
	if t.Result != nil && t.Error != "" {
		w.Error = t.Error
	}
	return w
}

// blocksText joins the text of content blocks ({"type":"text","text":...}),
// false when the array holds no such text.
func blocksText(arr []any) (string, bool) {
	var parts []string
	for _, b := range arr {
		m, ok := b.(map[string]any)
		if !ok {
			return "", false
		}
		if _, bad := m["text"].(string); m["text"] != nil && !bad {
			return "", false
		}
		if text, _ := m["text"].(string); text != "" {
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, "\n"), len(parts) > 0
}

// clipBudget is the part of s a shim must keep: its first shimBudget
// bytes, cut at a character boundary.
func clipBudget(s string) string {
	if len(s) <= shimBudget {
		return s
	}
	cut := shimBudget
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// rawUsage returns the token counts of the CLI's terminal events as the
// CLI wrote them (Claude result.usage, Codex turn.completed.usage, Gemini
// result.stats), with Claude's total_cost_usd: a native adapter hands on
// the CLI's numbers, not sums of its own.
func rawUsage(o *Observation) []usage {
	s, err := o.model()
	if err != nil {
		return nil
	}
	var out []usage
	for _, t := range s.Turns {
		if t.End == nil || t.End.Usage == nil {
			continue
		}
		u := t.End.Usage
		out = append(out, usage{Input: u.InputTokens, Output: u.Output, Cached: u.CacheRead, CacheWrite: u.CacheWrite, Cost: deref(t.End.CostUSD)})
	}
	return out
}

// jsonTextOf renders a value as JSON text without HTML escaping (object
// keys sorted), "" if it cannot be.
func jsonTextOf(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
