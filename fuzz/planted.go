package fuzz

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/agentconform/agentconform/reference"
)

// Planted bugs: copies of the reference adapters with one bug each, for
// TestPlantedBugs, which shows that the fuzzing finds bugs nobody wrote a
// case for. They live in the package (not in a test file) because the
// fuzz runs the test starts are runs of the fuzz targets, which pick the
// bug up from the environment; nothing else ever sets it.

// EnvPlant plants a bug in the in-process targets (the name of one of
// the planted bugs); TestPlantedBugs sets it for the fuzz runs it starts.
const EnvPlant = "AGENTCONFORM_FUZZ_PLANT"

// inProcessTarget is the target of FuzzReference<Profile>: the reference
// adapter, or a copy of it with the bug $AGENTCONFORM_FUZZ_PLANT names,
// judged against the reference.
func inProcessTarget(profile string) (Target, error) {
	ref, err := NewReferenceTarget(profile)
	if err != nil {
		return nil, err
	}
	name := os.Getenv(EnvPlant)
	if name == "" {
		return ref, nil
	}
	return plantedTarget(name, profile)
}

func plantedTarget(name, profile string) (*InProcess, error) {
	bug, ok := plantedBugs[name]
	if !ok {
		return nil, fmt.Errorf("%s=%q: no such planted bug", EnvPlant, name)
	}
	ref, err := Reference(profile)
	if err != nil {
		return nil, err
	}
	return &InProcess{Label: "planted/" + name + "/" + profile, Profile: profile, Oracle: ref, KnownAs: "reference/" + profile,
		New: func(a reference.Agent) (Translator, error) {
			tr, err := ref(a)
			if err != nil {
				return nil, err
			}
			return bug(a, tr), nil
		}}, nil
}

// plantedBugs are copies of the reference adapters with one bug each.
var plantedBugs = map[string]func(reference.Agent, Translator) Translator{
	// underscore drops every tool result whose id contains an underscore.
	"underscore": func(_ reference.Agent, tr Translator) Translator { return &underscoreBug{tr} },
	// long-line stops reading after a line longer than 100 KiB.
	"long-line": func(_ reference.Agent, tr Translator) Translator { return &longLineBug{Translator: tr} },
	// after-unknown skips the line after an event of a type it does not
	// know (no fixture has one: only the fuzzer's mutations make them).
	"after-unknown": func(_ reference.Agent, tr Translator) Translator { return &afterUnknownBug{Translator: tr} },
}

type underscoreBug struct{ Translator }

func (b *underscoreBug) filter(evs [][]byte) [][]byte {
	var out [][]byte
	for _, e := range evs {
		var v struct {
			Type      string `json:"type"`
			ToolID    string `json:"toolId"`
			ToolUseID string `json:"tool_use_id"`
		}
		json.Unmarshal(e, &v)
		if (v.Type == "toolCompleted" && strings.Contains(v.ToolID, "_")) || (v.Type == "tool_result" && strings.Contains(v.ToolUseID, "_")) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func (b *underscoreBug) BeginTurn(p string) [][]byte { return b.filter(b.Translator.BeginTurn(p)) }
func (b *underscoreBug) Line(l []byte) ([][]byte, error) {
	evs, err := b.Translator.Line(l)
	return b.filter(evs), err
}
func (b *underscoreBug) EndTurn(end reference.TurnEnd) ([][]byte, reference.TurnResult) {
	evs, res := b.Translator.EndTurn(end)
	return b.filter(evs), res
}
func (b *underscoreBug) EndSession(err error) [][]byte { return b.filter(b.Translator.EndSession(err)) }

type longLineBug struct {
	Translator
	stopped bool
}

func (b *longLineBug) Line(l []byte) ([][]byte, error) {
	if b.stopped || len(l) > 100<<10 {
		b.stopped = true
		return nil, nil
	}
	return b.Translator.Line(l)
}

type afterUnknownBug struct {
	Translator
	skip bool
}

func (b *afterUnknownBug) Line(l []byte) ([][]byte, error) {
	if b.skip {
		b.skip = false
		return nil, nil
	}
	var v struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(l, &v) == nil && v.Type != "" && !fixtureTypes()[v.Type] {
		b.skip = true
	}
	return b.Translator.Line(l)
}

// fixtureTypes is every event type the fixtures hold: what the copy with
// the after-unknown bug "knows".
var fixtureTypes = sync.OnceValue(func() map[string]bool {
	types := map[string]bool{}
	for _, t := range loadedFixtures() {
		for _, s := range t.Steps {
			var v struct {
				Type string `json:"type"`
			}
			if json.Unmarshal([]byte(s.Text), &v) == nil && v.Type != "" {
				types[v.Type] = true
			}
		}
	}
	return types
})
