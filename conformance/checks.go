package conformance

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/validate"
)

// Sources of the checks' requirements.
const (
	srcHarness   = "conformance/HARNESS.md"
	srcIssue     = "agentconform issue 4 (Checks)"
	srcClaudeCtl = "protocols.md §1.3"
	srcClaudeInt = "protocols.md §1.5"
	srcCodexInv  = "protocols.md §2.1"
	srcCodexSig  = "protocols.md §2.4"
	srcGemini    = "protocols.md §3.1, §3.4"
	srcBuffers   = "protocols.md §1.6, §2.5; seed 001 §1 Chunking & Buffer Limits"
	srcSeed001   = "seed 001 §2 Strictness Rules"
	srcForward   = "protocols.md §1.2 (ignore unknown fields and types)"
)

// interruptDeadline is how soon after the interrupt the adapter must
// report the cancelled turn.
const interruptDeadline = 5 * time.Second

func rule(id, level, requirement, source string) finding.Rule {
	l := finding.Must
	if level == "SHOULD" {
		l = finding.Should
	}
	return finding.Rule{ID: id, Requirement: requirement, Source: source, Level: l}
}

func always(*Case, *Hello) (bool, string) { return true, "" }

func agentIs(agents ...string) func(*Case, *Hello) (bool, string) {
	return func(c *Case, _ *Hello) (bool, string) {
		if slices.Contains(agents, c.Agent) {
			return true, ""
		}
		return false, "applies to " + strings.Join(agents, " and ") + " only"
	}
}

func needs(capability string, cond func(*Case) bool) func(*Case, *Hello) (bool, string) {
	return func(c *Case, h *Hello) (bool, string) {
		if !cond(c) {
			return false, "not this kind of case"
		}
		if capability != "" && !h.supports(capability) {
			return false, "the adapter does not declare " + capability
		}
		return true, ""
	}
}

func normalCase(c *Case) bool {
	return !c.Expect.TurnFails && !c.Expect.Cancelled && !c.Expect.Stall
}

func multiTurn(c *Case) bool { return len(c.Prompts) > 1 }

