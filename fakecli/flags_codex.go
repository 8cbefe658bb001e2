package fakecli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// codexFlags is `codex exec` as `codex exec --help` of 0.169.0 shows it.
type codexFlags struct {
	json         bool
	skipGitCheck bool
	sandbox      string
	cd           string
	model        string
	configs      []string
	outputSchema string
	lastMessage  string
	images       []string
	addDirs      []string
	ephemeral    bool
	approveForMe bool
	yolo         bool
	features     []string
	profile      string
	color        string
	oss          bool

	resume   bool
	resumeID string
	last     bool
	all      bool

	prompt      string
	promptGiven bool
	help        bool
}

// codexValueNames are clap's value names, for its messages.
var codexValueNames = map[string]string{
	"sandbox": "<SANDBOX_MODE>", "cd": "<DIR>", "model": "<MODEL>", "config": "<key=value>",
	"output-schema": "<FILE>", "output-last-message": "<FILE>", "image": "<FILE>...", "add-dir": "<DIR>",
	"enable": "<FEATURE>", "disable": "<FEATURE>", "profile": "<CONFIG_PROFILE>", "color": "<COLOR>",
	"local-provider": "<OSS_PROVIDER>",
}

var codexSandboxModes = []string{"read-only", "workspace-write", "danger-full-access"}

// codexExecFlags defines the flags of `codex exec` (resume false) or of
// `codex exec resume` (resume true), which lacks -s, -C, --add-dir,
// --profile and the provider flags but adds --last and --all.
func codexExecFlags(f *codexFlags, resume bool) *pflag.FlagSet {
	name := "exec"
	if resume {
		name = "resume"
	}
	fs := newFlagSet(name)
	fs.BoolVar(&f.json, "json", false, "Print events to stdout as JSONL")
	fs.BoolVar(&f.json, "experimental-json", false, "")
	fs.BoolVar(&f.skipGitCheck, "skip-git-repo-check", false, "Allow running Codex outside a Git repository")
	fs.StringArrayVarP(&f.configs, "config", "c", nil, "Override a configuration value")
	fs.StringVar(&f.outputSchema, "output-schema", "", "Path to a JSON Schema file describing the model's final response shape")
	fs.StringVarP(&f.lastMessage, "output-last-message", "o", "", "Specifies file where the last message from the agent should be written")
	fs.StringArrayVarP(&f.images, "image", "i", nil, "Optional image(s) to attach to the initial prompt")
	fs.StringVarP(&f.model, "model", "m", "", "Model the agent should use")
	fs.BoolVar(&f.ephemeral, "ephemeral", false, "Run without persisting session files to disk")
	fs.BoolVar(&f.yolo, "dangerously-bypass-approvals-and-sandbox", false, "Skip all confirmation prompts and execute commands without sandboxing")
	fs.BoolVar(&f.yolo, "yolo", false, "")
	fs.StringArrayVar(&f.features, "enable", nil, "Enable a feature")
	fs.StringArrayVar(&f.features, "disable", nil, "Disable a feature")
	fs.BoolVarP(&f.help, "help", "h", false, "Print help")
	if resume {
		fs.BoolVar(&f.last, "last", false, "Resume the most recent recorded session (newest) without specifying an id")
		fs.BoolVar(&f.all, "all", false, "Show all sessions (disables cwd filtering)")
		return fs
	}
	fs.StringVarP(&f.sandbox, "sandbox", "s", "", "Select the sandbox policy to use when executing model-generated shell commands")
	fs.StringVarP(&f.cd, "cd", "C", "", "Tell the agent to use the specified directory as its working root")
	fs.StringArrayVar(&f.addDirs, "add-dir", nil, "Additional directories that should be writable")
	fs.StringVarP(&f.profile, "profile", "p", "", "Configuration profile from config.toml to specify default options")
	fs.BoolVar(&f.approveForMe, "approve-for-me", false, "Route approval requests through automatic review using the workspace-write sandbox")
	fs.StringVar(&f.color, "color", "auto", "Specifies color settings for use in the output")
	fs.BoolVar(&f.oss, "oss", false, "Use a local open source model provider")
	var provider string
	fs.StringVar(&provider, "local-provider", "", "")
	return fs
}

