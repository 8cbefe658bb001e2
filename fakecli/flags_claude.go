package fakecli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// claudeFlags is Claude Code's command line (2.1.329, docs/protocols/claude.md#invocation).
type claudeFlags struct {
	print                 bool
	outputFormat          string
	inputFormat           string
	verbose               bool
	includePartial        bool
	replayUser            bool
	permissionPromptTool  string
	permissionMode        string
	model                 string
	resume                string
	resumeSet             bool
	continueLast          bool
	forkSession           bool
	sessionID             string
	noSessionPersistence  bool
	jsonSchema            string
	resumeSessionAt       string
	dangerouslySkip       bool
	allowDangerouslySkip  bool
	version, help         bool
	prompt                string
	promptGiven           bool
	outputFormatGiven     bool
	permissionPromptGiven bool
}

// claudeValueNames are the commander value names of Claude's options, for
// its "option '--x <name>'" messages.
var claudeValueNames = map[string]string{
	"output-format": "<format>", "input-format": "<format>", "permission-mode": "<mode>", "model": "<model>",
	"permission-prompt-tool": "<tool>", "system-prompt": "<prompt>", "append-system-prompt": "<prompt>",
	"max-turns": "<turns>", "max-budget-usd": "<amount>", "allowedTools": "<tools...>", "allowed-tools": "<tools...>",
	"disallowedTools": "<tools...>", "disallowed-tools": "<tools...>", "tools": "<tools...>", "mcp-config": "<configs...>",
	"settings": "<file-or-json>", "add-dir": "<directories...>", "session-id": "<uuid>", "json-schema": "<schema>",
	"fallback-model": "<model>", "agent": "<agent>", "agents": "<json>", "betas": "<betas...>",
	"setting-sources": "<sources>", "plugin-dir": "<paths...>", "resume-session-at": "<message id>",
	"permission-prompts": "<mode>", "max-thinking-tokens": "<tokens>", "system-prompt-file": "<file>",
	"append-system-prompt-file": "<file>", "file": "<specs...>", "effort": "<level>", "debug-file": "<path>",
	"resume": "[value]", "debug": "[filter]",
}

var claudeVariadic = map[string]bool{
	"allowedTools": true, "allowed-tools": true, "disallowedTools": true, "disallowed-tools": true, "tools": true,
	"mcp-config": true, "add-dir": true, "betas": true, "plugin-dir": true, "file": true,
}

// claudePermissionModes are the --permission-mode choices commander lists;
// "default" is accepted too (docs/protocols/claude.md#invocation).
var claudePermissionModes = []string{"acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan"}

