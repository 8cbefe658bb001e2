//go:build unix

package fakecli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

const (
	clapTail     = "\n\nUsage: codex exec [OPTIONS] [PROMPT] [COMMAND]\n\nFor more information, try '--help'.\n"
	clapResume   = "\n\nUsage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]\n\nFor more information, try '--help'.\n"
	geminiUsage1 = "\n\nUsage: gemini [options] [command]\n"
)

// TestFlagErrors runs every invalid invocation the CLIs document
// (docs/protocols/claude.md, codex.md and gemini.md#invocation) and a few
// more of each parser's own errors: the exact stderr, the exit status, and
// nothing on stdout.
func TestFlagErrors(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{})
	const uuidA, uuidB = "11111111-2222-4333-8444-555555555555", "00000000-0000-0000-0000-000000000000"
	tests := []struct {
		name   string
		cli    string
		args   []string
		stderr string
		// prefix: stderr must only start with stderr (the rest is the
		// usage text).
		prefix bool
		code   int
		env    []string
	}{
		// Claude (docs/protocols/claude.md#invocation).
		{name: "stream-json needs verbose", cli: "claude", args: []string{"-p", "--output-format", "stream-json", "hi"},
			stderr: "Error: When using --print, --output-format=stream-json requires --verbose\n", code: 1},
		{name: "input stream-json needs output stream-json", cli: "claude", args: []string{"-p", "--input-format", "stream-json", "--verbose"},
			stderr: "Error: --input-format=stream-json requires output-format=stream-json.\n", code: 1},
		{name: "partial messages", cli: "claude", args: []string{"-p", "--include-partial-messages", "hi"},
			stderr: "Error: --include-partial-messages requires --print and --output-format=stream-json.\n", code: 1},
		{name: "replay user messages", cli: "claude", args: []string{"-p", "--replay-user-messages", "hi"},
			stderr: "Error: --replay-user-messages requires both --input-format=stream-json and --output-format=stream-json.\n", code: 1},
		{name: "resume not a session", cli: "claude", args: []string{"-p", "--resume", "not-a-session", "hi"},
			stderr: `Error: --resume requires a valid session ID or session title when used with --print. Usage: claude -p --resume <session-id|title>. Provided value "not-a-session" is not a UUID and does not match any session title.` + "\n", code: 1},
		{name: "resume= not a session", cli: "claude", args: []string{"-p", "--resume=not-a-session", "hi"},
			stderr: `Error: --resume requires a valid session ID or session title when used with --print. Usage: claude -p --resume <session-id|title>. Provided value "not-a-session" is not a UUID and does not match any session title.` + "\n", code: 1},
		{name: "no prompt", cli: "claude", args: []string{"-p", "--output-format", "stream-json", "--verbose"},
			stderr: "Error: Input must be provided either through stdin or as a prompt argument when using --print\n", code: 1},
		{name: "permission mode", cli: "claude", args: []string{"-p", "--permission-mode", "bogus", "hi"},
			stderr: "error: option '--permission-mode <mode>' argument 'bogus' is invalid. Allowed choices are acceptEdits, auto, bypassPermissions, manual, dontAsk, plan.\n", code: 1},
		{name: "session-id with resume", cli: "claude", args: []string{"-p", "--session-id", uuidA, "--resume", uuidB, "hi"},
			stderr: "Error: --session-id with --continue or --resume also needs --fork-session.\n", code: 1},
		{name: "resume-session-at", cli: "claude", args: []string{"-p", "--resume-session-at", "x", "hi"},
			stderr: "Error: --resume-session-at requires --resume\n", code: 1},
		{name: "unknown resume id", cli: "claude", args: []string{"-p", "--resume", uuidB, "hi"},
			stderr: "No conversation found with session ID: " + uuidB + "\n", code: 1},
		{name: "unknown option", cli: "claude", args: []string{"-p", "--verbos", "hi"},
			stderr: "error: unknown option '--verbos'\n(Did you mean --verbose?)\n", code: 1},
		{name: "unknown short option", cli: "claude", args: []string{"-x", "hi"},
			stderr: "error: unknown option '-x'\n", code: 1},
		{name: "missing value", cli: "claude", args: []string{"-p", "hi", "--model"},
			stderr: "error: option '--model <model>' argument missing\n", code: 1},
		{name: "output format choice", cli: "claude", args: []string{"-p", "--output-format", "yaml", "hi"},
			stderr: "error: option '--output-format <format>' argument 'yaml' is invalid. Allowed choices are text, json, stream-json.\n", code: 1},
		{name: "variadic swallows the prompt", cli: "claude", args: []string{"-p", "--allowedTools", "Bash", "Read"},
			stderr: "Error: Input must be provided either through stdin or as a prompt argument when using --print\n", code: 1},

		// Codex (docs/protocols/codex.md#invocation; clap: exit 2).
		{name: "output-jsonl", cli: "codex", args: []string{"exec", "--output-jsonl", "hi"},
			stderr: "error: unexpected argument '--output-jsonl' found\n\n  tip: to pass '--output-jsonl' as a value, use '-- --output-jsonl'" + clapTail, code: 2},
		{name: "full-auto", cli: "codex", args: []string{"exec", "--full-auto", "hi"},
			stderr: "error: unexpected argument '--full-auto' found\n\n  tip: to pass '--full-auto' as a value, use '-- --full-auto'" + clapTail, code: 2},
		{name: "--resume flag", cli: "codex", args: []string{"exec", "--resume", "abc", "hi"},
			stderr: "error: unexpected argument '--resume' found\n\n  tip: to pass '--resume' as a value, use '-- --resume'" + clapTail, code: 2},
		{name: "-a", cli: "codex", args: []string{"exec", "-a", "never", "hi"},
			stderr: "error: unexpected argument '-a' found\n\n  tip: to pass '-a' as a value, use '-- -a'" + clapTail, code: 2},
		{name: "-s after resume", cli: "codex", args: []string{"exec", "resume", "--last", "-s", "read-only", "x"},
			stderr: "error: unexpected argument '-s' found\n\n  tip: to pass '-s' as a value, use '-- -s'" + clapResume, code: 2},
		{name: "second prompt", cli: "codex", args: []string{"exec", "--skip-git-repo-check", "one", "two"},
			stderr: "error: unexpected argument 'two' found" + clapTail, code: 2},
		{name: "sandbox value", cli: "codex", args: []string{"exec", "-s", "none", "hi"},
			stderr: "error: invalid value 'none' for '--sandbox <SANDBOX_MODE>'\n  [possible values: read-only, workspace-write, danger-full-access]\n\nFor more information, try '--help'.\n", code: 2},
		{name: "missing value", cli: "codex", args: []string{"exec", "hi", "-m"},
			stderr: "error: a value is required for '--model <MODEL>' but none was supplied\n\nFor more information, try '--help'.\n", code: 2},
		{name: "untrusted", cli: "codex", args: []string{"exec", "--skip-git-repo-check", "-c", `approval_policy="untrusted"`, "hi"},
			stderr: "Reading additional input from stdin...\nError: approval_policy = \"untrusted\" is no longer supported; remove this setting\n", code: 1},
		{name: "not a git repo", cli: "codex", args: []string{"exec", "--json", "hi"},
			stderr: "Reading additional input from stdin...\nNot inside a trusted directory and --skip-git-repo-check was not specified.\n", code: 1},
		{name: "unknown thread", cli: "codex", args: []string{"exec", "--json", "--skip-git-repo-check", "resume", uuidB, "hi"},
			// exec resume with a prompt reads no stdin (human_resume.stderr.txt).
			stderr: "Error: thread/resume: thread/resume failed: no rollout found for thread id " + uuidB + " (code -32600)\n", code: 1},

		// Gemini (docs/protocols/gemini.md#invocation).
		{name: "yolo and approval mode", cli: "gemini", args: []string{"-y", "--approval-mode", "yolo", "-p", "hi"},
			stderr: "Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead." + geminiUsage1, prefix: true, code: 1},
		{name: "prompt and interactive", cli: "gemini", args: []string{"-p", "x", "-i", "y"},
			stderr: "Cannot use both --prompt (-p) and --prompt-interactive (-i) together" + geminiUsage1, prefix: true, code: 1},
		{name: "positional and prompt", cli: "gemini", args: []string{"-p", "x", "y"},
			stderr: "Cannot use both a positional prompt and the --prompt (-p) flag together" + geminiUsage1, prefix: true, code: 1},
		{name: "session flags", cli: "gemini", args: []string{"--resume", "latest", "--session-id", "abc", "-p", "x"},
			stderr: "The flags --resume, --session-id, and --session-file are mutually exclusive. Please provide only one." + geminiUsage1, prefix: true, code: 1},
		{name: "resume unknown", cli: "gemini", args: []string{"--resume", "nonexistent", "-p", "x", "-o", "stream-json"},
			stderr: "Error resuming session: No previous sessions found for this project.\n", code: 42},
		{name: "resume an id without sessions", cli: "gemini", args: []string{"--resume", uuidB, "-p", "x"},
			stderr: "Error resuming session: No previous sessions found for this project.\n", code: 42},
		{name: "unknown argument", cli: "gemini", args: []string{"--auto-edit", "-p", "x"},
			stderr: "Unknown argument: auto-edit" + geminiUsage1, prefix: true, code: 1},
		{name: "approval mode choice", cli: "gemini", args: []string{"--approval-mode", "never", "-p", "x"},
			stderr: "Invalid values:\n  Argument: approval-mode, Given: \"never\", Choices: \"default\", \"auto_edit\", \"yolo\", \"plan\"" + geminiUsage1, prefix: true, code: 1},
	}
	if os.Geteuid() == 0 {
		tests = append(tests, struct {
			name   string
			cli    string
			args   []string
			stderr string
			prefix bool
			code   int
			env    []string
		}{name: "skip permissions as root", cli: "claude", args: []string{"-p", "--dangerously-skip-permissions", "hi"},
			stderr: "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n", code: 1})
	}
	for _, tc := range tests {
		t.Run(tc.cli+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			r := runFake(t, f, tc.cli, tc.args, cmdOpts{env: tc.env})
			if r.code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, tc.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout is not empty: %q", r.stdout)
			}
			if tc.prefix {
				if !strings.HasPrefix(r.stderr, tc.stderr) {
					t.Errorf("stderr:\n%q\nwant it to start with\n%q", r.stderr, tc.stderr)
				}
			} else if r.stderr != tc.stderr {
				t.Errorf("stderr:\n%q\nwant\n%q", r.stderr, tc.stderr)
			}
		})
	}
}

