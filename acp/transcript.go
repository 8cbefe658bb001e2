package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

// IsTranscript reports whether a transcript records (or replays) an ACP
// session: its argv starts the agent in ACP mode (Gemini CLI's --acp or
// --experimental-acp).
func IsTranscript(t *transcript.Transcript) bool {
	return t != nil && t.Header.IsACP()
}

// Path is one way through an ACP transcript: the entries of each agent
// process it replays (a session/load in a second process is a second
// connection, with ids of its own).
type Path struct {
	// Name says which branches the path takes ("" for the main path).
	Name string
	// Processes are the entries of each process part, in order.
	Processes [][]Entry
	// Exits say how each process part ended on the path: its exit code
	// ("0"), the signal it died of ("SIGTERM"), or "" when the path
	// reached no exit step.
	Exits []string
}

// maxPaths bounds how many paths Paths follows.
const maxPaths = 64

// Paths returns the main path of an ACP transcript (every "in" and delay
// falls through, no signal comes) and one path per branch (a case of an
// "in" or "delay_ms" step, an on_signal goto), each taking that branch
// where it first can and falling through everywhere else. Client lines
// are the steps' recorded lines (a case taken is merged into the
// recorded line, as the client that takes it sends); agent lines are the
// stdout steps with the templates filled from what those lines carry. A
// path that loops (a goto back to where it has been) ends after one round.
func Paths(t *transcript.Transcript) ([]Path, error) {
	labels := transcript.Labels(t.Steps)
	var branches []branchPoint
	for i, st := range t.Steps {
		for k, c := range st.Cases {
			branches = append(branches, branchPoint{step: i, caseIndex: k, to: c.Goto, name: fmt.Sprintf("line %d case %d (%s)", st.Line, k+1, c.Goto)})
		}
		if st.Op == transcript.OpOnSignal {
			for sig, a := range st.OnSignal {
				if to, ok := strings.CutPrefix(a, "goto:"); ok {
					branches = append(branches, branchPoint{step: i, caseIndex: -1, to: to, name: fmt.Sprintf("line %d %s", st.Line, sig)})
				}
			}
		}
	}
	paths := []Path{}
	main, err := walk(t, labels, nil)
	if err != nil {
		return nil, err
	}
	paths = append(paths, main)
	for _, b := range branches {
		if len(paths) >= maxPaths {
			break
		}
		p, err := walk(t, labels, &b)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

type branchPoint struct {
	step      int
	caseIndex int // -1 for an on_signal goto
	to        string
	name      string
}

// walk follows the steps from the start, taking b (when not nil) once.
func walk(t *transcript.Transcript, labels map[string]int, b *branchPoint) (Path, error) {
	p := Path{}
	if b != nil {
		p.Name = b.name
	}
	var cur []Entry
	exit := ""
	vars := transcript.Vars{}
	taken := false
	sigArmed := false
	synthetic := 0
	// A replay can go round a loop for ever (a goto back to an "in" step
	// serves any number of prompts); the path ends where it would come
	// back to a step in the same state, having shown one round.
	type state struct {
		pc              int
		taken, sigArmed bool
	}
	seen := map[state]bool{}
	for pc := 0; pc >= 0 && pc < len(t.Steps); {
		at := state{pc, taken, sigArmed}
		if seen[at] {
			break
		}
		seen[at] = true
		st := t.Steps[pc]
		takeHere := b != nil && !taken && b.step == pc
		switch st.Op {
		case transcript.OpOut:
			e := NewEntry(Agent, []byte(vars.Fill(st.Text)))
			e.Line, e.Offset, e.TMS = st.Line, st.Offset, tms(st)
			cur = append(cur, e)
		case transcript.OpIn, transcript.OpDelay:
			line := st.Recorded
			if takeHere && b.caseIndex >= 0 {
				line = mergeInto(line, st.Cases[b.caseIndex].Match)
			}
			if st.Op == transcript.OpIn && line == "" {
				if st.Match != nil {
					synthetic++
					line = synthesize(st.Match, st.Capture, synthetic)
				} else {
					line = st.Text
				}
			}
			if line != "" && (st.Op == transcript.OpIn || takeHere) {
				e := NewEntry(Client, []byte(line))
				e.Line, e.Offset, e.TMS = st.Line, st.Offset, tms(st)
				cur = append(cur, e)
				if obj := decodeObj(line); obj != nil {
					for name, ptr := range st.Capture {
						if v, ok := transcript.Lookup(obj, ptr); ok {
							vars[name] = v
						}
					}
				}
			}
			if takeHere && b.caseIndex >= 0 {
				taken = true
				pc = labels[b.to]
				continue
			}
		case transcript.OpOnSignal:
			if takeHere {
				sigArmed = true
			}
		case transcript.OpGoto:
			pc = labels[st.Label]
			continue
		case transcript.OpNextProcess:
			p.Processes = append(p.Processes, cur)
			p.Exits = append(p.Exits, exit)
			cur, exit = nil, ""
			vars = transcript.Vars{}
		case transcript.OpExit, transcript.OpExitSignal:
			exit = st.Signal
			if st.Op == transcript.OpExit {
				exit = fmt.Sprint(st.Code)
			}
			// The process ends; the next one (a session loaded in a new
			// process) starts after the next next_process step.
			next := len(t.Steps)
			for j := pc + 1; j < len(t.Steps); j++ {
				if t.Steps[j].Op == transcript.OpNextProcess {
					next = j
					break
				}
			}
			pc = next
			continue
		}
		if sigArmed && !taken && (st.Op == transcript.OpDelay || st.Op == transcript.OpIn) {
			// The signal comes while the replay waits.
			taken = true
			pc = labels[b.to]
			continue
		}
		pc++
	}
	return Path{Name: p.Name, Processes: append(p.Processes, cur), Exits: append(p.Exits, exit)}, nil
}

func tms(st transcript.Step) int64 {
	if st.T == nil {
		return -1
	}
	return *st.T
}

func decodeObj(line string) map[string]any {
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if dec.Decode(&obj) != nil {
		return nil
	}
	return obj
}

// mergeInto is the JSON object line with the subset match written over
// it: what a client that takes a case sends.
func mergeInto(line string, match map[string]any) string {
	obj := decodeObj(line)
	if obj == nil {
		obj = map[string]any{"jsonrpc": "2.0"}
	}
	// A response has a result or an error: the case's says which.
	if _, ok := match["error"]; ok {
		delete(obj, "result")
	}
	if _, ok := match["result"]; ok {
		delete(obj, "error")
	}
	merge(obj, match)
	if e, ok := obj["error"].(map[string]any); ok && len(e) == 0 {
		// Any error: one the client could send.
		obj["error"] = map[string]any{"code": CodeInternalError, "message": "an error of the client"}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return line
	}
	return string(b)
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// synthesize is a client line for an "in" step that recorded none: its
// match with "jsonrpc", and an id when the step captures one (a request
// whose id the responses echo), made from n.
func synthesize(match map[string]any, capture map[string]string, n int) string {
	obj := map[string]any{"jsonrpc": "2.0"}
	merge(obj, match)
	for _, ptr := range capture {
		if _, ok := obj["id"]; !ok && ptr == "/id" {
			obj["id"] = fmt.Sprintf("synthetic-%d", n)
		}
	}
	b, _ := json.Marshal(obj)
	return string(b)
}
