package fakecli

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/pflag"
)

// geminiFlags is Gemini CLI's command line: `gemini --help` of 0.61.0 and
// the yargs options of google-gemini/gemini-cli@5411f113
// packages/cli/src/config/config.ts.
type geminiFlags struct {
	prompt            string
	promptGiven       bool
	promptInteractive string
	interactiveGiven  bool
	positional        string
	outputFormat      string
	model             string
	yolo              bool
	approvalMode      string
	approvalGiven     bool
	skipTrust         bool
	resume            string
	resumeGiven       bool
	sessionID         string
	sessionFile       string
	listSessions      bool
	deleteSession     string
	version, help     bool
	// acp is --acp or its deprecated alias --experimental-acp: the Agent
	// Client Protocol on stdio (gemini_acp.go).
	acp bool
}

var (
	geminiOutputFormats = []string{"text", "json", "stream-json"}
	geminiApprovalModes = []string{"default", "auto_edit", "yolo", "plan"}
	geminiArrays        = map[string]bool{"allowed-tools": true, "allowed-mcp-server-names": true, "extensions": true,
		"include-directories": true, "policy": true, "admin-policy": true}
)

func geminiFlagSet(f *geminiFlags) *pflag.FlagSet {
	fs := newFlagSet("gemini")
	// yargs accepts every option in camelCase too (--outputFormat).
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		var b strings.Builder
		for _, r := range name {
			if unicode.IsUpper(r) {
				b.WriteByte('-')
				r = unicode.ToLower(r)
			}
			b.WriteRune(r)
		}
		return pflag.NormalizedName(b.String())
	})
	fs.StringVarP(&f.model, "model", "m", "", "Model")
	fs.StringVarP(&f.prompt, "prompt", "p", "", "Run in non-interactive (headless) mode with the given prompt. Appended to input on stdin (if any).")
	fs.StringVarP(&f.promptInteractive, "prompt-interactive", "i", "", "Execute the provided prompt and continue in interactive mode")
	fs.BoolVarP(&f.yolo, "yolo", "y", false, "Automatically accept all actions (aka YOLO mode)")
	fs.StringVar(&f.approvalMode, "approval-mode", "", "Set the approval mode: default, auto_edit, yolo, plan")
	fs.StringVarP(&f.outputFormat, "output-format", "o", "text", "The format of the CLI output.")
	fs.BoolVar(&f.skipTrust, "skip-trust", false, "Trust the current folder for this session")
	fs.StringVarP(&f.resume, "resume", "r", "", `Resume a previous session. Use "latest" for most recent or index number (e.g. --resume 5)`)
	fs.Lookup("resume").NoOptDefVal = "latest"
	fs.StringVar(&f.sessionID, "session-id", "", "Start a new session with a manually provided UUID")
	fs.StringVar(&f.sessionFile, "session-file", "", "Load a session from a file")
	fs.BoolVar(&f.listSessions, "list-sessions", false, "List available sessions for the current project and exit")
	fs.StringVar(&f.deleteSession, "delete-session", "", "Delete a session by index number")
	fs.BoolVarP(&f.version, "version", "v", false, "Show version number")
	fs.BoolVarP(&f.help, "help", "h", false, "Show help")
	fs.BoolVar(&f.acp, "acp", false, "Starts the agent in ACP mode")
	fs.BoolVar(&f.acp, "experimental-acp", false, "Starts the agent in ACP mode (deprecated, use --acp instead)")
	var ignored struct {
		b    bool
		s    string
		strs []string
	}
	for _, n := range []string{"sandbox:s", "debug:d", "list-extensions:l", "screen-reader",
		"checkpointing", "telemetry", "telemetry-log-prompts", "show-memory-usage", "all-files:a"} {
		name, short, _ := strings.Cut(n, ":")
		fs.BoolVarP(&ignored.b, name, short, false, "")
	}
	for _, n := range []string{"telemetry-target", "telemetry-otlp-endpoint", "telemetry-otlp-protocol", "telemetry-outfile", "proxy"} {
		fs.StringVar(&ignored.s, n, "", "")
	}
	for n := range geminiArrays {
		short := ""
		if n == "extensions" {
			short = "e"
		}
		fs.StringArrayVarP(&ignored.strs, n, short, nil, "")
	}
	return fs
}

