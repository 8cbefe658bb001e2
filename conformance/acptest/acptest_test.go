// Package acptest proves the checks of the acp family (and the acp
// profile's editor) on a small ACP agent with planted bugs
// (testdata/gemini_acp_agent.py): the correct agent passes every check,
// each bug fails the check that names it.
package acptest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/acp/editor"
	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/fakecli"
)

// TestMain lets the test binary act as the fake CLIs and as the editor.
func TestMain(m *testing.M) {
	editor.ServeIfAsked("test")
	fakecli.Main(m)
}

// agentAdapter is the editor in front of the test agent with bugs.
func agentAdapter(t *testing.T, bugs string) conformance.Adapter {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "gemini_acp_agent.py"))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	agent := py + " " + script
	if bugs != "" {
		agent += " --bug " + bugs
	}
	argv := editor.Argv(exe, agent)
	return conformance.Adapter{Name: "gemini_acp_agent " + bugs, Profile: "acp", Command: func(ctx context.Context) *exec.Cmd {
		return exec.CommandContext(ctx, argv[0], argv[1:]...)
	}}
}

// verdicts runs the cases and returns "case check" -> verdict for every
// check of the acp family that did not pass or skip, and every failed
// check of the other families.
func verdicts(t *testing.T, a conformance.Adapter, cases ...string) (acpNotPass, otherFailed map[string]conformance.Verdict, acpPassed map[string]bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := conformance.Run(ctx, conformance.Config{Adapter: a, Match: cases, Jobs: 2, Timeout: 40 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != len(cases) {
		t.Fatalf("ran %d cases, want %d", len(res.Cases), len(cases))
	}
	acpNotPass, otherFailed, acpPassed = map[string]conformance.Verdict{}, map[string]conformance.Verdict{}, map[string]bool{}
	for _, c := range res.Cases {
		for _, k := range c.Checks {
			key := c.ID + " " + k.Check
			switch {
			case k.Family == conformance.FamilyACP && k.Verdict == conformance.Pass:
				acpPassed[k.Check] = true
			case k.Family == conformance.FamilyACP && k.Verdict != conformance.Skip:
				acpNotPass[key] = k.Verdict
				t.Logf("%s: %s: %s", key, k.Verdict, k.Actual)
			case k.Verdict.Failed(false):
				otherFailed[key] = k.Verdict
				t.Logf("%s: %s: %s", key, k.Verdict, k.Actual)
			}
		}
	}
	return acpNotPass, otherFailed, acpPassed
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cases shows every check of the acp family on the correct agent.
var cases = []string{
	"gemini/single-tool", "gemini/multi-turn", "gemini/interrupt", "gemini/api-error-401",
	"gemini/unicode/split-characters", "gemini/single-tool/stall", "gemini/single-tool/exit-mid-line",
}

// TestCorrectAgentPasses: the correct agent passes every check, and each
// check of the acp family judged it (PASS) somewhere.
func TestCorrectAgentPasses(t *testing.T) {
	acpNotPass, other, passed := verdicts(t, agentAdapter(t, ""), cases...)
	if len(acpNotPass) > 0 || len(other) > 0 {
		t.Errorf("the correct agent failed %v %v", keys(acpNotPass), keys(other))
	}
	for _, c := range conformance.Catalog() {
		if c.Family == conformance.FamilyACP && !passed[c.ID] {
			t.Errorf("%s never judged the correct agent (always SKIP)", c.ID)
		}
	}
}

// TestBrokenAgentsFail: each planted bug fails exactly the checks of the
// acp family that name it, on the cases that show it.
func TestBrokenAgentsFail(t *testing.T) {
	for _, tc := range []struct {
		bug   string
		cases []string
		want  []string // "case check" of the acp family that must FAIL, and nothing else of it
	}{
		{"end-turn-after-cancel", []string{"gemini/interrupt", "gemini/single-tool"},
			// The tool the cancel stopped is left running in a turn that
			// claims it ended normally.
			[]string{"gemini/interrupt acp/cancelled", "gemini/interrupt acp/tool-final"}},
		{"pending-tool", []string{"gemini/single-tool", "gemini/plain-text"},
			[]string{"gemini/single-tool acp/tool-final"}},
		{"empty-success", []string{"gemini/api-error-401", "gemini/single-tool/exit-mid-line", "gemini/single-tool"},
			[]string{"gemini/api-error-401 acp/failure-reported", "gemini/single-tool/exit-mid-line acp/failure-reported"}},
		{"decode-per-read", []string{"gemini/unicode/split-characters", "gemini/single-tool"},
			[]string{"gemini/unicode/split-characters acp/text"}},
		{"no-response", []string{"gemini/single-tool/exit-mid-line"},
			[]string{"gemini/single-tool/exit-mid-line acp/prompt-answered"}},
		{"double-response", []string{"gemini/single-tool"},
			[]string{"gemini/single-tool acp/prompt-answered"}},
		{"bad-update", []string{"gemini/single-tool"},
			[]string{"gemini/single-tool acp/protocol"}},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			acpNotPass, _, _ := verdicts(t, agentAdapter(t, tc.bug), tc.cases...)
			got := keys(acpNotPass)
			for _, k := range got {
				if acpNotPass[k] != conformance.Fail {
					t.Errorf("%s: %s, want FAIL", k, acpNotPass[k])
				}
			}
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("acp checks not passing:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestLeakedCLIFails: an agent that exits at its stdin's end and leaves
// its CLI running fails lifecycle/reaps-cli (the runner's leftovers).
func TestLeakedCLIFails(t *testing.T) {
	_, other, _ := verdicts(t, agentAdapter(t, "leak-cli"), "gemini/single-tool/stall")
	if other["gemini/single-tool/stall lifecycle/reaps-cli"] != conformance.Fail {
		t.Errorf("lifecycle/reaps-cli did not fail: %v", other)
	}
}

// TestCancelBeforeTheCLIStarts: a session/cancel that reaches the test
// agent before its CLI has started still ends the prompt cancelled. The
// agent once signalled only a CLI it had already started and dropped an
// earlier cancel: the CLI then ran its turn to end_turn (the fuzzer found
// it on a loaded runner). Here the "CLI" takes a second to start.
func TestCancelBeforeTheCLIStarts(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	slow := filepath.Join(dir, "gemini")
	// A CLI slow to start that would then complete its turn.
	script := "#!/bin/sh\nsleep 1\necho '{\"type\":\"result\",\"status\":\"success\",\"stats\":{}}'\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "gemini_acp_agent.py"))
	cmd.Env = append(os.Environ(), "GEMINI_EXECUTABLE="+slow)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(want string) string {
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the agent ended before %s", want)
				}
				if strings.Contains(l, want) {
					return l
				}
			case <-ctx.Done():
				t.Fatalf("no %s from the agent", want)
			}
		}
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`+"\n")
	var sid struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(next(`"id": 1`)), &sid); err != nil || sid.Result.SessionID == "" {
		t.Fatalf("session/new: %v", err)
	}
	// The cancel goes right behind the prompt: it reaches the agent while
	// the prompt's thread is still starting the CLI.
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"`+sid.Result.SessionID+`","prompt":[{"type":"text","text":"hi"}]}}`+"\n"+
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid.Result.SessionID+`"}}`+"\n")
	if got := next(`"id": 2`); !strings.Contains(got, `"cancelled"`) {
		t.Errorf("the prompt cancelled before its CLI started was answered %s; want stopReason cancelled", got)
	}
}