const (
	codexExecUsage   = "codex exec [OPTIONS] [PROMPT] [COMMAND]"
	codexResumeUsage = "codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]"
)

// clapUnexpected is clap's error for an argument it does not know.
func clapUnexpected(tok, usage string) string {
	tip := ""
	if strings.HasPrefix(tok, "-") {
		tip = fmt.Sprintf("  tip: to pass '%s' as a value, use '-- %s'\n\n", tok, tok)
	}
	return fmt.Sprintf("error: unexpected argument '%s' found\n\n%sUsage: %s\n\nFor more information, try '--help'.\n", tok, tip, usage)
}

// clapMissingValue is clap's error for a flag without its value.
func clapMissingValue(f *pflag.Flag) string {
	return fmt.Sprintf("error: a value is required for '%s %s' but none was supplied\n\nFor more information, try '--help'.\n", clapName(f), codexValueNames[f.Name])
}

// clapInvalidValue is clap's error for a value outside the possible ones.
func clapInvalidValue(f *pflag.Flag, val string, possible []string) string {
	return fmt.Sprintf("error: invalid value '%s' for '%s %s'\n  [possible values: %s]\n\nFor more information, try '--help'.\n",
		val, clapName(f), codexValueNames[f.Name], strings.Join(possible, ", "))
}

func clapName(f *pflag.Flag) string { return "--" + f.Name }

// parseCodexExec parses the arguments after `exec`. A non-empty msg is
// the exact stderr of an invalid invocation (clap: exit 2).
func parseCodexExec(args []string) (f codexFlags, msg string) {
	fs := codexExecFlags(&f, false)
	res, aerr := normalizeArgs(fs, args, scanOpts{
		variadic: map[string]bool{"image": true},
		stop:     func(tok string, n int) bool { return n == 0 && tok == "resume" },
	})
	if aerr != nil {
		return f, codexArgError(aerr, codexExecUsage)
	}
	if err := fs.Parse(res.args); err != nil {
		return f, "error: " + err.Error() + "\n"
	}
	if f.help {
		return f, ""
	}
	if fs.Changed("sandbox") && !slices.Contains(codexSandboxModes, f.sandbox) {
		return f, clapInvalidValue(fs.Lookup("sandbox"), f.sandbox, codexSandboxModes)
	}
	if fs.Changed("color") && !slices.Contains([]string{"always", "never", "auto"}, f.color) {
		return f, clapInvalidValue(fs.Lookup("color"), f.color, []string{"always", "never", "auto"})
	}
	pos := fs.Args()
	if res.stoppedAt >= 0 {
		if len(pos) > 0 {
			return f, clapUnexpected(pos[0], codexExecUsage)
		}
		f.resume = true
		return f, parseCodexResume(&f, args[res.stoppedAt+1:])
	}
	switch {
	case len(pos) > 1:
		return f, clapUnexpected(pos[1], codexExecUsage)
	case len(pos) == 1:
		f.prompt, f.promptGiven = pos[0], true
	}
	return f, ""
}

