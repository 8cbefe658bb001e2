package capture

import (
	"context"
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

	env  *runEnv
	bin  *Binary
	plan *plan
	o    Options
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
	if p.stagedWait > 0 && len(p.script.Turns) > 1 {
		turns := append([]mock.Turn(nil), p.script.Turns...)
		turns[1].Wait = p.stagedWait
		p.script.Turns = turns
	}
	env, err := openRun(bin, "stage-"+scenario, p, o, mockAnthropicKey, mockOpenAIKey, mockGeminiKey)
	if err != nil {
		return nil, err
	}
	st := &Stage{CLI: bin.CLI, Scenario: scenario, Unset: stageUnset, Files: p.files, Home: env.sb.Home, env: env, bin: bin, plan: p, o: o}
	for _, kv := range env.sb.Env {
		if !strings.HasPrefix(kv, "PATH=") {
			st.Env = append(st.Env, kv)
		}
	}
	return st, nil
}

// Requests are what the mock model API was asked so far, without bodies.
func (s *Stage) Requests() []mock.Request { return s.env.requests() }

// Asked counts the requests of the scenario's conversation the mock model
// API has received so far, answered or not: once it is above zero the CLI
// has read its prompt and is in its turn.
func (s *Stage) Asked() int { return s.env.srv.MainAsked() }

// Leaks are the attempts to reach anything outside loopback the trap
// refused so far.
func (s *Stage) Leaks() []string { return s.env.tr.hits() }

// Close stops the mock and the trap and removes the home.
func (s *Stage) Close() { s.env.close() }

// Prime runs the scenario's first turn in dir, as capture drives it (the
// first process; Claude's process with its first user message only), so
// that the CLI's session store holds a session of dir whose first turn is
// done, as a user's earlier run leaves one; it returns that session (or
// thread) id, for a driver to resume. The mock's script answers the
// resumed turn next: it reads the conversation from the history.
func (s *Stage) Prime(ctx context.Context, dir string) (string, error) {
	sb := *s.env.sb
	sb.Project = dir
	if len(s.plan.appServer) > 0 {
		// codex app-server: the first process's turns, on a new thread.
		ap := s.plan.appServer[0]
		ap.resume = false
		ap.turns = append([]asTurn(nil), ap.turns...)
		for i := range ap.turns {
			ap.turns[i].interrupt = false
		}
		d := &asDriver{p: ap, cwd: dir}
		if _, _, err := d.run(ctx, s.bin, &sb, s.env.red, s.o); err != nil {
			return "", fmt.Errorf("capture: priming a thread of %s with codex app-server: %w", s.Scenario, err)
		}
		if d.thread == "" {
			return "", fmt.Errorf("capture: priming a thread of %s with codex app-server: no thread started", s.Scenario)
		}
		return d.thread, nil
	}
	if len(s.plan.procs) == 0 {
		return "", fmt.Errorf("capture: scenario %s runs no headless process to prime a session with", s.Scenario)
	}
	pr := s.plan.procs[0]
	if len(pr.turns) > 1 {
		pr.turns = pr.turns[:1]
	}
	pr.interrupt = interruptNone
	d := &driver{cli: s.CLI, p: pr}
	_, proc, err := d.run(ctx, s.bin, &sb, s.env.red, "", s.o)
	if err != nil {
		return "", fmt.Errorf("capture: priming a session of %s with %s: %w", s.Scenario, s.CLI, err)
	}
	if d.rawSession == "" || proc.Exit != 0 {
		return "", fmt.Errorf("capture: priming a session of %s with %s: the CLI announced no session (exit %d)", s.Scenario, s.CLI, proc.Exit)
	}
	if pr.acp != nil && s.CLI == "gemini" {
		// A session of an earlier run, not of this minute (ageGeminiSession).
		if err := ageGeminiSession(sb.Home, d.rawSession); err != nil {
			return "", err
		}
	}
	return d.rawSession, nil
}
