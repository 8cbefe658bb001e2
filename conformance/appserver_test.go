package conformance

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// appServerClient runs conformance/testdata/appserver/client.py in mode.
func appServerClient(t *testing.T, mode string) Adapter {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	script, err := filepath.Abs("testdata/appserver/client.py")
	if err != nil {
		t.Fatal(err)
	}
	return Adapter{Name: "appserver-" + mode, Command: func(ctx context.Context) *exec.Cmd {
		return exec.CommandContext(ctx, py, script, mode)
	}}
}

// appServerCaseList is every app-server case, by ID.
func appServerCaseList(t *testing.T, ids ...string) []*Case {
	t.Helper()
	all, err := Generate([]string{AgentAppServer})
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

// TestAppServerCases: the cases exist for an app-server client only, and
// the checks of the JSONL streams leave them alone.
func TestAppServerCases(t *testing.T) {
	cases := appServerCaseList(t)
	var ids []string
	for _, c := range cases {
		if c.Agent != AgentAppServer {
			t.Errorf("%s: agent %s", c.ID, c.Agent)
		}
		ids = append(ids, c.ID)
	}
	for _, want := range []string{"codex-app-server/plain-text", "codex-app-server/interrupt", "codex-app-server/approval-accept/policy-deny",
		"codex-app-server/multi-turn", "codex-app-server/unicode/split-characters", "codex-app-server/single-tool/answer-twice",
		"codex-app-server/resume", "codex-app-server/plain-text/resume-unknown", "codex-app-server/resume/killed-then-turn"} {
		if !slices.Contains(ids, want) {
			t.Errorf("no case %s in %v", want, ids)
		}
	}
	others, err := Generate([]string{"codex"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range others {
		if c.Agent == AgentAppServer {
			t.Fatalf("an exec adapter gets app-server case %s", c.ID)
		}
	}
	if got := appServerSkip(CheckAppServerTurns, others[0]); got == "" {
		t.Error("an app-server check applies to a codex exec case")
	}
	if got := appServerSkip(CheckAppServerTurns, cases[0]); got != "" {
		t.Errorf("an app-server check skips an app-server case: %s", got)
	}
}

// TestAppServerClients: a correct client passes every app-server case;
// each client with one planted bug fails exactly the checks that name it.
func TestAppServerClients(t *testing.T) {
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
		plain  = "codex-app-server/plain-text"
		single = "codex-app-server/single-tool"
		intr   = "codex-app-server/interrupt"
		accept = "codex-app-server/approval-accept"
		deny   = "codex-app-server/approval-accept/policy-deny"
		multi  = "codex-app-server/multi-turn"
		split  = "codex-app-server/unicode/split-characters"
		twice  = "codex-app-server/single-tool/answer-twice"
		method = "codex-app-server/single-tool/unknown-method"
		killed = "codex-app-server/single-tool/killed"
		apiErr = "codex-app-server/api-error"
		intr2  = "codex-app-server/single-tool/interrupt-while-running"
		files  = "codex-app-server/approval-file-change"
		resume = "codex-app-server/resume"
		gone   = "codex-app-server/plain-text/resume-unknown"
		again  = "codex-app-server/resume/killed-then-turn"
	)
	runs := []struct {
		mode  string
		cases []string // nil: every app-server case
		want  map[string]Verdict
	}{
		{"correct", nil, map[string]Verdict{}},
		{"no-initialize", []string{plain}, each([]string{plain}, Fail, "output/app-server-requests", "lifecycle/reports-success")},
		{"status-ignored", []string{intr, intr2, plain, apiErr}, merge(each([]string{intr, intr2}, Fail, "lifecycle/app-server-turns"),
			each([]string{apiErr}, Fail, "lifecycle/app-server-turns", "lifecycle/app-server-reports-failure"))},
		{"kill-to-interrupt", []string{intr, intr2}, each([]string{intr, intr2}, Fail, "interrupt/app-server-turn-interrupt")},
		{"approve-always", []string{accept, deny}, each([]string{deny}, Fail, "control/app-server-approval")},
		// Under the server's default policy the real Codex asks no
		// approval for the command: the fake's does, and is not judged.
		{"default-policy", []string{accept, deny}, map[string]Verdict{}},
		{"approve-twice", []string{accept, files}, each([]string{accept, files}, Fail, "control/app-server-approval", "output/app-server-requests")},
		{"decode-per-read", []string{split, plain}, each([]string{split}, Fail, "lossless/app-server-text")},
		{"strict-ids", []string{twice, single}, each([]string{twice}, Crash, "output/records")},
		{"strict-methods", []string{method, single}, each([]string{method}, Crash, "output/records")},
		{"leak", []string{plain}, merge(each([]string{plain}, Fail, "lifecycle/reaps-cli", "lifecycle/no-stray-process"))},
		{"end-on-response", []string{multi, killed}, merge(each([]string{multi}, Fail, "lossless/app-server-text"),
			each([]string{killed}, Fail, "lifecycle/app-server-reports-failure"))},
		{"resume-new-thread", []string{resume, gone}, merge(each([]string{resume, gone}, Fail, "invocation/app-server-resume"),
			each([]string{gone}, Fail, "lifecycle/app-server-reports-failure"))},
		{"resume-fallback", []string{resume, gone}, each([]string{gone}, Fail, "invocation/app-server-resume", "lifecycle/app-server-reports-failure")},
		{"resume-silent", []string{resume, gone}, each([]string{gone}, Fail, "invocation/app-server-resume")},
		{"no-restart", []string{again, multi}, each([]string{again}, NonStrict, "lifecycle/app-server-restarts")},
		{"restart-new-thread", []string{again, multi}, merge(each([]string{again}, NonStrict, "lifecycle/app-server-restarts"),
			// The new thread shows in the unified events too: their
			// sessionId changes in mid-session.
			each([]string{again}, Fail, "lifecycle/app-server-same-thread", "output/valid"))},
	}
	type outcome struct {
		res *Results
		err error
		ids []string
	}
	outs := make([]outcome, len(runs))
	var wg sync.WaitGroup
	// A few runs at a time: each starts its client (and the runner's
	// probe of it, which has 10 s) on a shared 2-core machine.
	slots := make(chan struct{}, 3)
	pool := NewPool(0) // their cases share the machine's slots
	for i, r := range runs {
		cases := appServerCaseList(t, r.cases...)
		for _, c := range cases {
			outs[i].ids = append(outs[i].ids, c.ID)
		}
		sort.Strings(outs[i].ids)
		ad := appServerClient(t, r.mode)
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
			if r.mode == "default-policy" {
				for _, c := range o.res.Cases {
					for _, ch := range c.Checks {
						if ch.Check == "control/app-server-approval" && (ch.Verdict != Skip || !strings.Contains(ch.Actual, "approvalPolicy unset")) {
							t.Errorf("%s %s: %s (%s), want SKIP: under the default policy the real server asks no approval", c.ID, ch.Check, ch.Verdict, ch.Actual)
						}
					}
				}
			}
		})
	}
}