func claudeFlagSet(f *claudeFlags) *pflag.FlagSet {
	fs := newFlagSet("claude")
	fs.BoolVarP(&f.print, "print", "p", false, "Print response and exit (useful for pipes)")
	fs.StringVar(&f.outputFormat, "output-format", "text", `Output format (only with --print): "text", "json", or "stream-json"`)
	fs.StringVar(&f.inputFormat, "input-format", "text", `Input format (only with --print): "text" or "stream-json"`)
	fs.BoolVar(&f.verbose, "verbose", false, "Override verbose mode setting from config")
	fs.BoolVar(&f.includePartial, "include-partial-messages", false, "Include partial message chunks as they arrive")
	fs.BoolVar(&f.replayUser, "replay-user-messages", false, "Re-emit user messages from stdin back on stdout")
	fs.StringVar(&f.permissionPromptTool, "permission-prompt-tool", "", "MCP tool (or stdio) to handle permission prompts in --print mode")
	fs.StringVar(&f.permissionMode, "permission-mode", "", "Permission mode to use for the session")
	fs.StringVar(&f.model, "model", "", "Model for the current session")
	fs.StringVarP(&f.resume, "resume", "r", "", "Resume a conversation by session ID or title")
	fs.Lookup("resume").NoOptDefVal = " "
	fs.BoolVarP(&f.continueLast, "continue", "c", false, "Continue the most recent conversation")
	fs.BoolVar(&f.forkSession, "fork-session", false, "When resuming, create a new session ID instead of reusing the original")
	fs.StringVar(&f.sessionID, "session-id", "", "Use a specific session ID for the conversation (must be a valid UUID)")
	fs.BoolVar(&f.noSessionPersistence, "no-session-persistence", false, "Disable session persistence (only with --print)")
	fs.StringVar(&f.jsonSchema, "json-schema", "", "JSON Schema for structured output validation")
	fs.StringVar(&f.resumeSessionAt, "resume-session-at", "", "When resuming, only messages up to this message id")
	fs.BoolVar(&f.dangerouslySkip, "dangerously-skip-permissions", false, "Bypass all permission checks")
	fs.BoolVar(&f.allowDangerouslySkip, "allow-dangerously-skip-permissions", false, "Enable bypassing all permission checks as an option")
	fs.BoolVarP(&f.version, "version", "v", false, "Output the version number")
	fs.BoolVarP(&f.help, "help", "h", false, "Display help for command")
	var ignored struct {
		strs []string
		str  string
		b    bool
	}
	for _, n := range []string{"system-prompt", "append-system-prompt", "max-turns", "max-budget-usd", "settings",
		"fallback-model", "agent", "agents", "setting-sources", "permission-prompts", "max-thinking-tokens",
		"system-prompt-file", "append-system-prompt-file", "effort", "debug-file"} {
		fs.StringVar(&ignored.str, n, "", "")
	}
	fs.StringVarP(&ignored.str, "debug", "d", "", "Enable debug mode with optional category filtering")
	fs.Lookup("debug").NoOptDefVal = " "
	for n := range claudeVariadic {
		fs.StringArrayVar(&ignored.strs, n, nil, "")
	}
	for _, n := range []string{"include-hook-events", "forward-subagent-text", "mcp-debug",
		"ide", "strict-mcp-config", "disable-slash-commands", "await-initialize", "prompt-suggestions", "chrome"} {
		fs.BoolVar(&ignored.b, n, false, "")
	}
	return fs
}

// parseClaudeFlags parses Claude's command line. A non-empty msg is the
// exact stderr of an invalid invocation (exit 1).
func parseClaudeFlags(args []string) (f claudeFlags, msg string) {
	fs := claudeFlagSet(&f)
	res, aerr := normalizeArgs(fs, args, scanOpts{variadic: claudeVariadic, optionalTakesNext: true, valueMayLookLikeFlag: true})
	if aerr != nil {
		return f, commanderError(fs, aerr)
	}
	if err := fs.Parse(res.args); err != nil {
		return f, "error: " + err.Error()
	}
	if rf := fs.Lookup("resume"); rf.Changed {
		f.resumeSet = true
		f.resume = strings.TrimSpace(f.resume)
	}
	f.outputFormatGiven = fs.Changed("output-format")
	f.permissionPromptGiven = fs.Changed("permission-prompt-tool")
	if fs.NArg() > 0 {
		f.prompt = strings.Join(fs.Args(), " ")
		f.promptGiven = true
	}
	if f.help || f.version {
		return f, ""
	}
	// Choices, checked by commander as it parses, in command-line order;
	// one pass over the flags in definition order is close enough.
	if fs.Changed("output-format") && !slices.Contains([]string{"text", "json", "stream-json"}, f.outputFormat) {
		return f, invalidChoice("--output-format <format>", f.outputFormat, []string{"text", "json", "stream-json"})
	}
	if fs.Changed("input-format") && !slices.Contains([]string{"text", "stream-json"}, f.inputFormat) {
		return f, invalidChoice("--input-format <format>", f.inputFormat, []string{"text", "stream-json"})
	}
	if fs.Changed("permission-mode") && f.permissionMode != "default" && !slices.Contains(claudePermissionModes, f.permissionMode) {
		return f, invalidChoice("--permission-mode <mode>", f.permissionMode, claudePermissionModes)
	}
	return f, ""
}

func invalidChoice(opt, val string, choices []string) string {
	return fmt.Sprintf("error: option '%s' argument '%s' is invalid. Allowed choices are %s.", opt, val, strings.Join(choices, ", "))
}

