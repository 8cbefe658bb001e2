package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentconform/agentconform/capture"
	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fakecli/faults"
	"github.com/agentconform/agentconform/realcli"
)

// RealCLIs are the real CLIs a run plays its cases with instead of the
// fakes (Config.Real; `agentconform run --cli real`). Every case whose
// scenario a real CLI can play runs with that CLI under the adapter: the
// built-in mock model API plays the model's side of the case's scenario
// (package capture's scripts, the ones the fixtures were captured with),
// on loopback, with a throwaway home and a trap that refuses every other
// address; what the adapter starts as claude, codex or gemini is the
// recording wrapper of package realcli, which logs what the fakes log.
// The same checks judge. A case that needs what only a fake can do (a
// death at a chosen byte, invented events, a stall, a line of a chosen
// size) is SKIP, saying so.
type RealCLIs struct {
	// Binaries are the real CLIs by name ("claude"); a CLI missing here
	// has its cases SKIP.
	Binaries map[string]*capture.Binary
	// WorkDir holds the stages' throwaway homes; "" means
	// capture.DefaultWorkDir().
	WorkDir string
}

// RealStallAfter is the watchdog time the reference adapters run with on
// the real CLIs unless --stall-after sets one: a real CLI takes seconds to
// start (Gemini CLI 2 to 3 s, Claude Code up to 3 s on a loaded machine)
// and says nothing while a tool runs (the interrupt scenarios' command
// takes 6 s), so the fakes' watchdog would cut real turns that are going
// well. The watchdog cases, which need a fake that stalls, do not run
// there.
const RealStallAfter = 20 * time.Second

// RealTimeout is the deadline of a case on the real CLIs unless --timeout
// sets one: three times RealStallAfter, so that an adapter's watchdog
// fires, and the adapter has time to report it, well before the runner
// gives up on the case (a CLI that hangs at its start).
const RealTimeout = 3 * RealStallAfter

// realCase is how a case plays on a real CLI.
type realCase struct {
	bin      *capture.Binary
	scenario string
	// faults are the live faults the wrapper applies (the case's, less
	// those the real CLI's own process tree stands for).
	faults string
	// prime runs the scenario's first turn with the real CLI before the
	// adapter starts, twice: the case resumes the first session, and the
	// second is the younger decoy of the fakes' seeds (the one --continue,
	// resume --last or --resume latest would take).
	prime bool
}

// Version returns the version of the real cli, or "".
func (r *RealCLIs) Version(cli string) string {
	if r == nil || r.Binaries[cli] == nil {
		return ""
	}
	return r.Binaries[cli].Version
}

// forReal returns the cases of a run on the real CLIs: each a copy of
// the case, set to play on its CLI, or marked Unavailable with the reason
// it cannot.
func (r *RealCLIs) forReal(cases []*Case) []*Case {
	out := make([]*Case, len(cases))
	for i, c := range cases {
		rc := *c
		plan, why := r.plan(c)
		if why != "" {
			rc.Unavailable = "not playable on the real CLI: " + why
		} else {
			rc.real = plan
			rc.CLIVersion = plan.bin.Version
		}
		out[i] = &rc
	}
	return out
}

// plan says how c plays on its real CLI, or why it cannot.
func (r *RealCLIs) plan(c *Case) (*realCase, string) {
	cli := realCLIOf[c.Agent]
	if cli == "" {
		cli = c.Agent
	}
	bin := r.Binaries[cli]
	switch {
	case c.Unavailable != "":
		return nil, c.Unavailable
	case bin == nil:
		return nil, fmt.Sprintf("no real %s was found (put it on PATH, name it with --%s-path, or install it with --install)", cli, cli)
	case c.Transcript != "":
		return nil, "it replays a transcript file, which only a fake can"
	case c.Fixture == "" || strings.Count(c.Fixture, "/") != 1:
		return nil, fmt.Sprintf("it replays the fixture %s of another CLI version; the real %s is %s", c.Fixture, c.Agent, bin.Version)
	case c.Watchdog || c.LongTurn:
		return nil, "it paces or stalls the CLI's output, which only a fake can"
	case c.Expect.IgnoresSIGTERM:
		return nil, "the CLI must ignore SIGTERM, which only a fake can make it"
	case c.Agent == "claude" && hasFault(c.Faults, "launcher"):
		// docs/protocols/claude.md#launcher
		return nil, "Claude from npm is its native binary, no launcher in front; the package's fallback launcher this case plays dies of a signal the CLI behind it never gets, which the wrapper standing for the process the adapter started cannot show"
	case c.FaultsLaterOnly:
		return nil, "it slows only a later process of the session, and the recording wrapper applies a case's faults to every process"
	}
	// A case that resumes a session of an earlier run (its first turn
	// done) gets one from the real CLI itself: the stage primes it.
	prime := len(c.Sessions) > 0 && c.Resume == resumeID
	if c.Agent == AgentGeminiACP && c.Resume != "" && !c.Expect.UnknownSession {
		// An ACP client's session/load of an earlier session: the stage
		// primes it with the scenario's first agent process (and ages it:
		// capture's ageGeminiSession) in place of the fixture's session.
		prime = true
	}
	scenario := path.Base(c.Fixture)
	if alias := scenarioAlias[cli+"/"+scenario]; alias != "" {
		scenario = alias
	}
	if scenario == "acp-permission" {
		// Captured twice, one run per answer: the policy picks the run.
		scenario += "-" + c.Permission
	}
	if !capture.Playable(cli, scenario) {
		return nil, fmt.Sprintf("the mock model API has no script of %s for %s", scenario, cli)
	}
	live := realFaults(c.Faults)
	if err := faults.LiveSupported(live); err != nil {
		return nil, err.Error()
	}
	return &realCase{bin: bin, scenario: scenario, faults: live, prime: prime}, ""
}

