package conformance

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// acpClient runs conformance/testdata/acpclient/client.py in mode.
func acpClient(t *testing.T, mode string) Adapter {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	script, err := filepath.Abs("testdata/acpclient/client.py")
	if err != nil {
		t.Fatal(err)
	}
	return Adapter{Name: "acpclient-" + mode, Command: func(ctx context.Context) *exec.Cmd {
		return exec.CommandContext(ctx, py, script, mode)
	}}
}

// acpClientCaseList is every case of gemini --acp clients, or those ids.
func acpClientCaseList(t *testing.T, ids ...string) []*Case {
	t.Helper()
	all, err := Generate([]string{AgentGeminiACP})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		return all
	}
	var out []*Case
	for _, id := range ids {
		i := slices.IndexFunc(all, func(c *Case) bool { return c.ID == id })
		if i < 0 {
			t.Fatalf("no case %q", id)
		}
		out = append(out, all[i])
	}
	return out
}

// TestACPClientCases: the cases exist for a client of gemini --acp only,
// every ACP fixture has one, and the checks of the JSONL streams and of
// ACP agents leave them alone.
func TestACPClientCases(t *testing.T) {
	cases := acpClientCaseList(t)
	var ids []string
	for _, c := range cases {
		if c.Agent != AgentGeminiACP {
			t.Errorf("%s: agent %s", c.ID, c.Agent)
		}
		ids = append(ids, c.ID)
	}
	for _, want := range []string{"gemini-acp/plain-text", "gemini-acp/single-tool", "gemini-acp/multi-tool", "gemini-acp/tool-error",
		"gemini-acp/permission", "gemini-acp/permission/policy-deny", "gemini-acp/permission/request-after-cancel", "gemini-acp/cancel",
		"gemini-acp/multi-turn", "gemini-acp/load", "gemini-acp/load/unknown-session", "gemini-acp/fs", "gemini-acp/unicode",
		"gemini-acp/unicode/split-characters", "gemini-acp/api-error-429", "gemini-acp/api-error-500",
		"gemini-acp/single-tool/killed", "gemini-acp/single-tool/exit-mid-line", "gemini-acp/single-tool/stall",
		"gemini-acp/single-tool/prompt-unanswered", "gemini-acp/single-tool/answer-twice", "gemini-acp/single-tool/unknown-update",
		"gemini-acp/single-tool/unknown-field", "gemini-acp/single-tool/unknown-method", "gemini-acp/single-tool/unknown-request",
		"gemini-acp/single-tool/cancel-while-running", "gemini-acp/single-tool/slicer"} {
		if !slices.Contains(ids, want) {
			t.Errorf("no case %s in %v", want, ids)
		}
	}
	byID := map[string]*Case{}
	for _, c := range cases {
		byID[c.ID] = c
	}
	if c := byID["gemini-acp/load"]; c.Resume != "656c3185-97a6-4fc8-9a03-61a242922d82" || !slices.Equal(c.Prompts, []string{"What did we run before?"}) {
		t.Errorf("load: resume %q, prompts %q", c.Resume, c.Prompts)
	}
	if c := byID["gemini-acp/multi-turn"]; len(c.Prompts) != 2 {
		t.Errorf("multi-turn: prompts %q", c.Prompts)
	}
	if c := byID["gemini-acp/cancel"]; c.Interrupt == nil || c.Interrupt.AfterEvents != 5 || !c.Interrupt.ThenTurn || len(c.Prompts) != 1 {
		t.Errorf("cancel: interrupt %+v, prompts %q", c.Interrupt, c.Prompts)
	}
	others, err := Generate([]string{"gemini"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range others {
		if c.Agent == AgentGeminiACP {
			t.Fatalf("a gemini -p adapter gets case %s", c.ID)
		}
	}
	if got := appServerSkip(CheckACPClientTurns, others[0]); got == "" {
		t.Error("an ACP client check applies to a gemini case")
	}
	if got := appServerSkip(CheckACPClientTurns, cases[0]); got != "" {
		t.Errorf("an ACP client check skips an ACP client case: %s", got)
	}
	for _, id := range []string{"acp/protocol", "lossless/text", "invocation/flags", "lifecycle/app-server-turns"} {
		chk := byCheckID(t, id)
		if got := appServerSkip(chk, cases[0]); got == "" {
			t.Errorf("%s judges an ACP client case", id)
		}
	}
	for _, id := range acpClientGeneric {
		if got := appServerSkip(byCheckID(t, id), cases[0]); got != "" {
			t.Errorf("%s skips an ACP client case: %s", id, got)
		}
	}
}

func byCheckID(t *testing.T, id string) *Check {
	t.Helper()
	for _, c := range Catalog() {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s", id)
	return nil
}

// TestACPClients: a correct client passes every case of gemini --acp
// clients; each client with one planted bug fails exactly the checks that
// name it.
func TestACPClients(t *testing.T) {
	t.Parallel()
	each := func(cases []string, v Verdict, checks ...string) map[string]Verdict {
		m := map[string]Verdict{}
		for _, c := range cases {
			for _, chk := range checks {
				m[c+" "+chk] = v
			}
		}
		return m
	}
	const (
		plain    = "gemini-acp/plain-text"
		single   = "gemini-acp/single-tool"
		cancel   = "gemini-acp/cancel"
		running  = "gemini-acp/single-tool/cancel-while-running"
		allow    = "gemini-acp/permission"
		deny     = "gemini-acp/permission/policy-deny"
		crossing = "gemini-acp/permission/request-after-cancel"
		fs       = "gemini-acp/fs"
		unknown  = "gemini-acp/single-tool/unknown-request"
		twice    = "gemini-acp/single-tool/answer-twice"
		update   = "gemini-acp/single-tool/unknown-update"
		killed   = "gemini-acp/single-tool/killed"
		midLine  = "gemini-acp/single-tool/exit-mid-line"
		stall    = "gemini-acp/single-tool/stall"
		never    = "gemini-acp/single-tool/prompt-unanswered"
		split    = "gemini-acp/unicode/split-characters"
		unicode  = "gemini-acp/unicode"
		apiErr   = "gemini-acp/api-error-429"
		load     = "gemini-acp/load"
	)
	runs := []struct {
		mode  string
		cases []string // nil: every case
		want  map[string]Verdict
	}{
		{"correct", nil, map[string]Verdict{}},
		{"cancel-ok", []string{cancel, running, plain}, each([]string{cancel, running}, Fail, "lifecycle/acp-client-turns")},
		{"end-twice", []string{twice, single}, each([]string{twice}, Fail, "lifecycle/acp-client-turns")},
		{"eof-ok", []string{killed, midLine, stall, never, apiErr, plain}, each([]string{killed, midLine, stall, never}, Fail, "lifecycle/acp-client-reports-failure")},
		{"kill-to-interrupt", []string{cancel, running}, each([]string{cancel, running}, Fail, "interrupt/acp-client-cancel")},
		{"approve-always", []string{allow, deny, crossing}, each([]string{deny, crossing}, Fail, "control/acp-client-permission")},
		// Gemini asks a client without the fs capability no fs request
		// (acp-fs-nofs): on gemini-acp/fs it writes itself, after asking
		// permission. A new request method is what this bug meets.
		{"ok-to-everything", []string{fs, unknown, allow}, each([]string{unknown}, Fail, "control/acp-client-agent-requests")},
		{"mcp-habit", []string{plain, load}, each([]string{plain, load}, Fail, "output/acp-client-protocol")},
		{"decode-per-read", []string{split, unicode}, each([]string{split}, Fail, "lossless/acp-client-text")},
		{"strict-ids", []string{twice, single}, each([]string{twice}, Crash, "output/records")},
		{"strict-updates", []string{update, single}, each([]string{update}, Crash, "output/records")},
		{"leak", []string{plain}, each([]string{plain}, Fail, "lifecycle/reaps-cli", "lifecycle/no-stray-process")},
	}
	type outcome struct {
		res *Results
		err error
		ids []string
	}
	outs := make([]outcome, len(runs))
	var wg sync.WaitGroup
	// A few runs at a time: each starts its client (and the runner's
	// probe of it) on a shared 2-core machine.
	slots := make(chan struct{}, 3)
	pool := NewPool(0) // their cases share the machine's slots
	for i, r := range runs {
		cases := acpClientCaseList(t, r.cases...)
		for _, c := range cases {
			outs[i].ids = append(outs[i].ids, c.ID)
		}
		sort.Strings(outs[i].ids)
		ad := acpClient(t, r.mode)
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			outs[i].res, outs[i].err = Run(context.Background(), Config{Adapter: ad, Cases: cases, Jobs: 2, Pool: pool, WorkDir: t.TempDir()})
		}()
	}
	wg.Wait()
	for i, r := range runs {
		t.Run(r.mode, func(t *testing.T) {
			o := outs[i]
			if o.err != nil {
				t.Fatalf("Run: %v", o.err)
			}
			var ran []string
			for _, c := range o.res.Cases {
				ran = append(ran, c.ID)
			}
			if d := cmp.Diff(o.ids, ran); d != "" {
				t.Fatalf("cases run (-want +got):\n%s", d)
			}
			if d := cmp.Diff(r.want, findings(o.res)); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", d, details(o.res, r.want))
			}
		})
	}
}
