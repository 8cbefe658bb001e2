package sequence

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/finding"
)

// ruleCase is one rule's test: a minimal stream that breaks it and a near
// miss that must come out clean.
type ruleCase struct {
	rule    *finding.Rule
	name    string // distinguishes several cases of one rule
	dialect string
	opts    Options
	// bad breaks the rule; want lists every finding it must produce, as
	// "rule-id@line", in any order (so other rules firing is a failure too).
	bad  string
	want []string
	// good is a near miss: it must produce no finding at all.
	good string
}

// lines joins JSONL lines into a stream.
func lines(ls ...string) string { return strings.Join(ls, "\n") }

// in marks a line as written to stdin (for transcripts).
func in(l string) string { return "in " + l }

// decode turns a JSONL literal into events: one per line, line numbers from
// 1, offsets and lengths as in a file, "in " prefixes marking stdin.
func decode(t testing.TB, stream string) []Event {
	t.Helper()
	var evs []Event
	var off int64
	for i, l := range strings.Split(stream, "\n") {
		dir := Out
		raw := l
		if rest, ok := strings.CutPrefix(l, "in "); ok {
			dir, l = In, rest
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
		evs = append(evs, Event{Line: i + 1, Offset: off, Len: int64(len(l)), Dir: dir, Obj: obj})
		off += int64(len(raw)) + 1
	}
	return evs
}

// check runs a stream through a fresh checker and returns its findings.
func check(t testing.TB, dialect string, opts Options, stream string) []finding.Finding {
	t.Helper()
	c, err := New(dialect, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []finding.Finding
	report := func(f finding.Finding) {
		if f.Rule == nil {
			t.Errorf("finding without a rule: %v", f)
		}
		got = append(got, f)
	}
	evs := decode(t, stream)
	for _, ev := range evs {
		c.Observe(ev, report)
	}
	c.End(report)
	for _, f := range got {
		if f.Line > 0 && f.Line <= len(evs) && f.Offset != evs[f.Line-1].Offset {
			t.Errorf("%v: offset %d, but line %d starts at %d", f, f.Offset, f.Line, evs[f.Line-1].Offset)
		}
	}
	return got
}

// keys renders findings as sorted "rule-id@line" strings.
func keys(fs []finding.Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s@%d", f.Rule.ID, f.Line))
	}
	slices.Sort(out)
	return out
}

func dump(fs []finding.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n\t")
		b.WriteString(f.String())
	}
	return b.String()
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	for _, tc := range cases {
		name := tc.rule.ID
		if tc.name != "" {
			name += "/" + tc.name
		}
		t.Run(name, func(t *testing.T) {
			if tc.bad != "" {
				got := check(t, tc.dialect, tc.opts, tc.bad)
				want := slices.Clone(tc.want)
				slices.Sort(want)
				if !slices.Equal(keys(got), want) {
					t.Errorf("bad stream: got %v, want %v%s", keys(got), want, dump(got))
				}
				fired := false
				for _, f := range got {
					fired = fired || f.Rule == tc.rule
				}
				if !fired {
					t.Errorf("bad stream does not fire %s", tc.rule.ID)
				}
			}
			if tc.good != "" {
				if got := check(t, tc.dialect, tc.opts, tc.good); len(got) > 0 {
					t.Errorf("near miss: got %v, want none%s", keys(got), dump(got))
				}
			}
		})
	}
}

func allRuleCases() []ruleCase {
	return slices.Concat(claudeCases, claudeControlCases, claudeStdinCases,
		codexCases, geminiCases, unifiedCases, shimCases)
}

// TestEveryRuleTested keeps the catalogue and the tests in step: every rule
// has a case whose bad stream fires it and a near miss.
func TestEveryRuleTested(t *testing.T) {
	bad := map[*finding.Rule]bool{}
	good := map[*finding.Rule]bool{}
	for _, tc := range allRuleCases() {
		bad[tc.rule] = bad[tc.rule] || tc.bad != ""
		good[tc.rule] = good[tc.rule] || tc.good != ""
	}
	for _, r := range AllRules {
		if !bad[r] {
			t.Errorf("%s has no breaking stream", r.ID)
		}
		if !good[r] {
			t.Errorf("%s has no near miss", r.ID)
		}
	}
}

