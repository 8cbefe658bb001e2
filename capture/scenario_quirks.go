package capture

import (
	"time"

	"github.com/agentconform/agentconform/capture/mock"
)

// quirkScenarios record what Claude Code does where adapters are known to
// go wrong: where its result's text comes from when a turn has several
// text blocks, thinking blocks in its messages, and SIGINT before the
// model has answered.
func quirkScenarios() []Scenario {
	return []Scenario{
		claudeOnly("text-blocks", "claude -p: text blocks before and after a tool call in one response, then a response of two text blocks", func() *plan {
			return &plan{
				description: "One response with a text block, a shell command (echo hi) and another text block, then a final response of two text blocks: every block is an assistant line of its own, and the result's text is the last block's alone.",
				script: mock.Script{Turns: []mock.Turn{
					{Text: []string{"First I'll ", "run the command."}, Calls: []mock.Call{shell("echo hi")}, After: []string{"Running it now."}},
					{Text: []string{"It printed ", "`hi`."}, After: []string{"That is all ", "it printed."}},
				}},
				procs: []proc{claudePrint(promptEcho, "--allowedTools", "Bash")},
			}
		}),
		claudeOnly("thinking", "claude -p: thinking blocks before the text of each response", func() *plan {
			return &plan{
				description: "Each model response begins with a thinking block (a mock signature): one before the text and shell command (echo hi), one before the answer.",
				script: mock.Script{Turns: []mock.Turn{
					{Reasoning: "The user wants to see what echo prints. Run it.", Text: []string{"I'll run ", "the command."}, Calls: []mock.Call{shell("echo hi")}},
					{Reasoning: "The command printed hi. Say so.", Text: []string{"It printed ", "`hi`."}},
				}},
				procs: []proc{claudePrint(promptEcho, "--allowedTools", "Bash")},
			}
		}),
		claudeOnly("sigint-at-startup", "claude -p interrupted by SIGINT 300 ms after it started", func() *plan {
			p := &plan{
				description: "A print-mode run interrupted with SIGINT 300 ms after the process started, before it could handle the signal: it dies of it (exit 130) having written nothing (the transcript is that run alone: with no tool started there is no branch point).",
				script:      mock.Script{Turns: []mock.Turn{mock.Text("Hello! ", "How can I help you today?")}},
				procs:       []proc{claudePrint(promptHello)},
			}
			p.procs[0].interrupt, p.procs[0].interruptFrom, p.procs[0].interruptDelay = interruptSIGINT, "start", 300*time.Millisecond
			return p
		}),
		claudeOnly("sigint-during-startup", "claude -p interrupted by SIGINT 700 ms after it started, before its turn began", func() *plan {
			p := &plan{
				description: "A print-mode run interrupted with SIGINT 700 ms after the process started, while it was still starting (its system/init came later): the CLI holds the signal until its turn begins, then writes system/init, \"[Request interrupted by user]\" and an error result, and exits 0 (the transcript is that run alone: with no tool started there is no branch point).",
				script:      mock.Script{Turns: []mock.Turn{mock.Text("Hello! ", "How can I help you today?")}},
				procs:       []proc{claudePrint(promptHello)},
			}
			p.procs[0].interrupt, p.procs[0].interruptFrom, p.procs[0].interruptDelay = interruptSIGINT, "start", 700*time.Millisecond
			return p
		}),
		claudeOnly("sigint-before-response", "claude -p interrupted by SIGINT while it waits for the model's first response", func() *plan {
			first := mock.Text("Hello! ", "How can I help you today?")
			first.Wait = 6 * time.Second
			p := &plan{
				description: "A print-mode run whose model takes 6 s to answer, interrupted with SIGINT 1 s after system/init (the request is under way, nothing has come back): \"[Request interrupted by user]\", an error result (aborted_streaming), exit 0; in about half the runs the CLI exits 0 right after the user message, with no result (the transcript is that run alone: with no tool started there is no branch point).",
				script:      mock.Script{Turns: []mock.Turn{first}},
				procs:       []proc{claudePrint(promptHello)},
			}
			p.procs[0].interrupt, p.procs[0].interruptFrom, p.procs[0].interruptDelay = interruptSIGINT, "init", time.Second
			return p
		}),
	}
}
