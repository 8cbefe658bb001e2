package capture

import (
	"fmt"
	"time"

	"github.com/agentconform/agentconform/capture/mock"
)

// lateAnswer is how long the permission-late scenario's driver takes to
// answer can_use_tool: longer than the 60 s timeouts the SDKs keep for
// their own control requests, so that a timeout of the CLI's own on a
// pending permission request, if it had one, would show.
const lateAnswer = 70 * time.Second

// bugClassScenarios are the scenarios that show what the real CLI does
// where adapters were found to break: a permission answered as late as a
// person answers it, and the echo of user messages an adapter asks for.
func bugClassScenarios() []Scenario {
	return []Scenario{
		claudeOnly("permission-late", fmt.Sprintf("Claude's can_use_tool answered allow %v after it asked", lateAnswer), func() *plan {
			p := permissionPlan("claude", "allow")
			p.description = fmt.Sprintf("A shell command needing approval (touch created.txt): the can_use_tool control request is answered allow %v after the CLI wrote it, as a person in the loop answers; the driver reads the CLI's stdout meanwhile.", lateAnswer)
			p.procs[0].replyDelay = lateAnswer
			return p
		}),
		claudeOnly("replay-user-messages", "claude --replay-user-messages: the user messages echoed on stdout", func() *plan {
			return &plan{
				description: "Two user turns in one stream-json process with --replay-user-messages: the CLI echoes each user message back before its answer.",
				script:      mock.Script{Turns: []mock.Turn{mock.Text("Hello! ", "I'm ready."), mock.Text("The second turn's ", "answer.")}},
				procs:       []proc{claudeStream([]string{promptHello, "And now a second answer, please."}, "--replay-user-messages")},
			}
		}),
	}
}
