package fakecli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/transcript"
)

// codexVersion is the version the fake claims: that of the captures in
// testdata/captures/codex.
const codexVersion = "0.169.0"

// runCodex is the codex personality: `codex exec`, one turn per process.
func runCodex(p *proc) int {
	if len(p.args) > 0 && p.args[0] == "app-server" {
		return runCodexAppServer(p, p.args[1:]) // codex_appserver.go
	}
	ref, err := transcriptRef("codex", p.env)
	if err != nil {
		return p.harnessError(err)
	}
	p.logStart(refName(ref))

	args := p.args
	if len(args) > 0 {
		switch args[0] {
		case "--version", "-V":
			v := codexVersion
			if t, err := loadRef("codex", ref); err == nil && t.Header.CLIVersion != "" {
				v = strings.TrimPrefix(t.Header.CLIVersion, "codex-cli ")
			}
			p.out.line("codex-cli "+v, true)
			return 0
		case "--help", "-h":
			io.WriteString(p.out.w, codexHelp)
			return 0
		}
	}
	if len(args) == 0 || (args[0] != "exec" && args[0] != "e") {
		return p.harnessError(fmt.Errorf("only `codex exec` is faked (the interactive TUI and other subcommands are not); got %q", strings.Join(args, " ")))
	}
	f, msg := parseCodexExec(args[1:])
	if msg != "" {
		return p.flagsError(msg, 2)
	}
	if f.help {
		io.WriteString(p.out.w, codexHelp)
		return 0
	}

	eng := newEngine(p, nil, nil)
	eng.defaultSignal = codexSignal

	// stdin: read to EOF before anything else when it is not a terminal,
	// even with a prompt argument (`codex exec --help`: "If stdin is piped
	// and a prompt is also provided, stdin is appended as a <stdin> block";
	// testdata/captures/codex/*.stderr.txt). `exec resume` with a prompt
	// does not read stdin at all (resolve_prompt in codex-rs/exec/src/lib.rs
	// reads it only for a missing prompt or "-"): its stderr has no
	// "Reading ..." line (testdata/captures/codex/human_resume.stderr.txt,
	// the second process of testdata/captures/codex/0.169.0/multi-turn.jsonl).
	var prompt string
	if f.promptGiven && f.prompt != "-" {
		prompt = f.prompt
	}
	switch {
	case !codexReadsStdin(&f):
		// The prompt is the argument; stdin stays unread, and a client
		// may leave it open.
		p.obs.log("stdin_unread")
	case !p.stdinTTY && p.stdin != nil:
		if prompt != "" {
			io.WriteString(p.stderr, "Reading additional input from stdin...\n")
		} else if !f.promptGiven {
			io.WriteString(p.stderr, "Reading prompt from stdin...\n")
		}
		eng.in = readLines(p.stdin, p.start)
		fl, lines, _ := eng.collectStdin(-1)
		if fl == flowEnd {
			return eng.code
		}
		var b strings.Builder
		for i, m := range lines {
			eng.logStdin(m, "prompt")
			m.synthetic = true // logged; replay may still match it
			if i > 0 {
				b.WriteByte('\n')
			}
			b.Write(m.raw)
		}
		eng.held = lines
		if prompt == "" {
			prompt = b.String()
			if strings.TrimSpace(prompt) == "" {
				return p.flagsError("No prompt provided via stdin.", 1)
			}
		}
	case prompt == "":
		return p.flagsError("No prompt provided. Either specify one as an argument or pipe the prompt into stdin.", 1)
	}

	if msg := codexConfigError(f.configs); msg != "" {
		return p.flagsError(msg, 1)
	}
	if !f.skipGitCheck && !insideGitRepo(f.cd) {
		return p.flagsError("Not inside a trusted directory and --skip-git-repo-check was not specified.", 1)
	}

	st, err := openStore(p.env)
	if err != nil {
		return p.harnessError(err)
	}
	here := cwd()
	ses, code, ok := codexResolve(p, &f, st, ref, here)
	if !ok {
		return code
	}
	if ses != nil {
		ref = ses.Transcript
	}
	t, parts, part, recID, err := sessionTranscript("codex", ref, ses, "thread_id")
	if err != nil {
		return p.harnessError(err)
	}
	sid := recID
	if ses != nil {
		sid = ses.ID
	} else if sid, err = codexNewThread(p, st, ref, recID); err != nil {
		return p.harnessError(err)
	}
	p.logSession(sid, ses != nil)
	if !f.ephemeral {
		rec := &session{CLI: "codex", ID: sid, Transcript: ref, Next: part + 1, Cwd: here, Title: firstLine(prompt)}
		if ses != nil {
			rec.Created, rec.Cwd = ses.Created, ses.Cwd
		}
		if err := st.put(rec); err != nil {
			return p.harnessError(err)
		}
	}

	eng.steps = codexModelNotice(codexStdinNotices(p.plan.steps("codex", parts[part])), strings.TrimPrefix(t.Header.CLIVersion, "codex-cli "), codexModel(&f))
	eng.labels = transcript.Labels(eng.steps)
	if recID != "" && sid != recID {
		eng.rewriteFrom, eng.rewriteTo = recID, sid
	}
	if !f.json || f.lastMessage != "" {
		eng.format = newCodexHuman(p, &f, t.Header.CLIVersion, prompt)
	}
	return eng.run()
}