// The catalogue. Each check's ID, requirement and source are stable.
var (
	CheckHello = register(&Check{Family: FamilyOutput, Rule: rule("output/hello", "MUST",
		"The adapter writes one hello record, before any event, naming its profile and agents.", srcHarness),
		Applies: always, Judge: judgeHello})
	CheckValid = register(&Check{Family: FamilyOutput, Rule: rule("output/valid", "MUST",
		"Every line the adapter writes is valid for its declared profile: JSON objects, schema-valid, in the profile's order, ids paired.", srcHarness+"; seed 000 §8.1; seed 001 §1-§2"),
		Applies: always, Judge: judgeValid})
	CheckRecords = register(&Check{Family: FamilyOutput, Rule: rule("output/records", "MUST",
		"The adapter writes a turn_end record after every turn it ran and one end record last.", srcHarness),
		Applies: always, Judge: judgeRecords})

	CheckFlags = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/flags", "MUST",
		"Every CLI invocation is accepted by the real CLI's flag grammar.", "protocols.md §1.1, §2.1, §3.1"),
		Applies: always, Judge: judgeFlags})
	CheckStdinEOF = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/stdin-closed", "MUST",
		"Codex and Gemini get their stdin closed: they read it to EOF before they start.", srcCodexInv+"; protocols.md §3.5"),
		Applies: agentIs("codex", "gemini"), Judge: judgeStdinClosed})
	CheckClaudeStdin = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/claude-stdin", "MUST",
		"A single-turn Claude run closes stdin after the result; a multi-turn run keeps one process and its stdin open until the last result.", "protocols.md §1.1, §1.7"),
		Applies: func(c *Case, h *Hello) (bool, string) {
			if c.Agent != "claude" || !normalCase(c) {
				return false, "applies to Claude cases the CLI completes"
			}
			return true, ""
		}, Judge: judgeClaudeStdin})
	CheckResume = register(&Check{Family: FamilyInvocation, Rule: rule("invocation/resume-id", "MUST",
		"A resumed turn passes the session id from system/init, thread.started or init.", "protocols.md §1.1, §2.1, §3.1"),
		Applies: needs("", multiTurn), Judge: judgeResume})

	CheckCanUseTool = register(&Check{Family: FamilyControl, Rule: rule("control/can-use-tool", "MUST",
		"Every can_use_tool request is answered exactly once, with its request_id and the decision the permission policy implies.", srcClaudeCtl),
		Applies: agentIs("claude"), Judge: judgeCanUseTool})
	CheckEnvelope = register(&Check{Family: FamilyControl, Rule: rule("control/interrupt-envelope", "MUST",
		"An interrupt is sent inside the control_request envelope; a bare {\"subtype\":\"interrupt\"} is silently ignored by the CLI.", srcClaudeCtl),
		Applies: func(c *Case, h *Hello) (bool, string) {
			if c.Agent != "claude" || c.Interrupt == nil {
				return false, "applies to Claude interrupt cases only"
			}
			return needs("interrupt", func(*Case) bool { return true })(c, h)
		}, Judge: judgeEnvelope})
	CheckAfterCancel = register(&Check{Family: FamilyControl, Rule: rule("control/no-response-after-cancel", "MUST",
		"No control_response is sent for a request the CLI withdrew with control_cancel_request.", srcClaudeInt),
		Applies: agentIs("claude"), Judge: judgeAfterCancel})

	CheckPassedOn = register(&Check{Family: FamilyInterrupt, Rule: rule("interrupt/passed-on", "MUST",
		"After the caller's interrupt, the adapter passes it to the CLI the way the CLI needs: a control request for Claude, a signal for Codex and Gemini.", srcClaudeInt+"; "+srcCodexSig+"; protocols.md §3.4"),
		Applies: needs("interrupt", func(c *Case) bool { return c.Interrupt != nil }), Judge: judgePassedOn})
	CheckCancelled = register(&Check{Family: FamilyInterrupt, Rule: rule("interrupt/cancelled-ending", "MUST",
		"After an interrupt the adapter reports the turn as not successful (cancelled) within 5 seconds.", srcIssue),
		Applies: needs("interrupt", func(c *Case) bool { return c.Interrupt != nil }), Judge: judgeCancelled})
	CheckEscalates = register(&Check{Family: FamilyInterrupt, Rule: rule("interrupt/escalates", "MUST",
		"A CLI that ignores SIGTERM is killed (SIGKILL): no CLI process outlives the adapter.", srcIssue+"; protocols.md §1.5 (SDKs: SIGTERM, then SIGKILL)"),
		Applies: needs("interrupt", func(c *Case) bool { return c.Expect.IgnoresSIGTERM }), Judge: judgeNoLeftover})
	CheckNextTurn = register(&Check{Family: FamilyInterrupt, Rule: rule("interrupt/next-turn", "MUST",
		"Where the CLI allows it (Claude keeps its process), a further turn works after an interrupt.", srcClaudeInt),
		Applies: needs("multi_turn", func(c *Case) bool { return c.Interrupt != nil && c.Interrupt.ThenTurn }), Judge: judgeNextTurn})

	CheckLineIntact = register(&Check{Family: FamilyBuffer, Rule: rule("buffer/line-intact", "MUST",
		"A line of any size arrives intact, or the adapter reports a clear error that names the size; never silent loss.", srcBuffers),
		Applies: needs("", func(c *Case) bool { return c.Expect.LineSize > 0 }), Judge: judgeLineIntact})
	CheckGoesOn = register(&Check{Family: FamilyBuffer, Rule: rule("buffer/session-goes-on", "MUST",
		"After a long line the adapter neither hangs nor dies: it finishes the session with its end record.", srcBuffers),
		Applies: needs("", func(c *Case) bool { return c.Expect.LineSize > 0 }), Judge: judgeEnded})

	CheckReportsFailure = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/reports-failure", "MUST",
		"When the CLI fails (exits mid-line, exits without a terminal event, exits non-zero, is killed, reports an API error, stalls), the adapter reports failure, not success.", srcIssue+"; "+srcSeed001),
		Applies: needs("", func(c *Case) bool { return c.Expect.TurnFails }), Judge: judgeReportsFailure})
	CheckReportsSuccess = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/reports-success", "MUST",
		"When the CLI completes the turn, the adapter reports success (noise such as a banner or a stderr flood is no failure).", srcIssue),
		Applies: needs("", normalCase), Judge: judgeReportsSuccess})
	CheckEnds = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/ends-stream", "MUST",
		"Whatever the CLI does, the adapter ends its stream properly: the profile's terminal event (unified sessionEnded, shim result) and its end record.", srcIssue+"; "+srcSeed001+" (emit result even after errors)"),
		Applies: always, Judge: judgeEndsStream})
	CheckReaps = register(&Check{Family: FamilyLifecycle, Rule: rule("lifecycle/reaps-cli", "MUST",
		"No CLI process outlives the adapter.", srcIssue),
		Applies: always, Judge: judgeNoLeftover})

	CheckForward = register(&Check{Family: FamilyForward, Rule: rule("forward/no-crash", "MUST",
		"Unknown event types and fields never crash the adapter or fail the turn.", srcForward),
		Applies: needs("", func(c *Case) bool { return c.Expect.Unknown }), Judge: judgeForward})
)