// TestVersionAndHelp checks --version and --help of each fake.
func TestVersionAndHelp(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{})
	version := func(cli string) string {
		tr, err := loadFixture(cli + "/plain-text")
		if err != nil {
			t.Fatal(err)
		}
		return tr.Header.CLIVersion
	}
	for _, tc := range []struct {
		cli  string
		args []string
		want string
	}{
		{"claude", []string{"--version"}, version("claude") + " (Claude Code)\n"},
		{"claude", []string{"-v"}, version("claude") + " (Claude Code)\n"},
		{"codex", []string{"--version"}, "codex-cli " + version("codex") + "\n"},
		{"gemini", []string{"--version"}, version("gemini") + "\n"},
	} {
		r := runFake(t, f, tc.cli, tc.args, cmdOpts{})
		if r.code != 0 || r.stdout != tc.want {
			t.Errorf("%s %v: exit %d, stdout %q; want 0, %q", tc.cli, tc.args, r.code, r.stdout, tc.want)
		}
	}
	for _, tc := range []struct {
		cli  string
		args []string
		want string
	}{
		{"claude", []string{"--help"}, "Usage: claude [options]"},
		{"codex", []string{"exec", "--help"}, "Usage: codex exec"},
		{"gemini", []string{"--help"}, "Usage: gemini"},
	} {
		r := runFake(t, f, tc.cli, tc.args, cmdOpts{})
		if r.code != 0 || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("%s %v: exit %d, stdout %q; want 0 and %q", tc.cli, tc.args, r.code, r.stdout, tc.want)
		}
	}
}

// TestHarnessMistakes checks that a fake started with the wrong
// transcript says so and exits 2.
func TestHarnessMistakes(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text"})
	r := runFake(t, f, "codex", []string{"exec", "--json", "--skip-git-repo-check", "hi"}, cmdOpts{})
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "recorded from claude, but this fake is codex") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	f = fakecli.Start(t, fakecli.Options{Fixture: "codex/no-such-scenario"})
	r = runFake(t, f, "codex", []string{"exec", "--json", "--skip-git-repo-check", "hi"}, cmdOpts{})
	if r.code != 2 || !strings.Contains(r.stderr, `no fixture "codex/no-such-scenario"`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
