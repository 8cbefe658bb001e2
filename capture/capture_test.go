package capture

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/transcript"
)

// urlRE finds URLs in configuration text.
var urlRE = regexp.MustCompile(`[a-z]+://[^\s"',]+`)

// TestSandboxStaysOffline checks the configuration every CLI runs with:
// the mock on loopback is its only model API, telemetry, update checks and
// error reporting are off, proxies lead to a trap on loopback, nothing of
// the caller's environment (credentials, proxies) is inherited, and every
// directory the CLI writes to is inside the throwaway sandbox.
func TestSandboxStaysOffline(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-real-key-of-the-caller")
	t.Setenv("OPENAI_API_KEY", "sk-real-key-of-the-caller")
	t.Setenv("HTTPS_PROXY", "http://proxy.example.com:3128")
	const mockURL, trapURL = "http://127.0.0.1:40001", "http://127.0.0.1:40002"
	required := map[string][]string{
		"claude": {"ANTHROPIC_BASE_URL=" + mockURL, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1",
			"DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1", "CLAUDE_CODE_ENABLE_TELEMETRY=0"},
		"codex":  {"OPENAI_API_KEY=" + mockOpenAIKey},
		"gemini": {"GOOGLE_GEMINI_BASE_URL=" + mockURL, "GEMINI_API_KEY=" + mockGeminiKey, "GEMINI_TELEMETRY_ENABLED=false"},
	}
	configs := map[string]map[string][]string{
		"codex": {".codex/config.toml": {`model_provider = "mock"`, `check_for_update_on_startup = false`,
			"[analytics]\nenabled = false", `exporter = "none"`, "plugins = false", "remote_plugin = false", "apps = false",
			`base_url = "` + mockURL + `/v1"`, `wire_api = "responses"`}},
		"gemini": {".gemini/settings.json": {`"enableAutoUpdate": false`, `"enableAutoUpdateNotification": false`,
			`"usageStatisticsEnabled": false`, "\"telemetry\": {\n    \"enabled\": false", `"selectedType": "gemini-api-key"`}},
		"claude": {".claude/settings.json": {`"DISABLE_TELEMETRY": "1"`, `"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"`}},
	}
	for _, cli := range CLIs {
		root := t.TempDir()
		sb, err := newSandbox(root, sandboxOptions{cli: cli, mockURL: mockURL, trapURL: trapURL, path: "/usr/bin:/bin"})
		if err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		for _, kv := range sb.Env {
			k, v, _ := strings.Cut(kv, "=")
			if _, dup := env[k]; dup {
				t.Errorf("%s: %s set twice", cli, k)
			}
			env[k] = v
		}
		for _, kv := range required[cli] {
			k, v, _ := strings.Cut(kv, "=")
			if env[k] != v {
				t.Errorf("%s: %s=%q, want %q", cli, k, env[k], v)
			}
		}
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
			if env[k] != trapURL {
				t.Errorf("%s: %s=%q, want the trap %s", cli, k, env[k], trapURL)
			}
		}
		if env["NO_PROXY"] != "127.0.0.1,localhost" || env["no_proxy"] != "127.0.0.1,localhost" {
			t.Errorf("%s: NO_PROXY=%q no_proxy=%q exempt more than loopback", cli, env["NO_PROXY"], env["no_proxy"])
		}
		for k, v := range env {
			if strings.Contains(v, "real-key-of-the-caller") || strings.Contains(v, "proxy.example.com") {
				t.Errorf("%s: %s inherits the caller's %q", cli, k, v)
			}
			if strings.HasSuffix(k, "_HOME") || strings.HasPrefix(k, "XDG_") || k == "HOME" || k == "TMPDIR" || k == "CLAUDE_CONFIG_DIR" {
				if !strings.HasPrefix(v, root+string(filepath.Separator)) {
					t.Errorf("%s: %s=%s is outside the sandbox", cli, k, v)
				}
			}
			checkLoopback(t, cli+" env "+k, v)
		}
		for rel, wants := range configs[cli] {
			content, ok := sb.Files[rel]
			if !ok {
				t.Errorf("%s: no %s written", cli, rel)
				continue
			}
			if b, err := os.ReadFile(filepath.Join(sb.Home, rel)); err != nil || string(b) != content {
				t.Errorf("%s: %s on disk differs from what was recorded (%v)", cli, rel, err)
			}
			for _, w := range wants {
				if !strings.Contains(content, w) {
					t.Errorf("%s: %s lacks %q:\n%s", cli, rel, w, content)
				}
			}
			checkLoopback(t, cli+" "+rel, content)
		}
		if sb.Project != filepath.Join(sb.Home, "project") {
			t.Errorf("%s: project %s is not home/project", cli, sb.Project)
		}
	}
}