func judgeHello(o *Observation) Outcome {
	if len(o.Records) == 0 || o.Records[0].Kind != "hello" {
		return failf(`{"agentconform":"hello",...} as the first record`, "no hello record first (records: %s)", recordKinds(o))
	}
	if o.Records[0].EventsBefore > 0 {
		return failf("hello before any event", "%d events came before hello", o.Records[0].EventsBefore)
	}
	if o.Hello.Profile != "unified" && o.Hello.Profile != "shim" && o.Hello.Profile != "native" {
		return failf(`profile "unified", "shim" or "native"`, "profile %q", o.Hello.Profile)
	}
	return pass()
}

func recordKinds(o *Observation) string {
	var k []string
	for _, r := range o.Records {
		k = append(k, r.Kind)
	}
	if len(k) == 0 {
		return "none"
	}
	return strings.Join(k, ", ")
}

// outputDialect is the dialect the adapter's events are validated as.
func outputDialect(o *Observation) schemas.Dialect {
	if o.Hello == nil {
		return ""
	}
	switch o.Hello.Profile {
	case "unified":
		return schemas.UnifiedEvents
	case "shim":
		return schemas.ShimEvents
	case "native":
		d, _ := schemas.ParseDialect(o.Case.Agent)
		return d
	}
	return ""
}

// validateEvents validates events as one stream of dialect d.
func validateEvents(events []Event, d schemas.Dialect) ([]string, error) {
	raws := make([][]byte, len(events))
	for i, e := range events {
		raws[i] = e.Raw
	}
	problems, _, err := validateLines(raws, d, nil)
	return problems, err
}

// validateLines validates lines as one stream of dialect d. It returns
// the violations (at most 10, rendered) whose rule is not in excused, and
// the IDs of every rule violated.
func validateLines(lines [][]byte, d schemas.Dialect, excused map[string]bool) ([]string, map[string]bool, error) {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	var problems []string
	rules := map[string]bool{}
	_, err := validate.Stream(context.Background(), &buf, "adapter", validate.Options{Dialect: d, Jobs: 1, MaxLineBytes: maxAdapterLine},
		func(f finding.Finding, sev finding.Severity) {
			if sev != finding.Violation {
				return
			}
			id := ""
			if f.Rule != nil {
				id = f.Rule.ID
			}
			rules[id] = true
			if excused[id] || len(problems) >= 10 {
				return
			}
			f.File = "adapter event"
			problems = append(problems, f.String())
		})
	return problems, rules, err
}