// scenarioAlias names the capture scenario a fixture was captured from
// where the names differ: the api-error fixtures are the captures of a
// model API answering 401 (Claude) or 400 (Codex, Gemini CLI).
var scenarioAlias = map[string]string{
	"claude/api-error": "api-error-401",
	"codex/api-error":  "api-error-400",
	"gemini/api-error": "api-error-400",
}

// realCLIOf is the CLI that serves the JSON-RPC surfaces' agents:
// `codex app-server` and `gemini --acp`.
var realCLIOf = map[string]string{AgentAppServer: "codex", AgentGeminiACP: "gemini"}

// hasFault reports whether the fault spec names fault.
func hasFault(spec, fault string) bool {
	for _, item := range strings.Split(spec, ";") {
		if name, _, _ := strings.Cut(strings.TrimSpace(item), ":"); name == fault {
			return true
		}
	}
	return false
}

// realFaults is a case's fault spec less the process faults a real CLI
// plays itself: its npm launcher is the real one.
func realFaults(spec string) string {
	var keep []string
	for _, item := range strings.Split(spec, ";") {
		name, _, _ := strings.Cut(strings.TrimSpace(item), ":")
		if name == "" || name == "launcher" {
			continue
		}
		keep = append(keep, strings.TrimSpace(item))
	}
	return strings.Join(keep, ";")
}

// RealRun is what a case on a real CLI shows besides what the fakes'
// log holds.
type RealRun struct {
	// CLI, Version and Scenario name what played.
	CLI      string `json:"cli"`
	Version  string `json:"cli_version"`
	Scenario string `json:"scenario"`
	// ModelRequests counts what the mock model API was asked.
	ModelRequests int `json:"model_requests"`
	// Leaks are the attempts to reach anything outside loopback the trap
	// refused: none in a run that stayed offline.
	Leaks []string `json:"leaks,omitempty"`
	// Outcome, when set, says how the real CLI's run differed from the
	// scenario's fixture, and so how the case was judged (realOutcome).
	Outcome string `json:"outcome,omitempty"`
}

// stageReal sets up the real CLI of case c in dir (its work directory
// work): the stage, the scenario's files, and the wrapper's
// configuration. It returns the variables the adapter's environment
// gets, how many requests of the scenario the mock model API has received
// so far (the CLI is in its turn once it asked), and what to call once
// the case is over.
func stageReal(cfg *Config, c *Case, dir, work string, deadline time.Time) (env []string, asked func() int, done func(o *Observation), err error) {
	rc := c.real
	wd := cfg.Real.WorkDir
	if wd == "" {
		wd = capture.DefaultWorkDir()
	}
	st, err := capture.OpenStage(rc.bin, rc.scenario, capture.Options{WorkDir: wd})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("case %s: the real %s: %w", c.ID, c.Agent, err)
	}
	for rel, content := range st.Files {
		p := filepath.Join(work, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			st.Close()
			return nil, nil, nil, fmt.Errorf("case %s: seeding %s: %w", c.ID, rel, err)
		}
	}
	if rc.prime {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		id, err := st.Prime(ctx, work)
		if err == nil {
			_, err = st.Prime(ctx, work) // the decoy, younger
		}
		if err != nil {
			st.Close()
			return nil, nil, nil, &realSetupError{err}
		}
		c.Resume = id
	}
	conf := filepath.Join(dir, "real.json")
	err = realcli.WriteConfig(conf, &realcli.Config{CLI: rc.bin.CLI, Path: rc.bin.Path, Version: rc.bin.Version,
		Env: st.Env, Unset: st.Unset, Faults: rc.faults, Seed: caseSeed(cfg, c), Deadline: deadline})
	if err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	done = func(o *Observation) {
		reqs := st.Requests()
		o.Real = &RealRun{CLI: rc.bin.CLI, Version: rc.bin.Version, Scenario: rc.scenario,
			ModelRequests: len(reqs), Leaks: st.Leaks()}
		if cfg.Keep {
			// What the mock model API was asked, beside the fakes' log:
			// which scripted answer each request got.
			if b, err := json.MarshalIndent(reqs, "", "  "); err == nil {
				os.WriteFile(filepath.Join(dir, "model-requests.json"), b, 0o644)
			}
		}
		st.Close()
	}
	return []string{realcli.EnvConfig + "=" + conf}, st.Asked, done, nil
}