// commanderError renders an argument error as commander.js does.
func commanderError(fs *pflag.FlagSet, e *argError) string {
	switch e.kind {
	case errMissingValue:
		return fmt.Sprintf("error: option '%s %s' argument missing", commanderFlags(e.flag), claudeValueNames[e.flag.Name])
	default:
		msg := fmt.Sprintf("error: unknown option '%s'", e.token)
		if strings.HasPrefix(e.token, "--") {
			msg += suggestSimilar(strings.TrimPrefix(e.token, "--"), fs)
		}
		return msg
	}
}

// commanderFlags is how commander names an option in messages: "-p,
// --print" when it has a short form.
func commanderFlags(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "-" + f.Shorthand + ", --" + f.Name
	}
	return "--" + f.Name
}

// suggestSimilar is commander's "(Did you mean --x?)" for an unknown long
// option.
func suggestSimilar(word string, fs *pflag.FlagSet) string {
	const maxDistance, minSimilarity = 3, 0.4
	best := maxDistance
	var similar []string
	seen := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) {
		c := f.Name
		if len(c) <= 1 || seen[c] {
			return
		}
		seen[c] = true
		d := editDistance(word, c)
		l := max(len(word), len(c))
		if float64(l-d)/float64(l) <= minSimilarity {
			return
		}
		switch {
		case d < best:
			best = d
			similar = []string{c}
		case d == best:
			similar = append(similar, c)
		}
	})
	slices.Sort(similar)
	for i := range similar {
		similar[i] = "--" + similar[i]
	}
	switch len(similar) {
	case 0:
		return ""
	case 1:
		return "\n(Did you mean " + similar[0] + "?)"
	}
	return "\n(Did you mean one of " + strings.Join(similar, ", ") + "?)"
}

// claudeCheck applies the invocation rules (docs/protocols/claude.md#invocation) that do
// not need the session store or stdin, in the order the CLI checks them.
// printMode is -p or a stdout that is not a terminal.
func claudeCheck(f *claudeFlags, printMode, root bool, env func(string) string) string {
	if root && f.bypassRequested() && !deliberateSandbox(env) {
		return claudeRootBypassError
	}
	if f.inputFormat == "stream-json" && !printMode {
		return "Error: --input-format=stream-json requires --print."
	}
	if f.inputFormat == "stream-json" && f.outputFormat != "stream-json" {
		return "Error: --input-format=stream-json requires output-format=stream-json."
	}
	if printMode && f.outputFormat == "stream-json" && !f.verbose {
		return "Error: When using --print, --output-format=stream-json requires --verbose"
	}
	if f.includePartial && (!printMode || f.outputFormat != "stream-json") {
		return "Error: --include-partial-messages requires --print and --output-format=stream-json."
	}
	if f.replayUser && (f.inputFormat != "stream-json" || f.outputFormat != "stream-json") {
		return "Error: --replay-user-messages requires both --input-format=stream-json and --output-format=stream-json."
	}
	if f.noSessionPersistence && !printMode {
		return "Error: --no-session-persistence only works with --print."
	}
	if f.resumeSessionAt != "" && !f.resumeSet {
		return "Error: --resume-session-at requires --resume"
	}
	if f.sessionID != "" && (f.resumeSet || f.continueLast) && !f.forkSession {
		return "Error: --session-id with --continue or --resume also needs --fork-session."
	}
	if f.sessionID != "" && !isUUID(f.sessionID) {
		return "Error: Invalid session ID. Must be a valid UUID."
	}
	if f.jsonSchema != "" {
		var v any
		if err := json.Unmarshal([]byte(f.jsonSchema), &v); err != nil {
			return "Error: --json-schema is not valid JSON: " + err.Error()
		}
	}
	return ""
}

// claudeRootBypassError is what the real CLI writes on stderr (then exit
// 1) when a bypass of permission checks is asked for as root outside a
// sandbox it trusts. The text names neither way past it: IS_SANDBOX=1,
// or CLAUDE_CODE_BUBBLEWRAP set (see deliberateSandbox). Observed on
// 2.1.329 and 2.1.331 for --dangerously-skip-permissions, --permission-mode
// bypassPermissions and --allow-dangerously-skip-permissions alike, before
// any other check of the combination of flags.
const claudeRootBypassError = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"