// codexNewThread is the thread id of a run that resumes nothing: every
// such run of the real CLI starts a thread of its own, with a new id
// (testdata/captures/codex/0.171.0-threads: two runs of the same scenario,
// two ids; docs/protocols/codex.md#session-resume). The fake gives it the
// recorded id while no thread of the store has that id, so that a case's
// first run replays its fixture as recorded, and otherwise a fresh UUID
// that no thread of the store has: a second fresh run of a case is a
// second thread, not the first one again.
func codexNewThread(p *proc, st *store, ref, recID string) (string, error) {
	if recID != "" {
		ses, err := st.get("codex", recID)
		if err != nil || ses == nil {
			return recID, err
		}
	}
	rng := p.rng("codex", ref)
	for {
		id := newUUID(rng)
		ses, err := st.get("codex", id)
		if err != nil || ses == nil {
			return id, err
		}
	}
}

// codexReading are the notices codex exec writes on stderr when it reads
// stdin (read_prompt_from_stdin in codex-rs/exec/src/lib.rs).
var codexReading = map[string]bool{
	"Reading additional input from stdin...": true,
	"Reading prompt from stdin...":           true,
}

// codexStdinNotices drops a process part's recorded stdin notices: the
// fake writes its own, as its command line and stdin call for (a capture
// records the one its own run wrote; a resume with a prompt writes none).
func codexStdinNotices(steps []transcript.Step) []transcript.Step {
	out := steps[:0:0]
	for _, st := range steps {
		if st.Op == transcript.OpErr && codexReading[st.Text] {
			continue
		}
		out = append(out, st)
	}
	return out
}

// codexSignal is Codex's own answer to a signal, as observed on 0.169.0
// (fixtures/codex/interrupt.jsonl): SIGINT stops with no final event and
// exit 1; SIGTERM and SIGHUP kill it (the npm launcher bin/codex.js execs
// the binary, or re-raises the signal its child died of).
func codexSignal(e *engine, sig syscall.Signal) flow {
	if sig == syscall.SIGINT {
		return e.finish(1)
	}
	return e.dieBy(sig)
}

// insideGitRepo reports whether dir (or the working directory) is inside
// a Git work tree, which Codex trusts without --skip-git-repo-check.
func insideGitRepo(dir string) bool {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		if isGitDir(filepath.Join(abs, ".git")) {
			return true
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return false
		}
		abs = parent
	}
}

