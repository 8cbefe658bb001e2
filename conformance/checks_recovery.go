package conformance

import (
	"fmt"
	"strings"

	"github.com/agentconform/agentconform/fakecli"
)

// Sources of the recovery and resume checks.
const (
	srcSessions = "docs/protocols/claude.md#session-resume; docs/protocols/codex.md#session-resume; docs/protocols/gemini.md#session-resume"
)

// The checks of the next turn after a failure, and of sessions.
var (
	CheckTurnAfterFailure = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/next-turn", "MUST",
		"After a turn that failed (an API error, a line too long for the adapter, a CLI that died), the caller's next turn works: the adapter is not left broken. Its prompt reaches a CLI, which completes the turn, and the adapter reports it successful.", srcSessions),
		Applies: needs("multi_turn", func(c *Case) bool { return c.Expect.NextTurn && !(c.Expect.CLIDies && c.Agent == "claude") }),
		Judge:   judgeTurnAfterFailure})
	CheckRestartsCLI = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/restarts-cli", "SHOULD",
		"After the CLI process of a session died in a turn (Claude keeps one process for the whole session), the caller's next turn works: the adapter starts the CLI again, resuming the session, rather than failing every turn from then on.", srcSessions),
		Applies: needs("multi_turn", func(c *Case) bool { return c.Expect.NextTurn && c.Expect.CLIDies && c.Agent == "claude" }),
		Judge:   judgeTurnAfterFailure})
	CheckSameSession = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/same-session", "MUST",
		"Every later turn of a session continues that session: it runs in the CLI process of the earlier turns, or in one that resumes the session by its id (claude --resume ID, codex exec resume ID, gemini --resume ID). A new session loses the conversation; --continue, resume --last and --resume latest may take another one; --session-id with the id of an existing session is refused by the CLI.", srcSessions),
		Applies: needs("multi_turn", func(c *Case) bool { return multiTurn(c) || c.Interrupt != nil && c.Interrupt.ThenTurn }),
		Judge:   judgeSameSession})
	CheckResumeSession = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/resume-session", "MUST",
		"A start that asks to resume session X has the CLI resume exactly X: claude --resume X, codex exec resume X, gemini --resume X. Not the latest session (--continue, resume --last, --resume latest take whichever ran last), not a new one (claude --session-id X is refused when X exists); an X the CLI does not have is the CLI's to refuse, and the adapter's to report.", srcSessions),
		Applies: needs("resume", func(c *Case) bool { return c.Resume != "" }),
		Judge:   judgeResumeSession})
)

// procSession is what the fakes' log says of the session of one CLI
// process: the session it ran in (resumed or new), or the session it
// refused, and why.
type procSession struct {
	pid     int
	argv    []string
	id      string
	resumed bool
	// refused is the session_error reason ("not_found", "in_use"), "" if
	// none; message is the CLI's.
	refused, message string
	// flags is set when the CLI refused its command line.
	flags bool
}

// sessionsOf returns, in start order, the session of every CLI process
// that was to run a turn.
func sessionsOf(o *Observation) []procSession {
	var out []procSession
	for _, s := range o.turnStarts() {
		ps := procSession{pid: s.PID, argv: s.Argv}
		for _, r := range o.Fake {
			if r.PID != s.PID {
				continue
			}
			switch r.Kind {
			case "session":
				ps.id, ps.resumed = r.Session, r.Resumed
			case "session_error":
				ps.id, ps.refused, ps.message = r.Session, r.Reason, r.Message
			case "flags_error":
				ps.flags = true
			}
		}
		out = append(out, ps)
	}
	return out
}

// describe says what a process did with its session, for a failure.
func (ps procSession) describe() string {
	argv := clip(strings.Join(ps.argv, " "), 300)
	switch {
	case ps.refused != "":
		return fmt.Sprintf("%s: the CLI refused it: %s", argv, clip(ps.message, 200))
	case ps.id == "":
		return argv + ": it ran in no session (it ended before it started one)"
	case ps.resumed:
		return fmt.Sprintf("%s: resumed session %s", argv, ps.id)
	}
	return fmt.Sprintf("%s: started a new session, %s", argv, ps.id)
}

