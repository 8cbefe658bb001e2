package reference

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/reference/unified"
)

// TestSessionMatchesOracle runs each CLI's fake through a whole session and
// checks that what the session hands out is exactly what the translator
// makes of the fixture (the process layer loses, adds and reorders
// nothing), that it validates, and how the CLI was started.
func TestSessionMatchesOracle(t *testing.T) {
	cases := []struct {
		fixture string
		prompts []string
		faults  string
	}{
		{"claude/single-tool", []string{"Run echo hi"}, ""},
		{"codex/single-tool", []string{"Run echo hi"}, ""},
		{"gemini/single-tool", []string{"Run echo hi"}, ""},
		{"claude/multi-turn", []string{"hello, this is turn one", "and this is turn two"}, ""},
		{"codex/multi-turn", []string{"What does greet.go do?", "Add an exclamation mark."}, ""},
		{"gemini/multi-turn", []string{"first", "second"}, ""},
		// Pipe faults that must not change anything the caller sees.
		{"codex/single-tool", []string{"Run echo hi"}, "slicer:max=1"},
		{"claude/single-tool", []string{"Run echo hi"}, "slicer:max=7;crlf"},
		{"gemini/multi-tool", []string{"go"}, "banner"},
		{"codex/todo-list", []string{"fix it"}, "latency:ms=1"},
		{"claude/partial-messages", []string{"Which Go version?"}, ""},
		{"codex/file-change", []string{"edit"}, ""},
		{"codex/web-search", []string{"search"}, ""},
		{"codex/mcp-tool-call", []string{"issue 42"}, ""},
		{"gemini/tool-errors", []string{"show"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.fixture+"/"+tc.faults, func(t *testing.T) {
			agent := Agent(strings.SplitN(tc.fixture, "/", 2)[0])
			fakes := fakecli.Start(t, fakecli.Options{Fixture: tc.fixture, Faults: tc.faults})
			cfg := fakeConfig(t, agent, fakes)
			cfg.Permission = PermissionAllow
			// The oracle translates the fixture's recorded lines; the fake
			// makes partial messages for fixtures that recorded none
			// (fakecli's TestClaudePartialMessagesEveryFixture pins those),
			// so partial messages are asked for where they were recorded.
			cfg.PartialMessages = tc.fixture == "claude/partial-messages"
			run := runTurns(t, cfg, tc.prompts, nil)
			for i, res := range run.results {
				if !res.OK || res.SessionID == "" {
					t.Errorf("turn %d: %+v, want OK with a session id", i+1, res)
				}
			}
			if run.closeErr != nil {
				t.Errorf("Close: %v", run.closeErr)
			}
			sameEvents(t, oracle(t, tc.fixture, "allow", cfg), run.events)
			checkStream(t, tc.fixture, ProfileUnified, encode(t, run.events))
			starts := obsOf(observations(t, fakes), "start")
			wantProcs := 1
			if agent != Claude {
				wantProcs = len(tc.prompts)
			}
			if len(starts) != wantProcs {
				t.Fatalf("%d processes started, want %d", len(starts), wantProcs)
			}
			checkArgv(t, agent, starts, run.results)
		})
	}
}

// checkArgv checks the invocation of each process against docs/protocols.
func checkArgv(t *testing.T, agent Agent, starts []fakecli.Observation, results []TurnResult) {
	t.Helper()
	for i, st := range starts {
		argv := st.Argv[1:]
		has := func(seq ...string) bool {
			for j := 0; j+len(seq) <= len(argv); j++ {
				if slices.Equal(argv[j:j+len(seq)], seq) {
					return true
				}
			}
			return false
		}
		switch agent {
		case Claude:
			for _, want := range [][]string{
				{"--output-format", "stream-json"}, {"--verbose"}, {"--input-format", "stream-json"},
				{"--permission-prompt-tool", "stdio"},
			} {
				if !has(want...) {
					t.Errorf("claude argv %q lacks %q", argv, want)
				}
			}
		case Codex:
			if !has("exec", "--json", "--skip-git-repo-check") || !has("-s", "workspace-write") {
				t.Errorf("codex argv %q", argv)
			}
			if i > 0 && !has("resume", results[i-1].SessionID) {
				t.Errorf("codex turn %d argv %q does not resume %s", i+1, argv, results[i-1].SessionID)
			}
			if st.StdinTTY {
				t.Error("codex stdin is a terminal")
			}
		case Gemini:
			if !has("-o", "stream-json") || !has("-y") || !has("-p") {
				t.Errorf("gemini argv %q", argv)
			}
			if i > 0 && !has("--resume", results[i-1].SessionID) {
				t.Errorf("gemini turn %d argv %q does not resume %s", i+1, argv, results[i-1].SessionID)
			}
		}
	}
}

// TestCodexStdinClosed: codex exec reads stdin to EOF before it starts; the
// driver gives it /dev/null, or the prompt then EOF when the prompt looks
// like a flag.
func TestCodexStdinClosed(t *testing.T) {
	for _, prompt := range []string{"plain prompt", "--looks-like-a-flag"} {
		t.Run(prompt, func(t *testing.T) {
			fakes := fakecli.Start(t, fakecli.Options{Fixture: "codex/plain-text"})
			run := runTurns(t, fakeConfig(t, Codex, fakes), []string{prompt}, nil)
			if !run.results[0].OK {
				t.Fatalf("turn: %+v", run.results[0])
			}
			obs := observations(t, fakes)
			if len(obsOf(obs, "stdin_closed")) == 0 {
				t.Error("the fake never saw stdin closed")
			}
			argv := obsOf(obs, "start")[0].Argv
			last := argv[len(argv)-1]
			if strings.HasPrefix(prompt, "-") {
				if last != "-" {
					t.Errorf("argv %q: a dash prompt should go to stdin, named by -", argv)
				}
				var got string
				for _, o := range obsOf(obs, "stdin") {
					got += o.Text
				}
				if !strings.Contains(got, prompt) {
					t.Errorf("stdin %q does not hold the prompt", got)
				}
			} else if last != prompt {
				t.Errorf("argv %q: the prompt should be the last argument", argv)
			}
		})
	}
}

// TestPermissionArguments: the permission policy becomes the flags each
// CLI needs (Gemini: -y or --approval-mode default, never both; Codex: the
// sandbox).
func TestPermissionArguments(t *testing.T) {
	cases := []struct {
		agent Agent
		perm  Permission
		want  []string
		not   []string
	}{
		{Gemini, PermissionAllow, []string{"-y"}, []string{"--approval-mode"}},
		{Gemini, PermissionDeny, []string{"--approval-mode", "default"}, []string{"-y"}},
		{Gemini, PermissionDefault, nil, []string{"-y", "--approval-mode"}},
		{Codex, PermissionAllow, []string{"-s", "workspace-write"}, nil},
		{Codex, PermissionDeny, []string{"-s", "read-only"}, nil},
		{Claude, PermissionDefault, nil, []string{"--permission-prompt-tool"}},
	}
	for _, tc := range cases {
		t.Run(string(tc.agent)+"/"+string(tc.perm), func(t *testing.T) {
			fakes := fakecli.Start(t, fakecli.Options{Fixture: string(tc.agent) + "/plain-text"})
			cfg := fakeConfig(t, tc.agent, fakes)
			cfg.Permission = tc.perm
			cfg.Model = "test-model"
			run := runTurns(t, cfg, []string{"hi"}, nil)
			if !run.results[0].OK {
				t.Fatalf("turn: %+v", run.results[0])
			}
			argv := strings.Join(obsOf(observations(t, fakes), "start")[0].Argv[1:], " ")
			if len(tc.want) > 0 && !strings.Contains(" "+argv+" ", " "+strings.Join(tc.want, " ")+" ") {
				t.Errorf("argv %q lacks %q", argv, tc.want)
			}
			for _, n := range tc.not {
				if strings.Contains(" "+argv+" ", " "+n+" ") {
					t.Errorf("argv %q has %q", argv, n)
				}
			}
			if !strings.Contains(argv, "test-model") {
				t.Errorf("argv %q lacks the model", argv)
			}
		})
	}
}

// TestResumeFromConfig: a new session started with Resume continues the
// earlier one (Codex: exec ... resume ID), sharing the fake's session store.
func TestResumeFromConfig(t *testing.T) {
	fakes := fakecli.Start(t, fakecli.Options{Fixture: "codex/multi-turn"})
	first := runTurns(t, fakeConfig(t, Codex, fakes), []string{"What does greet.go do?"}, nil)
	if !first.results[0].OK {
		t.Fatalf("first session: %+v", first.results[0])
	}
	cfg := fakeConfig(t, Codex, fakes)
	cfg.Resume = first.results[0].SessionID
	second := runTurns(t, cfg, []string{"Add an exclamation mark."}, nil)
	if !second.results[0].OK || second.results[0].SessionID != cfg.Resume {
		t.Fatalf("resumed session: %+v, want OK with session %s", second.results[0], cfg.Resume)
	}
	starts := obsOf(observations(t, fakes), "start")
	argv := strings.Join(starts[len(starts)-1].Argv, " ")
	if !strings.Contains(argv, " resume "+cfg.Resume+" ") {
		t.Errorf("argv %q does not resume %s", argv, cfg.Resume)
	}
	if len(ofType[*unified.FileChanged](second.events)) != 1 {
		t.Errorf("the resumed turn is not the transcript's second part: %s", encode(t, second.events))
	}
}

// TestResumeUnknownSession: resuming a session the CLI does not know fails
// the turn with the CLI's own message (Claude: --resume=ID as one token).
func TestResumeUnknownSession(t *testing.T) {
	fakes := fakecli.Start(t, fakecli.Options{Fixture: "claude/compaction"})
	cfg := fakeConfig(t, Claude, fakes)
	cfg.Resume = "00000000-0000-4000-8000-000000000000"
	run := runTurns(t, cfg, []string{"Continue with the refactor."}, nil)
	argv := obsOf(observations(t, fakes), "start")[0].Argv
	if !slices.Contains(argv, "--resume="+cfg.Resume) {
		t.Errorf("argv %q lacks --resume=%s", argv, cfg.Resume)
	}
	res := run.results[0]
	if res.OK || !strings.Contains(res.Error, "No conversation found") {
		t.Errorf("turn: %+v, want a failure with the CLI's message", res)
	}
	// The CLI wrote only its result (no system/init: no session ran), but
	// the caller must still see the session start and end
	// (lifecycle/ends-stream), failed with the CLI's message.
	var types []string
	for _, ev := range run.events {
		types = append(types, string(ev.EventType()))
	}
	ended := ofType[*unified.SessionEnded](run.events)
	if types[0] != string(unified.TypeSessionStarted) || len(ended) != 1 || ended[0].Reason != unified.ReasonFailed || !strings.Contains(ended[0].Error, "No conversation found") {
		t.Errorf("want sessionStarted first, then sessionEnded failed with the CLI's message last; got %s", encode(t, run.events))
	}
}

// TestWholeBlocksWithoutPartialMessages: without PartialMessages Claude
// sends no stream_event (the fake, like the CLI, drops them), and each text
// block comes whole: the same text, no partial chunks.
func TestWholeBlocksWithoutPartialMessages(t *testing.T) {
	fakes := fakecli.Start(t, fakecli.Options{Fixture: "claude/partial-messages"})
	run := runTurns(t, fakeConfig(t, Claude, fakes), []string{"Which Go version?"}, nil)
	if !run.results[0].OK {
		t.Fatalf("turn: %+v", run.results[0])
	}
	if argv := obsOf(observations(t, fakes), "start")[0].Argv; slices.Contains(argv, "--include-partial-messages") {
		t.Errorf("argv %q", argv)
	}
	var text string
	for _, c := range ofType[*unified.TextChunk](run.events) {
		if c.IsPartial {
			t.Errorf("partial chunk %q without partial messages", c.Content)
		}
		text += c.Content
	}
	if want := "I'll run the command.It printed `hi`."; text != want {
		t.Errorf("text %q, want %q", text, want)
	}
}

// TestExecutableNotFound: no CLI is an error from Start, not a hang.
func TestExecutableNotFound(t *testing.T) {
	for _, agent := range Agents {
		cfg := Config{Agent: agent, Env: []string{"PATH=" + t.TempDir()}}
		_, err := StartUnified(t.Context(), cfg, nil)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: err %v, want ErrNotFound", agent, err)
		}
	}
}

