package capture

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentconform/agentconform/capture/mock"
)

// Scenario is one scripted situation capture drives a CLI through: what
// the mock model does, and how the CLI is run and talked to.
type Scenario struct {
	// Name is the scenario's name, also the transcript's file name and
	// its fixture's name under the CLI ("single-tool").
	Name string
	// Summary says what the scenario shows, for listings.
	Summary string
	// Compliance marks the five compliance scenarios of the shim profile (docs/protocols/shim.md#compliance).
	Compliance bool
	plan       func(cli string) *plan
}

// Supports reports whether the scenario applies to cli.
func (s Scenario) Supports(cli string) bool { return s.plan(cli) != nil }

// Description is the one-sentence description the scenario's transcript
// for cli carries; "" when the scenario does not apply to cli.
func (s Scenario) Description(cli string) string {
	if p := s.plan(cli); p != nil {
		return p.description
	}
	return ""
}

// stdinMode is what the CLI gets on stdin.
type stdinMode int

const (
	// stdinNull is the null device (Gemini, as the captures did).
	stdinNull stdinMode = iota
	// stdinClosed is a pipe closed at once: Codex reads stdin to EOF
	// before it starts, as its SDK makes it.
	stdinClosed
	// stdinJSON is Claude's stream-json input, written by the driver.
	stdinJSON
	// stdinRPC is the client's side of a JSON-RPC session (ACP), written
	// by the driver (acp.go).
	stdinRPC
)

// interruptMode is how the driver interrupts a running tool.
type interruptMode string

const (
	interruptNone    interruptMode = ""
	interruptControl interruptMode = "control" // Claude's control_request interrupt
	interruptSIGINT  interruptMode = "SIGINT"
	interruptSIGTERM interruptMode = "SIGTERM"
	// interruptSIGKILL kills the process the driver started (an npm
	// launcher, where there is one) alone; it needs a recorded process
	// tree, which knows that process's pid (scenario_trees.go).
	interruptSIGKILL interruptMode = "SIGKILL"
)

// plan is a scenario for one CLI.
type plan struct {
	description string
	script      mock.Script
	procs       []proc
	settings    settings
	// files are seeded into the project directory, by relative path.
	files map[string]string
	// appServer, when set, replaces procs: `codex app-server` processes
	// driven over JSON-RPC (appserver.go).
	appServer []asProc
	// trees records the process tree of every CLI process (trees.go).
	trees bool
	// stagedWait, when another driver plays the plan (OpenStage), holds
	// the answer to the request after the first tool (Turns[1]) this
	// long: a CLI whose tool did not run (the driver's flags did not allow
	// it) is still in its turn when the driver interrupts, as it is while
	// the captured tool runs. Capture does not wait.
	stagedWait time.Duration
}

// proc is one process of a plan (Codex and Gemini resume in a second one).
type proc struct {
	// args follow argv[0]; "{{session}}" is replaced by the session id the
	// previous process reported.
	args  []string
	stdin stdinMode
	// turns are Claude's stream-json user messages, one per turn, each
	// sent after the previous turn's result.
	turns []string
	// initialize sends Claude's initialize control request first, as the
	// SDKs do.
	initialize bool
	// permission answers Claude's can_use_tool requests: "allow" or "deny".
	permission string
	// reply, when set, answers can_use_tool instead (scenario_control.go).
	reply replyFunc
	// replyDelay, when set, is how long the driver takes to answer each
	// can_use_tool request, as a person deciding does
	// (scenario_bugclasses.go); it goes on reading meanwhile.
	replyDelay time.Duration
	// preamble are stdin lines sent after initialize, before the first
	// user message (scenario_control.go).
	preamble []map[string]any
	// interrupt interrupts the first tool that starts.
	interrupt interruptMode
	// interruptDelay, when set, is how long after the tool starts the
	// interrupt comes, instead of Options.InterruptDelay.
	interruptDelay time.Duration
	// interruptFrom, when set, is what starts the interrupt's clock
	// instead of the first tool: "start" (the process started) or "init"
	// (its system/init line) (scenario_quirks.go).
	interruptFrom string
	// acp, when set, runs the process as an Agent Client Protocol agent
	// and the driver as its client (acp.go).
	acp *acpSession
	// signalAlone sends the interrupting signal to the process started
	// alone, also for Gemini, whose signals otherwise go to the process
	// group (its launcher passes none on).
	signalAlone bool
	// wrapper runs Claude Code through its package's fallback npm
	// launcher, cli-wrapper.cjs, under node, instead of the native binary.
	wrapper bool
	// drainWait, when set, is how long the recorder goes on reading
	// stdout and stderr after the process started exited (a CLI its
	// launcher left behind writes on).
	drainWait time.Duration
}

