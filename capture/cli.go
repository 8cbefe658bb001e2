package capture

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// CLIs are the CLIs capture can run, in a stable order.
var CLIs = []string{"claude", "codex", "gemini"}

// Packages are the npm packages of the CLIs.
var Packages = map[string]string{
	"claude": "@anthropic-ai/claude-code",
	"codex":  "@openai/codex",
	"gemini": "@google/gemini-cli",
}

func knownCLI(cli string) bool {
	_, ok := Packages[cli]
	return ok
}

// Sandbox is the throwaway environment of one capture: a home directory
// (HOME, TMPDIR, the XDG directories and each CLI's configuration
// directory live in it) and a project directory inside it, the CLI's
// working directory.
type Sandbox struct {
	// Root holds everything; removing it removes the run.
	Root string
	// Home is HOME; Project is the working directory (Home/project, shown
	// as /home/user/project in transcripts).
	Home, Project string
	// Env is the CLI's whole environment: nothing is inherited from the
	// caller except PATH (the CLIs need node, and their tools a shell).
	Env []string
	// Files are the configuration files written, by path relative to
	// Home, for the record and for tests.
	Files map[string]string
	// RunDir, when set, is a short directory outside Root given to Claude
	// as XDG_RUNTIME_DIR, because its socket path under TMPDIR would be
	// too long (see socketDir); Remove removes it.
	RunDir string
}

// Remove removes the sandbox: Root unless keep is set, and RunDir.
func (sb *Sandbox) Remove(keep bool) {
	if sb.RunDir != "" {
		os.RemoveAll(sb.RunDir)
	}
	if !keep {
		os.RemoveAll(sb.Root)
	}
}

// Claude Code binds a messaging socket at
// $XDG_RUNTIME_DIR/cc-socks/<pid>.sock, else $TMPDIR/cc-socks/<pid>.sock,
// as long as that path has at most maxSocketPath bytes; a longer one
// makes it fall back to /tmp/cc-socks-<uid>/<pid>.sock, outside the
// sandbox, and that directory stays behind (observed on 2.1.331).
const (
	maxSocketPath = 103
	// socketTail is the longest "/cc-socks/<pid>.sock" (pid_max is at
	// most 4194304 on Linux).
	socketTail = len("/cc-socks/4194304.sock")
)

// socketFits reports whether Claude's socket path under dir fits.
func socketFits(dir string) bool { return len(dir)+socketTail <= maxSocketPath }

// FallbackSocketDir is where Claude Code binds its messaging socket when
// the path under its runtime or temporary directory would be too long.
func FallbackSocketDir() string {
	return filepath.Join("/tmp", fmt.Sprintf("cc-socks-%d", os.Getuid()))
}

// socketDir makes a short runtime directory for Claude when its socket
// path under tmp would be too long: a fresh directory in the system
// temporary directory (or /tmp, when that is long too). It returns "" when
// tmp is short enough.
func socketDir(tmp string) (string, error) {
	if socketFits(tmp) {
		return "", nil
	}
	base := os.TempDir()
	if !socketFits(filepath.Join(base, "acs-0123456789")) {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "acs-")
	if err != nil {
		return "", fmt.Errorf("capture: a short runtime directory for Claude's socket: %w", err)
	}
	return dir, nil
}

// sandboxOptions say how to configure the CLI for one run.
type sandboxOptions struct {
	cli      string
	mockURL  string // the mock model API's base URL
	trapURL  string // the proxy trap, http://127.0.0.1:PORT
	path     string // PATH for the CLI
	settings settings
}

// settings are per-scenario configuration tweaks.
type settings struct {
	// retries allows the CLI to retry failed model requests (otherwise
	// retries are switched off where the CLI lets us).
	retries bool
}

// Mock credentials: not secrets, but shaped like keys so the CLIs accept
// them and the redactor replaces them.
const (
	mockAnthropicKey = "sk-ant-api03-agentconform-mock-key-not-a-secret"
	mockOpenAIKey    = "sk-agentconform-mock-key-not-a-secret"
	mockGeminiKey    = "agentconform-mock-gemini-key"
)

