package faults

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/transcript"
)

// replay is what a plan makes of a capture: the rewritten steps, the bytes
// its writers pass on, and the Applied list.
func replay(t *testing.T, spec string, seed int64, name string) ([]transcript.Step, [][]byte, []Applied) {
	t.Helper()
	cli, steps := load(t, name)
	p, _ := mustParse(t, spec, seed)
	out := p.Steps(cli, steps)
	var rec recorder
	writeLines(t, p.Stdout(&rec, func(int) {}), lines(out))
	return out, rec.writes, p.Applied()
}

func TestDeterminism(t *testing.T) {
	for _, info := range Catalog() {
		for _, name := range captures {
			s1, w1, a1 := replay(t, info.Name, 99, name)
			s2, w2, a2 := replay(t, info.Name, 99, name)
			if !sameSteps(s1, s2) || !reflect.DeepEqual(w1, w2) || !reflect.DeepEqual(a1, a2) {
				t.Errorf("%s on %s: same seed, different results", info.Name, name)
			}
			// limit_data and pipe_cut record when they cut: the shorter
			// streams are under limit_data's default limit, and no line of
			// these captures is longer than pipe_cut's.
			if len(a1) == 0 && !(info.Name == "limit_data" && len(bytes.Join(w1, nil)) < 4096) &&
				info.Name != "pipe_cut" && // no capture has a line over 64 KiB
				info.Name != "start_delay" && // the fake applies it at its start (TestStartDelay)
				info.Kind != "process" { // the fake runs them (TestProcessFaults)
				t.Errorf("%s on %s: nothing recorded in Applied", info.Name, name)
			}
		}
	}
}

func TestSeedsChoose(t *testing.T) {
	// Every fault that chooses at random makes different choices for
	// different seeds.
	for _, tt := range []struct{ spec, name string }{
		{"slicer", "codex/a_plain_text.stdout.jsonl"},
		{"latency:jitter=50", "codex/c_mixed_items.stdout.jsonl"},
		{"stall", "codex/c_mixed_items.stdout.jsonl"},
		{"die", "codex/c_mixed_items.stdout.jsonl"},
		{"ladder:size=70000", "codex/c_mixed_items.stdout.jsonl"},
		{"invalid_utf8", "codex/c_mixed_items.stdout.jsonl"},
		{"drop", "codex/c_mixed_items.stdout.jsonl"},
		{"duplicate", "codex/c_mixed_items.stdout.jsonl"},
		{"reorder", "codex/c_mixed_items.stdout.jsonl"},
		{"unknown_type", "codex/c_mixed_items.stdout.jsonl"},
		{"unknown_field", "codex/c_mixed_items.stdout.jsonl"},
		{"corrupt_type", "codex/c_mixed_items.stdout.jsonl"},
		{"break_pair", "codex/c_mixed_items.stdout.jsonl"},
		{"repeat_id", "gemini/tool_multi.stdout.jsonl"},
	} {
		seen := map[string]bool{}
		for seed := int64(1); seed <= 10; seed++ {
			_, writes, applied := replay(t, tt.spec, seed, tt.name)
			key := fmt.Sprint(len(writes), applied)
			if strings.HasPrefix(tt.spec, "latency") {
				key = "" // latency shows in its sleeps
				p, s := mustParse(t, tt.spec, seed)
				writeLines(t, p.Stdout(&recorder{}, nil), [][]byte{[]byte("{}\n"), []byte("{}\n")})
				key = fmt.Sprint(s.d)
			}
			seen[key] = true
		}
		if len(seen) < 2 {
			t.Errorf("%s: 10 seeds made the same choice", tt.spec)
		}
	}
}

func TestComposition(t *testing.T) {
	// Faults apply in spec order, each to the result of the one before.
	before, after, applied := run(t, "drop:nth=1;drop:nth=1", 1, "codex/c_mixed_items.stdout.jsonl")
	if !reflect.DeepEqual(outTexts(after), outTexts(before)[2:]) {
		t.Error("two drops of the first line did not drop lines 1 and 2")
	}
	if applied[0].Detail != "dropped stdout line 1 (transcript line 1)" || applied[1].Detail != "dropped stdout line 1 (transcript line 2)" {
		t.Errorf("applied %+v", applied)
	}

	_, after, _ = run(t, "ladder:size=100000,nth=1;crlf", 1, "codex/a_plain_text.stdout.jsonl")
	if n := len(outTexts(after)[2]); n != 100001 {
		t.Errorf("ladder then crlf: %d bytes, want 100000 and \\r", n)
	}
	_, after, _ = run(t, "crlf;ladder:size=100000,nth=1", 1, "codex/a_plain_text.stdout.jsonl")
	if l := outTexts(after)[2]; len(l) != 100000 || !strings.HasSuffix(l, "}\r") {
		t.Errorf("crlf then ladder: %d bytes, want 100000 with the \\r", len(l))
	}

	// Step faults and writer faults in one spec, each recorded in order.
	steps, writes, applied := replay(t, "stderr_flood:bytes=2048;slicer:max=1;banner;no_final_newline;exit_code:code=3", 1, "gemini/plain_text.stdout.jsonl")
	var names []string
	for _, a := range applied {
		names = append(names, a.Fault)
	}
	// The writer records when it first writes, after the step rewrites.
	if got := join(names); got != "stderr_flood,banner,no_final_newline,exit_code,slicer" {
		t.Errorf("applied %s", got)
	}
	all := bytes.Join(writes, nil)
	if !bytes.HasPrefix(all, []byte(defaultBanner+"\n{")) || bytes.HasSuffix(all, []byte("\n")) || len(writes) != len(all) {
		t.Errorf("stream: %d writes, %d bytes", len(writes), len(all))
	}
	// The banner is the CLI's first line, before it reads anything, and
	// its next line comes bannerGap later; the flood comes before the
	// first line of the stream.
	if steps[0].Op != transcript.OpOut || steps[0].Text != defaultBanner || steps[1].Op != transcript.OpDelay || steps[1].DelayMS != bannerGap.Milliseconds() ||
		steps[2].Op != transcript.OpErr || steps[len(steps)-1].Code != 3 {
		t.Errorf("steps %v %v %v ... %v", steps[0].Op, steps[1].Op, steps[2].Op, steps[len(steps)-1])
	}
}