// checkLoopback fails for every URL in text whose host is not loopback.
func checkLoopback(t *testing.T, where, text string) {
	t.Helper()
	for _, raw := range urlRE.FindAllString(text, -1) {
		u, err := url.Parse(raw)
		if err != nil {
			t.Errorf("%s: unparsable URL %q", where, raw)
			continue
		}
		if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
			t.Errorf("%s: %s points outside loopback", where, raw)
		}
	}
}

func TestTrapRecordsAndRefuses(t *testing.T) {
	tr, err := startTrap()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	proxy, _ := url.Parse(tr.url)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}, Timeout: 5 * time.Second}
	resp, err := client.Get("http://telemetry.example.invalid/v1/events")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("the trap answered %d, want 403", resp.StatusCode)
		}
	}
	if _, err := client.Get("https://update.example.invalid/latest"); err == nil {
		t.Error("an HTTPS CONNECT through the trap succeeded")
	}
	hits := strings.Join(tr.hits(), "\n")
	if !strings.Contains(hits, "GET http://telemetry.example.invalid/v1/events") || !strings.Contains(hits, "CONNECT update.example.invalid:443") {
		t.Errorf("trap hits:\n%s", hits)
	}
}

func TestStraceLeaks(t *testing.T) {
	log := `101 connect(3, {sa_family=AF_INET, sin_port=htons(40001), sin_addr=inet_addr("127.0.0.1")}, 16) = 0
101 connect(4, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file or directory)
102 connect(5, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2606:4700::6810:1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH
102 connect(6, {sa_family=AF_INET6, sin6_port=htons(40001), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0
103 connect(7, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("8.8.8.8")}, 16) = 0
103 connect(8, {sa_family=AF_UNSPEC, sa_data="\0\0\0\0\0\0\0\0\0\0\0\0\0\0"}, 16) = 0
`
	p := filepath.Join(t.TempDir(), "strace.txt")
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	leaks, err := straceLeaks(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"connect(2) to 2606:4700::6810:1:443 (AF_INET6)", "connect(2) to 8.8.8.8:53 (AF_INET)"}
	if strings.Join(leaks, "|") != strings.Join(want, "|") {
		t.Errorf("leaks %q, want %q", leaks, want)
	}
}

func TestScenarios(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Scenarios() {
		if seen[s.Name] {
			t.Errorf("scenario %s twice", s.Name)
		}
		seen[s.Name] = true
		n := 0
		for _, cli := range CLIs {
			p := s.plan(cli)
			if p == nil {
				continue
			}
			n++
			if d := p.description; d == "" || strings.Contains(d, "\n") || !strings.HasSuffix(d, ".") {
				t.Errorf("%s/%s: description %q is not one sentence", cli, s.Name, d)
			}
			if len(p.procs)+len(p.appServer) == 0 || len(p.script.Turns) == 0 {
				t.Errorf("%s/%s: no process or no script", cli, s.Name)
			}
			for i, pr := range p.procs {
				if pr.stdin == stdinJSON && (cli != "claude" || len(pr.turns) == 0) {
					t.Errorf("%s/%s: process %d writes stream-json without turns", cli, s.Name, i+1)
				}
				if cli == "codex" && pr.stdin != stdinClosed {
					t.Errorf("%s/%s: codex reads stdin to EOF; process %d must get a closed stdin", cli, s.Name, i+1)
				}
				if pr.acp != nil && (pr.stdin != stdinRPC || cli != "gemini" || i > 0 && !pr.acp.load) {
					t.Errorf("%s/%s: process %d: an ACP session is Gemini's, on a JSON-RPC stdin, and a second process loads the first one's session", cli, s.Name, i+1)
				}
				if i > 0 && pr.acp == nil && !strings.Contains(strings.Join(pr.args, " "), "{{session}}") {
					t.Errorf("%s/%s: process %d does not resume the session", cli, s.Name, i+1)
				}
			}
		}
		if n == 0 {
			t.Errorf("scenario %s applies to no CLI", s.Name)
		}
		if s.Compliance && n != len(CLIs) {
			t.Errorf("compliance scenario %s misses a CLI", s.Name)
		}
	}
	if got := strings.Join(Compliance(), ","); got != "plain-text,single-tool,multi-tool,tool-error,interrupt" {
		t.Errorf("compliance scenarios %s", got)
	}
	sel, err := Select([]string{"compliance,long-output"})
	if err != nil || len(sel) != 6 {
		t.Errorf("Select(compliance,long-output) = %d scenarios, %v", len(sel), err)
	}
	if _, err := Select([]string{"no-such"}); err == nil || !strings.Contains(err.Error(), "no-such") {
		t.Errorf("Select(no-such) = %v", err)
	}
}

