package faults

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentconform/agentconform/transcript"
)

// without returns steps with the step at i removed.
func without(steps []transcript.Step, i int) []transcript.Step {
	return append(steps[:i:i], steps[i+1:]...)
}

// outIndex is the step index of the nth (1-based) out step.
func outIndex(steps []transcript.Step, n int) int {
	return outs(steps)[n-1]
}

func TestStall(t *testing.T) {
	before, after, applied := run(t, "stall:after=2", 1, "codex/b_single_command.stdout.jsonl")
	i := outIndex(before, 2) + 1
	if s := after[i]; s.Op != transcript.OpDelay || s.DelayMS != 24*3600*1000 {
		t.Fatalf("step after stdout line 2 = %+v, want a 24 h delay", s)
	}
	if !sameSteps(without(after, i), before) {
		t.Error("stall changed more than one step")
	}
	a := onlyApplied(t, applied, "stall")
	if !strings.Contains(a.Detail, "after stdout line 2 (transcript line 2)") {
		t.Errorf("detail %q", a.Detail)
	}

	// after=0: before anything is written.
	_, after, _ = run(t, "stall:after=0", 1, "codex/b_single_command.stdout.jsonl")
	if after[0].Op != transcript.OpDelay {
		t.Errorf("after=0: first step is %s", after[0].Op)
	}
}

func TestDie(t *testing.T) {
	before, after, applied := run(t, "die:after=3", 1, "gemini/tool_single.stdout.jsonl")
	i := outIndex(before, 3) + 1
	if s := after[i]; s.Op != transcript.OpExitSignal || s.Signal != "SIGKILL" {
		t.Fatalf("step after stdout line 3 = %+v, want exit_signal SIGKILL", s)
	}
	if !sameSteps(without(after, i), before) {
		t.Error("die changed more than one step")
	}
	onlyApplied(t, applied, "die")

	// Chosen by the seed: always after at least one line and before the last.
	n := len(outs(before))
	for seed := int64(1); seed <= 30; seed++ {
		_, after, applied := run(t, "die:signal=TERM", seed, "gemini/tool_single.stdout.jsonl")
		k := 0
		for _, s := range after {
			if s.Op == transcript.OpOut {
				k++
			}
			if s.Op == transcript.OpExitSignal {
				break
			}
		}
		if k < 1 || k >= n {
			t.Errorf("seed %d: died after %d of %d lines", seed, k, n)
		}
		if applied[0].Params["after"] != itoa(k) || applied[0].Params["signal"] != "SIGTERM" {
			t.Errorf("seed %d: params %v", seed, applied[0].Params)
		}
	}
}

func TestExitMidLine(t *testing.T) {
	before, after, applied := run(t, "exit_mid_line", 1, "claude/b_tool_bash.stdout.jsonl")
	o := outs(before)
	last := o[len(o)-1]
	full := before[last].Text
	got := after[last]
	if !got.NoNewline || got.Text != full[:len(full)/2] {
		t.Errorf("last line = %d bytes, newline %v; want the first %d bytes without newline", len(got.Text), !got.NoNewline, len(full)/2)
	}
	if s := after[last+1]; s.Op != transcript.OpExit || s.Code != 1 {
		t.Errorf("then %+v, want exit 1", s)
	}
	if a := onlyApplied(t, applied, "exit_mid_line"); a.Params["line"] != itoa(len(o)) {
		t.Errorf("params %v", a.Params)
	}

	before, after, _ = run(t, "exit_mid_line:line=2,code=3", 1, "codex/a_plain_text.stdout.jsonl")
	i := outIndex(before, 2)
	if after[i].Text != `{"type":"tu` || !after[i].NoNewline || after[i+1].Code != 3 {
		t.Errorf("line 2 = %q then %+v", after[i].Text, after[i+1])
	}
}