// realOutcome returns c with the expectation the real CLI set: where the
// real CLI completed a turn the scenario's fixture fails (Claude's
// max-turns scenario when the adapter sets no turn limit) or failed one
// the fixture completes (Gemini CLI cutting a long stdout short, as it
// does in most runs on a pipe), the case is judged by what the CLI did.
// Only a failure of the CLI's own counts: when the adapter signalled or
// killed the CLI, or the case interrupts, stalls or resumes on purpose,
// the case stands as it is. The note says what changed, for the report.
func realOutcome(c *Case, o *Observation) (*Case, string) {
	if c.real == nil || c.Interrupt != nil || c.Expect.Cancelled || c.Expect.Stall || c.Expect.UnknownSession || c.Expect.NextTurn {
		return c, ""
	}
	ts := o.cliTurns()
	if len(ts) == 0 {
		return c, ""
	}
	for _, r := range o.Fake {
		if r.Kind == "signal" || r.Kind == "exit" && r.Action != "" {
			return c, "" // the adapter stopped the CLI: its doing, not the CLI's
		}
	}
	if c.Agent == "claude" && claudeStdinClosedEarly(o) {
		return c, "" // the adapter ended Claude's input before its turn's end
	}
	if c.Agent == AgentGeminiACP || c.Agent == AgentAppServer {
		return rpcOutcome(c, o)
	}
	failed, cut := false, false
	var why []string
	for i, t := range ts {
		switch {
		case t.format == formatText:
			// Text output says nothing of a failure but by the exit status
			// (below): an empty answer with exit 0 is the CLI's own success
			// (Gemini CLI stopped by its loop detection prints nothing and
			// exits 0, as its stream-json result says success).
		case t.format != formatStream:
			if !t.ok {
				failed = true
				why = append(why, fmt.Sprintf("turn %d: no answer", i+1))
			}
		default:
			term := terminalOf(c.Agent, t.lines)
			switch {
			case term == nil:
				failed, cut = true, true
				why = append(why, fmt.Sprintf("turn %d: no terminal event", i+1))
			case terminalFailed(term.Obj) || str(term.Obj, "subtype") != "" && str(term.Obj, "subtype") != "success":
				failed = true
				why = append(why, fmt.Sprintf("turn %d: %s", i+1, clip(string(term.Raw), 160)))
			}
		}
	}
	// A CLI that exits non-zero failed, whatever it wrote (text output
	// says nothing else of a failure).
	bad := badExits(o)
	exitedBadly := len(bad) > 0
	failed = failed || exitedBadly
	why = append(why, bad...)
	if failed == c.Expect.TurnFails {
		return c, ""
	}
	rc := *c
	rc.Expect.TurnFails = failed
	rc.Expect.StreamOnly = failed && cut && !exitedBadly
	if failed {
		return &rc, "the real CLI failed a turn the scenario's fixture completes (" + strings.Join(why, "; ") + "): the adapter is judged on that failure"
	}
	return &rc, "the real CLI completed every turn, where the scenario's fixture fails: the adapter is judged on the completed turns"
}

