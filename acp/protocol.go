package acp

// Side is one end of an ACP connection.
type Side string

// The two sides.
const (
	// Client is the editor: it starts the agent and sends initialize,
	// session/new and session/prompt.
	Client Side = "client"
	// Agent is the coding agent on the other end of the client's pipes.
	Agent Side = "agent"
)

// Other is the side that is not s.
func (s Side) Other() Side {
	if s == Client {
		return Agent
	}
	return Client
}

// Methods of ACP used here (the schema names them all: schemas/acp).
const (
	MethodInitialize        = "initialize"
	MethodAuthenticate      = "authenticate"
	MethodSessionNew        = "session/new"
	MethodSessionLoad       = "session/load"
	MethodSessionResume     = "session/resume"
	MethodSessionPrompt     = "session/prompt"
	MethodSessionCancel     = "session/cancel"
	MethodSessionUpdate     = "session/update"
	MethodRequestPermission = "session/request_permission"
	MethodReadTextFile      = "fs/read_text_file"
	MethodWriteTextFile     = "fs/write_text_file"
)

// StopReasons are the values of a session/prompt response's stopReason
// (the schema's StopReason).
var StopReasons = []string{"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}

// Stop reasons named by the rules.
const (
	StopEndTurn   = "end_turn"
	StopCancelled = "cancelled"
)

// Tool call statuses (the schema's ToolCallStatus); completed and failed
// are final.
const (
	ToolPending    = "pending"
	ToolInProgress = "in_progress"
	ToolCompleted  = "completed"
	ToolFailed     = "failed"
)

// Session update kinds (the schema's SessionUpdate discriminator) used
// here.
const (
	UpdateAgentMessageChunk = "agent_message_chunk"
	UpdateAgentThoughtChunk = "agent_thought_chunk"
	UpdateUserMessageChunk  = "user_message_chunk"
	UpdateToolCall          = "tool_call"
	UpdateToolCallUpdate    = "tool_call_update"
)

// JSON-RPC and ACP error codes used here.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	CodeAuthRequired   = -32000
	CodeNotFound       = -32002
)
