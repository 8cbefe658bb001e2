package faults

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDrop(t *testing.T) {
	before, after, applied := run(t, "drop:type=assistant,nth=2", 1, "claude/b_tool_bash.stdout.jsonl")
	b, a := outTexts(before), outTexts(after)
	// The second assistant event is stdout line 3.
	want := append(append([]string(nil), b[:2]...), b[3:]...)
	if !reflect.DeepEqual(a, want) {
		t.Errorf("after drop: %d lines, want line 3 of %d gone", len(a), len(b))
	}
	if d := onlyApplied(t, applied, "drop").Detail; d != "dropped stdout line 3 (transcript line 3)" {
		t.Errorf("detail %q", d)
	}
	_, _, applied = run(t, "drop:type=tool_use", 1, "claude/b_tool_bash.stdout.jsonl")
	if d := onlyApplied(t, applied, "drop").Detail; !strings.HasPrefix(d, `no eligible event: no JSON event of type "tool_use"`) {
		t.Errorf("detail %q", d)
	}
}

func TestDuplicate(t *testing.T) {
	before, after, _ := run(t, "duplicate:nth=4", 1, "codex/b_single_command.stdout.jsonl")
	b, a := outTexts(before), outTexts(after)
	want := append(append(append([]string(nil), b[:4]...), b[3]), b[4:]...)
	if !reflect.DeepEqual(a, want) {
		t.Errorf("line 4 not written twice")
	}
}

func TestReorder(t *testing.T) {
	before, after, applied := run(t, "reorder:type=tool_result,nth=2", 1, "gemini/tool_multi.stdout.jsonl")
	b, a := outTexts(before), outTexts(after)
	// The second tool_result is line 7; it swaps with line 8.
	if a[6] != b[7] || a[7] != b[6] || len(changed(t, b, a)) != 2 {
		t.Errorf("lines 7 and 8 not swapped")
	}
	if d := onlyApplied(t, applied, "reorder").Detail; d != "swapped stdout line 7 (transcript line 7) with stdout line 8 (transcript line 8)" {
		t.Errorf("detail %q", d)
	}
	// The last line has no next line: never eligible.
	_, _, applied = run(t, "reorder:type=result", 1, "gemini/tool_multi.stdout.jsonl")
	if d := applied[0].Detail; !strings.HasPrefix(d, "no eligible event") {
		t.Errorf("reorder of the last line: %q", d)
	}
}

func TestUnknownType(t *testing.T) {
	for _, tt := range []struct {
		name, idField, sid string
	}{
		{"claude/b_tool_bash.stdout.jsonl", "session_id", "08fc0ecf-5fa8-47e8-98fc-00b77f2c5052"},
		{"codex/b_single_command.stdout.jsonl", "thread_id", "01a1fb3a-80da-7f02-9ae7-b30657de3b3f"},
		{"gemini/tool_single.stdout.jsonl", "session_id", "5404597e-240c-43f4-815a-206e664a7fb4"},
	} {
		before, after, applied := run(t, "unknown_type:after=2", 1, tt.name)
		b, a := outTexts(before), outTexts(after)
		if len(a) != len(b)+1 || !reflect.DeepEqual(append(append([]string(nil), a[:2]...), a[3:]...), b) {
			t.Fatalf("%s: not one line inserted after line 2", tt.name)
		}
		ev := decode(t, a[2])
		if ev["type"] != "agentconform_unknown_event" || ev[tt.idField] != tt.sid {
			t.Errorf("%s: inserted %s", tt.name, a[2])
		}
		if strings.HasPrefix(tt.name, "gemini") && ev["timestamp"] != decode(t, b[1])["timestamp"] {
			t.Errorf("%s: timestamp %v", tt.name, ev["timestamp"])
		}
		if strings.HasPrefix(tt.name, "claude") && len(ev["uuid"].(string)) != 36 {
			t.Errorf("%s: uuid %v", tt.name, ev["uuid"])
		}
		onlyApplied(t, applied, "unknown_type")
	}
}

