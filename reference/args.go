package reference

import (
	"strconv"
	"strings"
)

// claudeArgs is how the SDKs start Claude Code: long-lived, stream-json
// on both sides (docs/protocols/claude.md#invocation). --resume=ID is one token, as the
// Python SDK passes it, so that an id cannot be read as a flag.
func claudeArgs(c Config) []string {
	args := []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
	if c.Permission != PermissionDefault || c.CanUseTool != nil {
		args = append(args, "--permission-prompt-tool", "stdio")
	}
	if c.PartialMessages {
		args = append(args, "--include-partial-messages")
	}
	if c.Model != "" {
		args = append(args, "--model", c.Model)
	}
	if c.Resume != "" {
		args = append(args, "--resume="+c.Resume)
	}
	if c.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(c.MaxTurns))
	}
	return append(args, c.ExtraArgs...)
}

// codexArgs runs one Codex turn (docs/protocols/codex.md#invocation): `exec --json`, the
// options before `resume <id>` (which rejects -s after it), and the prompt
// last. A prompt that starts with "-" would read as a flag, so it goes to
// stdin instead, named by "-"; the second result says so.
func codexArgs(c Config, resume, prompt string) ([]string, bool) {
	args := []string{"exec", "--json", "--skip-git-repo-check"}
	if c.Model != "" {
		args = append(args, "-m", c.Model)
	}
	if s := c.sandbox(); s != "" {
		args = append(args, "-s", s)
	}
	args = append(args, c.ExtraArgs...)
	if resume != "" {
		args = append(args, "resume", resume)
	}
	if strings.HasPrefix(prompt, "-") {
		return append(args, "-"), true
	}
	return append(args, prompt), false
}

// geminiArgs runs one Gemini turn (docs/protocols/gemini.md#invocation). Headless default
// mode removes the tools that need confirmation, so allow is -y and deny
// is --approval-mode default (never both: the CLI rejects that).
func geminiArgs(c Config, resume, prompt string) []string {
	var args []string
	if strings.HasPrefix(prompt, "-") {
		args = append(args, "--prompt="+prompt)
	} else {
		args = append(args, "-p", prompt)
	}
	args = append(args, "-o", "stream-json")
	if c.Model != "" {
		args = append(args, "-m", c.Model)
	}
	switch c.Permission {
	case PermissionAllow:
		args = append(args, "-y")
	case PermissionDeny:
		args = append(args, "--approval-mode", "default")
	}
	if resume != "" {
		args = append(args, "--resume", resume)
	}
	return append(args, c.ExtraArgs...)
}