func judgeValid(o *Observation) Outcome {
	var problems []string
	for _, b := range o.BadLines {
		problems = append(problems, "not a JSON object: "+b)
	}
	d := outputDialect(o)
	if d == "" {
		return failf("a declared profile", "no hello, so no profile to validate against")
	}
	// Native Codex and Gemini streams are one process per turn: validate
	// each turn on its own, as the CLI wrote it.
	groups := [][]Event{o.Events}
	if o.Hello.Profile == "native" && o.Case.Agent != "claude" && len(o.TurnEnds()) > 1 {
		groups = nil
		for i := range o.TurnEnds() {
			groups = append(groups, o.EventsOfTurn(i))
		}
	}
	// A native adapter hands on the CLI's own events: what is wrong with
	// the CLI's stream (cut short by an interrupt, a kill, an exit mid-line)
	// is wrong with the adapter's too, and not the adapter's doing.
	var excused map[string]bool
	if o.Hello.Profile == "native" {
		excused = cliViolations(o, d)
	}
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		raws := make([][]byte, len(g))
		for i, e := range g {
			raws[i] = e.Raw
		}
		ps, _, err := validateLines(raws, d, excused)
		if err != nil {
			problems = append(problems, err.Error())
		}
		problems = append(problems, ps...)
	}
	if len(problems) > 0 {
		return failf("events valid for profile "+o.Hello.Profile, "%s", strings.Join(problems, "\n"))
	}
	return pass()
}

// cliViolations returns the rules the CLI's own stream violates, each
// process validated on its own (control messages left out, as a native
// adapter leaves them out).
func cliViolations(o *Observation, d schemas.Dialect) map[string]bool {
	out := map[string]bool{}
	for _, lines := range o.wireLines() {
		var raws [][]byte
		for _, l := range lines {
			if l.Obj != nil && controlTypes[str(l.Obj, "type")] {
				continue
			}
			raws = append(raws, l.Raw)
		}
		if len(raws) == 0 {
			continue
		}
		_, rules, _ := validateLines(raws, d, nil)
		for r := range rules {
			out[r] = true
		}
	}
	return out
}

func judgeRecords(o *Observation) Outcome {
	turns := 0
	for _, s := range o.Sent {
		if s.Op == "start" || s.Op == "send" {
			turns++
		}
	}
	if got := len(o.TurnEnds()); got < turns {
		return failf(fmt.Sprintf("%d turn_end records (one per turn started)", turns), "%d turn_end records", got)
	}
	end, ok := o.End()
	if !ok {
		return failf("an end record", "no end record (records: %s)", recordKinds(o))
	}
	if last := o.Records[len(o.Records)-1]; last.Kind != "end" || end.EventsBefore != len(o.Events) {
		return failf("end as the last line", "more output after end")
	}
	return pass()
}

func judgeFlags(o *Observation) Outcome {
	var bad []string
	for _, r := range o.Fake {
		if r.Kind == "flags_error" {
			bad = append(bad, fmt.Sprintf("%s: %s (exit %d)", strings.Join(argvOf(o, r.PID), " "), r.Message, r.ExitCode))
		}
	}
	if len(bad) > 0 {
		return failf("argv the real CLI accepts", "%s", strings.Join(bad, "\n"))
	}
	if len(o.FakeStarts()) == 0 {
		return failf("at least one CLI invocation", "the adapter never started the %s CLI", o.Case.Agent)
	}
	return pass()
}

func argvOf(o *Observation, pid int) []string {
	for _, r := range o.Fake {
		if r.PID == pid && r.Kind == "start" {
			return r.Argv
		}
	}
	return nil
}