func TestUnknownField(t *testing.T) {
	for _, name := range captures {
		before, after, _ := run(t, "unknown_field", 2, name)
		b, a := outTexts(before), outTexts(after)
		idx := changed(t, b, a)
		if len(idx) != 1 {
			t.Fatalf("%s: %d lines changed", name, len(idx))
		}
		got := decode(t, a[idx[0]])
		if _, ok := got["agentconform_unknown_field"]; !ok {
			t.Fatalf("%s: no agentconform_unknown_field in %.200s", name, a[idx[0]])
		}
		delete(got, "agentconform_unknown_field")
		if !reflect.DeepEqual(got, decode(t, b[idx[0]])) {
			t.Errorf("%s: the event changed beyond the added field", name)
		}
		// Key order and every other byte are kept: the field is appended.
		if !strings.HasPrefix(a[idx[0]], strings.TrimSuffix(b[idx[0]], "}")) {
			t.Errorf("%s: the line was re-encoded", name)
		}
	}
	// An empty object gets no stray comma.
	p, _ := mustParse(t, "unknown_field", 1)
	got := p.Steps("claude", stepsOf(`{}`))
	if outTexts(got)[0] != "{"+unknownField+"}" {
		t.Errorf("empty object became %s", outTexts(got)[0])
	}
}

func TestCorruptType(t *testing.T) {
	// String to number.
	before, after, applied := run(t, "corrupt_type:field=session_id,nth=1", 1, "claude/b_tool_bash.stdout.jsonl")
	idx := changed(t, outTexts(before), outTexts(after))
	if len(idx) != 1 || idx[0] != 0 {
		t.Fatalf("changed lines %v, want the first", idx)
	}
	got, orig := decode(t, outTexts(after)[0]), decode(t, outTexts(before)[0])
	if got["session_id"] != json.Number("12345") {
		t.Errorf("session_id = %#v, want 12345", got["session_id"])
	}
	if p := diffPaths(orig, got, ""); !reflect.DeepEqual(p, []string{"/session_id"}) {
		t.Errorf("changed %v", p)
	}
	if a := onlyApplied(t, applied, "corrupt_type"); a.Params["field"] != "session_id" || !strings.Contains(a.Detail, "/session_id") {
		t.Errorf("applied %+v", a)
	}
	// Number to string.
	before, after, _ = run(t, "corrupt_type:type=result,field=duration_ms", 1, "claude/b_tool_bash.stdout.jsonl")
	last := len(outTexts(after)) - 1
	if got := decode(t, outTexts(after)[last])["duration_ms"]; got != "499" {
		t.Errorf("duration_ms = %#v, want \"499\"", got)
	}
	// Without a field, the seed chooses one, never "type".
	for seed := int64(1); seed <= 20; seed++ {
		before, after, applied := run(t, "corrupt_type", seed, "codex/c_mixed_items.stdout.jsonl")
		idx := changed(t, outTexts(before), outTexts(after))
		if len(idx) != 1 || applied[0].Params["field"] == "type" {
			t.Fatalf("seed %d: changed %v, %+v", seed, idx, applied)
		}
		p := diffPaths(decode(t, outTexts(before)[idx[0]]), decode(t, outTexts(after)[idx[0]]), "")
		if len(p) != 1 || !strings.HasSuffix(p[0], "/"+applied[0].Params["field"]) {
			t.Errorf("seed %d: changed %v, applied %+v", seed, p, applied[0])
		}
	}
}