// Prompts used by the scenarios.
const (
	promptHello = "Say hello in one short sentence."
	promptEcho  = "Run `echo hi` and tell me what it printed."
)

func claudePrint(prompt string, extra ...string) proc {
	return proc{args: append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose"}, extra...), stdin: stdinNull}
}

func claudeStream(turns []string, extra ...string) proc {
	return proc{args: append([]string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}, extra...),
		stdin: stdinJSON, turns: turns, initialize: true}
}

func codexExec(prompt string) proc {
	return proc{args: []string{"exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", prompt}, stdin: stdinClosed}
}

func codexResume(prompt string) proc {
	return proc{args: []string{"exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "resume", "{{session}}", prompt}, stdin: stdinClosed}
}

func geminiRun(prompt string, yolo bool) proc {
	args := []string{"-p", prompt, "-o", "stream-json"}
	if yolo {
		args = append(args, "-y")
	}
	return proc{args: args, stdin: stdinNull}
}

func geminiResume(prompt string) proc {
	return proc{args: []string{"-p", prompt, "-o", "stream-json", "-y", "--resume", "{{session}}"}, stdin: stdinNull}
}

// oneShot is the one-process run of prompt for cli; tools says whether
// the model calls tools (Claude then allows Bash, Gemini runs with -y).
func oneShot(cli, prompt string, tools bool) proc {
	switch cli {
	case "claude":
		if tools {
			return claudePrint(prompt, "--allowedTools", "Bash")
		}
		return claudePrint(prompt)
	case "codex":
		return codexExec(prompt)
	}
	return geminiRun(prompt, tools)
}

func shell(cmd string) mock.Call { return mock.ShellCall(cmd) }

func chunks(n int, size int, seed string) []string {
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for b.Len() < size {
			fmt.Fprintf(&b, "%s %d.%d ", seed, i+1, b.Len())
		}
		out[i] = b.String()
	}
	return out
}

// Scenarios lists every scenario, the compliance ones first, those of
// Codex's app-server and of Gemini CLI's ACP mode last.
func Scenarios() []Scenario {
	return append([]Scenario{
		{Name: "plain-text", Compliance: true, Summary: "a text answer, no tools", plan: func(cli string) *plan {
			return &plan{
				description: "A plain text answer streamed in two chunks; no tools.",
				script:      mock.Script{Turns: []mock.Turn{mock.Text("Hello! ", "How can I help you today?")}},
				procs:       []proc{oneShot(cli, promptHello, false)},
			}
		}},
		{Name: "single-tool", Compliance: true, Summary: "one shell command, then the answer", plan: func(cli string) *plan {
			first := mock.Turn{Calls: []mock.Call{shell("echo hi")}}
			if cli == "claude" {
				first.Text = []string{"I'll run ", "the command."}
			}
			return &plan{
				description: "One shell command (echo hi), its result, then a text answer.",
				script:      mock.Script{Turns: []mock.Turn{first, mock.Text("It printed ", "`hi`.")}},
				procs:       []proc{oneShot(cli, promptEcho, true)},
			}
		}},
		{Name: "multi-tool", Compliance: true, Summary: "parallel tool calls, then more calls, then the answer", plan: multiToolPlan},
		{Name: "tool-error", Compliance: true, Summary: "a tool that fails, then the answer", plan: func(cli string) *plan {
			call := shell("cat missing-file.txt")
			desc := "A shell command that fails (cat of a missing file, exit 1), then a text answer."
			if cli == "gemini" {
				call = mock.Call{Tool: mock.ReadFile, Path: "notes/missing.md"}
				desc = "A read_file call on a missing file (a tool error), then a text answer."
			}
			return &plan{
				description: desc,
				script: mock.Script{Turns: []mock.Turn{
					{Text: textIf(cli == "claude", "Let me read it."), Calls: []mock.Call{call}},
					mock.Text("The file does not exist."),
				}},
				procs: []proc{oneShot(cli, "Show me the contents of the missing file.", true)},
			}
		}},
		{Name: "interrupt", Compliance: true, Summary: "a long tool interrupted (Claude: control request; Codex, Gemini: SIGINT)", plan: func(cli string) *plan {
			p := interruptPlan(cli)
			if cli == "claude" {
				p.description = "A 6 s shell command interrupted with a control_request interrupt over stream-json stdin, then stdin closed."
				p.procs = []proc{claudeStream([]string{"Run the end-to-end tests."}, "--allowedTools", "Bash")}
				p.procs[0].interrupt = interruptControl
			} else {
				p.description = "A 6 s shell command interrupted with SIGINT one second in (on_signal branch); without the signal it completes (main path, a second real run)."
				p.procs[0].interrupt = interruptSIGINT
			}
			return p
		}},
		{Name: "interrupt-sigint", Summary: "claude -p interrupted by SIGINT during a tool", plan: func(cli string) *plan {
			if cli != "claude" {
				return nil // their interrupt scenario is SIGINT already
			}
			p := interruptPlan(cli)
			p.description = "A 6 s shell command in print mode interrupted with SIGINT one second in (on_signal branch); without the signal it completes (main path, a second real run)."
			p.procs[0].interrupt = interruptSIGINT
			return p
		}},
		{Name: "interrupt-sigterm", Summary: "a long tool interrupted by SIGTERM", plan: func(cli string) *plan {
			p := interruptPlan(cli)
			p.description = "A 6 s shell command interrupted with SIGTERM one second in (on_signal branch); without the signal it completes (main path, a second real run)."
			p.procs[0].interrupt = interruptSIGTERM
			return p
		}},
		{Name: "multi-turn", Summary: "two user turns (Claude over stdin; Codex and Gemini by resume)", plan: func(cli string) *plan {
			p := &plan{}
			switch cli {
			case "claude":
				p.description = "Two user turns in one stream-json process, each answered with text."
				p.script = mock.Script{Turns: []mock.Turn{mock.Text("Hello! ", "I'm ready."), mock.Text("The second turn's ", "answer.")}}
				p.procs = []proc{claudeStream([]string{promptHello, "And now a second answer, please."})}
			case "codex":
				p.description = "Two turns: codex exec with a shell command, then codex exec resume of its thread with an apply_patch file change."
				p.files = map[string]string{"greet.go": "package greet\n"}
				p.script = mock.Script{Turns: []mock.Turn{
					{Calls: []mock.Call{shell("cat greet.go")}},
					mock.Text("It declares package greet."),
					{Calls: []mock.Call{{Name: "apply_patch", Custom: "*** Begin Patch\n*** Update File: greet.go\n@@\n-package greet\n+package greet // says hello\n*** End Patch\n"}}},
					mock.Text("Documented the package."),
				}}
				p.procs = []proc{codexExec("What does greet.go do?"), codexResume("Document that in greet.go.")}
			default:
				p.description = "Two turns: gemini -p with a shell command, then gemini --resume of its session with another."
				p.script = mock.Script{Turns: []mock.Turn{
					{Calls: []mock.Call{shell("echo first-turn")}},
					mock.Text("The first turn printed ", "first-turn."),
					{Calls: []mock.Call{shell("echo second-turn")}},
					mock.Text("The second turn printed ", "second-turn."),
				}}
				p.procs = []proc{geminiRun("Run `echo first-turn`.", true), geminiResume("Now run `echo second-turn`.")}
			}
			return p
		}},
		{Name: "permission-allow", Summary: "Claude's can_use_tool answered allow", plan: func(cli string) *plan {
			return permissionPlan(cli, "allow")
		}},
		{Name: "permission-deny", Summary: "Claude's can_use_tool answered deny", plan: func(cli string) *plan {
			return permissionPlan(cli, "deny")
		}},
		{Name: "permission-unasked", Summary: "Claude without a permission prompt tool refuses the command itself", plan: func(cli string) *plan {
			p := permissionPlan(cli, "deny")
			if p != nil {
				p.description = "A shell command needing approval (touch created.txt) in a session without --permission-prompt-tool: the CLI refuses it without asking."
				p.procs = []proc{claudeStream([]string{"Create created.txt."})}
			}
			return p
		}},
		{Name: "slow-stream", Summary: "a text answer streamed slowly (12 chunks, 250 ms apart)", plan: func(cli string) *plan {
			turn := mock.Text(chunks(12, 24, "slow")...)
			turn.ChunkDelay = 250 * time.Millisecond
			return &plan{
				description: "A text answer streamed slowly: 12 chunks 250 ms apart.",
				script:      mock.Script{Turns: []mock.Turn{turn}},
				procs:       []proc{oneShot(cli, "Tell me a slow story.", false)},
			}
		}},
		{Name: "long-output", Summary: "a command with about 350 KB of output and a 40 KB answer", plan: func(cli string) *plan {
			return &plan{
				description: "A shell command printing about 350 KB (seq 1 60000), then a text answer of about 40 KB in 40 chunks.",
				script: mock.Script{Turns: []mock.Turn{
					{Text: textIf(cli == "claude", "I'll print them."), Calls: []mock.Call{shell("seq 1 60000")}},
					mock.Text(chunks(40, 1000, "line")...),
				}},
				procs: []proc{oneShot(cli, "Print the numbers from 1 to 60000 and summarize them.", true)},
			}
		}},
		{Name: "background-command", Summary: "Codex: a command left running in the background when the turn ends", plan: backgroundPlan},
		{Name: "reasoning", Summary: "Codex: reasoning summaries around a command", plan: reasoningPlan},
		{Name: "file-change", Summary: "Codex: an apply_patch that updates and adds files, then a command", plan: fileChangePlan},
		{Name: "tool-errors", Summary: "Gemini: two parallel calls that fail differently", plan: toolErrorsPlan},
		{Name: "loop-detection", Summary: "Gemini: the same call again and again, caught by loop detection", plan: loopPlan},
		errorScenario("api-error-400", 400, "invalid request (agentconform mock)"),
		claudeOnly("interrupt-stream-sigint", "claude with stream-json input interrupted by SIGINT during a tool", func() *plan {
			return streamSignalPlan(interruptSIGINT)
		}),
		claudeOnly("interrupt-stream-sigterm", "claude with stream-json input interrupted by SIGTERM during a tool", func() *plan {
			return streamSignalPlan(interruptSIGTERM)
		}),
		claudeOnly("background-bash", "a Bash command outlives its timeout, moves to the background, then SIGINT", claudeBackgroundPlan),
		claudeOnly("partial-messages", "claude -p --include-partial-messages: a text and a Bash call streamed", func() *plan {
			return &plan{
				description: "One shell command (echo hi) and a text answer with --include-partial-messages: stream_event wrappers around every block.",
				script: mock.Script{Turns: []mock.Turn{
					{Text: []string{"I'll run ", "the command."}, Calls: []mock.Call{shell("echo hi")}},
					mock.Text("It printed ", "`hi`."),
				}},
				procs: []proc{claudePrint(promptEcho, "--include-partial-messages", "--allowedTools", "Bash")},
			}
		}),
		claudeOnly("max-turns", "claude -p --max-turns 1 stopped after its first tool call", func() *plan {
			return &plan{
				description: "One shell command under --max-turns 1: the turn stops before the model's second response (result error_max_turns).",
				script: mock.Script{Turns: []mock.Turn{
					{Text: []string{"I'll run the command."}, Calls: []mock.Call{shell("echo hi")}},
					mock.Text("It printed `hi`."),
				}},
				procs: []proc{claudePrint(promptEcho, "--max-turns", "1", "--allowedTools", "Bash")},
			}
		}),
		claudeOnly("api-error-stream", "claude with stream-json input whose model API answers HTTP 401, then stdin closed", func() *plan {
			p := errorScenario("api-error-stream", 401, "invalid x-api-key").plan("claude")
			p.description = "A stream-json session whose model request fails with HTTP 401 (invalid x-api-key); stdin is closed after the turn's result."
			p.procs = []proc{claudeStream([]string{promptHello})}
			return p
		}),
		errorScenario("api-error-401", 401, "invalid x-api-key"),
		errorScenario("api-error-429", 429, "rate limit exceeded (agentconform mock)"),
		errorScenario("api-error-500", 500, "internal server error (agentconform mock)"),
		{Name: "api-retry", Summary: "one HTTP 500, retried, then the answer", plan: func(cli string) *plan {
			return &plan{
				description: "The first model request fails with HTTP 500; the CLI retries and the retry gets a text answer.",
				script: mock.Script{Turns: []mock.Turn{{Text: []string{"Hello ", "after a retry."},
					Fail: &mock.Failure{Status: 500, Message: "internal server error (agentconform mock)", Times: 1}}}},
				procs:    []proc{oneShot(cli, promptHello, false)},
				settings: settings{retries: true},
			}
		}},
		unicodeScenario(),
		unknownModelScenario(),
	}, slices.Concat(controlScenarios(), quirkScenarios(), treeScenarios(), bugClassScenarios(), appServerScenarios(), acpScenarios(), acpAskScenarios(acpScenarios()))...)
}

func textIf(ok bool, s string) []string {
	if ok {
		return []string{s}
	}
	return nil
}

func errorScenario(name string, status int, msg string) Scenario {
	return Scenario{Name: name, Summary: fmt.Sprintf("the model API answers HTTP %d", status), plan: func(cli string) *plan {
		return &plan{
			description: fmt.Sprintf("Every model request fails with HTTP %d (%s); retries are switched off where the CLI allows.", status, msg),
			script:      mock.Script{Turns: []mock.Turn{{Fail: &mock.Failure{Status: status, Message: msg}}}},
			procs:       []proc{oneShot(cli, promptHello, false)},
		}
	}}
}

// interruptStagedWait is the interrupt scenarios' stagedWait: as long as
// the fakes' interrupt fixtures hold the tool (their one synthesized
// step), so that an adapter that ignores the interrupt meets a turn that
// goes on as long on the real CLI as on the fake.
const interruptStagedWait = 30 * time.Second

func interruptPlan(cli string) *plan {
	first := mock.Turn{Text: []string{"Running the tests."}, Calls: []mock.Call{shell("sleep 6")}}
	return &plan{
		script:     mock.Script{Turns: []mock.Turn{first, mock.Text("The tests passed.")}},
		procs:      []proc{oneShot(cli, "Run the end-to-end tests.", true)},
		stagedWait: interruptStagedWait,
	}
}

// backgroundPlan has Codex start a command through exec_command with a
// short yield time, so the tool returns while the command still runs,
// and answer at once: the turn ends with the command's item.started
// never completed (the exec JSONL processor completes at turn end only
// the items the thread's stored history holds).
func backgroundPlan(cli string) *plan {
	if cli != "codex" {
		return nil
	}
	return &plan{
		description: "A shell command started through exec_command with a 250 ms yield time, so it goes on running in the background (sleep 20); the model answers while it runs and the turn ends.",
		script: mock.Script{Turns: []mock.Turn{
			{Text: []string{"Starting the server."}, Calls: []mock.Call{{Name: "exec_command", Args: map[string]any{"cmd": "sleep 20", "yield_time_ms": 250}}}},
			mock.Text("The server is starting in the background."),
		}},
		procs: []proc{codexExec("Start the dev server in the background.")},
	}
}

// reasoningPlan has Codex think before a command and before its answer.
func reasoningPlan(cli string) *plan {
	if cli != "codex" {
		return nil
	}
	return &plan{
		description: "Reasoning summaries before a shell command and before the answer, with reasoning tokens in the usage.",
		files:       map[string]string{"greet.go": "package greet\n\nfunc Greet(name string) string { return \"Hello \" + name }\n"},
		script: mock.Script{Turns: []mock.Turn{
			{Reasoning: "**Locating the code**\n\nRead greet.go first.", Calls: []mock.Call{shell("cat greet.go")},
				Usage: mock.Usage{Reasoning: 24}},
			{Reasoning: "**Answering**\n\nGreet adds no punctuation.", Text: []string{"`Greet` returns \"Hello \" followed by the name, with no punctuation."},
				Usage: mock.Usage{Reasoning: 16}},
		}},
		procs: []proc{codexExec("Why does Greet print no exclamation mark?")},
	}
}

// fileChangePlan has Codex patch two files (update one, add one) and run
// a command.
func fileChangePlan(cli string) *plan {
	if cli != "codex" {
		return nil
	}
	const patch = "*** Begin Patch\n*** Update File: greet.go\n@@\n-func Greet(name string) string { return \"Hello \" + name }\n+func Greet(name string) string { return \"Hello \" + name + \"!\" }\n*** Add File: greet_test.go\n+package greet\n*** End Patch\n"
	return &plan{
		description: "An apply_patch that updates greet.go and adds greet_test.go (file_change started and completed), then a shell command and the answer.",
		files:       map[string]string{"greet.go": "package greet\n\nfunc Greet(name string) string { return \"Hello \" + name }\n"},
		script: mock.Script{Turns: []mock.Turn{
			{Text: []string{"I'll update Greet and add a test file."}, Calls: []mock.Call{{Name: "apply_patch", Custom: patch}}},
			{Calls: []mock.Call{shell("ls -1")}},
			mock.Text("Greet now ends with an exclamation mark, and greet_test.go exists."),
		}},
		procs: []proc{codexExec("Make Greet add an exclamation mark and add a test file.")},
	}
}

// toolErrorsPlan has Gemini make two parallel calls that fail in two
// ways: a read_file of a missing file (a tool error) and a shell command
// that exits non-zero (a successful call whose output says so).
func toolErrorsPlan(cli string) *plan {
	if cli != "gemini" {
		return nil
	}
	return &plan{
		description: "Two parallel calls that fail differently: read_file of a missing file (a tool error) and a shell command exiting non-zero, then a text answer.",
		script: mock.Script{Turns: []mock.Turn{
			{Calls: []mock.Call{{Tool: mock.ReadFile, Path: "notes/todo.md"}, shell("ls missing-dir")}},
			mock.Text("Neither exists."),
		}},
		procs: []proc{geminiRun("Show notes/todo.md and list missing-dir.", true)},
	}
}

// loopPlan has the model repeat one call until Gemini's loop detection
// (five identical consecutive tool calls) stops it.
func loopPlan(cli string) *plan {
	if cli != "gemini" {
		return nil
	}
	var turns []mock.Turn
	for i := 0; i < 6; i++ {
		turns = append(turns, mock.Turn{Calls: []mock.Call{shell("ls dist")}})
	}
	return &plan{
		description: "The model calls the same shell command again and again until loop detection stops the run.",
		script:      mock.Script{Turns: append(turns, mock.Text("The build is not there."))},
		procs:       []proc{geminiRun("Wait until the build in dist/ is finished.", true)},
	}
}

func permissionPlan(cli, answer string) *plan {
	if cli != "claude" {
		return nil
	}
	after := "Created created.txt."
	if answer == "deny" {
		after = "Understood, I won't create it."
	}
	p := &plan{
		description: fmt.Sprintf("A shell command needing approval (touch created.txt): the can_use_tool control request is answered %s.", answer),
		script: mock.Script{Turns: []mock.Turn{
			{Text: []string{"I'll create the file."}, Calls: []mock.Call{shell("touch created.txt")}},
			mock.Text(after),
		}},
		procs: []proc{claudeStream([]string{"Create created.txt."}, "--permission-prompt-tool", "stdio")},
	}
	p.procs[0].permission = answer
	return p
}

const codexPatch = `*** Begin Patch
*** Add File: NOTES.md
+greet() now ends with an exclamation mark.
*** Delete File: OLD.txt
*** Update File: src/greet.py
@@
-    return 'Hello ' + name
+    return 'Hello ' + name + '!'
*** End Patch
`

func multiToolPlan(cli string) *plan {
	switch cli {
	case "claude":
		return &plan{
			description: "Two parallel shell commands in one response, their results, a third command, then a text answer.",
			files:       map[string]string{"notes.txt": "remember the milk\n"},
			script: mock.Script{Turns: []mock.Turn{
				{Text: []string{"I'll look at the workspace."}, Calls: []mock.Call{shell("ls -1"), shell("cat notes.txt")}},
				{Text: []string{"Now I'll count the lines."}, Calls: []mock.Call{shell("wc -l notes.txt")}},
				mock.Text("There is one file, notes.txt, with one line."),
			}},
			procs: []proc{oneShot(cli, "Inspect the workspace and count the lines of notes.txt.", true)},
		}
	case "codex":
		return &plan{
			description: "Reasoning, a commentary message, two parallel commands, an apply_patch file change (add, delete, update), another command, then the answer.",
			files: map[string]string{
				"src/greet.py": "def greet(name):\n    return 'Hello ' + name\n",
				"OLD.txt":      "obsolete\n",
				"README.md":    "# demo\n",
			},
			script: mock.Script{Turns: []mock.Turn{
				{Reasoning: "**Inspecting the repository**\n\nI should list files and read greet.py first.",
					Text:  []string{"I'll inspect the repository first."},
					Calls: []mock.Call{shell("cat src/greet.py"), shell("ls")}},
				{Reasoning: "**Editing**\n\nUpdate greet(), add notes, delete the obsolete file.",
					Text: []string{"Now I'll patch the files."}, Calls: []mock.Call{{Name: "apply_patch", Custom: codexPatch}}},
				{Calls: []mock.Call{shell("ls -1 && cat src/greet.py")}},
				{Reasoning: "**Wrapping up**\n\nAll edits are in place.", Text: []string{"Done: `greet()` now appends `!`, `NOTES.md` documents it, and `OLD.txt` is gone."}},
			}},
			procs: []proc{oneShot(cli, "Make greet() end with an exclamation mark, add NOTES.md, remove OLD.txt, and show the result.", true)},
		}
	}
	return &plan{
		description: "Text and two parallel calls (read_file, run_shell_command), then write_file, then replace, then a text answer.",
		files:       map[string]string{"notes.txt": "remember the milk\n"},
		script: mock.Script{Turns: []mock.Turn{
			{Text: []string{"I'll look at the workspace first."}, Calls: []mock.Call{{Tool: mock.ReadFile, Path: "notes.txt"}, shell("ls -1")}},
			{Calls: []mock.Call{{Tool: mock.WriteFile, Path: "out.txt", Content: "hello\nworld\n"}}},
			{Calls: []mock.Call{{Name: "replace", Args: map[string]any{"file_path": "out.txt", "instruction": "Replace world with gemini.", "old_string": "world", "new_string": "gemini"}}}},
			mock.Text("Created out.txt ", "and edited it."),
		}},
		procs: []proc{oneShot(cli, "Inspect notes.txt, list files, create out.txt and then edit it.", true)},
	}
}

// ScenarioNames lists the names of every scenario.
func ScenarioNames() []string {
	var out []string
	for _, s := range Scenarios() {
		out = append(out, s.Name)
	}
	return out
}

// Compliance lists the names of the five compliance scenarios.
func Compliance() []string {
	var out []string
	for _, s := range Scenarios() {
		if s.Compliance {
			out = append(out, s.Name)
		}
	}
	return out
}

// Select returns the scenarios named (all when names is empty, the
// compliance ones for the single name "compliance"), in the order of
// Scenarios, or an error naming the unknown ones.
func Select(names []string) ([]Scenario, error) {
	all := Scenarios()
	if len(names) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		for _, part := range strings.Split(n, ",") {
			if part = strings.TrimSpace(part); part != "" {
				want[part] = true
			}
		}
	}
	if want["compliance"] {
		delete(want, "compliance")
		for _, c := range Compliance() {
			want[c] = true
		}
	}
	var out []Scenario
	for _, s := range all {
		if want[s.Name] {
			out = append(out, s)
			delete(want, s.Name)
		}
	}
	if len(want) > 0 {
		var unknown []string
		for n := range want {
			unknown = append(unknown, n)
		}
		sort.Strings(unknown)
		return nil, fmt.Errorf("capture: unknown scenario(s) %s (known: %s)", strings.Join(unknown, ", "), strings.Join(ScenarioNames(), ", "))
	}
	return out, nil
}