// newSandbox creates the directories and configuration of one run under
// root, and the environment the CLI gets.
func newSandbox(root string, o sandboxOptions) (*Sandbox, error) {
	home := filepath.Join(root, "home")
	sb := &Sandbox{Root: root, Home: home, Project: filepath.Join(home, "project"), Files: map[string]string{}}
	for _, d := range []string{sb.Project, filepath.Join(home, "tmp"), filepath.Join(home, ".config"),
		filepath.Join(home, ".cache"), filepath.Join(home, ".local", "share"), filepath.Join(home, ".local", "state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("capture: creating the sandbox: %w", err)
		}
	}
	vars, files := cliConfig(o, home)
	for rel, content := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			return nil, fmt.Errorf("capture: writing %s: %w", rel, err)
		}
		sb.Files[rel] = content
	}
	sb.Env = append(baseEnv(o, home), vars...)
	if o.cli == "claude" {
		run, err := socketDir(filepath.Join(home, "tmp"))
		if err != nil {
			return nil, err
		}
		if run != "" {
			sb.RunDir = run
			sb.Env = append(sb.Env, "XDG_RUNTIME_DIR="+run)
		}
	}
	return sb, nil
}

// baseEnv is what every CLI gets: a throwaway home, and proxy variables
// that send any proxy-aware client trying to reach the internet to a trap
// on loopback (which records the attempt and refuses it), with loopback
// exempted so the mock stays reachable.
func baseEnv(o sandboxOptions, home string) []string {
	path := o.path
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + home,
		"USER=capture",
		"LOGNAME=capture",
		"SHELL=/bin/bash",
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"LANG=C.UTF-8",
		"TZ=UTC",
		"NO_COLOR=1",
	}
	if o.trapURL != "" {
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
			env = append(env, k+"="+o.trapURL)
		}
		for _, k := range []string{"NO_PROXY", "no_proxy"} {
			env = append(env, k+"=127.0.0.1,localhost")
		}
	}
	return env
}

// cliConfig returns the CLI's own variables and configuration files
// (relative to home): the mock as its model API, a mock key, and every
// switch that turns off telemetry, update checks, error reporting and
// other traffic.
func cliConfig(o sandboxOptions, home string) (vars []string, files map[string]string) {
	files = map[string]string{}
	switch o.cli {
	case "claude":
		vars = []string{
			"TERM=dumb",
			"ANTHROPIC_BASE_URL=" + o.mockURL,
			"ANTHROPIC_API_KEY=" + mockAnthropicKey,
			"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_TELEMETRY=1",
			"DISABLE_AUTOUPDATER=1",
			"DISABLE_ERROR_REPORTING=1",
			"DISABLE_BUG_COMMAND=1",
			"DISABLE_COST_WARNINGS=1",
			"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
			"CLAUDE_CODE_ENABLE_TELEMETRY=0",
		}
		if !o.settings.retries {
			vars = append(vars, "CLAUDE_CODE_MAX_RETRIES=0")
		}
		files[".claude/settings.json"] = jsonFile(map[string]any{
			"env": map[string]any{"DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
				"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
		})
	case "codex":
		vars = []string{
			"TERM=dumb",
			"CODEX_HOME=" + filepath.Join(home, ".codex"),
			"OPENAI_API_KEY=" + mockOpenAIKey,
		}
		retries := 0
		if o.settings.retries {
			retries = 2
		}
		files[".codex/config.toml"] = fmt.Sprintf(`# Written by agentconform capture: an offline run against a local mock.
model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[analytics]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"
log_user_prompt = false

[features]
# These reach out to github.com and chatgpt.com at startup.
plugins = false
remote_plugin = false
apps = false

[model_providers.mock]
name = "agentconform mock (Responses API)"
base_url = "%s/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
request_max_retries = %d
stream_max_retries = %d
stream_idle_timeout_ms = 60000
`, o.mockURL, retries, retries)
	case "gemini":
		vars = []string{
			"TERM=xterm-256color",
			"COLORTERM=truecolor",
			"GEMINI_API_KEY=" + mockGeminiKey,
			"GOOGLE_GEMINI_BASE_URL=" + o.mockURL,
			"GEMINI_CLI_TRUST_WORKSPACE=true",
			"GEMINI_TELEMETRY_ENABLED=false",
		}
		attempts := 1
		if o.settings.retries {
			attempts = 2
		}
		files[".gemini/settings.json"] = jsonFile(map[string]any{
			"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "maxAttempts": attempts},
			"privacy":   map[string]any{"usageStatisticsEnabled": false},
			"telemetry": map[string]any{"enabled": false, "logPrompts": false},
			"ide":       map[string]any{"enabled": false, "hasSeenNudge": true},
			"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		})
	}
	return vars, files
}

func jsonFile(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b) + "\n"
}

// envNames returns the sorted variable names of env.
func envNames(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