// isGitDir reports whether path is what git takes for a repository: a
// .git directory with a HEAD, or a .git file ("gitdir: ...") of a worktree
// or submodule. A stray empty .git directory is not one.
func isGitDir(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !st.IsDir() {
		b, err := os.ReadFile(path)
		return err == nil && strings.HasPrefix(string(b), "gitdir:")
	}
	_, err = os.Stat(filepath.Join(path, "HEAD"))
	return err == nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// codexHuman renders Codex without --json, as codex-cli 0.169.0 does
// (codex-rs/exec/src/event_processor_with_human_output.rs; the captures
// testdata/captures/codex/human_*): a summary of the configuration, the
// prompt and every event as text on stderr, and only the final agent
// message on stdout. With --json it only writes --output-last-message.
type codexHuman struct {
	json            bool
	lastMessageFile string
	// summary is the configuration summary (key, value), without the
	// session id, which comes from thread.started.
	summary [][2]string
	version string
	prompt  string
	cwd     string
	// ttys: the final message goes to stdout unless both stdout and
	// stderr are terminals.
	ttys bool

	last      string
	completed bool
	usage     map[string]any
	started   map[string]time.Time
}

func newCodexHuman(p *proc, f *codexFlags, version, prompt string) *codexHuman {
	h := &codexHuman{json: f.json, lastMessageFile: f.lastMessage, prompt: prompt, cwd: cwd(),
		ttys: p.stdoutTTY && isTerminalWriter(p.stderr), started: map[string]time.Time{}}
	h.version = strings.TrimPrefix(version, "codex-cli ")
	if h.version == "" {
		h.version = codexVersion
	}
	if f.cd != "" {
		if abs, err := filepath.Abs(f.cd); err == nil {
			h.cwd = abs
		}
	}
	h.summary = codexSummary(f, h.cwd)
	return h
}

// codexSummary is the configuration summary of exec's human output
// (config_summary_entries): what the flags and -c overrides set, else
// the defaults of a configuration that sets nothing (observed on 0.169.0:
// approval never, sandbox read-only, reasoning effort and summaries none).
// The model and provider of the user's config.toml are unknown to the
// fake: without -m or -c it shows gpt-5.5 and openai.
func codexSummary(f *codexFlags, workdir string) [][2]string {
	cfg := map[string]string{}
	for _, c := range f.configs {
		k, v, ok := strings.Cut(c, "=")
		if ok {
			cfg[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	pick := func(flag, key, dflt string) string {
		switch {
		case flag != "":
			return flag
		case cfg[key] != "":
			return cfg[key]
		}
		return dflt
	}
	sandbox := pick(f.sandbox, "sandbox_mode", "read-only")
	switch {
	case f.yolo:
		sandbox = "danger-full-access"
	case f.approveForMe && f.sandbox == "":
		sandbox = "workspace-write"
	}
	if sandbox == "workspace-write" {
		roots := []string{"workdir", "/tmp", "$TMPDIR"}
		for _, d := range f.addDirs {
			if abs, err := filepath.Abs(d); err == nil {
				d = abs
			}
			roots = append(roots, d)
		}
		sandbox += " [" + strings.Join(roots, ", ") + "]"
	}
	return [][2]string{
		{"workdir", workdir},
		{"model", pick(f.model, "model", "gpt-5.5")},
		{"provider", pick("", "model_provider", "openai")},
		{"approval", pick("", "approval_policy", "never")},
		{"sandbox", sandbox},
		{"reasoning effort", pick("", "model_reasoning_effort", "none")},
		{"reasoning summaries", pick("", "model_reasoning_summary", "none")},
	}
}

func (h *codexHuman) passes() bool { return h.json }

// eprint writes text and a newline to stderr, as eprintln! does.
func (h *codexHuman) eprint(e *engine, text string) {
	n, _ := io.WriteString(e.p.stderr, text+"\n")
	e.p.obs.log("err", "bytes", n, "line", 0)
}

func (h *codexHuman) line(e *engine, text string) {
	if h.json {
		// Only the last agent message matters (--output-last-message).
		if strings.Contains(text, `"agent_message"`) {
			obj, _ := jsonl.Parse([]byte(text), jsonl.ParseOptions{})
			if item, _ := obj["item"].(map[string]any); obj["type"] == "item.completed" && item["type"] == "agent_message" {
				h.last, _ = item["text"].(string)
			}
		}
		if strings.Contains(text, `"turn.completed"`) {
			h.completed = true
		}
		return
	}
	obj, _ := jsonl.Parse([]byte(text), jsonl.ParseOptions{})
	if obj == nil {
		return
	}
	item, _ := obj["item"].(map[string]any)
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	switch obj["type"] {
	case "thread.started":
		var b strings.Builder
		fmt.Fprintf(&b, "OpenAI Codex v%s\n--------\n", h.version)
		for _, kv := range h.summary {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
		}
		fmt.Fprintf(&b, "session id: %s\n--------\nuser\n%s", str(obj, "thread_id"), h.prompt)
		h.eprint(e, b.String())
	case "error":
		// The error notification's text: a retry notice keeps only its
		// message ("Reconnecting... 1/5"), without the details --json
		// appends in parentheses.
		msg := str(obj, "message")
		if strings.HasPrefix(msg, "Reconnecting... ") {
			if i := strings.Index(msg, " ("); i > 0 && strings.HasSuffix(msg, ")") {
				msg = msg[:i]
			}
		}
		h.eprint(e, "ERROR: "+msg)
	case "turn.failed":
		errObj, _ := obj["error"].(map[string]any)
		h.eprint(e, "ERROR: "+str(errObj, "message"))
	case "turn.completed":
		h.completed = true
		h.usage, _ = obj["usage"].(map[string]any)
	case "item.started":
		h.itemStarted(e, item)
	case "item.updated":
		if item["type"] == "todo_list" {
			h.plan(e, item)
		}
	case "item.completed":
		h.itemCompleted(e, item)
	}
}

func (h *codexHuman) itemStarted(e *engine, item map[string]any) {
	str := func(k string) string { s, _ := item[k].(string); return s }
	h.started[str("id")] = time.Now()
	switch item["type"] {
	case "command_execution":
		h.eprint(e, fmt.Sprintf("exec\n%s in %s", str("command"), h.cwd))
	case "mcp_tool_call":
		h.eprint(e, fmt.Sprintf("mcp: %s/%s started", str("server"), str("tool")))
	case "web_search":
		h.eprint(e, "web search: "+str("query"))
	case "file_change":
		h.eprint(e, "apply patch")
	case "collab_tool_call":
		h.eprint(e, "collab: "+camel(str("tool")))
	case "todo_list":
		h.plan(e, item)
	}
}

func (h *codexHuman) itemCompleted(e *engine, item map[string]any) {
	str := func(k string) string { s, _ := item[k].(string); return s }
	switch item["type"] {
	case "agent_message":
		h.last = str("text")
		h.eprint(e, "codex\n"+h.last)
	case "reasoning":
		if t := str("text"); strings.TrimSpace(t) != "" {
			h.eprint(e, t)
		}
	case "command_execution":
		dur := ""
		if at, ok := h.started[str("id")]; ok {
			dur = fmt.Sprintf(" in %dms", time.Since(at).Milliseconds())
		}
		switch str("status") {
		case "failed":
			code := 1
			if n, ok := item["exit_code"].(float64); ok {
				code = int(n)
			}
			h.eprint(e, fmt.Sprintf(" exited %d%s:", code, dur))
		case "declined":
			h.eprint(e, " declined"+dur+":")
		case "in_progress":
			h.eprint(e, " in progress"+dur+":")
		default:
			h.eprint(e, " succeeded"+dur+":")
		}
		if out := str("aggregated_output"); strings.TrimSpace(out) != "" {
			h.eprint(e, out)
		}
	case "file_change":
		var b strings.Builder
		b.WriteString("patch: " + str("status"))
		changes, _ := item["changes"].([]any)
		for _, c := range changes {
			m, _ := c.(map[string]any)
			p, _ := m["path"].(string)
			b.WriteString("\n" + p)
		}
		h.eprint(e, b.String())
	case "mcp_tool_call":
		h.eprint(e, fmt.Sprintf("mcp: %s/%s (%s)", str("server"), str("tool"), str("status")))
		if errObj, ok := item["error"].(map[string]any); ok {
			msg, _ := errObj["message"].(string)
			h.eprint(e, msg)
		}
	case "web_search":
		h.eprint(e, "web search: "+str("query"))
	case "error":
		// Config warnings, deprecation notices and reroutes are item
		// errors in --json, warnings in the human output.
		h.eprint(e, "warning: "+str("message"))
	}
}

// plan renders a todo_list (a plan update): one line per step.
func (h *codexHuman) plan(e *engine, item map[string]any) {
	items, _ := item["items"].([]any)
	var lines []string
	for _, it := range items {
		m, _ := it.(map[string]any)
		text, _ := m["text"].(string)
		if done, _ := m["completed"].(bool); done {
			lines = append(lines, "  ✓ "+text)
		} else {
			lines = append(lines, "  • "+text)
		}
	}
	if len(lines) > 0 {
		h.eprint(e, strings.Join(lines, "\n"))
	}
}

func (h *codexHuman) end(e *engine, code int) {
	if !h.completed {
		return
	}
	if h.lastMessageFile != "" {
		if err := os.WriteFile(h.lastMessageFile, []byte(h.last), 0o644); err != nil {
			fmt.Fprintf(e.p.stderr, "Failed to write last message file %s: %v\n", h.lastMessageFile, err)
		}
	}
	if h.json {
		return
	}
	if h.usage != nil {
		num := func(k string) int64 { n, _ := h.usage[k].(float64); return int64(n) }
		total := max(num("input_tokens")-num("cached_input_tokens"), 0) + max(num("output_tokens"), 0)
		h.eprint(e, "tokens used\n"+thousands(total))
	}
	if h.last != "" && !h.ttys {
		e.write(h.last, true, 0)
	}
}

// thousands formats n with comma separators (format_with_separators).
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// camel turns snake_case into CamelCase (a Rust enum's Debug form).
func camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}
