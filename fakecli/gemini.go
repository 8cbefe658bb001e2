package fakecli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/transcript"
)

// geminiVersion is the version the fake claims: that of the captures in
// testdata/captures/gemini.
const geminiVersion = "0.61.0"

// geminiStdinWait is how long Gemini waits for the first piped input
// before it gives up on stdin (readStdin's pipedInputShouldBeAvailableInMs).
const geminiStdinWait = 500 * time.Millisecond

// geminiNoSession is the error for a resume that finds nothing (exit 42,
// FatalInputError).
const geminiNoSession = "Error resuming session: No previous sessions found for this project."

// runGemini is the gemini personality: one turn per process.
func runGemini(p *proc) int {
	ref, err := transcriptRef("gemini", p.env)
	if err != nil {
		return p.harnessError(err)
	}
	p.logStart(refName(ref))

	f, msg, code := parseGeminiFlags(p.args)
	if msg != "" {
		return p.flagsError(msg, code)
	}
	if f.help {
		io.WriteString(p.out.w, geminiUsage)
		return 0
	}
	if f.version {
		v := geminiVersion
		if t, err := loadRef("gemini", ref); err == nil && t.Header.CLIVersion != "" {
			v = t.Header.CLIVersion
		}
		p.out.line(v, true)
		return 0
	}
	st, err := openStore(p.env)
	if err != nil {
		return p.harnessError(err)
	}
	here := cwd()
	if f.listSessions {
		return geminiList(p, st, here)
	}
	if f.acp {
		return runGeminiACP(p, st, f.yolo || f.approvalMode == "yolo")
	}
	if f.interactiveGiven || (!f.promptGiven && f.positional == "" && p.stdinTTY) {
		return p.harnessError(fmt.Errorf("interactive mode is not faked: pass -p or a prompt, or pipe stdin"))
	}

	eng := newEngine(p, nil, nil)
	eng.defaultSignal = geminiSignal
	eng.onStdoutGone = 0 // EPIPE: process.exit(0)

	// stdin is plain text, read unless it is a terminal; nothing within
	// 500 ms means there is no piped input.
	var stdinText string
	if !p.stdinTTY && p.stdin != nil {
		eng.in = readLines(p.stdin, p.start)
		fl, lines, _ := eng.collectStdin(geminiStdinWait)
		if fl == flowEnd {
			return eng.code
		}
		var b strings.Builder
		for i, m := range lines {
			eng.logStdin(m, "prompt")
			m.synthetic = true
			if i > 0 {
				b.WriteByte('\n')
			}
			b.Write(m.raw)
		}
		eng.held = lines
		stdinText = b.String()
	}
	prompt := f.positional
	if f.promptGiven {
		prompt = f.prompt
	}
	if stdinText != "" {
		prompt = strings.TrimSpace(stdinText + "\n\n" + prompt)
	}
	if strings.TrimSpace(prompt) == "" {
		return p.flagsError("No input provided via stdin. Input can be provided by piping data into gemini or using the --prompt option.", 1)
	}

	ses, code, ok := geminiResolve(p, &f, st, ref, here)
	if !ok {
		return code
	}
	if ses != nil {
		ref = ses.Transcript
	}
	_, parts, part, recID, err := sessionTranscript("gemini", ref, ses, "session_id")
	if err != nil {
		return p.harnessError(err)
	}
	sid := recID
	switch {
	case ses != nil:
		sid = ses.ID
	case f.sessionID != "":
		sid = f.sessionID
	}
	if sid == "" {
		sid = newUUID(p.rng("gemini", ref))
	}
	p.logSession(sid, ses != nil)
	rec := &session{CLI: "gemini", ID: sid, Transcript: ref, Next: part + 1, Cwd: here, Title: firstLine(prompt)}
	if ses != nil {
		rec.Created, rec.Cwd, rec.Title = ses.Created, ses.Cwd, ses.Title
	}
	rec.Empty = (ses == nil || ses.Empty) && !geminiLeavesHistory(parts[part])
	if err := st.put(rec); err != nil {
		return p.harnessError(err)
	}

	eng.steps = geminiYOLONotices(p.plan.steps("gemini", parts[part]), f.yolo || f.approvalMode == "yolo")
	eng.labels = transcript.Labels(eng.steps)
	if recID != "" && sid != recID {
		eng.rewriteFrom, eng.rewriteTo = recID, sid
	}
	switch f.outputFormat {
	case "text":
		eng.format = &geminiText{}
	case "json":
		eng.format = &geminiJSON{}
	}
	return eng.run()
}