func judgeTurnAfterFailure(o *Observation) Outcome {
	if o.Case.Watchdog && o.GaveUp {
		// The first turn is the adapter's watchdog's to end: without one
		// that fired (lifecycle/watchdog, a SHOULD, judges that), the
		// runner gave up on the turn as a caller would and closed.
		return Outcome{Skip: true, Actual: "the adapter's watchdog never ended the stalled turn (lifecycle/watchdog): the runner gave up and closed, so no next turn ran"}
	}
	ends := o.TurnEnds()
	if len(ends) < 2 {
		return failf("a turn_end for the next turn", "%d turn_end records: the next turn never ended", len(ends))
	}
	last := ends[len(ends)-1]
	if !last.OK {
		return failf("the next turn reported successful", "turn_end ok:false: %s", clip(last.Error, 300))
	}
	turns := o.cliTurns()
	if len(turns) < len(ends) {
		return failf("the next prompt reaches a CLI, which runs the turn", "the CLIs ran %d turns for the adapter's %d turn_end records: the turn reported successful never reached one", len(turns), len(ends))
	}
	if t := turns[len(turns)-1]; t.format == formatStream {
		if term := terminalOf(o.Case.Agent, t.lines); term == nil || terminalFailed(term.Obj) {
			return failf("the CLI completes the next turn", "the CLI's last turn did not complete, yet the adapter reported it successful")
		}
	}
	return pass()
}

func judgeSameSession(o *Observation) Outcome {
	procs := sessionsOf(o)
	first := -1
	for i, ps := range procs {
		if ps.id != "" && ps.refused == "" {
			first = i
			break
		}
	}
	if first < 0 {
		return Outcome{Skip: true, Actual: "no CLI process ran a session"}
	}
	want := procs[first].id
	for _, ps := range procs[first+1:] {
		switch {
		case ps.flags && ps.refused == "" && ps.id == "":
			continue // invocation/flags judges a command line the CLI refused
		case ps.refused != "" || ps.id != want || !ps.resumed:
			return failf(fmt.Sprintf("the later turn continues session %s (the same process, or a resume of %s)", want, want), "%s", ps.describe())
		}
	}
	return pass()
}

func judgeResumeSession(o *Observation) Outcome {
	want := o.Case.Resume
	procs := sessionsOf(o)
	if len(procs) == 0 {
		return failf("a CLI process that resumes "+want, "the adapter started no CLI process for the turn")
	}
	ps := procs[0]
	switch {
	case ps.flags && ps.refused == "" && ps.id == "":
		return Outcome{Skip: true, Actual: "the CLI refused the command line (invocation/flags judges it)"}
	case ps.refused == fakecli.SessionNotFound && ps.id == want && o.Case.Expect.UnknownSession:
		return pass() // asked for the right session, which the CLI does not have
	case ps.refused == "" && ps.resumed && ps.id == want:
		return pass()
	}
	what := ps.describe()
	switch {
	case ps.id == decoyID:
		what += " (the most recent session of the directory, not the one asked for)"
	case ps.refused == fakecli.SessionInUse:
		what += " (a new session under the id of one that exists)"
	}
	return failf("the CLI resumes session "+want, "%s", what)
}

// codexValued are the options of codex exec and exec resume that take a
// value.
var codexValued = map[string]bool{"-c": true, "--config": true, "-m": true, "--model": true, "-p": true, "--profile": true,
	"-s": true, "--sandbox": true, "-C": true, "--cd": true, "-i": true, "--image": true, "--add-dir": true,
	"--enable": true, "--disable": true, "-o": true, "--output-last-message": true, "--output-schema": true,
	"--color": true, "--local-provider": true, "--thread-source": true, "--cyber-access-program": true}

// codexReadsStdin reports whether a codex invocation reads its stdin: all
// but exec resume with a prompt (other than "-"), before or after the
// subcommand, as read_prompt_from_stdin in codex-rs/exec/src/lib.rs
// decides (testdata/captures/codex/0.169.0/resume-existing.jsonl).
func codexReadsStdin(argv []string) bool {
	var ops []string
	last, resume := false, false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--last":
			last = true
		case codexValued[a]:
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			if a == "resume" && len(ops) > 0 && (ops[0] == "exec" || ops[0] == "e") && !resume {
				resume = true
				ops = append(ops, "resume")
				continue
			}
			ops = append(ops, a)
		}
	}
	if !resume {
		return true
	}
	var prompts []string // the positionals other than exec, resume and the id
	seenResume, idTaken := false, last
	for _, op := range ops[1:] {
		switch {
		case op == "resume" && !seenResume:
			seenResume = true
		case seenResume && !idTaken:
			idTaken = true
		default:
			prompts = append(prompts, op)
		}
	}
	for _, p := range prompts {
		if p != "-" {
			return false
		}
	}
	return true
}

// cliNeverFailed reports whether every turn the CLIs ran completed and
// every CLI process that ran one exited 0.
func cliNeverFailed(o *Observation) bool {
	if !allTurnsCompleted(o) {
		return false
	}
	for _, s := range o.turnStarts() {
		for _, r := range o.Fake {
			if r.PID == s.PID && r.Kind == "exit" && (r.Signal != "" || r.Code == nil || *r.Code != 0) {
				return false
			}
		}
	}
	return true
}