// pairs collects the call ids and the result references of a stream,
// decoded independently of the code under test.
func pairs(t *testing.T, cli string, texts []string) (calls, results []string) {
	for _, l := range texts {
		ev := decode(t, l)
		switch cli {
		case "claude":
			msg, _ := ev["message"].(map[string]any)
			blocks, _ := msg["content"].([]any)
			for _, b := range blocks {
				b := b.(map[string]any)
				switch b["type"] {
				case "tool_use":
					calls = append(calls, b["id"].(string))
				case "tool_result":
					results = append(results, b["tool_use_id"].(string))
				}
			}
		case "gemini":
			switch ev["type"] {
			case "tool_use":
				calls = append(calls, ev["tool_id"].(string))
			case "tool_result":
				results = append(results, ev["tool_id"].(string))
			}
		case "codex":
			item, _ := ev["item"].(map[string]any)
			switch ev["type"] {
			case "item.started":
				calls = append(calls, item["id"].(string))
			case "item.completed":
				if contains(calls, item["id"].(string)) || strings.HasPrefix(item["id"].(string), "agentconform_unpaired_") {
					results = append(results, item["id"].(string))
				}
			}
		}
	}
	return calls, results
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestBreakPair(t *testing.T) {
	for _, tt := range []struct {
		name string
		nth  string
	}{
		{"claude/b_tool_bash.stdout.jsonl", "1"},
		{"claude/f_bidi_permission_allow.transcript.jsonl", "1"},
		{"codex/c_mixed_items.stdout.jsonl", "3"},
		{"gemini/tool_multi.stdout.jsonl", "2"},
	} {
		cli, _ := load(t, tt.name)
		before, after, applied := run(t, "break_pair:nth="+tt.nth, 1, tt.name)
		if idx := changed(t, outTexts(before), outTexts(after)); len(idx) != 1 {
			t.Fatalf("%s: %d lines changed", tt.name, len(idx))
		}
		callsBefore, resultsBefore := pairs(t, cli, outTexts(before))
		calls, results := pairs(t, cli, outTexts(after))
		if !reflect.DeepEqual(calls, callsBefore) || len(results) != len(resultsBefore) {
			t.Fatalf("%s: calls or results changed: %v %v", tt.name, calls, results)
		}
		var n int
		for i, r := range results {
			if !contains(calls, r) {
				n++
				if itoa(i+1) != tt.nth {
					t.Errorf("%s: result %d unpaired, want %s", tt.name, i+1, tt.nth)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: %d results name no call, want 1", tt.name, n)
		}
		onlyApplied(t, applied, "break_pair")
	}
	_, _, applied := run(t, "break_pair", 1, "gemini/plain_text.stdout.jsonl")
	if !strings.HasPrefix(applied[0].Detail, "no eligible event") {
		t.Errorf("no results: %q", applied[0].Detail)
	}
}

func TestRepeatID(t *testing.T) {
	for _, tt := range []struct {
		name string
		nth  int
	}{
		{"gemini/tool_multi.stdout.jsonl", 2},
		{"gemini/tool_multi.stdout.jsonl", 4},
		{"codex/c_mixed_items.stdout.jsonl", 3},
	} {
		cli, _ := load(t, tt.name)
		before, after, applied := run(t, "repeat_id:nth="+itoa(tt.nth), 1, tt.name)
		callsBefore, resultsBefore := pairs(t, cli, outTexts(before))
		calls, results := pairs(t, cli, outTexts(after))
		distinct := unique(callsBefore)
		reused, first := distinct[tt.nth-1], distinct[0]
		for i := range callsBefore {
			want := callsBefore[i]
			if want == reused {
				want = first
			}
			if calls[i] != want {
				t.Errorf("%s: call %d has id %q, want %q", tt.name, i+1, calls[i], want)
			}
		}
		// Every result still names its own call, now by the reused id.
		for i := range resultsBefore {
			want := resultsBefore[i]
			if want == reused {
				want = first
			}
			if results[i] != want {
				t.Errorf("%s: result %d names %q, want %q", tt.name, i+1, results[i], want)
			}
		}
		if a := onlyApplied(t, applied, "repeat_id"); !strings.Contains(a.Detail, "reuses the id") {
			t.Errorf("detail %q", a.Detail)
		}
	}
	// Claude captures have one call each: nothing to repeat, and said so.
	before, after, applied := run(t, "repeat_id", 1, "claude/b_tool_bash.stdout.jsonl")
	if !sameSteps(before, after) || !strings.HasPrefix(applied[0].Detail, "no eligible event") {
		t.Errorf("one call: %+v", applied)
	}
	// A Claude stream with two calls.
	p, _ := mustParse(t, "repeat_id", 1)
	got := outTexts(p.Steps("claude", stepsOf(
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":{}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"b"}]}}`,
	)))
	calls, results := pairs(t, "claude", got)
	if !reflect.DeepEqual(calls, []string{"toolu_1", "toolu_1"}) || !reflect.DeepEqual(results, []string{"toolu_1", "toolu_1"}) {
		t.Errorf("calls %v, results %v", calls, results)
	}
}

func unique(s []string) []string {
	var out []string
	for _, x := range s {
		if !contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestGuessCLI(t *testing.T) {
	for _, name := range captures {
		cli, steps := load(t, name)
		if got := guessCLI(steps); got != cli {
			t.Errorf("%s: guessed %q, want %q", name, got, cli)
		}
	}
}