// geminiYOLO is the notice Gemini writes on stderr when the command line
// turns YOLO mode on: loadCliConfig in google-gemini/gemini-cli@5411f113
// packages/cli/src/config/config.ts (debugLogger.warn when the approval mode
// is yolo, from -y/--yolo or --approval-mode yolo; a settings default of
// yolo is ignored there). The relaunched CLI loads its configuration in the
// parent and in the child, so a run writes it twice
// (testdata/captures/gemini/tool_single.stderr.txt, with --yolo); a run
// without YOLO mode writes none (plain_text.stderr.txt,
// api_error_401.stderr.txt).
const geminiYOLO = "YOLO mode is enabled. All tool calls will be automatically approved."

// geminiYOLONotices makes a process part's YOLO notices follow this
// process's command line rather than the recorded one: without YOLO mode
// they are dropped; with it a part that has none gets the two, first.
func geminiYOLONotices(steps []transcript.Step, yolo bool) []transcript.Step {
	var out []transcript.Step
	found := false
	for _, st := range steps {
		if st.Op == transcript.OpErr && st.Text == geminiYOLO {
			found = true
			if !yolo {
				continue
			}
		}
		out = append(out, st)
	}
	if yolo && !found {
		notice := transcript.Step{Op: transcript.OpErr, Text: geminiYOLO}
		out = append([]transcript.Step{notice, notice}, out...)
	}
	if !found && !yolo {
		return steps
	}
	return out
}

// geminiList is --list-sessions.
func geminiList(p *proc, st *store, here string) int {
	all, err := st.list("gemini", here)
	if err != nil {
		return p.harnessError(err)
	}
	if len(all) == 0 {
		p.out.line("No previous sessions found for this project.", true)
		return 0
	}
	p.out.line(fmt.Sprintf("\nAvailable sessions for this project (%d):\n", len(all)), true)
	for i, s := range all {
		p.out.line(fmt.Sprintf("  %d. %s (%s) [%s]", i+1, s.Title, time.Unix(0, s.Updated).UTC().Format(time.RFC3339), s.ID), true)
	}
	return 0
}

// geminiSignal is Gemini's own answer to SIGINT, SIGTERM and SIGHUP:
// setupSignalHandlers in google-gemini/gemini-cli@5411f113
// packages/cli/src/utils/cleanup.ts runs gracefulShutdown, which exits 0
// (ExitCodes.SUCCESS) and writes no result.
func geminiSignal(e *engine, sig syscall.Signal) flow {
	return e.finish(0)
}

// geminiText renders -o text: the assistant's text as it streams.
type geminiText struct{ wrote bool }

func (*geminiText) passes() bool { return false }

func (g *geminiText) line(e *engine, text string) {
	if !strings.Contains(text, `"assistant"`) {
		return
	}
	obj, _ := jsonl.Parse([]byte(text), jsonl.ParseOptions{})
	if obj["type"] == "message" && obj["role"] == "assistant" {
		if s, ok := obj["content"].(string); ok {
			e.write(s, false, 0)
			g.wrote = true
		}
	}
}

func (g *geminiText) end(e *engine, code int) {
	if g.wrote {
		e.write("", true, 0)
	}
}

// geminiJSON renders -o json: one pretty-printed object at the end.
type geminiJSON struct {
	sessionID string
	response  strings.Builder
	stats     any
	errObj    any
}

func (*geminiJSON) passes() bool { return false }

func (g *geminiJSON) line(e *engine, text string) {
	obj, _ := jsonl.Parse([]byte(text), jsonl.ParseOptions{})
	switch obj["type"] {
	case "init":
		g.sessionID, _ = obj["session_id"].(string)
	case "message":
		if obj["role"] == "assistant" {
			s, _ := obj["content"].(string)
			g.response.WriteString(s)
		}
	case "result":
		g.stats = obj["stats"]
		g.errObj = obj["error"]
	}
}

func (g *geminiJSON) end(e *engine, code int) {
	out := struct {
		SessionID string `json:"session_id,omitempty"`
		Response  string `json:"response"`
		Stats     any    `json:"stats,omitempty"`
		Error     any    `json:"error,omitempty"`
	}{g.sessionID, g.response.String(), g.stats, g.errObj}
	b, err := json.MarshalIndent(out, "", "  ")
	if err == nil {
		e.write(string(b), true, 0)
	}
}