func judgeStdinClosed(o *Observation) Outcome {
	closed, rejected := map[int]bool{}, map[int]bool{}
	for _, r := range o.Fake {
		switch r.Kind {
		case "stdin_closed":
			closed[r.PID] = true
		case "flags_error":
			rejected[r.PID] = true
		}
	}
	for _, s := range o.FakeStarts() {
		if s.StdinTTY || rejected[s.PID] {
			// A CLI that rejects its arguments exits before it reads
			// stdin; invocation/flags reports that.
			continue
		}
		if !closed[s.PID] {
			return failf("stdin closed (EOF) for every CLI process", "%s (pid %d) never saw stdin close: the real CLI waits for EOF before it starts, and hangs", strings.Join(s.Argv, " "), s.PID)
		}
	}
	return pass()
}

func judgeClaudeStdin(o *Observation) Outcome {
	starts := o.FakeStarts()
	if len(starts) == 0 {
		return failf("a Claude process", "none was started")
	}
	if multiTurn(o.Case) && len(starts) > 1 {
		return Outcome{Info: true, Actual: fmt.Sprintf("the adapter ran %d turns in %d processes (resume) instead of keeping one process", len(o.Case.Prompts), len(starts))}
	}
	for _, s := range starts {
		closedAt, lastOut := int64(-1), int64(-1)
		for _, r := range o.Fake {
			if r.PID != s.PID {
				continue
			}
			switch r.Kind {
			case "stdin_closed":
				closedAt = r.TMS
			case "out":
				lastOut = r.TMS
			}
		}
		if closedAt < 0 && !o.Case.Expect.Stall {
			if exitedBySignal(o, s.PID) {
				return failf("stdin closed after the last result", "stdin was never closed; the CLI was stopped by a signal instead")
			}
			// The CLI handles SIGTERM and SIGINT and exits with a status
			// (143, 130): stopped by a signal all the same.
			if sig := signalled(o, s.PID); sig != "" {
				return failf("stdin closed after the last result", "stdin was never closed; the CLI was stopped by %s instead", sig)
			}
		}
		if closedAt >= 0 && closedAt < lastOut && multiTurn(o.Case) {
			return failf("stdin open until the last result", "stdin closed at %d ms, before the CLI's last output at %d ms", closedAt, lastOut)
		}
	}
	return pass()
}

// signalled returns the first signal the log shows pid received, "" if
// none.
func signalled(o *Observation, pid int) string {
	for _, r := range o.Fake {
		if r.PID == pid && r.Kind == "signal" {
			return r.Signal
		}
	}
	return ""
}

func exitedBySignal(o *Observation, pid int) bool { return exitedBySignalIn(o.Fake, pid, true) }

// exitedBySignalIn reports whether the log shows pid ended by a signal;
// noExit is the answer when pid has no exit record: true for the log of a
// finished case (SIGKILL leaves no record), false for a snapshot taken
// while the fakes ran (the process was still running; see snapshotLog).
func exitedBySignalIn(log []fakecli.Observation, pid int, noExit bool) bool {
	for _, r := range log {
		if r.PID == pid && r.Kind == "exit" {
			return r.Signal != ""
		}
	}
	return noExit
}

func judgeResume(o *Observation) Outcome {
	starts := o.FakeStarts()
	if len(starts) < 2 {
		return pass() // one process served every turn (Claude)
	}
	wire := o.wireLines()
	if len(wire) == 0 {
		return failf("the first process's session id", "no wire log")
	}
	id := sessionID(wire[0])
	if id == "" {
		return Outcome{Info: true, Actual: "the first process announced no session id"}
	}
	for _, s := range starts[1:] {
		argv := strings.Join(s.Argv, " ")
		if !strings.Contains(argv, id) {
			return failf("the resumed invocation passes "+id, "%s", argv)
		}
	}
	return pass()
}

