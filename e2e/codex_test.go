//go:build unix

package e2e

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/fakecli"
)

// The Codex SDK (TypeScript) through its driver: Codex, startThread /
// resumeThread and runStreamed, against the fake codex replaying each
// fixture. One `codex exec` process per turn.

// codexArgv is how the SDK starts `codex exec` for the driver's thread
// options (dist/index.js, CodexExec.run): --experimental-json (the hidden
// alias of --json), --cd for workingDirectory, --skip-git-repo-check, and
// `resume ID` last when the thread has an id. The prompt is never an
// argument: it goes to stdin.
func codexArgv(cd string, resume ...string) []string {
	argv := []string{"codex", "exec", "--experimental-json", "--cd", cd, "--skip-git-repo-check"}
	if len(resume) > 0 {
		argv = append(argv, "resume", resume[0])
	}
	return argv
}

// checkCodexProcess checks what the SDK did to one codex process: argv,
// the originator variable it sets, the working directory (the SDK does not
// chdir: the CLI runs in the caller's directory and gets --cd), the prompt
// on stdin, which it then closed.
func checkCodexProcess(t *testing.T, r *run, p *cliProcess, argv []string, prompt string) {
	t.Helper()
	if diff := cmp.Diff(argv, p.start.Argv); diff != "" {
		t.Errorf("codex argv (-want +got):\n%s", diff)
	}
	if !p.hasEnv("CODEX_INTERNAL_ORIGINATOR_OVERRIDE") {
		t.Errorf("the SDK did not set CODEX_INTERNAL_ORIGINATOR_OVERRIDE (env: %v)", p.start.Env)
	}
	if !sameDir(p.start.Cwd, r.cwd) {
		t.Errorf("codex ran in %s, want the driver's own directory %s", p.start.Cwd, r.cwd)
	}
	if p.start.StdinTTY {
		t.Errorf("codex's stdin is a terminal")
	}
	var in []string
	for _, o := range p.kinds("stdin") {
		if o.Matched != "prompt" {
			t.Errorf("codex stdin line %q was taken as %q, want the prompt", o.Text, o.Matched)
		}
		in = append(in, o.Text)
	}
	if diff := cmp.Diff([]string{prompt}, in); diff != "" {
		t.Errorf("codex stdin (-want +got):\n%s", diff)
	}
	if !p.stdinClosed() {
		t.Errorf("the SDK never closed codex's stdin (exec reads it to EOF before it starts)")
	}
}

// codexSession runs prompts as the turns of one thread and closes.
func codexSession(t *testing.T, r *run, prompts ...string) ([]turn, []*cliProcess) {
	t.Helper()
	for i, p := range prompts {
		if i == 0 {
			r.start("codex", p, nil)
		} else {
			r.send(map[string]any{"op": "send", "prompt": p})
		}
		r.turnEnd()
	}
	if end := r.close(); end.obj["ok"] != true {
		t.Errorf("end = %s, want ok", clip(end.raw))
	}
	turns := r.session(len(prompts))
	procs := processes(r.observations())
	if len(procs) != len(prompts) {
		t.Fatalf("the SDK started %d codex processes for %d turns, want one per turn", len(procs), len(prompts))
	}
	noProtocolErrors(t, procs)
	for _, p := range procs {
		if got := p.exit(); got != "exit 0" {
			t.Errorf("codex (pid %d) ended with %s, want exit 0", p.start.PID, got)
		}
	}
	return turns, procs
}

func TestCodexSDKPlainText(t *testing.T) {
	t.Parallel()
	const fx = "codex/plain-text"
	r := startRun(t, codexSDK, fakecli.Options{Fixture: fx})
	turns, procs := codexSession(t, r, "Say hello in one short sentence.")
	tr, _ := loadFixture(t, fx)
	checkTurnEnd(t, turns[0].end, true, tr.Header.SessionID)
	samePath(t, procs, []int{4, 5, 6, 7})
	sameEvents(t, codexSDK, wantEvents(t, fx, procs, nil, codexView), events(turns))
	checkCodexProcess(t, r, procs[0], codexArgv(r.project), "Say hello in one short sentence.")
}