// rpcOutcome is realOutcome for the JSON-RPC CLIs, whose turns end in
// a message, not a line of a stream: ACP's answer to session/prompt (a
// result, or an error), the app server's turn/completed (its status).
// A process that exits after it answered every prompt has not failed one
// (the client closing the session ends it); one that exits badly with a
// prompt unanswered has.
func rpcOutcome(c *Case, o *Observation) (*Case, string) {
	prompts := map[string]bool{} // request ids of ACP's session/prompt
	for _, r := range o.Fake {
		if r.Kind != "stdin" || r.Text == "" {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(r.Text), &m) == nil && m.Method == "session/prompt" && len(m.ID) > 0 {
			prompts[string(m.ID)] = true
		}
	}
	asked, answered := len(prompts), 0 // the app server's turns are counted as they complete
	var why []string
	for _, lines := range o.wireLines() {
		for _, l := range lines {
			if l.Obj == nil {
				continue
			}
			switch c.Agent {
			case AgentGeminiACP:
				id, _ := json.Marshal(l.Obj["id"])
				if l.Obj["method"] != nil || !prompts[string(id)] {
					continue
				}
				answered++
				if e, ok := l.Obj["error"]; ok {
					b, _ := json.Marshal(e)
					why = append(why, fmt.Sprintf("session/prompt %s: error %s", id, clip(string(b), 160)))
				}
			case AgentAppServer:
				if str(l.Obj, "method") != "turn/completed" {
					continue
				}
				answered++
				if st := str(l.Obj, "params", "turn", "status"); st == "failed" {
					why = append(why, "turn/completed: status failed")
				}
			}
		}
	}
	if answered < asked {
		for _, b := range badExits(o) {
			why = append(why, fmt.Sprintf("%d of %d prompts unanswered; %s", asked-answered, asked, b))
		}
	}
	if answered == 0 && len(why) == 0 {
		return c, "" // nothing the CLI said of a turn
	}
	failed := len(why) > 0
	if failed == c.Expect.TurnFails {
		return c, ""
	}
	rc := *c
	rc.Expect.TurnFails, rc.Expect.StreamOnly = failed, false
	if failed {
		return &rc, "the real CLI failed a turn the scenario's fixture completes (" + strings.Join(why, "; ") + "): the adapter is judged on that failure"
	}
	return &rc, "the real CLI completed every turn, where the scenario's fixture fails: the adapter is judged on the completed turns"
}

// badExits says, for each CLI process of the case that exited non-zero or
// died of a signal, which ("codex exec exited 1").
func badExits(o *Observation) []string {
	var out []string
	for _, s := range o.turnStarts() {
		for _, r := range o.Fake {
			if r.PID == s.PID && r.Kind == "exit" && (r.Signal != "" || r.Code != nil && *r.Code != 0) {
				out = append(out, fmt.Sprintf("%s exited %s", strings.Join(s.Argv[:min(2, len(s.Argv))], " "), exitText(r)))
			}
		}
	}
	return out
}

// RealRunMark ends the name of an adapter's run on the real CLIs, so that
// reports hold it beside the same adapter's run on the fakes.
const RealRunMark = " @ real CLIs"

// RealRunName is the name of adapter's run on the real CLIs.
func RealRunName(adapter string) string { return adapter + RealRunMark }

// FakeRunName is the name of the run on the fakes paired with a run
// named name on the real CLIs.
func FakeRunName(name string) string { return strings.TrimSuffix(name, RealRunMark) }

// exitText says how an exit record's process ended.
func exitText(r fakecli.Observation) string {
	if r.Signal != "" {
		return "by " + r.Signal
	}
	if r.Code != nil {
		return strconv.Itoa(*r.Code)
	}
	return "somehow"
}

// realSetupError is a real CLI that could not be set up for a case (the
// session to resume could not be primed): the case is SKIP with it, the
// run goes on.
type realSetupError struct{ err error }

func (e *realSetupError) Error() string { return "the real CLI could not be set up: " + e.err.Error() }
func (e *realSetupError) Unwrap() error { return e.err }

// exitedZero reports whether the log shows pid exit with status 0.
func exitedZero(o *Observation, pid int) bool {
	for _, r := range o.Fake {
		if r.PID == pid && r.Kind == "exit" {
			return r.Signal == "" && r.Code != nil && *r.Code == 0
		}
	}
	return false
}

// claudeStdinClosedEarly reports whether a Claude process reading
// stream-json input had its stdin closed before it wrote its last result
// (or exited 0 without one, which it does only at the end of its input):
// the adapter ended the session under a turn (a Claude process ends at the
// end of its input, the turn cut short), so a failure then is the
// adapter's doing, not the CLI's.
func claudeStdinClosedEarly(o *Observation) bool {
	if !streamJSONInput(o) {
		return false
	}
	closedAt := map[int]int64{}
	for _, r := range o.Fake {
		if r.Kind == "stdin_closed" || r.Kind == "stdin_closed_unread" {
			closedAt[r.PID] = r.TMS
		}
	}
	for _, ts := range o.wireLines() {
		if len(ts) == 0 {
			continue
		}
		pid := ts[0].PID
		last := int64(-1)
		for _, l := range ts {
			if l.Obj != nil && l.Obj["type"] == "result" {
				last = l.TMS
			}
		}
		at, closed := closedAt[pid]
		if !closed {
			// The wrapper logs no end of stdin when the CLI ended with it
			// without a word; with stream-json input Claude exits 0 without
			// a result only at the end of its input.
			if last < 0 && exitedZero(o, pid) {
				return true
			}
			continue
		}
		if last < 0 || at < last {
			return true
		}
	}
	return false
}