// parseGeminiFlags parses Gemini's command line; a non-empty msg is the
// stderr of an invalid invocation, with its exit status.
func parseGeminiFlags(args []string) (f geminiFlags, msg string, code int) {
	fs := geminiFlagSet(&f)
	res, aerr := normalizeArgs(fs, args, scanOpts{variadic: geminiArrays, optionalTakesNext: true, valueMayLookLikeFlag: true, allUnknown: true})
	if aerr != nil {
		if aerr.kind == errMissingValue {
			return f, yargsError(fmt.Sprintf("Not enough arguments following: %s", strings.TrimLeft(aerr.token, "-"))), 1
		}
	}
	if len(res.unknown) > 0 {
		names := make([]string, len(res.unknown))
		for i, u := range res.unknown {
			names[i] = strings.TrimLeft(u.token, "-")
		}
		word := "argument"
		if len(names) > 1 {
			word = "arguments"
		}
		return f, yargsError(fmt.Sprintf("Unknown %s: %s", word, strings.Join(names, ", "))), 1
	}
	if err := fs.Parse(res.args); err != nil {
		return f, yargsError(err.Error()), 1
	}
	f.promptGiven = fs.Changed("prompt")
	f.interactiveGiven = fs.Changed("prompt-interactive")
	f.approvalGiven = fs.Changed("approval-mode")
	f.resumeGiven = fs.Changed("resume")
	f.positional = strings.Join(fs.Args(), " ")
	if f.help || f.version {
		return f, "", 0
	}
	if fs.Changed("output-format") && !slices.Contains(geminiOutputFormats, f.outputFormat) {
		return f, yargsInvalid("output-format", f.outputFormat, geminiOutputFormats), 1
	}
	if f.approvalGiven && !slices.Contains(geminiApprovalModes, f.approvalMode) {
		return f, yargsInvalid("approval-mode", f.approvalMode, geminiApprovalModes), 1
	}
	// The .check()s of config.ts.
	switch {
	case f.promptGiven && f.interactiveGiven:
		return f, yargsError("Cannot use both --prompt (-p) and --prompt-interactive (-i) together"), 1
	case f.yolo && f.approvalGiven:
		return f, yargsError("Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead."), 1
	case f.positional != "" && f.promptGiven:
		return f, yargsError("Cannot use both a positional prompt and the --prompt (-p) flag together"), 1
	}
	n := 0
	for _, set := range []bool{f.resumeGiven, f.sessionID != "", f.sessionFile != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return f, yargsError("The flags --resume, --session-id, and --session-file are mutually exclusive. Please provide only one."), 1
	}
	return f, "", 0
}

// yargsError is a yargs failure: the message, then the usage.
func yargsError(msg string) string {
	return msg + "\n\n" + geminiUsage
}

func yargsInvalid(name, val string, choices []string) string {
	q := make([]string, len(choices))
	for i, c := range choices {
		q[i] = fmt.Sprintf("%q", c)
	}
	return yargsError(fmt.Sprintf("Invalid values:\n  Argument: %s, Given: %q, Choices: %s", name, val, strings.Join(q, ", ")))
}

const geminiUsage = `Usage: gemini [options] [command]

Gemini CLI - Launch an interactive CLI, use -p/--prompt for non-interactive mode

Commands:
  gemini [query..]             Launch Gemini CLI  [default]

Positionals:
  query  Positional prompt. Defaults to one-shot; use -i/--prompt-interactive for interactive.

Options:
  -d, --debug                     Run in debug mode?  [boolean] [default: false]
  -m, --model                     Model  [string]
  -p, --prompt                    Run in non-interactive (headless) mode with the given prompt. Appended to input on stdin (if any).  [string]
  -i, --prompt-interactive        Execute the provided prompt and continue in interactive mode  [string]
  -s, --sandbox                   Run in sandbox?  [boolean]
  -y, --yolo                      Automatically accept all actions (aka YOLO mode)  [boolean] [default: false]
      --approval-mode             Set the approval mode  [string] [choices: "default", "auto_edit", "yolo", "plan"]
      --acp                       Starts the agent in ACP mode  [boolean]
      --experimental-acp          Starts the agent in ACP mode (deprecated, use --acp instead)  [boolean]
      --skip-trust                Trust the current folder for this session  [boolean]
      --allowed-tools             [DEPRECATED: Use Policy Engine instead] Tools that are allowed to run without confirmation  [array]
  -e, --extensions                A list of extensions to use  [array]
  -r, --resume                    Resume a previous session. Use "latest" for most recent or index number (e.g. --resume 5)  [string]
      --list-sessions             List available sessions for the current project and exit.  [boolean]
      --delete-session            Delete a session by index number (use --list-sessions to see available sessions).  [string]
      --session-id                Start a new session with a manually provided UUID  [string]
      --session-file              Load a session from a file  [string]
      --include-directories       Additional directories to include in the workspace  [array]
      --screen-reader             Enable screen reader mode for accessibility.  [boolean]
  -o, --output-format             The format of the CLI output.  [string] [choices: "text", "json", "stream-json"]
  -v, --version                   Show version number  [boolean]
  -h, --help                      Show help  [boolean]
`