// fakeCodex stands in for codex exec --json: it reads stdin to EOF, runs
// a 3 s "command" and exits 1 on SIGINT while it runs, as Codex does. It
// echoes its working directory and key so the test sees them redacted.
const fakeCodex = `#!/bin/sh
cat >/dev/null
echo '{"type":"thread.started","thread_id":"0199a000-0000-7000-8000-000000000001"}'
echo '{"type":"turn.started"}'
echo "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"in $PWD with $OPENAI_API_KEY\"}}"
echo '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"sleep","aggregated_output":"","exit_code":null,"status":"in_progress"}}'
trap 'exit 1' INT
sleep 3 &
wait $!
echo '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"sleep","aggregated_output":"","exit_code":0,"status":"completed"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}'
`

// fakeClaude stands in for claude in stream-json mode: it answers
// initialize, opens a turn with a tool call that needs permission, and
// reports the permission answer it got in the tool result.
const fakeClaude = `#!/bin/bash
sid=11111111-2222-3333-4444-555555555555
while IFS= read -r line; do
  case "$line" in
  *'"subtype":"initialize"'*)
    id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
    echo "{\"type\":\"control_response\",\"response\":{\"subtype\":\"success\",\"request_id\":\"$id\",\"response\":{}}}" ;;
  *'"type":"user"'*)
    echo "{\"type\":\"system\",\"subtype\":\"init\",\"cwd\":\"$PWD\",\"session_id\":\"$sid\"}"
    echo "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{}}]},\"session_id\":\"$sid\"}"
    echo '{"type":"control_request","request_id":"perm-1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"touch x"},"tool_use_id":"toolu_1"}}' ;;
  *'"type":"control_response"'*)
    b=deny; case "$line" in *'"behavior":"allow"'*) b=allow;; esac
    echo "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":\"answered $b\"}]},\"session_id\":\"$sid\"}"
    echo "{\"type\":\"result\",\"subtype\":\"success\",\"session_id\":\"$sid\"}" ;;
  esac
done
exit 0
`

func fakeBinary(t *testing.T, cli, script string) *Binary {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake CLIs are shell scripts")
	}
	p := filepath.Join(t.TempDir(), cli)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Binary{CLI: cli, Path: p, Version: "9.9.9", Source: "flag"}
}

func scenario(t *testing.T, name string) Scenario {
	t.Helper()
	s, err := Select([]string{name})
	if err != nil || len(s) != 1 {
		t.Fatalf("scenario %s: %v", name, err)
	}
	return s[0]
}

// TestCaptureInterruptBranches drives a fake Codex through the interrupt
// scenario: one run left alone is the main path, one run interrupted by
// SIGINT is the on_signal branch.
func TestCaptureInterruptBranches(t *testing.T) {
	bin := fakeBinary(t, "codex", fakeCodex)
	o := Options{WorkDir: t.TempDir(), InterruptDelay: 200 * time.Millisecond, ExitGrace: 5 * time.Second, Timeout: 30 * time.Second}
	res, err := Capture(context.Background(), bin, scenario(t, "interrupt"), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Processes) != 2 || res.Processes[0].Exit != 0 || res.Processes[1].Exit != 1 || res.Processes[1].Interrupt != "SIGINT" {
		t.Fatalf("processes %+v", res.Processes)
	}
	h := res.Transcript.Header
	if h.CLI != "codex" || h.CLIVersion != "9.9.9" || h.Scenario != "interrupt" || h.Source != "captured" || h.Cwd != ProjectPath ||
		h.SessionID != "0199a000-0000-7000-8000-000000000001" || len(h.Argv) < 2 || h.Argv[0] != "codex" {
		t.Errorf("header %+v", h)
	}
	sh := ShapeOf(res.Transcript)
	if len(sh.Paths) != 2 || sh.Paths[0].Name != "process 1" || sh.Paths[0].Exit != "0" ||
		sh.Paths[1].Name != "process 1 after SIGINT" || sh.Paths[1].Exit != "1" {
		t.Errorf("paths %+v, want process 1 exiting 0 and process 1 after SIGINT exiting 1", sh.Paths)
	}
	if got := strings.Join(sh.Paths[0].Order, ","); !strings.HasSuffix(got, "turn.completed") {
		t.Errorf("main path %s does not complete", got)
	}
	var buf bytes.Buffer
	if err := transcript.Write(&buf, res.Transcript); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if strings.Contains(text, o.WorkDir) || strings.Contains(text, mockOpenAIKey) {
		t.Errorf("the transcript holds a local path or the key:\n%s", text)
	}
	if !strings.Contains(text, "in "+ProjectPath+" with <redacted:") {
		t.Errorf("the working directory and key are not redacted:\n%s", text)
	}
	if _, err := transcript.Load(strings.NewReader(text), "t", transcript.Options{}); err != nil {
		t.Errorf("the transcript does not load: %v", err)
	}
	if first := res.Transcript.Steps[0]; first.Op != transcript.OpStdinEOF {
		t.Errorf("codex transcript starts with %s, not stdin_eof", first.Op)
	}
	dir := t.TempDir()
	if err := WriteTranscript(dir, res); err != nil || res.File != Path(dir, "codex", "9.9.9", "interrupt") {
		t.Fatalf("WriteTranscript: %v, %s", err, res.File)
	}
	if entries, _ := os.ReadDir(o.WorkDir); len(entries) != 0 {
		t.Errorf("sandboxes left behind: %v", entries)
	}
}

