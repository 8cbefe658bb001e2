package appserver

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/transcript"
)

const captures = "../testdata/captures/codex/0.169.0"

func loadCapture(t *testing.T, scenario string) *transcript.Transcript {
	t.Helper()
	tr, err := transcript.ReadFile(filepath.Join(captures, "app-server-"+scenario+".jsonl"), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func schema(t *testing.T) *Schema {
	t.Helper()
	s, err := LoadSchema("0.169.0")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// findings runs the checks and returns the rule IDs found, sorted, with
// the findings for messages.
func findings(t *testing.T, tr *transcript.Transcript) ([]string, []finding.Finding) {
	t.Helper()
	var ids []string
	var fs []finding.Finding
	seen := map[string]bool{}
	CheckTranscript(tr, schema(t), func(f finding.Finding) {
		fs = append(fs, f)
		if !seen[f.Rule.ID] {
			seen[f.Rule.ID] = true
			ids = append(ids, f.Rule.ID)
		}
	})
	sort.Strings(ids)
	return ids, fs
}

// TestCapturesClean: every app-server capture of the real CLI passes every
// rule, with no drift.
func TestCapturesClean(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(captures, "app-server-*.jsonl"))
	if err != nil || len(files) < 9 {
		t.Fatalf("found %d app-server captures (%v)", len(files), err)
	}
	for _, f := range files {
		tr, err := transcript.ReadFile(f, transcript.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !IsTranscript(tr) {
			t.Errorf("%s: not recognised as an app-server transcript", f)
		}
		if ids, fs := findings(t, tr); len(ids) > 0 {
			t.Errorf("%s: %v: first %s", filepath.Base(f), ids, fs[0].String())
		}
	}
}

// index finds the first step whose text contains sub (out, err) or whose
// match has method sub (in).
func index(t *testing.T, tr *transcript.Transcript, op transcript.Op, sub string) int {
	t.Helper()
	for i, s := range tr.Steps {
		if s.Op != op {
			continue
		}
		if op == transcript.OpIn && s.Match != nil && s.Match["method"] == sub {
			return i
		}
		if op != transcript.OpIn && strings.Contains(s.Text, sub) {
			return i
		}
	}
	t.Fatalf("no %s step with %q", op, sub)
	return -1
}

func without(tr *transcript.Transcript, i int) *transcript.Transcript {
	c := *tr
	c.Steps = append(append([]transcript.Step(nil), tr.Steps[:i]...), tr.Steps[i+1:]...)
	return &c
}

func with(tr *transcript.Transcript, i int, st transcript.Step) *transcript.Transcript {
	c := *tr
	c.Steps = append(append(append([]transcript.Step(nil), tr.Steps[:i]...), st), tr.Steps[i:]...)
	return &c
}

func replaced(tr *transcript.Transcript, i int, text string) *transcript.Transcript {
	c := *tr
	c.Steps = append([]transcript.Step(nil), tr.Steps...)
	c.Steps[i].Text = text
	return &c
}

// TestRulesCatchBreakage: each rule fires on a capture broken in the way
// it names, and on nothing else.
func TestRulesCatchBreakage(t *testing.T) {
	single := loadCapture(t, "single-tool")
	accept := loadCapture(t, "approval-accept")
	out := func(text string) transcript.Step { return transcript.Step{Line: 999, Op: transcript.OpOut, Text: text} }
	cases := []struct {
		name string
		tr   func() *transcript.Transcript
		want string
	}{
		{"turn/completed dropped", func() *transcript.Transcript {
			return without(single, index(t, single, transcript.OpOut, `"method":"turn/completed"`))
		}, RuleTurnCompleted.ID},
		{"turn/completed twice", func() *transcript.Transcript {
			i := index(t, single, transcript.OpOut, `"method":"turn/completed"`)
			return with(single, i, single.Steps[i])
		}, RuleTurnOrder.ID},
		{"response to thread/start dropped", func() *transcript.Transcript {
			return without(single, index(t, single, transcript.OpOut, `"id":{{json:id2}}`))
		}, RuleRequestUnanswered.ID},
		{"response to thread/start twice", func() *transcript.Transcript {
			i := index(t, single, transcript.OpOut, `"id":{{json:id2}}`)
			return with(single, i, single.Steps[i])
		}, RuleResponseUnmatched.ID},
		{"approval never answered", func() *transcript.Transcript {
			for i, s := range accept.Steps {
				if s.Op == transcript.OpIn && s.Match["id"] != nil {
					return without(accept, i)
				}
			}
			t.Fatal("no answer step")
			return nil
		}, RuleServerRequestUnanswered.ID},
		{"approval id reused while pending", func() *transcript.Transcript {
			i := index(t, accept, transcript.OpOut, `"method":"item/commandExecution/requestApproval"`)
			return with(accept, i, accept.Steps[i])
		}, RuleIDReused.ID},
		{"turn status of the wrong type", func() *transcript.Transcript {
			i := index(t, single, transcript.OpOut, `"method":"turn/completed"`)
			return replaced(single, i, strings.Replace(single.Steps[i].Text, `"status":"completed"`, `"status":7`, 1))
		}, RuleSchema.ID},
		{"unknown method", func() *transcript.Transcript {
			i := index(t, single, transcript.OpOut, `"method":"turn/started"`)
			return with(single, i, out(`{"method":"turn/exploded","params":{}}`))
		}, RuleUnknownMethod.ID},
		{"not JSON", func() *transcript.Transcript {
			i := index(t, single, transcript.OpOut, `"method":"turn/started"`)
			return with(single, i, out(`{"method":"turn/star`))
		}, RuleMessage.ID},
		{"item of an unknown turn", func() *transcript.Transcript {
			i := index(t, single, transcript.OpOut, `"method":"turn/started"`)
			return with(single, i, out(`{"method":"item/started","params":{"threadId":"t","turnId":"nope","item":{"type":"userMessage","id":"u1","content":[]}}}`))
		}, RuleTurnOrder.ID},
		{"item never completed in a completed turn", func() *transcript.Transcript {
			i := index(t, single, transcript.OpOut, `"type":"commandExecution","id":"call_mock_002","pluginId":null,"scriptPath":null,"command":"/bin/bash -lc 'echo hi'","cwd":"/home/user/project","processId"`)
			j := i
			for k := i + 1; k < len(single.Steps); k++ {
				if strings.Contains(single.Steps[k].Text, `"method":"item/completed"`) && strings.Contains(single.Steps[k].Text, `"call_mock_002"`) {
					j = k
					break
				}
			}
			if j == i {
				t.Fatal("no item/completed of the command")
			}
			return without(single, j)
		}, RuleItemCompleted.ID},
		{"first request not initialize", func() *transcript.Transcript {
			return without(single, index(t, single, transcript.OpIn, "initialize"))
		}, RuleInitializeFirst.ID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ids, fs := findings(t, c.tr())
			found := false
			for _, id := range ids {
				found = found || id == c.want
			}
			if !found {
				t.Fatalf("want %s, got %v %v", c.want, ids, fs)
			}
			for _, f := range fs {
				if f.Line <= 0 || f.Message == "" {
					t.Errorf("finding without a place or a message: %+v", f)
				}
			}
		})
	}
}

// TestClientIDs: string and number ids pair the same way; the response
// echo is a JSON value either way.
func TestClientIDs(t *testing.T) {
	for _, id := range []string{`7`, `"req-7"`} {
		tr := &transcript.Transcript{Name: "x", Header: transcript.Header{CLI: "codex", Argv: []string{"codex", "app-server"}}, Steps: []transcript.Step{
			{Line: 2, Op: transcript.OpIn, Text: `{"id":` + id + `,"method":"initialize","params":{"clientInfo":{"name":"x","version":"1"}}}`},
			{Line: 3, Op: transcript.OpOut, Text: `{"id":` + id + `,"result":{"userAgent":"x","codexHome":"/h","platformFamily":"unix","platformOs":"linux"}}`},
			{Line: 4, Op: transcript.OpExit},
		}}
		if ids, fs := findings(t, tr); len(ids) > 0 {
			t.Errorf("id %s: %v %v", id, ids, fs)
		}
		steps, err := transcript.JSONRPCSteps(tr.Steps)
		if err != nil {
			t.Fatal(err)
		}
		if steps[1].Text != `{"id":{{json:id1}},"result":{"userAgent":"x","codexHome":"/h","platformFamily":"unix","platformOs":"linux"}}` {
			t.Errorf("id %s: templated %s", id, steps[1].Text)
		}
		vars := transcript.Vars{"id1": "req-7"}
		if got := vars.Fill(`{"id":{{json:id1}}}`); got != `{"id":"req-7"}` {
			t.Errorf("json template: %s", got)
		}
	}
}