func judgeCanUseTool(o *Observation) Outcome {
	type req struct {
		id       string
		canceled bool
	}
	var reqs []req
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if l.Obj == nil {
				continue
			}
			switch l.Obj["type"] {
			case "control_request":
				if str(l.Obj, "request", "subtype") == "can_use_tool" {
					reqs = append(reqs, req{id: str(l.Obj, "request_id")})
				}
			case "control_cancel_request":
				for i := range reqs {
					if reqs[i].id == str(l.Obj, "request_id") {
						reqs[i].canceled = true
					}
				}
			}
		}
	}
	if len(reqs) == 0 {
		return pass()
	}
	answers := map[string][]string{}
	for _, s := range o.stdinLines() {
		if s.obj == nil || s.obj["type"] != "control_response" {
			continue
		}
		id := str(s.obj, "response", "request_id")
		answers[id] = append(answers[id], str(s.obj, "response", "response", "behavior"))
	}
	for _, r := range reqs {
		got := answers[r.id]
		switch {
		case r.canceled:
			continue
		case len(got) == 0:
			return failf("a control_response for can_use_tool "+r.id, "no answer: the CLI waits forever")
		case len(got) > 1:
			return failf("exactly one answer for "+r.id, "%d answers (%s)", len(got), strings.Join(got, ", "))
		case got[0] != o.Case.Permission:
			return failf(fmt.Sprintf("behavior %q (policy %s)", o.Case.Permission, o.Case.Permission), "behavior %q", got[0])
		}
	}
	return pass()
}

func judgeEnvelope(o *Observation) Outcome {
	if !interruptSent(o) {
		return failf("an interrupt sent by the runner", "the runner never got to send it (the turn ended first)")
	}
	for _, s := range stdinLinesOf(o.interruptLog()) {
		if s.obj == nil {
			continue
		}
		if s.obj["type"] == "control_request" && str(s.obj, "request", "subtype") == "interrupt" {
			return pass()
		}
		if s.obj["type"] == nil && s.obj["subtype"] == "interrupt" {
			return failf(`{"type":"control_request","request_id":...,"request":{"subtype":"interrupt"}}`, "a bare %s, which the CLI ignores", s.rec.Text)
		}
	}
	return failf("a control_request interrupt on the CLI's stdin", "none arrived")
}

func judgeAfterCancel(o *Observation) Outcome {
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if l.Obj == nil || l.Obj["type"] != "control_cancel_request" {
				continue
			}
			id := str(l.Obj, "request_id")
			for _, s := range o.stdinLines() {
				if s.obj != nil && s.rec.PID == l.PID && s.obj["type"] == "control_response" && str(s.obj, "response", "request_id") == id && s.rec.TMS > l.TMS {
					return failf("no response to withdrawn request "+id, "a control_response for it came %d ms after the cancel", s.rec.TMS-l.TMS)
				}
			}
		}
	}
	return pass()
}

func interruptSent(o *Observation) bool {
	for _, s := range o.Sent {
		if s.Op == "interrupt" || s.Op == "SIGINT" {
			return true
		}
	}
	return false
}

func judgePassedOn(o *Observation) Outcome {
	if !interruptSent(o) {
		return failf("the runner's interrupt", "the runner never sent it: the adapter went quiet too late or ended the turn first")
	}
	log := o.interruptLog()
	gaveUp := ""
	if o.GaveUp {
		gaveUp = fmt.Sprintf(" within %s of the interrupt (then the runner gave up and closed)", interruptDeadline+giveUpAfter)
	}
	if o.Case.Agent == "claude" {
		for _, s := range stdinLinesOf(log) {
			if s.obj != nil && s.obj["type"] == "control_request" && str(s.obj, "request", "subtype") == "interrupt" {
				return pass()
			}
		}
		for _, r := range log {
			if r.Kind == "signal" {
				return pass()
			}
		}
		return failf("a control_request interrupt (or a signal) reaching Claude", "nothing reached the CLI%s", gaveUp)
	}
	for _, r := range log {
		if r.Kind == "signal" {
			return pass()
		}
	}
	for _, s := range o.FakeStarts() {
		if exitedBySignalIn(log, s.PID, !o.GaveUp) {
			return pass() // killed outright (SIGKILL leaves no record)
		}
	}
	return failf("SIGINT or SIGTERM to the "+o.Case.Agent+" CLI", "the CLI received no signal%s", gaveUp)
}