// parseCodexResume parses the arguments after `exec ... resume`.
func parseCodexResume(f *codexFlags, args []string) string {
	// Defining flags resets their variables: parse into r, then merge.
	var r codexFlags
	fs := codexExecFlags(&r, true)
	res, aerr := normalizeArgs(fs, args, scanOpts{variadic: map[string]bool{"image": true}})
	if aerr != nil {
		return codexArgError(aerr, codexResumeUsage)
	}
	if err := fs.Parse(res.args); err != nil {
		return "error: " + err.Error() + "\n"
	}
	f.json = f.json || r.json
	f.skipGitCheck = f.skipGitCheck || r.skipGitCheck
	f.ephemeral = f.ephemeral || r.ephemeral
	f.yolo = f.yolo || r.yolo
	f.help = f.help || r.help
	f.last, f.all = r.last, r.all
	f.configs = append(f.configs, r.configs...)
	f.images = append(f.images, r.images...)
	f.features = append(f.features, r.features...)
	if r.model != "" {
		f.model = r.model
	}
	if r.outputSchema != "" {
		f.outputSchema = r.outputSchema
	}
	if r.lastMessage != "" {
		f.lastMessage = r.lastMessage
	}
	if f.help {
		return ""
	}
	pos := fs.Args()
	if f.last {
		// With --last the positional is the prompt.
		switch {
		case len(pos) > 1:
			return clapUnexpected(pos[1], codexResumeUsage)
		case len(pos) == 1:
			f.prompt, f.promptGiven = pos[0], true
		}
		return ""
	}
	switch {
	case len(pos) == 0:
		return "error: the following required arguments were not provided:\n  <SESSION_ID>\n\nUsage: " + codexResumeUsage + "\n\nFor more information, try '--help'.\n"
	case len(pos) > 2:
		return clapUnexpected(pos[2], codexResumeUsage)
	}
	f.resumeID = pos[0]
	if len(pos) == 2 {
		f.prompt, f.promptGiven = pos[1], true
	}
	return ""
}

func codexArgError(e *argError, usage string) string {
	if e.kind == errMissingValue {
		return clapMissingValue(e.flag)
	}
	return clapUnexpected(e.token, usage)
}

// codexConfigError checks the -c overrides the real CLI rejects when it
// loads its configuration (exit 1).
func codexConfigError(configs []string) string {
	for _, c := range configs {
		k, v, ok := strings.Cut(c, "=")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if strings.TrimSpace(k) == "approval_policy" && v == "untrusted" {
			return `Error: approval_policy = "untrusted" is no longer supported; remove this setting`
		}
	}
	return ""
}

const codexHelp = `Run Codex non-interactively

Usage: codex exec [OPTIONS] [PROMPT] [COMMAND]

Commands:
  resume  Resume a previous session by id or pick the most recent with --last
  help    Print this message or the help of the given subcommand(s)

Arguments:
  [PROMPT]
          Initial instructions for the agent. If not provided as an argument (or if ` + "`-`" + ` is used), instructions are read from stdin. If stdin is piped and a prompt is also provided, stdin is appended as a <stdin> block

Options:
  -c, --config <key=value>
          Override a configuration value that would otherwise be loaded from ` + "`~/.codex/config.toml`" + `
      --enable <FEATURE>
          Enable a feature (repeatable)
      --disable <FEATURE>
          Disable a feature (repeatable)
  -i, --image <FILE>...
          Optional image(s) to attach to the initial prompt
  -m, --model <MODEL>
          Model the agent should use
      --oss
          Use a local open source model provider
  -s, --sandbox <SANDBOX_MODE>
          Select the sandbox policy to use when executing model-generated shell commands [possible values: read-only, workspace-write, danger-full-access]
  -p, --profile <CONFIG_PROFILE>
          Configuration profile from config.toml to specify default options
      --approve-for-me
          Route approval requests through automatic review using the workspace-write sandbox
      --dangerously-bypass-approvals-and-sandbox
          Skip all confirmation prompts and execute commands without sandboxing
  -C, --cd <DIR>
          Tell the agent to use the specified directory as its working root
      --add-dir <DIR>
          Additional directories that should be writable alongside the primary workspace
      --skip-git-repo-check
          Allow running Codex outside a Git repository
      --ephemeral
          Run without persisting session files to disk
      --output-schema <FILE>
          Path to a JSON Schema file describing the model's final response shape
      --color <COLOR>
          Specifies color settings for use in the output [default: auto] [possible values: always, never, auto]
      --json
          Print events to stdout as JSONL
  -o, --output-last-message <FILE>
          Specifies file where the last message from the agent should be written
  -h, --help
          Print help (see a summary with '-h')
`