// bypassRequested reports whether the command line asks to bypass
// permission checks, which the real CLI refuses to root: in its bundled JS
// the check reads `if(c==="bypassPermissions"||r)` (the permission mode,
// or either skip flag).
func (f *claudeFlags) bypassRequested() bool {
	return f.dangerouslySkip || f.allowDangerouslySkip || f.permissionMode == "bypassPermissions"
}

// deliberateSandbox is the real CLI's way past the root check
// (isRootOutsideDeliberateSandbox in its bundled JS): IS_SANDBOX exactly
// "1", or CLAUDE_CODE_BUBBLEWRAP set to a true value ("1", "true", "yes",
// "on", any case).
func deliberateSandbox(env func(string) string) bool {
	return env("IS_SANDBOX") == "1" || envTrue(env("CLAUDE_CODE_BUBBLEWRAP"))
}

// envTrue is how Claude Code reads a boolean environment variable.
func envTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// claudeResumeError is the CLI's message for a --resume value that is
// neither a UUID nor a session title.
func claudeResumeError(v string) string {
	return fmt.Sprintf("Error: --resume requires a valid session ID or session title when used with --print. Usage: claude -p --resume <session-id|title>. Provided value %q is not a UUID and does not match any session title.", v)
}

const claudeHelp = `Usage: claude [options] [command] [prompt]

Claude Code - starts an interactive session by default, use -p/--print for
non-interactive output

Arguments:
  prompt                                            Your prompt

Options:
  -d, --debug [filter]                              Enable debug mode with optional category filtering
  --verbose                                         Override verbose mode setting from config
  -p, --print                                       Print response and exit (useful for pipes)
  --output-format <format>                          Output format (only works with --print): "text" (default), "json" (single result), or "stream-json" (realtime streaming) (choices: "text", "json", "stream-json")
  --json-schema <schema>                            JSON Schema for structured output validation
  --include-hook-events                             Include all hook lifecycle events in the output stream (only works with --output-format=stream-json)
  --include-partial-messages                        Include partial message chunks as they arrive (only works with --print and --output-format=stream-json)
  --input-format <format>                           Input format (only works with --print): "text" (default), or "stream-json" (realtime streaming input) (choices: "text", "stream-json")
  --dangerously-skip-permissions                    Bypass all permission checks
  --allow-dangerously-skip-permissions              Enable bypassing all permission checks as an option
  --max-budget-usd <amount>                         Maximum dollar amount to spend on API calls (only works with --print)
  --replay-user-messages                            Re-emit user messages from stdin back on stdout for acknowledgment
  --allowedTools, --allowed-tools <tools...>        Comma or space-separated list of tool names to allow
  --tools <tools...>                                Specify the list of available tools from the built-in set
  --disallowedTools, --disallowed-tools <tools...>  Comma or space-separated list of tool names to deny
  --mcp-config <configs...>                         Load MCP servers from JSON files or strings (space-separated)
  --system-prompt <prompt>                          System prompt to use for the session
  --append-system-prompt <prompt>                   Append a system prompt to the default system prompt
  --permission-mode <mode>                          Permission mode to use for the session (choices: "acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan")
  -c, --continue                                    Continue the most recent conversation in the current directory
  -r, --resume [value]                              Resume a conversation by session ID, or open interactive picker with optional search term
  --fork-session                                    When resuming, create a new session ID instead of reusing the original (use with --resume or --continue)
  --no-session-persistence                          Disable session persistence - sessions will not be saved to disk and cannot be resumed (only works with --print)
  --model <model>                                   Model for the current session
  --fallback-model <model>                          Enable automatic fallback to specified model when default model is overloaded (only works with --print)
  --settings <file-or-json>                         Path to a settings JSON file or a JSON string to load additional settings from
  --add-dir <directories...>                        Additional directories to allow tool access to
  --session-id <uuid>                               Use a specific session ID for the conversation (must be a valid UUID)
  --max-turns <turns>                               Maximum number of agentic turns (only works with --print)
  --permission-prompt-tool <tool>                   MCP tool to handle permission prompts (only works with --print)
  -v, --version                                     Output the version number
  -h, --help                                        Display help for command
`