func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range AllRules {
		if seen[r.ID] {
			t.Errorf("duplicate rule id %s", r.ID)
		}
		seen[r.ID] = true
		if r.Requirement == "" || r.Source == "" {
			t.Errorf("%s: missing requirement or source", r.ID)
		}
		if !strings.HasPrefix(r.Source, "protocols.md §") && !strings.HasPrefix(r.Source, "seed 00") &&
			!strings.HasPrefix(r.Source, "docs/protocols/") {
			t.Errorf("%s: source %q names neither the protocol reference nor a seed", r.ID, r.Source)
		}
		if r.Level != finding.Must && r.Level != finding.Should {
			t.Errorf("%s: level %v; ordering rules are MUST or SHOULD", r.ID, r.Level)
		}
		if strings.Count(r.ID, "/") != 2 {
			t.Errorf("%s: want dialect/area/name", r.ID)
		}
	}
	inSome := map[*finding.Rule]bool{}
	for _, d := range Dialects() {
		rs := Rules(d)
		if len(rs) == 0 {
			t.Errorf("Rules(%q) is empty", d)
		}
		for _, r := range rs {
			inSome[r] = true
			if !seen[r.ID] {
				t.Errorf("Rules(%q) has %s, which is not in AllRules", d, r.ID)
			}
		}
	}
	for _, r := range AllRules {
		if !inSome[r] {
			t.Errorf("%s belongs to no dialect", r.ID)
		}
	}
	if Rules("nope") != nil {
		t.Error("Rules of an unknown dialect is not nil")
	}
	// The catalogue cannot be altered through what Rules returns.
	rs := Rules("codex")
	rs[0] = nil
	if Rules("codex")[0] == nil {
		t.Error("Rules returns the catalogue's own slice")
	}
}

func TestNewUnknownDialect(t *testing.T) {
	if _, err := New("claud", Options{}); err == nil || !strings.Contains(err.Error(), "claude-stdin") {
		t.Errorf("New(unknown) error = %v, want one listing the dialects", err)
	}
	for _, d := range Dialects() {
		if c, err := New(d, Options{}); err != nil || c == nil {
			t.Errorf("New(%q) = %v, %v", d, c, err)
		}
	}
}

// TestOddShapes feeds every dialect lines whose fields have the wrong
// types; a checker must skip them without panicking.
func TestOddShapes(t *testing.T) {
	odd := []string{
		`{}`, `{"type":7}`, `{"type":null}`, `{"type":"system","subtype":["init"]}`,
		`{"type":"assistant","message":"x"}`, `{"type":"assistant","message":{"content":"x"}}`,
		`{"type":"assistant","message":{"content":[1,null,"x",{"type":"tool_use","id":5}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":[]}]}}`,
		`{"type":"result","result_index":"3"}`, `{"type":"result","result_index":1.5}`,
		`{"type":"control_request","request_id":{},"request":[]}`,
		`{"type":"control_response","response":"x"}`, `{"type":"control_cancel_request"}`,
		`{"type":"item.started","item":"x"}`, `{"type":"item.completed","item":{"id":3}}`,
		`{"type":"turn.completed","usage":[]}`, `{"type":"tool_use","tool_id":false,"id":{}}`,
		`{"type":"tool_result","tool_id":1,"tool_use_id":2}`, `{"type":"toolStarted","toolId":null}`,
		`{"type":"toolProgress"}`, `{"type":"sessionEnded","reason":4}`, `{"type":"user","message":{"content":[{}]}}`,
		`{"type":"init","session_id":1}`, `{"type":"message","role":{}}`,
	}
	stream := lines(odd...)
	for _, d := range Dialects() {
		for _, both := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/both=%v", d, both), func(t *testing.T) {
				c, _ := New(d, Options{Both: both})
				for _, ev := range decode(t, stream) {
					c.Observe(ev, func(finding.Finding) {})
					ev.Dir = In
					c.Observe(ev, func(finding.Finding) {})
				}
				c.Observe(Event{Line: 99}, func(finding.Finding) {}) // nil Obj
				c.End(func(finding.Finding) {})
			})
		}
	}
}