func judgeCancelled(o *Observation) Outcome {
	var at time.Duration = -1
	for _, s := range o.Sent {
		if s.Op == "interrupt" || s.Op == "SIGINT" {
			at = s.At
			break
		}
	}
	if at < 0 {
		return failf("the runner's interrupt", "never sent")
	}
	for _, r := range o.TurnEnds() {
		if r.At < at {
			continue
		}
		if r.OK {
			return failf("turn_end ok:false after the interrupt", "turn_end ok:true: the interrupted turn was reported as a success")
		}
		if d := r.At - at; d > interruptDeadline {
			return failf("the cancelled turn reported within 5s", "reported after %s", d.Round(time.Millisecond))
		}
		return pass()
	}
	return failf("turn_end ok:false after the interrupt", "no turn_end after the interrupt: the caller spins forever")
}

func judgeNoLeftover(o *Observation) Outcome {
	if len(o.Leftover) > 0 {
		var argv []string
		for _, pid := range o.Leftover {
			argv = append(argv, fmt.Sprintf("pid %d: %s", pid, strings.Join(argvOf(o, pid), " ")))
		}
		return failf("no CLI process left when the adapter ends", "still running: %s", strings.Join(argv, "; "))
	}
	return pass()
}

func judgeNextTurn(o *Observation) Outcome {
	ends := o.TurnEnds()
	if len(ends) < 2 {
		return failf("a second turn after the interrupted one", "%d turn_end records", len(ends))
	}
	if !ends[len(ends)-1].OK {
		return failf("the next turn succeeds", "turn_end ok:false: %s", ends[len(ends)-1].Error)
	}
	return pass()
}

func judgeLineIntact(o *Observation) Outcome {
	size := o.Case.Expect.LineSize
	var long string
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if len(l.Raw) == size && l.Obj != nil {
				long = longestString(l.Obj)
			}
		}
	}
	if long == "" {
		if n, ok := cutLadderLine(o, size); ok {
			// The CLI began the line and could not finish it: the adapter
			// stopped reading (and closed the pipe, or killed the CLI).
			return failf(fmt.Sprintf("the %d-byte line read in full", size),
				"the CLI could write only %d bytes of its %d-byte line: the adapter stopped reading it (turn_end: %s)", n, size, turnEndSummary(o))
		}
		return Outcome{Info: true, Actual: fmt.Sprintf("the fake wrote no %d-byte line", size)}
	}
	if carries(o.Events, long) {
		return pass()
	}
	if o.Hello != nil && o.Hello.Profile == "shim" && clippedWithNote(o.Events, long) {
		// Seed 001 asks shims to keep lines under ~100 KB and to "chunk or
		// summarize" big payloads: a clip that keeps the start and says how
		// much was cut is what the contract wants.
		return pass()
	}
	for _, r := range o.TurnEnds() {
		if !r.OK && (strings.Contains(r.Error, strconv.Itoa(size)) || mentionsSize(r.Error)) {
			return pass()
		}
	}
	return failf(fmt.Sprintf("the %d-byte line's %d-byte text intact in the events, or an error naming the size", size, len(long)),
		"neither: the content was lost silently (turn_end: %s)", turnEndSummary(o))
}

// ladderPadding marks the text the ladder fault grows a line with
// (fakecli/faults).
const ladderPadding = "agentconform ladder padding"

// cutLadderLine looks for the ladder line cut short in the wire: a line
// holding the ladder's padding, shorter than size. It returns how many
// bytes of it the CLI wrote.
func cutLadderLine(o *Observation, size int) (int, bool) {
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if len(l.Raw) < size && bytes.Contains(l.Raw, []byte(ladderPadding)) {
				return len(l.Raw), true
			}
		}
	}
	return 0, false
}

