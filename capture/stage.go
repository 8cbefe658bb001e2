package capture

import (
	"fmt"
	"strings"

	"github.com/agentconform/agentconform/capture/mock"
)

// Stage is the world a real CLI runs in when something else drives it
// (an adapter under test, in `agentconform run --cli real`): the mock
// model API playing one scenario's model, the trap that refuses any
// connection outside loopback, and a throwaway home holding the CLI's
// configuration. The driver starts the CLI as it likes; whoever stands
// between them (package realcli) gives the CLI Env over the driver's
// environment, less Unset, and seeds Files where the CLI runs.
type Stage struct {
	// CLI and Scenario name what the stage plays.
	CLI, Scenario string
	// Env are the NAME=VALUE settings the CLI needs: the home, the mock
	// as its model API, a mock key, telemetry and update checks off, the
	// proxy variables pointing at the trap. PATH is not among them: the
	// driver's stays.
	Env []string
	// Unset are the variables of the driver's environment the CLI must not
	// see (credentials and switches that would send it elsewhere); a name
	// ending in "*" is a prefix.
	Unset []string
	// Files are the scenario's project files, by path relative to the
	// directory the CLI runs in.
	Files map[string]string
	// Home is the throwaway home.
	Home string

	env *runEnv
}

// stageUnset are the variables a driver's environment may carry that
// would lead a real CLI to a real account or service.
var stageUnset = []string{
	"ANTHROPIC_*", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "AWS_*",
	"OPENAI_*", "CODEX_API_KEY", "AZURE_OPENAI_*",
	"GOOGLE_*", "GEMINI_API_KEY", "GCP_*", "CLOUDSDK_*",
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
	"XDG_*", "TMPDIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE",
}

// Playable reports whether a driver other than capture can play
// scenario with cli: the scenario applies to the CLI, so the mock has a
// script of the model's side of it (whoever drives the CLI: a headless
// run, an app-server or ACP client).
func Playable(cli, scenario string) bool {
	for _, sc := range Scenarios() {
		if sc.Name == scenario {
			return sc.Supports(cli)
		}
	}
	return false
}

// OpenStage sets up a stage for scenario with bin's CLI (bin names the
// CLI and where it is installed, which the stage keeps out of what it
// records). Close undoes it.
func OpenStage(bin *Binary, scenario string, o Options) (*Stage, error) {
	if !Playable(bin.CLI, scenario) {
		return nil, fmt.Errorf("capture: scenario %s cannot be played with %s by another driver", scenario, bin.CLI)
	}
	var p *plan
	for _, sc := range Scenarios() {
		if sc.Name == scenario {
			p = sc.plan(bin.CLI)
		}
	}
	env, err := openRun(bin, "stage-"+scenario, p, o, mockAnthropicKey, mockOpenAIKey, mockGeminiKey)
	if err != nil {
		return nil, err
	}
	st := &Stage{CLI: bin.CLI, Scenario: scenario, Unset: stageUnset, Files: p.files, Home: env.sb.Home, env: env}
	for _, kv := range env.sb.Env {
		if !strings.HasPrefix(kv, "PATH=") {
			st.Env = append(st.Env, kv)
		}
	}
	return st, nil
}

// Requests are what the mock model API was asked so far, without bodies.
func (s *Stage) Requests() []mock.Request { return s.env.requests() }

// Leaks are the attempts to reach anything outside loopback the trap
// refused so far.
func (s *Stage) Leaks() []string { return s.env.tr.hits() }

// Close stops the mock and the trap and removes the home.
func (s *Stage) Close() { s.env.close() }