// TestExecutableFromEnv: the harness variables name the CLI.
func TestExecutableFromEnv(t *testing.T) {
	fakes := fakecli.Start(t, fakecli.Options{Fixture: "gemini/plain-text"})
	cfg := fakeConfig(t, Gemini, fakes)
	cfg.Env = append(withoutPath(cfg.Env), "AGENTCONFORM_GEMINI="+fakes.Path("gemini"))
	run := runTurns(t, cfg, []string{"hi"}, nil)
	if !run.results[0].OK {
		t.Fatalf("turn: %+v", run.results[0])
	}
}

func withoutPath(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return append(out, "PATH=")
}

// TestSendAfterFailedTurn: a failed Codex turn leaves the session (the
// thread is on disk: codex exec resume continues it); the next Send
// resumes it in a new process. A CLI that never announced its session
// leaves none to resume: the next Send starts a new one.
func TestSendAfterFailedTurn(t *testing.T) {
	fakes := fakecli.Start(t, fakecli.Options{Fixture: "codex/api-error-then-turn"})
	cfg := fakeConfig(t, Codex, fakes)
	c := &collector{}
	s, err := StartUnified(t.Context(), cfg, c.add)
	if err != nil {
		t.Fatal(err)
	}
	var results []TurnResult
	for _, prompt := range []string{"one", "two", "three"} {
		res, err := s.Prompt(t.Context(), prompt)
		if err != nil {
			t.Fatalf("turn %q: %v", prompt, err)
		}
		results = append(results, res)
	}
	if !results[0].OK || results[1].OK || results[1].SessionEnded || !strings.Contains(results[1].Error, "invalid request (agentconform mock)") || !results[2].OK {
		t.Fatalf("turns: %+v", results)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Errorf("Close: %v", err)
	}
	ended := ofType[*unified.SessionEnded](c.all())
	if len(ended) != 1 || ended[0].Reason != unified.ReasonCompleted {
		t.Errorf("sessionEnded: %+v, want one, completed (the last turn completed)", ended)
	}
	starts := obsOf(observations(t, fakes), "start")
	if len(starts) != 3 || !slices.Contains(starts[1].Argv, "resume") || !slices.Contains(starts[2].Argv, results[0].SessionID) {
		t.Errorf("processes %+v, want exec, then exec resume %s twice", starts, results[0].SessionID)
	}

	// Nothing on stdout: no session to resume.
	silent := fakecli.Start(t, fakecli.Options{Fixture: "codex/plain-text", Faults: "limit_data:bytes=0"})
	s, err = StartUnified(t.Context(), fakeConfig(t, Codex, silent), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.Prompt(t.Context(), "hi"); err != nil || res.OK || res.SessionEnded {
		t.Fatalf("turn: %+v, %v; want a failure that leaves the session open", res, err)
	}
	if _, err := s.Prompt(t.Context(), "again"); err != nil {
		t.Errorf("Send after a turn that announced no session: %v, want a new turn", err)
	}
	s.Close(t.Context())
	if starts := obsOf(observations(t, silent), "start"); len(starts) != 2 || slices.Contains(starts[1].Argv, "resume") {
		t.Errorf("processes %+v, want a second exec that resumes nothing", starts)
	}
}