// TestCapturePermission drives a fake Claude through permission-allow and
// permission-deny: initialize, the user message, the can_use_tool answer,
// stdin closed after the result.
func TestCapturePermission(t *testing.T) {
	bin := fakeBinary(t, "claude", fakeClaude)
	for _, answer := range []string{"allow", "deny"} {
		res, err := Capture(context.Background(), bin, scenario(t, "permission-"+answer), Options{WorkDir: t.TempDir(), Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Processes) != 1 || res.Processes[0].Exit != 0 || res.Processes[0].Killed {
			t.Fatalf("%s: processes %+v", answer, res.Processes)
		}
		var ins []string
		out := ""
		for _, s := range res.Transcript.Steps {
			switch s.Op {
			case transcript.OpIn:
				ins = append(ins, s.Match["type"].(string))
			case transcript.OpOut:
				out += s.Text + "\n"
			}
		}
		if got := strings.Join(ins, ","); got != "control_request,user,control_response" {
			t.Errorf("%s: stdin steps %s", answer, got)
		}
		if !strings.Contains(out, "answered "+answer) || !strings.Contains(out, `"cwd":"`+ProjectPath+`"`) {
			t.Errorf("%s: stdout:\n%s", answer, out)
		}
		last := res.Transcript.Steps[len(res.Transcript.Steps)-2]
		if last.Op != transcript.OpStdinEOF {
			t.Errorf("%s: stdin was not closed after the result (%s)", answer, last.Op)
		}
	}
}

func TestCaptureRefusesOtherCLIsScenario(t *testing.T) {
	bin := fakeBinary(t, "codex", fakeCodex)
	if _, err := Capture(context.Background(), bin, scenario(t, "permission-allow"), Options{WorkDir: t.TempDir()}); err == nil {
		t.Error("codex captured a Claude-only scenario")
	}
}

func TestLocate(t *testing.T) {
	bin := fakeBinary(t, "codex", "#!/bin/sh\necho 'codex-cli 1.2.3'\n")
	b, err := Locate(context.Background(), "codex", LocateOptions{Path: bin.Path})
	if err != nil || b.Version != "1.2.3" || b.Source != "flag" {
		t.Fatalf("Locate: %+v %v", b, err)
	}
	t.Setenv("PATH", filepath.Dir(bin.Path))
	if b, err := Locate(context.Background(), "codex", LocateOptions{}); err != nil || b.Source != "PATH" {
		t.Errorf("Locate from PATH: %+v %v", b, err)
	}
	if _, err := Locate(context.Background(), "gemini", LocateOptions{CacheDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "--install") {
		t.Errorf("Locate of a missing CLI: %v", err)
	}
	// An earlier npm install in the cache stands in for one on PATH: the
	// newest complete one.
	cache := t.TempDir()
	for _, v := range []string{"0.9.0", "0.10.1", "0.11.0"} {
		dir := filepath.Join(cache, "gemini", v)
		os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755)
		os.WriteFile(filepath.Join(dir, "node_modules", ".bin", "gemini"), []byte("#!/bin/sh\necho "+v+"\n"), 0o755)
		if v != "0.11.0" { // an install that did not finish is no install
			os.WriteFile(filepath.Join(dir, ".complete"), []byte(v+"\n"), 0o644)
		}
	}
	if b, err := Locate(context.Background(), "gemini", LocateOptions{CacheDir: cache}); err != nil || b.Source != "cache" || b.Version != "0.10.1" {
		t.Errorf("Locate from the cache: %+v %v, want 0.10.1 from the cache", b, err)
	}
	if _, err := Locate(context.Background(), "copilot", LocateOptions{}); err == nil {
		t.Error("Locate(copilot) did not fail")
	}
}
