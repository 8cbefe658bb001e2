package fakecli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/transcript"
)

// codexVersion is the version the fake claims (protocols.md: 0.169.0).
const codexVersion = "0.169.0"

// runCodex is the codex personality: `codex exec`, one turn per process.
func runCodex(p *proc) int {
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
	// even with a prompt argument (protocols.md §2.1).
	var prompt string
	if f.promptGiven && f.prompt != "-" {
		prompt = f.prompt
	}
	switch {
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
	var ses *session
	if f.resume {
		if f.last {
			filter := here
			if f.all {
				filter = ""
			}
			if ses, err = st.latest("codex", filter); err != nil {
				return p.harnessError(err)
			}
		} else {
			if ses, err = st.get("codex", f.resumeID); err != nil {
				return p.harnessError(err)
			}
			if ses == nil {
				ses = recorded("codex", ref, f.resumeID, here, "thread_id")
			}
			if ses == nil {
				return p.flagsError(fmt.Sprintf("Error: thread/resume: thread/resume failed: no rollout found for thread id %s (code -32600)", f.resumeID), 1)
			}
		}
		if ses != nil {
			ref = ses.Transcript
		}
	}
	t, err := loadRef("codex", ref)
	if err != nil {
		return p.harnessError(err)
	}
	parts := t.Processes()
	part := 0
	if ses != nil {
		part = sessionPart(ses, len(parts))
	}
	recID := recordedSessionID(t, "thread_id")
	sid := recID
	if ses != nil {
		sid = ses.ID
	}
	if sid == "" {
		sid = newUUID(p.rng("codex", ref))
	}
	if !f.ephemeral {
		rec := &session{CLI: "codex", ID: sid, Transcript: ref, Next: part + 1, Cwd: here, Title: firstLine(prompt)}
		if ses != nil {
			rec.Created, rec.Cwd = ses.Created, ses.Cwd
		}
		if err := st.put(rec); err != nil {
			return p.harnessError(err)
		}
	}

	eng.steps = p.plan.steps("codex", parts[part])
	eng.labels = transcript.Labels(eng.steps)
	if recID != "" && sid != recID {
		eng.rewriteFrom, eng.rewriteTo = recID, sid
	}
	if !f.json || f.lastMessage != "" {
		eng.format = &codexHuman{json: f.json, lastMessageFile: f.lastMessage}
	}
	return eng.run()
}

// codexSignal is Codex's own answer to a signal (protocols.md §2.4):
// SIGINT stops with no final event and exit 1; SIGTERM and SIGHUP kill it
// (the npm launcher re-raises the signal its child died of).
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

// codexHuman renders Codex without --json (only the last agent message on
// stdout), and writes --output-last-message.
type codexHuman struct {
	json            bool
	lastMessageFile string
	last            string
}

func (h *codexHuman) passes() bool { return h.json }

func (h *codexHuman) line(e *engine, text string) {
	if !strings.Contains(text, `"agent_message"`) {
		return
	}
	obj, _ := jsonl.Parse([]byte(text), jsonl.ParseOptions{})
	if obj["type"] != "item.completed" {
		return
	}
	item, _ := obj["item"].(map[string]any)
	if item["type"] == "agent_message" {
		if s, ok := item["text"].(string); ok {
			h.last = s
		}
	}
}

func (h *codexHuman) end(e *engine, code int) {
	if h.lastMessageFile != "" && code == 0 {
		if err := os.WriteFile(h.lastMessageFile, []byte(h.last), 0o644); err != nil {
			fmt.Fprintf(e.p.stderr, "Failed to write last message file %s: %v\n", h.lastMessageFile, err)
		}
	}
	if !h.json && h.last != "" {
		e.write(h.last, true, 0)
	}
}