func TestAppliedIsACopy(t *testing.T) {
	p, _ := mustParse(t, "crlf", 1)
	p.Steps("claude", stepsOf(`{}`))
	a := p.Applied()
	a[0].Fault = "x"
	if p.Applied()[0].Fault != "crlf" {
		t.Error("Applied shares its storage")
	}
}

func TestConcurrentWrites(t *testing.T) {
	p, _ := mustParse(t, "slicer:max=2;latency:ms=0", 1)
	var rec recorder
	w := p.Stdout(&rec, nil)
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 50; i++ {
				w.Write([]byte("{\"line\":1}\n"))
				p.Applied()
			}
			done <- true
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	// Lines never interleave: the stream is 200 whole lines.
	if got := string(rec.joined()); got != strings.Repeat("{\"line\":1}\n", 200) {
		t.Error("concurrent lines interleaved")
	}
}

// TestStartDelay: start_delay changes no step and no write; StartDelay
// says how long, and records it.
func TestStartDelay(t *testing.T) {
	p, _ := mustParse(t, "start_delay:ms=1500", 1)
	if d := p.StartDelay(); d != 1500*time.Millisecond {
		t.Errorf("StartDelay() = %v, want 1.5s", d)
	}
	if a := p.Applied(); len(a) != 1 || a[0].Fault != "start_delay" || a[0].Params["ms"] != "1500" {
		t.Errorf("Applied() = %+v", a)
	}
	if d := (*Plan)(nil).StartDelay(); d != 0 {
		t.Errorf("nil plan: %v", d)
	}
	other, _ := mustParse(t, "crlf", 1)
	if d := other.StartDelay(); d != 0 || len(other.Applied()) != 0 {
		t.Errorf("crlf: StartDelay() = %v, applied %+v", d, other.Applied())
	}
}

// TestProcessFaults checks that the process faults leave the steps and
// the writes alone and hand their parameters to the fake, and that bad
// values are refused.
func TestProcessFaults(t *testing.T) {
	p, _ := mustParse(t, "launcher:style=gemini", 1)
	if got := p.Launcher(); got != "gemini" || p.LauncherForwardsEvery() {
		t.Errorf("Launcher() = %q, forwards every %v; want gemini, false", got, p.LauncherForwardsEvery())
	}
	cli, steps := load(t, "codex/b_single_command.stdout.jsonl")
	if out := p.Steps(cli, steps); !sameSteps(out, steps) {
		t.Error("process faults changed the steps")
	}
	var rec recorder
	if w := p.Stdout(&rec, func(int) {}); w != io.Writer(&rec) {
		t.Error("process faults wrapped stdout")
	}
	if d := mustParseDefault(t, "launcher"); d.Launcher() != "codex" || d.LauncherForwardsEvery() {
		t.Errorf("launcher's default: style %q, forwards every %v; want codex passing the first signal on", d.Launcher(), d.LauncherForwardsEvery())
	}
	if !mustParseDefault(t, "launcher:style=codex,forward=every").LauncherForwardsEvery() {
		t.Error("forward=every: codex.js does not pass every signal on")
	}
	// Only codex.js passes signals on.
	if mustParseDefault(t, "launcher:style=gemini,forward=every").LauncherForwardsEvery() {
		t.Error("forward=every made Gemini's launcher pass signals on")
	}
	var nilPlan *Plan
	if nilPlan.Launcher() != "" || nilPlan.LauncherForwardsEvery() {
		t.Error("a nil plan has process faults")
	}
	for _, bad := range []string{"launcher:style=npm", "launcher:style=", "launcher:forward=all", "grandchild"} {
		if _, err := Parse(bad, 1); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func mustParseDefault(t *testing.T, spec string) *Plan {
	t.Helper()
	p, err := Parse(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStartBanner: only the banner fault at the first line makes a
// start-up banner; a banner later in the stream, another fault or no plan
// does not.
func TestStartBanner(t *testing.T) {
	for spec, want := range map[string]bool{"banner": true, "banner:at=1;crlf": true, "banner:at=3": false, "crlf": false} {
		p, _ := mustParse(t, spec, 1)
		if got := p.StartBanner(); got != want {
			t.Errorf("%q: StartBanner() = %v, want %v", spec, got, want)
		}
	}
	if (*Plan)(nil).StartBanner() {
		t.Error("a nil plan has a start-up banner")
	}
}
