package faults

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseGood(t *testing.T) {
	type item struct {
		Name  string
		Given map[string]string
	}
	tests := []struct {
		spec string
		want []item
	}{
		{"", nil},
		{"   ", nil},
		{";; ;", nil},
		{"crlf", []item{{"crlf", map[string]string{}}}},
		{"crlf:", []item{{"crlf", map[string]string{}}}},
		{"slicer:max=1;stderr_flood:bytes=4194304", []item{
			{"slicer", map[string]string{"max": "1"}},
			{"stderr_flood", map[string]string{"bytes": "4194304"}}}},
		{" latency : ms = 50 , jitter=10 ; ", []item{{"latency", map[string]string{"ms": "50", "jitter": "10"}}}},
		{"die:signal=term,after=0", []item{{"die", map[string]string{"signal": "SIGTERM", "after": "0"}}}},
		{"die:signal=SIGINT", []item{{"die", map[string]string{"signal": "SIGINT"}}}},
		{`banner:text=Note: a\, b\; c\\d`, []item{{"banner", map[string]string{"text": `Note: a, b; c\d`}}}},
		{"banner:text=", []item{{"banner", map[string]string{"text": ""}}}},
		{"drop:type=item.completed,nth=2;drop:nth=1", []item{
			{"drop", map[string]string{"type": "item.completed", "nth": "2"}},
			{"drop", map[string]string{"nth": "1"}}}},
		{"ladder:size=067108864", []item{{"ladder", map[string]string{"size": "67108864"}}}},
		{"pipe_cut:at=131072", []item{{"pipe_cut", map[string]string{"at": "131072"}}}},
		{"repeat_id:nth=2;break_pair;corrupt_type:field=session_id", []item{
			{"repeat_id", map[string]string{"nth": "2"}},
			{"break_pair", map[string]string{}},
			{"corrupt_type", map[string]string{"field": "session_id"}}}},
	}
	for _, tt := range tests {
		p, err := Parse(tt.spec, 1)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.spec, err)
			continue
		}
		var got []item
		if p != nil {
			for _, f := range p.faults {
				got = append(got, item{f.def.name, f.given})
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.spec, diff)
		}
	}
}

func TestParseDefaults(t *testing.T) {
	p, _ := mustParse(t, "stderr_flood;die;banner;exit_mid_line;limit_data;pipe_cut;ladder;latency;bandwidth;slicer", 1)
	got := map[string]any{}
	for _, f := range p.faults {
		for k, v := range f.ints {
			got[f.def.name+"."+k] = v
		}
		for k, v := range f.strs {
			got[f.def.name+"."+k] = v
		}
	}
	want := map[string]any{
		"stderr_flood.bytes": int64(4 << 20), "die.signal": "SIGKILL", "banner.text": defaultBanner, "banner.at": int64(1),
		"exit_mid_line.code": int64(1), "limit_data.bytes": int64(4096), "pipe_cut.at": int64(65536), "ladder.size": int64(1048577),
		"latency.ms": int64(100), "latency.jitter": int64(0), "bandwidth.bps": int64(16384), "slicer.delay_us": int64(0),
		"slicer.utf8": int64(0),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		spec string
		want []string // every one must be in the message
	}{
		{"bogus", []string{`item 1 "bogus"`, `unknown fault "bogus"`, "known: slicer, latency", "repeat_id"}},
		{"crlf;slicer:size=3", []string{`item 2 "slicer:size=3"`, `unknown parameter "size"`, "slicer takes max, delay_us"}},
		{"slicer:max", []string{`parameter "max" has no value`, "key=value"}},
		{"slicer:max=0", []string{`max="0"`, "whole number from 1 to"}},
		{"slicer:max=abc", []string{`max="abc"`, "whole number"}},
		{"latency:ms=-1", []string{`ms="-1"`, "from 0 to 86400000"}},
		{"exit_code:code=256", []string{`code="256"`, "from 0 to 255"}},
		{"pipe_cut:at=65535", []string{`at="65535"`, "from 65536 to"}},
		{"pipe_cut:at=100000", []string{`at="100000"`, "a multiple of 65536"}},
		{"ladder:size=2000000000", []string{`size="2000000000"`, "from 1 to 1073741824"}},
		{"stderr_flood:bytes=1e6", []string{`bytes="1e6"`, "whole number"}},
		{"die:signal=SIGFOO", []string{`signal="SIGFOO"`, "SIGKILL, SIGTERM"}},
		{"drop:nth=1,nth=2", []string{`parameter "nth" given twice`}},
		{"drop:type=", []string{`type=""`, "non-empty"}},
		{"crlf:x=1", []string{"crlf takes no parameters"}},
		{"repeat_id:nth=1", []string{`nth="1"`, "from 2 to"}},
		{":max=1", []string{`unknown fault ""`}},
	}
	for _, tt := range tests {
		p, err := Parse(tt.spec, 1)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", tt.spec, p)
			continue
		}
		if p != nil {
			t.Errorf("Parse(%q) returned a plan with its error", tt.spec)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Parse(%q) error %q does not contain %q", tt.spec, err, w)
			}
		}
	}
}

func TestNilPlan(t *testing.T) {
	var p *Plan
	_, steps := load(t, "codex/b_single_command.stdout.jsonl")
	if got := p.Steps("codex", steps); &got[0] != &steps[0] || len(got) != len(steps) {
		t.Error("nil plan: Steps did not return its input")
	}
	var buf bytes.Buffer
	if w := p.Stdout(&buf, nil); w != &buf {
		t.Error("nil plan: Stdout did not return its writer")
	}
	if a := p.Applied(); a != nil {
		t.Errorf("nil plan: Applied = %v", a)
	}
	p, err := Parse("", 1)
	if p != nil || err != nil {
		t.Errorf(`Parse("") = %v, %v; want nil, nil`, p, err)
	}
}

func TestCatalog(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	kinds := map[string]int{}
	for _, info := range Catalog() {
		if seen[info.Name] {
			t.Errorf("%s listed twice", info.Name)
		}
		seen[info.Name] = true
		kinds[info.Kind]++
		if info.Kind != "pipe" && info.Kind != "event" && info.Kind != "process" {
			t.Errorf("%s: kind %q", info.Name, info.Kind)
		}
		if len(info.Description) < 20 || !strings.HasSuffix(info.Description, ".") {
			t.Errorf("%s: description %q", info.Name, info.Description)
		}
		for _, pr := range info.Params {
			if pr.Name == "" || pr.Default == "" || pr.Meaning == "" {
				t.Errorf("%s: incomplete parameter %+v", info.Name, pr)
			}
		}
		if !bytes.Contains(readme, []byte("`"+info.Name+"`")) {
			t.Errorf("%s is not in fakecli/README.md", info.Name)
		}
		// Every fault parses alone, with its defaults.
		if _, err := Parse(info.Name, 1); err != nil {
			t.Errorf("Parse(%q): %v", info.Name, err)
		}
	}
	if kinds["pipe"] != 19 || kinds["event"] != 20 || kinds["process"] != 1 {
		t.Errorf("kinds = %v, want 19 pipe, 20 event (6 of them JSON-RPC, and 4 ACP aliases of those) and 1 process fault", kinds)
	}
	// Catalog returns a copy.
	c := Catalog()
	c[0].Name = "changed"
	if Catalog()[0].Name == "changed" {
		t.Error("Catalog shares its storage")
	}
}
