package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// serverStdout is the server's (or agent's) lines of process 1 of a
// committed capture, its client's ids filled in (N for {{json:idN}} and
// {{json:rpcN}}), up to its first exit (its main path), as a tee of the
// server's stdout holds them.
func serverStdout(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "captures", rel))
	if err != nil {
		t.Fatal(err)
	}
	ids := regexp.MustCompile(`\{\{json:(?:id|rpc)(\d+)\}\}`)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, `{"next_process"`) || strings.HasPrefix(l, `{"exit"`) {
			break
		}
		if !strings.HasPrefix(l, `{"out":"`) {
			continue
		}
		s := strings.TrimSuffix(l[len(`{"out":"`):strings.LastIndex(l, `","t":`)], `"`)
		s = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(s)
		out = append(out, ids.ReplaceAllString(s, "$1"))
	}
	return strings.Join(out, "\n") + "\n"
}

// TestValidateJSONRPC: no-path validate includes the ACP and app-server
// fixtures, clean under the observed profile; the spec profile reports
// the load order of Gemini CLI's load fixture; a teed stdout of either
// surface is judged as one side, and says what it could not judge.
func TestValidateJSONRPC(t *testing.T) {
	code, out, errs := runCmd(t, "", "validate", "-q")
	if code != 0 || !strings.Contains(out, "fixtures/acpfixtures/gemini/load.jsonl: acp transcript, observed profile") ||
		!strings.Contains(out, "fixtures/appserver/codex/app-server-approval-accept.jsonl") || !strings.Contains(out, "acp/session/history-after-load-response") {
		t.Errorf("no-path validate: exit %d\n%s%s", code, out, errs)
	}
	load := filepath.Join("..", "..", "fixtures", "acpfixtures", "gemini", "load.jsonl")
	if code, out, _ := runCmd(t, "", "validate", load); code != 0 {
		t.Errorf("load fixture, observed: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "", "validate", "--profile", "spec", load)
	if code != 1 || strings.Count(out, ": acp/session/history-before-load-response: ") != 4 || !strings.Contains(out, "spec profile") {
		t.Errorf("load fixture, spec: exit %d\n%s", code, out)
	}

	as := serverStdout(t, "codex/0.169.0/app-server-single-tool.jsonl")
	code, out, _ = runCmd(t, as, "validate", "-")
	if code != 0 || !strings.Contains(out, "the server's lines only") || !strings.Contains(out, "not judged without the other side: appserver/id-reused") {
		t.Errorf("app-server stdout: exit %d\n%s", code, out)
	}
	var kept []string
	for _, l := range strings.Split(as, "\n") {
		if !strings.Contains(l, `"method":"turn/completed"`) {
			kept = append(kept, l)
		}
	}
	code, out, _ = runCmd(t, strings.Join(kept, "\n"), "validate", "-")
	if code != 1 || !strings.Contains(out, "appserver/turn-completed") || !strings.Contains(out, "the log ends") || !strings.Contains(out, "expected turn/completed") {
		t.Errorf("app-server stdout without turn/completed: exit %d\n%s", code, out)
	}
	agent := serverStdout(t, "gemini/0.61.0/acp-cancel.jsonl")
	code, out, _ = runCmd(t, agent, "validate", "-")
	if code != 0 || !strings.Contains(out, "acp, observed profile (acp/0.11.3/schema.json), the agent's lines only") {
		t.Errorf("ACP stdout: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, strings.Replace(agent, `"stopReason":"end_turn"`, `"stopReason":"stopped"`, 1), "validate", "-")
	if code != 1 || !strings.Contains(out, "acp/prompt/stop-reason") || !strings.Contains(out, "at /result/stopReason") {
		t.Errorf("ACP stdout with a made-up stop reason: exit %d\n%s", code, out)
	}
}

// TestDriftJSONRPC: drift compares app-server and ACP captures with
// their fixtures: today's captures do not drift, an edited one does,
// and says how.
func TestDriftJSONRPC(t *testing.T) {
	dir := t.TempDir()
	for _, rel := range []string{"codex/0.169.0/app-server-interrupt.jsonl", "gemini/0.61.0/acp-permission-deny.jsonl"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "captures", rel))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	}
	code, out, errs := runCaptureCmd(t, "drift", "--captures", dir)
	if code != exitOK || !strings.Contains(out, "codex/app-server-interrupt 0.169.0 vs fixture codex/app-server-interrupt (captured 0.169.0): no drift") ||
		!strings.Contains(out, "gemini/acp-permission-deny 0.61.0 vs fixture acp/gemini/permission (captured 0.61.0): no drift") || strings.Contains(out, "validated only") {
		t.Errorf("today's captures: exit %d\n%s%s", code, out, errs)
	}
	p := filepath.Join(dir, "codex", "0.169.0", "app-server-interrupt.jsonl")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), `\"status\":\"interrupted\"`, `\"status\":\"failed\"`, 1)), 0o644)
	code, out, _ = runCaptureCmd(t, "drift", "--captures", dir)
	if code != exitFindings || !strings.Contains(out, "codex/app-server-interrupt 0.169.0 vs fixture codex/app-server-interrupt (captured 0.169.0): DRIFT") ||
		!strings.Contains(out, "server notification turn/completed (interrupted) -> server notification turn/completed (failed)") {
		t.Errorf("an interrupted turn that fails: exit %d\n%s", code, out)
	}
}
