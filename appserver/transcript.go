package appserver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/transcript"
)

// IsTranscript reports whether a transcript records `codex app-server`
// (its argv's first argument is app-server).
func IsTranscript(t *transcript.Transcript) bool {
	return t != nil && t.Header.IsAppServer()
}

// maxPaths bounds the paths through one process part that are judged.
const maxPaths = 64

// RuleTranscriptPaths records that a transcript had more paths than are
// judged.
var RuleTranscriptPaths = &finding.Rule{ID: "appserver/paths", Level: finding.Info, Source: src("transcripts"),
	Requirement: "Every path through an app-server transcript's branches is judged, up to 64 per process."}

// CheckTranscript judges an app-server transcript along every path through
// each process part (cases and gotos followed): the client's lines are
// what its "in" steps match (requests get ids 1, 2, ... in the order they
// come, filling the {{json:idN}} templates of the responses), the
// server's lines what its "out" steps write. Findings point at the
// transcript's own lines; one found on several paths is reported once.
func CheckTranscript(t *transcript.Transcript, s *Schema, report func(finding.Finding)) {
	seen := map[string]bool{}
	dedup := func(f finding.Finding) {
		key := f.Rule.ID + "\x00" + strconv.Itoa(f.Line) + "\x00" + f.Pointer + "\x00" + f.Message
		if !seen[key] {
			seen[key] = true
			report(f)
		}
	}
	for pi, steps := range t.Processes() {
		paths, cut := stepPaths(steps)
		if cut && len(steps) > 0 {
			dedup(finding.Finding{Rule: RuleTranscriptPaths, File: t.Name, Line: steps[0].Line, Offset: steps[0].Offset,
				Message: fmt.Sprintf("process %d has more than %d paths through its branches; the first %d were judged", pi+1, maxPaths, maxPaths)})
		}
		for _, path := range paths {
			c := &Checker{Schema: s, File: t.Name, Report: dedup}
			for _, ev := range Events(path) {
				c.Event(ev)
			}
		}
	}
}

// Events turns one path of steps into the session's events: the client's
// requests numbered from 1 (their captures filled), its notifications and
// answers as the matches say, the server's lines with templates filled.
// A path that ends without an exit ends with one at its last step.
func Events(path []transcript.Step) []Event {
	vars := transcript.Vars{}
	next := 0
	var out []Event
	ended := false
	for _, st := range path {
		ev := Event{Line: st.Line, Offset: st.Offset}
		switch st.Op {
		case transcript.OpOut:
			ev.Dir, ev.Text = FromServer, vars.Fill(st.Text)
		case transcript.OpIn:
			ev.Dir = FromClient
			if st.Match == nil {
				ev.Text = vars.Fill(st.Text)
				if m, err := transcript.ParseRPC([]byte(ev.Text)); err == nil && m.Kind == transcript.RPCRequest {
					for name, ptr := range st.Capture {
						if v, ok := transcript.Lookup(m.Obj, ptr); ok {
							vars[name] = v
						}
					}
				}
				break
			}
			obj := map[string]any{}
			for k, v := range st.Match {
				obj[k] = v
			}
			if _, ok := obj["method"]; ok && len(st.Capture) > 0 {
				next++
				obj["id"] = json.Number(strconv.Itoa(next))
				for name, ptr := range st.Capture {
					if ptr == "/id" {
						vars[name] = next
					}
				}
			}
			if _, ok := obj["id"]; ok {
				if _, ok := obj["method"]; !ok {
					if _, ok := obj["result"]; !ok {
						if _, ok := obj["error"]; !ok {
							obj["result"] = map[string]any{}
						}
					}
				}
			}
			m, err := transcript.RPCFromObject(obj)
			if err != nil {
				b, _ := json.Marshal(st.Match)
				ev.Text = string(b)
				break
			}
			ev.Msg, ev.Partial = m, true
		case transcript.OpStdinEOF:
			ev.Kind = EvStdinClosed
		case transcript.OpExit, transcript.OpExitSignal:
			ev.Kind = EvExit
			ended = true
		default:
			continue
		}
		out = append(out, ev)
		if ended {
			break
		}
	}
	if !ended && len(path) > 0 {
		last := path[len(path)-1]
		out = append(out, Event{Kind: EvExit, Line: last.Line, Offset: last.Offset})
	}
	return out
}

// InterruptLabel names the branch an app-server transcript jumps to when
// the client sends turn/interrupt (transcript.LabelInterrupted).
const InterruptLabel = transcript.LabelInterrupted

// interruptPoints are where a path may enter the InterruptLabel branch:
// at each delay_ms step before the label (a fixture's window for the
// client to interrupt), else after the first item/started of a
// commandExecution (where a capture's client interrupted).
func interruptPoints(steps []transcript.Step) map[int]bool {
	at, ok := transcript.Labels(steps)[InterruptLabel]
	if !ok {
		return nil
	}
	pts := map[int]bool{}
	for i := 0; i < at; i++ {
		if steps[i].Op == transcript.OpDelay {
			pts[i] = true
		}
	}
	if len(pts) == 0 {
		for i := 0; i < at; i++ {
			if steps[i].Op == transcript.OpOut && strings.Contains(steps[i].Text, `"method":"item/started"`) && strings.Contains(steps[i].Text, `"type":"commandExecution"`) {
				pts[i] = true
				break
			}
		}
	}
	return pts
}

// stepPaths lists the steps along every path through one process part:
// an "in" step with cases continues at each case's label and also falls
// through; goto jumps; an on_signal goto is a branch from where it is set,
// and so is the interrupt branch from its interruptPoints;
// a path ends at exit or exit_signal, or when it would revisit a step. It
// reports whether paths were cut at maxPaths.
func stepPaths(steps []transcript.Step) ([][]transcript.Step, bool) {
	labels := transcript.Labels(steps)
	interrupts := interruptPoints(steps)
	var out [][]transcript.Step
	cut := false
	type state struct {
		pc      int
		path    []transcript.Step
		visited map[int]bool
	}
	stack := []state{{pc: 0, visited: map[int]bool{}}}
	for len(stack) > 0 {
		if len(out) >= maxPaths {
			cut = true
			break
		}
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for {
			if s.pc < 0 || s.pc >= len(steps) || s.visited[s.pc] {
				out = append(out, s.path)
				break
			}
			s.visited[s.pc] = true
			st := steps[s.pc]
			s.path = append(s.path, st)
			branch := func(label string) {
				if i, ok := labels[label]; ok {
					stack = append(stack, state{pc: i, path: append([]transcript.Step(nil), s.path...), visited: copySet(s.visited)})
				}
			}
			if interrupts[s.pc] {
				branch(InterruptLabel)
			}
			switch st.Op {
			case transcript.OpExit, transcript.OpExitSignal:
				out = append(out, s.path)
				s.pc = -2
			case transcript.OpGoto:
				i, ok := labels[st.Label]
				if !ok {
					s.pc = len(steps)
					continue
				}
				s.pc = i
				continue
			case transcript.OpIn:
				for _, c := range st.Cases {
					branch(c.Goto)
				}
			case transcript.OpOnSignal:
				for _, a := range st.OnSignal {
					if len(a) > 5 && a[:5] == "goto:" {
						branch(a[5:])
					}
				}
			}
			if s.pc == -2 {
				break
			}
			s.pc++
		}
	}
	return out, cut
}

func copySet(m map[int]bool) map[int]bool {
	out := make(map[int]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