func TestCodexSDKSingleTool(t *testing.T) {
	t.Parallel()
	const fx = "codex/single-tool"
	r := startRun(t, codexSDK, fakecli.Options{Fixture: fx})
	turns, procs := codexSession(t, r, "Run `echo hi` and tell me what it printed.")
	tr, _ := loadFixture(t, fx)
	checkTurnEnd(t, turns[0].end, true, tr.Header.SessionID)
	// item.started with "exit_code": null (the SDK's type says the key is
	// omitted while running) comes through as null, untouched.
	samePath(t, procs, []int{4, 5, 6, 7, 8, 9})
	sameEvents(t, codexSDK, wantEvents(t, fx, procs, nil, codexView), events(turns))
	checkCodexProcess(t, r, procs[0], codexArgv(r.project), "Run `echo hi` and tell me what it printed.")
}

func TestCodexSDKMultiTurn(t *testing.T) {
	t.Parallel()
	const fx = "codex/multi-turn"
	r := startRun(t, codexSDK, fakecli.Options{Fixture: fx})
	turns, procs := codexSession(t, r, "What does greet.go do?", "Make it add an exclamation mark.")
	tr, _ := loadFixture(t, fx)
	tid := tr.Header.SessionID
	for _, tu := range turns {
		checkTurnEnd(t, tu.end, true, tid)
	}
	// Two processes: the second is `exec ... resume <thread_id>` with the
	// id of the first one's thread.started, and plays the fixture's
	// second part.
	samePath(t, procs, []int{4, 5, 6, 7, 8, 9}, []int{13, 14, 15, 16, 17, 18})
	sameEvents(t, codexSDK, wantEvents(t, fx, procs, nil, codexView), events(turns))
	checkCodexProcess(t, r, procs[0], codexArgv(r.project), "What does greet.go do?")
	checkCodexProcess(t, r, procs[1], codexArgv(r.project, tid), "Make it add an exclamation mark.")
}

func TestCodexSDKInterrupt(t *testing.T) {
	t.Parallel()
	for _, mode := range interruptModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			codexInterrupt(t, mode)
		})
	}
}

// codexInterrupt aborts codex/interrupt's command through the driver (the
// interrupt op, or SIGINT in signal mode): the turn's AbortController.
func codexInterrupt(t *testing.T, mode string) {
	const fx = "codex/interrupt"
	r := startRun(t, codexSDK, fakecli.Options{Fixture: fx})
	r.start("codex", "Run the end-to-end tests.", nil)
	// The command's item.started (line 7) is out: the fake now runs it
	// for 30 s, the window in which a client interrupts.
	r.until("the command's item.started", func(l line) bool { return l.obj["type"] == "item.started" })
	r.interrupt(mode)
	te := r.turnEnd()
	if end := r.close(); end.obj["ok"] != true {
		t.Errorf("end = %s, want ok", clip(end.raw))
	}
	turns := r.session(1)
	tr, _ := loadFixture(t, fx)
	checkTurnEnd(t, te.obj, false, tr.Header.SessionID)
	// Aborting makes the event stream throw the AbortError of
	// child_process.spawn, not a "Codex Exec exited with signal" error.
	if te.obj["error"] != "interrupted: The operation was aborted" {
		t.Errorf("turn_end error = %v, want the AbortError", te.obj["error"])
	}

	procs := processes(r.observations())
	if len(procs) != 1 {
		t.Fatalf("%d codex processes, want 1", len(procs))
	}
	p := procs[0]
	noProtocolErrors(t, procs)
	samePath(t, procs, []int{4, 5, 6, 7})
	sameEvents(t, codexSDK, wantEvents(t, fx, procs, nil, codexView), events(turns))
	checkCodexProcess(t, r, p, codexArgv(r.project), "Run the end-to-end tests.")

	// The AbortSignal given to spawn: SIGTERM (not SIGINT, the Ctrl-C
	// that codex answers with exit 1), and codex dies by it.
	var sigs []string
	for _, o := range p.kinds("signal") {
		sigs = append(sigs, o.Signal)
	}
	if diff := cmp.Diff([]string{"SIGTERM"}, sigs); diff != "" {
		t.Errorf("signals codex got (-want +got):\n%s", diff)
	}
	if got := p.exit(); got != "signal SIGTERM" {
		t.Errorf("codex ended with %s, want death by SIGTERM", got)
	}
}