// claudeOnly is a scenario that applies to Claude alone.
func claudeOnly(name, summary string, mk func() *plan) Scenario {
	return Scenario{Name: name, Summary: summary, plan: func(cli string) *plan {
		if cli != "claude" {
			return nil
		}
		return mk()
	}}
}

// streamSignalPlan is Claude's interrupt scenario (stream-json input)
// interrupted by a signal instead of a control request. The command runs
// 34 s, so that the main path shows what the CLI writes while a tool runs
// that long (task_started after about 3 s, a tool_progress heartbeat at
// 30 s); it is a loop because 2.1.331 refuses a standalone sleep of 25 s or
// more.
func streamSignalPlan(sig interruptMode) *plan {
	first := mock.Turn{Text: []string{"Running the tests."}, Calls: []mock.Call{shell("for i in $(seq 34); do sleep 1; done; echo passed")}}
	p := &plan{
		description: fmt.Sprintf("A 34 s shell command with stream-json input interrupted with %s one second in (on_signal branch); without the signal it completes and stdin is closed (main path, a second real run).", sig),
		script:      mock.Script{Turns: []mock.Turn{first, mock.Text("The tests passed.")}},
		procs:       []proc{claudeStream([]string{"Run the end-to-end tests."}, "--allowedTools", "Bash")},
	}
	p.procs[0].interrupt = sig
	return p
}