func TestHalfwayAvoidsTemplates(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int
	}{
		{"", 0}, {"x", 1}, {"abcd", 2},
		{`{"id":"{{request}}"}`, 7}, // 10 falls inside {{request}}: cut before it
		{`{"request_id":"{{req1}}"}`, 12},
		{`{{a}}xxxxxxxx`, 6},
	} {
		if got := halfway(tt.text); got != tt.want {
			t.Errorf("halfway(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
	// On a real capture transcript with templates: the cut never splits one.
	_, after, _ := run(t, "exit_mid_line:line=1", 1, "claude/f_bidi_permission_allow.transcript.jsonl")
	cut := after[outIndex(after, 1)].Text
	if strings.Count(cut, "{{") != strings.Count(cut, "}}") {
		t.Errorf("cut inside a template: ...%s", cut[max(0, len(cut)-40):])
	}
}

func TestExitCode(t *testing.T) {
	before, after, applied := run(t, "exit_code:code=7", 1, "gemini/plain_text.stdout.jsonl")
	if got := after[len(after)-1]; got.Op != transcript.OpExit || got.Code != 7 {
		t.Errorf("last step %+v, want exit 7", got)
	}
	if changed(t, outTexts(before), outTexts(after)) != nil {
		t.Error("exit_code changed the output")
	}
	onlyApplied(t, applied, "exit_code")
}

func TestStderrFlood(t *testing.T) {
	for _, tt := range []struct {
		spec  string
		bytes int
		lines int
	}{
		{"stderr_flood", 4 << 20, 4096},
		{"stderr_flood:bytes=1500", 1500, 2},
		{"stderr_flood:bytes=1", 1, 1},
		{"stderr_flood:bytes=0", 0, 0},
	} {
		before, after, applied := run(t, tt.spec, 1, "claude/f_bidi_permission_allow.transcript.jsonl")
		first := outIndex(before, 1)
		total, n := 0, 0
		for i, s := range after {
			if s.Op == transcript.OpErr {
				if i < first || i >= first+tt.lines {
					t.Fatalf("%s: stderr line at step %d, want all before the first stdout line (step %d)", tt.spec, i, first)
				}
				total += len(s.Text) + 1
				n++
			}
		}
		if total != tt.bytes || n != tt.lines {
			t.Errorf("%s: %d bytes in %d lines, want %d in %d", tt.spec, total, n, tt.bytes, tt.lines)
		}
		if len(after) != len(before)+tt.lines {
			t.Errorf("%s: %d steps, want %d", tt.spec, len(after), len(before)+tt.lines)
		}
		onlyApplied(t, applied, "stderr_flood")
	}
}

func TestBanner(t *testing.T) {
	before, after, _ := run(t, "banner", 1, "codex/a_plain_text.stdout.jsonl")
	got := outTexts(after)
	if got[0] != defaultBanner || json.Valid([]byte(got[0])) {
		t.Errorf("first stdout line %q, want the default banner", got[0])
	}
	if strings.Join(got[1:], "\n") != strings.Join(outTexts(before), "\n") {
		t.Error("banner changed other lines")
	}
	_, after, applied := run(t, `banner:text=[SandboxDebug] hello\, world,at=3`, 1, "codex/a_plain_text.stdout.jsonl")
	if got := outTexts(after); got[2] != "[SandboxDebug] hello, world" {
		t.Errorf("stdout line 3 = %q", got[2])
	}
	if a := onlyApplied(t, applied, "banner"); !strings.Contains(a.Detail, "after stdout line 2") {
		t.Errorf("detail %q", a.Detail)
	}
}

func TestInvalidUTF8(t *testing.T) {
	for _, name := range captures {
		before, after, applied := run(t, "invalid_utf8", 5, name)
		idx := changed(t, outTexts(before), outTexts(after))
		if len(idx) != 1 {
			t.Fatalf("%s: %d lines changed, want 1", name, len(idx))
		}
		got, orig := outTexts(after)[idx[0]], outTexts(before)[idx[0]]
		if utf8.ValidString(got) || strings.Replace(got, badUTF8, "", 1) != orig {
			t.Errorf("%s: line is not the original with \\xff\\xfe inserted", name)
		}
		// The bytes sit inside a string value: the line still scans as JSON.
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: line is no longer JSON", name)
		}
		at := strings.Index(got, badUTF8)
		if got[at-1] != '"' {
			t.Errorf("%s: inserted after %q, want right after a quote", name, got[at-1])
		}
		onlyApplied(t, applied, "invalid_utf8")
	}
}

func TestCRLF(t *testing.T) {
	before, after, _ := run(t, "crlf", 1, "gemini/tool_multi.stdout.jsonl")
	b, a := outTexts(before), outTexts(after)
	for i := range a {
		if a[i] != b[i]+"\r" {
			t.Fatalf("line %d does not end in \\r", i+1)
		}
	}
}

func TestNoFinalNewline(t *testing.T) {
	_, after, _ := run(t, "no_final_newline", 1, "gemini/tool_multi.stdout.jsonl")
	o := outs(after)
	for k, i := range o {
		if after[i].NoNewline != (k == len(o)-1) {
			t.Errorf("stdout line %d: NoNewline=%v", k+1, after[i].NoNewline)
		}
	}
}

func TestIgnoreSignal(t *testing.T) {
	before, after, applied := run(t, "ignore_signal", 1, "codex/b_single_command.stdout.jsonl")
	if s := after[0]; s.Op != transcript.OpOnSignal || s.OnSignal["SIGTERM"] != "ignore" || len(s.OnSignal) != 1 {
		t.Fatalf("first step = %+v, want on_signal SIGTERM ignore", s)
	}
	if !sameSteps(after[1:], before) {
		t.Error("ignore_signal changed more than its one step")
	}
	onlyApplied(t, applied, "ignore_signal")

	// A later on_signal for the same signal is overridden; others stay.
	steps := []transcript.Step{{Op: transcript.OpOut, Text: "{}"}, {Op: transcript.OpOnSignal, OnSignal: map[string]string{"SIGTERM": "exit:143", "SIGINT": "exit:1"}}, {Op: transcript.OpExit}}
	p, err := Parse("ignore_signal:signal=SIGTERM", 1)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Steps("codex", steps)
	if got[2].OnSignal["SIGTERM"] != "ignore" || got[2].OnSignal["SIGINT"] != "exit:1" || steps[1].OnSignal["SIGTERM"] != "exit:143" {
		t.Errorf("later on_signal = %v (input %v): want SIGTERM ignored, SIGINT kept, input untouched", got[2].OnSignal, steps[1].OnSignal)
	}
}
