package faults

import (
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentconform/agentconform/transcript"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "slicer:max=1;stderr_flood:bytes=4194304", `banner:text=a\,b`, "die:signal=term", "x:y", ";:=,", `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := Parse(spec, 1)
		if err != nil && p != nil {
			t.Fatal("a plan with an error")
		}
		if p != nil && p.Applied() != nil {
			t.Fatal("a fresh plan has applied faults")
		}
	})
}

// small reports whether a plan asks only for modest sizes, so the fuzzer
// does not spend its memory on 1 GiB ladders and floods.
func small(p *Plan) bool {
	for _, f := range p.faults {
		if f.ints["size"] > 1<<16 || (f.def.name == "stderr_flood" && f.ints["bytes"] > 1<<16) {
			return false
		}
	}
	return true
}

func FuzzSteps(f *testing.F) {
	f.Add("ladder:size=300;invalid_utf8;corrupt_type", `{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}`, `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}}`, int64(1))
	f.Add("break_pair;repeat_id;unknown_field;unknown_type", `{"type":"tool_use","tool_id":"a"}`, `{"type":"tool_result","tool_id":"a","output":"\u00e9\\"}`, int64(2))
	f.Add("exit_mid_line;drop;reorder;duplicate;banner", `{"type":"item.started","item":{"id":"i","id":"j"}}`, "not json {{x", int64(3))
	f.Add("crlf;no_final_newline;stall;die;exit_code;slicer;limit_data:bytes=7", `{"a":[1,{"b":"c"}],"type":"x"}  `, `{}`, int64(4))
	f.Fuzz(func(t *testing.T, spec, l1, l2 string, seed int64) {
		p, err := Parse(spec, seed)
		if err != nil || p == nil || !small(p) {
			return
		}
		p.sleep = func(time.Duration) {}
		steps := []transcript.Step{
			{Line: 1, Op: transcript.OpOut, Text: l1},
			{Line: 2, Op: transcript.OpIn, Text: "x"},
			{Line: 3, Op: transcript.OpOut, Text: l2},
			{Line: 4, Op: transcript.OpExit},
		}
		for _, cli := range []string{"claude", "codex", "gemini", ""} {
			out := p.Steps(cli, steps)
			w := p.Stdout(io.Discard, func(int) {})
			for _, s := range out {
				if s.Op == transcript.OpOut {
					w.Write([]byte(s.Text + "\n"))
				}
			}
		}
	})
}

// checkScan checks the scanner against encoding/json: every node's bytes
// are one JSON value equal to what its path holds.
func checkScan(t *testing.T, line string) {
	d := parseDoc(line)
	if d == nil {
		return
	}
	var whole any
	if !utf8.ValidString(line) || json.Unmarshal([]byte(line), &whole) != nil {
		return // encoding/json replaces invalid UTF-8; the scanner keeps it
	}
	for _, n := range d.nodes {
		var v any
		if err := json.Unmarshal([]byte(d.raw(&n)), &v); err != nil {
			t.Fatalf("node %v: %q is not JSON: %v", n.path, d.raw(&n), err)
		}
		// Duplicate keys make the path ambiguous; skip those documents.
		if hasDuplicateKeys(d) {
			return
		}
		if at := lookupSegs(whole, n.path); len(n.path) > 0 && !reflect.DeepEqual(at, v) {
			t.Fatalf("node %v holds %v, the document has %v there", n.path, v, at)
		}
	}
}

func hasDuplicateKeys(d *doc) bool {
	seen := map[string]bool{}
	for _, n := range d.nodes {
		k := strings.Join(n.path, "\x00")
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

func TestScan(t *testing.T) {
	for _, line := range []string{
		`{}`, ` { "a" : [ 1 , -2.5e3 , "x\"y\\" , { "b" : null } , [ ] , true , false ] , "c\u00e9" : "\u2028" } `,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"héllo \"world\""}]}}`,
	} {
		if parseDoc(line) == nil {
			t.Fatalf("not parsed: %s", line)
		}
		checkScan(t, line)
	}
	for _, bad := range []string{"", "[]", `"x"`, "{", `{"a":}`, "not json", `{"a":1}x`} {
		if parseDoc(bad) != nil {
			t.Errorf("parseDoc(%q) accepted it", bad)
		}
	}
}

// FuzzEdits checks that the faults that edit a JSON line in place leave
// valid JSON (ladder at its exact size), whatever the line.
func FuzzEdits(f *testing.F) {
	f.Add(`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"a"}]}}`, int64(1))
	f.Add(`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"\ud83d\ude00 <&>"}}`, int64(2))
	f.Add(`{"type":"tool_result","tool_id":"a","output":"x","n":-1.5e-3,"e":{},"l":[]}`, int64(3))
	f.Fuzz(func(t *testing.T, line string, seed int64) {
		if len(line) > 1<<12 || parseDoc(line) == nil {
			return
		}
		checkScan(t, line)
		for _, spec := range []string{"unknown_field", "corrupt_type", "break_pair", "repeat_id", "invalid_utf8", "ladder:size=5000"} {
			for _, cli := range []string{"claude", "codex", "gemini"} {
				p, err := Parse(spec, seed)
				if err != nil {
					t.Fatal(err)
				}
				in := []transcript.Step{{Op: transcript.OpOut, Text: line}, {Op: transcript.OpOut, Text: line}, {Op: transcript.OpExit}}
				for i, s := range p.Steps(cli, in) {
					if s.Op != transcript.OpOut || s.Text == in[i].Text {
						continue
					}
					if !json.Valid([]byte(s.Text)) {
						t.Fatalf("%s (%s) made invalid JSON: %q", spec, cli, s.Text)
					}
					if spec == "ladder:size=5000" && len(s.Text) != 5000 {
						t.Fatalf("ladder made %d bytes", len(s.Text))
					}
				}
			}
		}
	})
}