// clippedWithNote reports whether an event holds the start of s and a
// note naming how many bytes were left out.
func clippedWithNote(events []Event, s string) bool {
	head := s[:min(len(s), 1024)]
	for _, e := range events {
		v := longestString(e.Obj)
		if !strings.HasPrefix(v, head) || len(v) >= len(s) {
			continue
		}
		if cut := len(s) - (len(v) - len(noteOf(v))); cut > 0 && strings.Contains(v, strconv.Itoa(cut)) {
			return true
		}
		if strings.Contains(v, strconv.Itoa(len(s))) {
			return true
		}
	}
	return false
}

// noteOf returns the trailing "[...]" note of a clipped string, if any.
func noteOf(v string) string {
	if i := strings.LastIndex(v, "\n["); i >= 0 && strings.HasSuffix(v, "]") {
		return v[i:]
	}
	return ""
}

func mentionsSize(s string) bool {
	s = strings.ToLower(s)
	for _, w := range []string{"too long", "too large", "exceed", "buffer", "limit", "bytes", "mib", "kib"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func turnEndSummary(o *Observation) string {
	var parts []string
	for _, r := range o.TurnEnds() {
		parts = append(parts, fmt.Sprintf("ok=%v error=%q", r.OK, clip(r.Error, 120)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// longestString returns the longest string value in v.
func longestString(v any) string {
	best := ""
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if len(x) > len(best) {
				best = x
			}
		case map[string]any:
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return best
}

// carries reports whether the events hold s: as one string value, or as
// the concatenation of consecutive text chunks.
func carries(events []Event, s string) bool {
	var text strings.Builder
	for _, e := range events {
		if strings.Contains(longestString(e.Obj), s) {
			return true
		}
		if c, ok := e.Obj["content"].(string); ok {
			text.WriteString(c)
		}
	}
	return strings.Contains(text.String(), s)
}

func judgeEnded(o *Observation) Outcome {
	if _, ok := o.End(); !ok {
		return failf("an end record", "none (records: %s)", recordKinds(o))
	}
	return pass()
}

func judgeReportsFailure(o *Observation) Outcome {
	ends := o.TurnEnds()
	if len(ends) == 0 {
		return failf("turn_end ok:false", "no turn_end at all")
	}
	for _, r := range ends {
		if !r.OK {
			return pass()
		}
	}
	// A long-lived CLI (Claude) may fail only when it exits, after its
	// turns completed: then the end record must say so.
	if end, ok := o.End(); ok && !end.OK {
		return pass()
	}
	return failf("turn_end ok:false, or end ok:false when the CLI failed after its turns", "ok:true everywhere: the failure was reported as success")
}

func judgeReportsSuccess(o *Observation) Outcome {
	ends := o.TurnEnds()
	if len(ends) == 0 {
		return failf("turn_end ok:true", "no turn_end at all")
	}
	for i, r := range ends {
		if !r.OK {
			return failf("turn_end ok:true for every turn", "turn %d: ok:false, error %q", i+1, clip(r.Error, 200))
		}
	}
	return pass()
}

func judgeEndsStream(o *Observation) Outcome {
	if _, ok := o.End(); !ok {
		return failf("an end record", "none (records: %s)", recordKinds(o))
	}
	if o.Hello == nil {
		return pass()
	}
	want := ""
	switch o.Hello.Profile {
	case "unified":
		want = "sessionEnded"
	case "shim":
		want = "result"
	}
	if want == "" {
		return pass()
	}
	for i := len(o.Events) - 1; i >= 0; i-- {
		if o.Events[i].Obj["type"] == want {
			return pass()
		}
	}
	return failf("a "+want+" event before end", "none: the caller's UI keeps spinning")
}

func judgeForward(o *Observation) Outcome {
	if r := judgeEnded(o); !r.OK {
		return r
	}
	return judgeReportsSuccess(o)
}