// claudeBackgroundPlan is a Claude -p run whose Bash call asks for a timeout
// shorter than the command (which does not start with sleep: Claude Code
// 2.1.331 never moves a sleep to the background): when the timeout runs
// out the CLI moves the command to the background, answers, and the turn's
// result comes while the command still runs; SIGINT comes after that
// result.
func claudeBackgroundPlan() *plan {
	call := mock.Call{Name: "Bash", Args: map[string]any{"command": "for i in 1 2 3 4 5 6 7 8; do sleep 1; done; echo built",
		"description": "Run the slow build", "timeout": 500}}
	p := &plan{
		description: "A Bash call running 8 s with a 500 ms timeout: the CLI moves it to the background when the timeout runs out, the model answers and the turn's result comes while it still runs; the main path (a run left alone) then reports the task done and answers again in a second result; SIGINT 4 s after the call, after the first result, stops the task (on_signal branch, a second real run).",
		script: mock.Script{Turns: []mock.Turn{
			{Text: []string{"Starting the build."}, Calls: []mock.Call{call}},
			mock.Text("The build is running in the background."),
		}},
		procs: []proc{claudePrint("Start the slow build.", "--allowedTools", "Bash")},
	}
	p.procs[0].interrupt = interruptSIGINT
	p.procs[0].interruptDelay = 4 * time.Second
	return p
}
