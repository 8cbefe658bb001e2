package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/agentconform/agentconform/transcript"
)

// converter turns recorded stdin lines into "in" steps: transcript's
// StdinConverter for Claude's stream-json stdin; raw text for Codex and
// Gemini, which read plain text.
type converter struct {
	claude bool
	stdin  *transcript.StdinConverter
}

func newConverter(cli string) *converter {
	return &converter{claude: cli == "claude", stdin: transcript.NewStdinConverter()}
}

// expect fills an OpIn step for the (redacted) stdin line text.
func (c *converter) expect(st *transcript.Step, text string) {
	if !c.claude {
		st.Op, st.Text = transcript.OpIn, text
		return
	}
	c.stdin.Expect(st, text)
}

// templateIDs replaces the client's request ids echoed in a stdout line
// with the {{name}} of their capture.
func (c *converter) templateIDs(text string) string { return c.stdin.Template(text) }

// decodeObject decodes one JSON object, keeping numbers exact; nil when
// text is not exactly one JSON object.
func decodeObject(text string) map[string]any {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || dec.More() {
		return nil
	}
	return obj
}

// sessionID finds the id a fake must keep for resume: Claude's and
// Gemini's session_id (system/init, init) or Codex's thread_id
// (thread.started), in the first stdout lines.
func sessionID(steps []transcript.Step) string {
	seen := 0
	for _, st := range steps {
		if st.Op != transcript.OpOut {
			continue
		}
		if seen++; seen > 64 {
			break
		}
		obj := decodeObject(st.Text)
		if obj == nil {
			continue
		}
		typ, _ := obj["type"].(string)
		sub, _ := obj["subtype"].(string)
		var id any
		switch {
		case typ == "system" && sub == "init", typ == "init":
			id = obj["session_id"]
		case typ == "thread.started":
			id = obj["thread_id"]
		}
		if s, ok := id.(string); ok && s != "" && !strings.Contains(s, "{{") {
			return s
		}
	}
	return ""
}

var versionRE = regexp.MustCompile(`\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.-]+)?`)

// probeVersion runs "<path> --version" with a deadline, in its own
// process group, and returns the first version number it prints, or
// "unknown".
func probeVersion(path, argv0 string, env []string, dir string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Args[0] = argv0
	cmd.Env = env
	cmd.Dir = dir
	setProcessGroup(cmd)
	cmd.Cancel = func() error { killGroup(cmd.Process); return nil }
	cmd.WaitDelay = time.Second
	var out limitedBuffer
	out.max = 4096
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return "unknown"
	}
	first, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	if v := versionRE.FindString(first); v != "" {
		return v
	}
	return "unknown"
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) < room {
			room = len(p)
		}
		b.Buffer.Write(p[:room])
	}
	return len(p), nil
}

// Environment variables that matter to the CLIs and the adapters driving
// them, by prefix and by name.
var (
	relevantPrefixes = []string{"ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "VERTEX", "AWS_", "AZURE_",
		"MCP_", "DISABLE_", "OTEL_", "AGENTCONFORM_"}
	relevantNames = map[string]bool{"HOME": true, "PATH": true, "PWD": true, "TMPDIR": true, "MAX_THINKING_TOKENS": true, "IS_SANDBOX": true, "TERM": true, "NO_COLOR": true, "FORCE_COLOR": true, "CI": true, "DEBUG": true,
		"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "http_proxy": true, "https_proxy": true, "no_proxy": true,
		"NODE_OPTIONS": true, "NODE_EXTRA_CA_CERTS": true, "RUST_LOG": true, "LANG": true, "TZ": true, "XDG_CONFIG_HOME": true}
)

// RelevantEnv returns the sorted names (never the values) of the variables
// in environ (KEY=VALUE entries) that matter to the CLIs: ANTHROPIC_*,
// CLAUDE*, OPENAI_*, CODEX_*, GEMINI_*, GOOGLE_*, HOME, PATH, proxies,
// colour and locale settings and the like (a superset of what the fakes'
// observation log reports). The recorder's own AGENTCONFORM_RECORD_*
// variables are left out.
func RelevantEnv(environ []string) []string {
	seen := map[string]bool{}
	var names []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" || seen[name] || strings.HasPrefix(name, "AGENTCONFORM_RECORD_") {
			continue
		}
		ok := relevantNames[name]
		for _, p := range relevantPrefixes {
			ok = ok || strings.HasPrefix(name, p)
		}
		if ok {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
