package transcript

// Surfaces other than a CLI's JSONL stream that a transcript may record,
// told apart by the recorded invocation. They live here, with the format,
// so that what only replays or converts transcripts (the fakes, the
// fixture packages) need not link the protocol validators.

// IsAppServer reports whether h records `codex app-server` (JSON-RPC on
// stdio): its argv's first argument is app-server.
func (h *Header) IsAppServer() bool {
	return h != nil && h.CLI == "codex" && len(h.Argv) > 1 && h.Argv[1] == "app-server"
}

// IsACP reports whether h records an agent speaking the Agent Client
// Protocol: its argv asks for ACP mode (Gemini CLI's --acp or
// --experimental-acp).
func (h *Header) IsACP() bool {
	if h == nil {
		return false
	}
	for _, a := range h.Argv {
		if a == "--acp" || a == "--experimental-acp" {
			return true
		}
	}
	return false
}

// LabelInterrupted names the branch an app-server transcript jumps to when
// the client sends turn/interrupt: what the server did from that request
// on. The fake jumps there whenever turn/interrupt comes before it.
const LabelInterrupted = "interrupted"
