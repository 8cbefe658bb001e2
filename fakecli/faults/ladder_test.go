package faults

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/transcript"
)

// diffPaths lists where two decoded JSON values differ.
func diffPaths(a, b any, path string) []string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return []string{path}
		}
		var out []string
		for k := range av {
			out = append(out, diffPaths(av[k], bv[k], path+"/"+k)...)
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return []string{path}
		}
		var out []string
		for i := range av {
			out = append(out, diffPaths(av[i], bv[i], fmt.Sprintf("%s/%d", path, i))...)
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		return []string{path}
	}
	return nil
}

// lookupPath follows a JSON pointer (without escapes) through decoded JSON.
func lookupPath(v any, ptr string) any {
	return lookupSegs(v, strings.Split(strings.TrimPrefix(ptr, "/"), "/"))
}

// lookupSegs follows a path through decoded JSON.
func lookupSegs(v any, path []string) any {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			var i int
			fmt.Sscan(seg, &i)
			if i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// checkLadder runs a ladder and checks the exact effect: one line changed,
// exactly size bytes, still a JSON event of the same type, differing from
// the original only in the text at wantPath, which keeps its original
// text as a prefix (when the size leaves room for it).
func checkLadder(t *testing.T, name, spec string, size int, wantPath string) {
	t.Helper()
	before, after, applied := run(t, spec, 1, name)
	idx := changed(t, outTexts(before), outTexts(after))
	if len(idx) != 1 {
		t.Fatalf("%s %s: %d lines changed, want 1", name, spec, len(idx))
	}
	got, orig := outTexts(after)[idx[0]], outTexts(before)[idx[0]]
	if len(got) != size {
		t.Fatalf("%s %s: line is %d bytes, want %d", name, spec, len(got), size)
	}
	a, b := decode(t, orig), decode(t, got)
	if a["type"] != b["type"] {
		t.Errorf("%s %s: type %v became %v", name, spec, a["type"], b["type"])
	}
	paths := diffPaths(a, b, "")
	if len(paths) != 1 || paths[0] != wantPath {
		t.Fatalf("%s %s: changed %v, want only %s", name, spec, paths, wantPath)
	}
	old, _ := lookupPath(a, wantPath).(string)
	grown, _ := lookupPath(b, wantPath).(string)
	pad := grown
	if size > len(orig) {
		if !strings.HasPrefix(grown, old) {
			t.Fatalf("%s %s: the grown text does not start with the original", name, spec)
		}
		pad = grown[len(old):]
	}
	for _, r := range pad {
		if r < ' ' || r > '~' || r == '"' || r == '\\' {
			t.Fatalf("%s %s: padding has %q", name, spec, r)
		}
	}
	if a := onlyApplied(t, applied, "ladder"); !strings.Contains(a.Detail, fmt.Sprintf("exactly %d bytes", size)) {
		t.Errorf("detail %q", a.Detail)
	}
}

func TestLadderSizes(t *testing.T) {
	sizes := []int{65536, 262144, 1048575, 1048576, 1048577, 8388608}
	if !testing.Short() {
		sizes = append(sizes, 67108864)
	}
	for _, size := range sizes {
		checkLadder(t, "claude/b_tool_bash.stdout.jsonl", fmt.Sprintf("ladder:size=%d,nth=1", size), size, "/message/content/0/text")
	}
	for _, size := range sizes[:5] {
		checkLadder(t, "codex/c_mixed_items.stdout.jsonl", fmt.Sprintf("ladder:size=%d,nth=1", size), size, "/item/text")
		checkLadder(t, "gemini/tool_multi.stdout.jsonl", fmt.Sprintf("ladder:size=%d,nth=3", size), size, "/output")
	}
}

func TestLadderTargets(t *testing.T) {
	for _, tt := range []struct {
		name, spec, path string
	}{
		{"claude/b_tool_bash.stdout.jsonl", "ladder:size=70000,nth=2", "/message/content/0/content"}, // user tool_result
		{"claude/b_tool_bash.stdout.jsonl", "ladder:size=70000,nth=3", "/message/content/0/text"},
		{"claude/f_bidi_permission_allow.transcript.jsonl", "ladder:size=70000,nth=2", "/message/content/0/content"},
		{"codex/b_single_command.stdout.jsonl", "ladder:size=70000,nth=1", "/item/aggregated_output"},
		{"codex/b_single_command.stdout.jsonl", "ladder:size=70000,nth=2", "/item/text"},
		{"gemini/tool_single.stdout.jsonl", "ladder:size=70000,nth=1", "/content"}, // the user message
		{"gemini/tool_single.stdout.jsonl", "ladder:size=70000,nth=2", "/output"},
		// Smaller than the line: the text is replaced by padding.
		{"codex/c_mixed_items.stdout.jsonl", "ladder:size=100,nth=1", "/item/text"},
	} {
		checkLadder(t, tt.name, tt.spec, mustSize(tt.spec), tt.path)
	}
	// The seed picks among all text-bearing events of the CLI.
	picked := map[string]bool{}
	for seed := int64(1); seed <= 20; seed++ {
		before, after, _ := run(t, "ladder:size=5000", seed, "codex/c_mixed_items.stdout.jsonl")
		idx := changed(t, outTexts(before), outTexts(after))
		picked[fmt.Sprint(idx)] = true
	}
	if len(picked) < 3 {
		t.Errorf("20 seeds picked only %v", picked)
	}
}

func mustSize(spec string) int {
	var n int
	fmt.Sscanf(spec[strings.Index(spec, "size=")+5:], "%d", &n)
	return n
}

func TestLadderNothingToGrow(t *testing.T) {
	// Too small for the line even with its text empty.
	before, after, applied := run(t, "ladder:size=50,nth=1", 1, "claude/b_tool_bash.stdout.jsonl")
	if !sameSteps(before, after) {
		t.Error("steps changed")
	}
	if a := onlyApplied(t, applied, "ladder"); !strings.Contains(a.Detail, "cannot make stdout line 2") {
		t.Errorf("detail %q", a.Detail)
	}

	// No text-bearing event at all: unchanged, and said so.
	steps := []transcript.Step{
		{Line: 1, Op: transcript.OpOut, Text: `{"type":"thread.started","thread_id":"t"}`},
		{Line: 2, Op: transcript.OpOut, Text: `{"type":"turn.started"}`},
		{Op: transcript.OpExit},
	}
	p, _ := mustParse(t, "ladder:size=65536", 1)
	if got := p.Steps("codex", steps); !sameSteps(got, steps) {
		t.Error("steps changed")
	}
	if a := onlyApplied(t, p.Applied(), "ladder"); !strings.HasPrefix(a.Detail, "no eligible event") {
		t.Errorf("detail %q", a.Detail)
	}

	// nth beyond the eligible events.
	before, after, applied = run(t, "ladder:size=65536,nth=9", 1, "gemini/tool_single.stdout.jsonl")
	if !sameSteps(before, after) || !strings.Contains(applied[0].Detail, "nth=9 but there are only 4") {
		t.Errorf("nth=9: %+v", applied)
	}
}
