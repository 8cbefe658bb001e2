package conformance

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/conformance/internal/broken"
)

// brokenAdapter is one deliberately broken adapter, the cases that show
// its bug, and exactly what the battery must find there.
type brokenAdapter struct {
	bug broken.Bug
	// cases are case IDs from Generate; custom are cases made for the test.
	cases  []string
	custom func(t *testing.T) []*Case
	// want maps "case check" to the verdict of every check result on the
	// cases that is not PASS or SKIP; nothing else may be found.
	want map[string]Verdict
}

// The ladder of one agent's buffer cases.
func ladder(agent string) []string {
	var ids []string
	for _, size := range LadderSizes {
		ids = append(ids, fmt.Sprintf("%s/single-tool/line-%d", agent, size))
	}
	return ids
}

// each maps every case to the same checks and verdict.
func each(cases []string, v Verdict, checks ...string) map[string]Verdict {
	m := map[string]Verdict{}
	for _, c := range cases {
		for _, chk := range checks {
			m[c+" "+chk] = v
		}
	}
	return m
}

// merge merges want maps.
func merge(ms ...map[string]Verdict) map[string]Verdict {
	out := map[string]Verdict{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

var brokenAdapters = []brokenAdapter{
	// invocation
	// The prompt wrapped in a chat transcript reaches the CLI changed.
	{bug: broken.HumanPrompt, cases: []string{"claude/plain-text", "codex/plain-text"},
		want: each([]string{"claude/plain-text", "codex/plain-text"}, Fail, "invocation/prompt")},
	// buffer: a line split across reads
	// Every line comes in pieces: all are dropped, the turn is lost.
	{bug: broken.ChunkLines, cases: []string{"codex/single-tool/slicer", "codex/single-tool"},
		want: each([]string{"codex/single-tool/slicer"}, Fail,
			"lifecycle/reports-success", "lossless/text", "lossless/tools", "lossless/usage")},
	// lossless: results paired with calls by their order, not their ids
	{bug: broken.PairByOrder, cases: []string{"gemini/multi-tool/results-out-of-order", "claude/multi-tool/results-out-of-order", "gemini/multi-tool", "claude/multi-tool"},
		want: each([]string{"gemini/multi-tool/results-out-of-order", "claude/multi-tool/results-out-of-order"}, Fail, "lossless/tools")},
	// output (an adapter without hello stops the run: TestNoHelloStopsRun)
	{bug: broken.LateHello, cases: []string{"codex/plain-text"},
		want: each([]string{"codex/plain-text"}, Fail, "output/hello")},
	{bug: broken.StdoutLog, cases: []string{"claude/plain-text", "codex/plain-text", "gemini/plain-text"},
		want: each([]string{"claude/plain-text", "codex/plain-text", "gemini/plain-text"}, Fail, "output/valid")},
	// Cases where the runner closes a quiet adapter: elsewhere it waits
	// for the missing turn_end until the case times out.
	{bug: broken.NoFailedTurnEnd, cases: []string{"claude/single-tool/exit-0-no-terminal", "codex/single-tool/stall", "codex/plain-text"},
		want: each([]string{"claude/single-tool/exit-0-no-terminal", "codex/single-tool/stall"}, Fail, "output/records", "lifecycle/reports-failure")},

	// lossless: Claude's result.result is the last text block alone
	// (claude/text-blocks: "That is all it printed."), so an adapter that
	// takes it for the answer loses the turn's other text.
	{bug: broken.ResultTextOnly, cases: []string{"claude/text-blocks", "claude/single-tool", "claude/plain-text"},
		want: each([]string{"claude/text-blocks", "claude/single-tool"}, Fail, "lossless/text")},
	// Thinking shown as the answer: text the CLI never sent as text.
	{bug: broken.ThinkingAsText, cases: []string{"claude/thinking", "claude/plain-text"},
		want: each([]string{"claude/thinking"}, Fail, "lossless/text")},
	// One line per message id: the text after a thinking block and the
	// tool_use after a text (same message id) are dropped.
	{bug: broken.FirstBlockPerMessage, cases: []string{"claude/thinking", "claude/text-blocks", "claude/plain-text"},
		want: each([]string{"claude/thinking", "claude/text-blocks"}, Fail, "lossless/text", "lossless/tools")},
	// lossless
	{bug: broken.DropTextChunk, cases: []string{"claude/plain-text", "codex/plain-text", "gemini/plain-text"},
		want: each([]string{"claude/plain-text", "codex/plain-text", "gemini/plain-text"}, Fail, "lossless/text")},
	{bug: broken.SwapToolIDs, cases: []string{"claude/multi-tool"},
		want: each([]string{"claude/multi-tool"}, Fail, "lossless/tools")},
	{bug: broken.DropUsage, cases: []string{"claude/plain-text", "codex/single-tool", "gemini/plain-text"},
		want: each([]string{"claude/plain-text", "codex/single-tool", "gemini/plain-text"}, Fail, "lossless/usage")},

	// invocation
	{bug: broken.CodexFullAuto, cases: []string{"codex/plain-text", "codex/multi-turn"},
		want: merge(each([]string{"codex/plain-text", "codex/multi-turn"}, Fail, "invocation/flags", "lifecycle/reports-success"),
			// The rejected first turn announced no thread id to resume.
			each([]string{"codex/multi-turn"}, Informational, "invocation/resume-id"))},
	// The fake plays the limit's result all the same: only the argv shows
	// the limit was dropped.
	{bug: broken.MaxTurnsDropped, cases: []string{"claude/max-turns", "claude/plain-text"},
		want: each([]string{"claude/max-turns"}, Fail, "invocation/max-turns")},
	// (The refused process began no session: each turn starts the CLI
	// again, which refuses it again.)
	{bug: broken.ClaudeNoVerbose, cases: []string{"claude/plain-text", "claude/multi-turn", "claude/permission-allow"},
		want: merge(each([]string{"claude/plain-text", "claude/multi-turn", "claude/permission-allow"}, Fail, "invocation/flags", "lifecycle/reports-success"),
			each([]string{"claude/multi-turn"}, Informational, "invocation/claude-stdin"))},
	{bug: broken.CodexStdinOpen, cases: []string{"codex/plain-text", "codex/single-tool", "codex/single-tool/exit-nonzero"},
		// The fake waits for EOF and writes nothing: the adapter gives up
		// on the silent CLI and kills it.
		want: merge(each([]string{"codex/plain-text", "codex/single-tool", "codex/single-tool/exit-nonzero"}, Fail, "invocation/stdin-closed"),
			each([]string{"codex/plain-text", "codex/single-tool"}, Fail, "lifecycle/reports-success"))},
	{bug: broken.KillClaude, cases: []string{"claude/plain-text", "claude/multi-turn", "codex/plain-text"},
		want: each([]string{"claude/plain-text", "claude/multi-turn"}, Fail, "invocation/claude-stdin")},
	{bug: broken.ResumeLast, cases: []string{"codex/multi-turn", "codex/plain-text", "codex/multi-turn/resume"},
		// resume --last takes the directory's latest session: the one the
		// first turn made, or the decoy of the resume case.
		want: merge(each([]string{"codex/multi-turn"}, Fail, "invocation/resume-id"),
			each([]string{"codex/multi-turn/resume"}, Fail, "invocation/resume-session"))},

	// recovery and resume
	// A client unusable after a failed turn: the next turn never runs.
	{bug: broken.DeadAfterFailure, cases: []string{"codex/api-error-then-turn", "claude/api-error-then-turn", "gemini/multi-turn/killed-then-turn", "codex/plain-text"},
		want: each([]string{"codex/api-error-then-turn", "claude/api-error-then-turn", "gemini/multi-turn/killed-then-turn"}, Fail, "lifecycle/next-turn")},
	// The start's resume ignored: a new session instead.
	{bug: broken.IgnoreResume, cases: []string{"codex/multi-turn/resume", "claude/multi-turn/resume", "gemini/multi-turn/resume", "codex/plain-text/resume-unknown", "codex/plain-text"},
		want: merge(each([]string{"codex/multi-turn/resume", "claude/multi-turn/resume", "gemini/multi-turn/resume", "codex/plain-text/resume-unknown"}, Fail, "invocation/resume-session"),
			each([]string{"codex/plain-text/resume-unknown"}, Fail, "lifecycle/reports-failure"))},
	// Claude's process died in the first turn: every later turn fails.
	{bug: broken.NoRestart, cases: []string{"claude/multi-turn/killed-then-turn", "claude/multi-turn"},
		want: each([]string{"claude/multi-turn/killed-then-turn"}, NonStrict, "lifecycle/restarts-cli")},
	// ... or runs in a new session.
	{bug: broken.RestartNewSession, cases: []string{"claude/multi-turn/killed-then-turn", "claude/multi-turn"},
		want: each([]string{"claude/multi-turn/killed-then-turn"}, Fail, "lifecycle/same-session", "invocation/resume-id")},

	// start-up and timing
	// An interrupt before the CLI has said anything is lost: the turn runs
	// on until the runner gives up.
	{bug: broken.DropEarlyInterrupt, cases: []string{"claude/interrupt/before-init", "codex/interrupt/before-init", "gemini/interrupt/before-init", "codex/interrupt"},
		want: merge(each([]string{"claude/interrupt/before-init", "codex/interrupt/before-init", "gemini/interrupt/before-init"}, Fail, "interrupt/passed-on", "interrupt/cancelled-ending"),
			each([]string{"claude/interrupt/before-init"}, Fail, "control/interrupt-envelope"))},
	// A hard cap on a turn's length cuts a long turn that keeps going.
	{bug: broken.TurnCap, cases: []string{"codex/multi-tool/long-turn", "gemini/multi-tool/long-turn", "codex/plain-text"},
		want: each([]string{"codex/multi-tool/long-turn", "gemini/multi-tool/long-turn"}, Fail, "lifecycle/reports-success")},

	// control
	{bug: broken.DoubleAnswer, cases: []string{"claude/permission-allow", "claude/permission-allow/policy-deny", "claude/plain-text"},
		want: each([]string{"claude/permission-allow", "claude/permission-allow/policy-deny"}, Fail, "control/can-use-tool")},
	{bug: broken.WrongDecision, cases: []string{"claude/permission-allow", "claude/permission-allow/policy-deny", "claude/permission-deny"},
		want: each([]string{"claude/permission-allow", "claude/permission-allow/policy-deny", "claude/permission-deny"}, Fail, "control/can-use-tool")},
	// The CLI ignores the bare line; the adapter's own escalation (SIGTERM
	// after its grace) ends the turn in time, so only the envelope fails.
	// (Fixtures with an initialize step are left out: there the fake
	// sometimes ends its wait at the ignored line, see the report.)
	{bug: broken.BareInterrupt, cases: []string{"claude/single-tool/interrupt-after-1", "claude/single-tool/interrupt-after-3", "claude/single-tool/interrupt-after-5"},
		want: each([]string{"claude/single-tool/interrupt-after-1", "claude/single-tool/interrupt-after-3", "claude/single-tool/interrupt-after-5"}, Fail, "control/interrupt-envelope")},
	// An envelope that lost its request member is no interrupt either:
	// the CLI ends on it ("Missing request on control_request", exit 1),
	// so nothing interrupted the turn.
	{bug: broken.EnvelopeNoRequest, cases: []string{"claude/single-tool/interrupt-after-1", "claude/single-tool/interrupt-after-3"},
		want: each([]string{"claude/single-tool/interrupt-after-1", "claude/single-tool/interrupt-after-3"}, Fail, "control/interrupt-envelope", "interrupt/passed-on")},
	// SIGTERM instead of the control request, as the Claude Agent SDK's
	// abort does: the CLI honours it with stream-json input, and the next
	// turn resumes the session in a new process. No envelope to judge.
	{bug: broken.SigtermInterrupt, cases: []string{"claude/interrupt", "claude/single-tool/interrupt-after-3", "claude/multi-turn/interrupt-then-turn"},
		want: map[string]Verdict{}},
	// An allow without updatedInput runs the tool on Claude Code 2.1.331
	// (the default fixtures) and is refused on 2.1.197, which denies the
	// tool: only the case at 2.1.197 fails.
	{bug: broken.AllowNoInput, cases: []string{"claude/permission-allow", "claude/permission-allow/policy-deny"}, custom: atClaude2_1_197,
		want: each([]string{"claude/permission-allow@2.1.197"}, Fail, "control/can-use-tool")},
	// A deny without a message is refused (the tool is denied all the
	// same, with the CLI's complaint in its place); an allow is fine.
	{bug: broken.DenyNoMessage, cases: []string{"claude/permission-deny", "claude/permission-allow/policy-deny", "claude/permission-allow"},
		want: each([]string{"claude/permission-deny", "claude/permission-allow/policy-deny"}, Fail, "control/can-use-tool")},
	{bug: broken.AnswerAfterCancel, cases: []string{"claude/permission-allow"}, custom: interruptWhileAsking,
		want: each([]string{"claude/permission-allow/interrupt-while-asking"}, Fail, "control/no-response-after-cancel")},

	// interrupt
	{bug: broken.IgnoreInterrupt, cases: []string{"claude/interrupt", "codex/interrupt"},
		// The runner gives up 6 s after its interrupt and closes.
		want: merge(each([]string{"claude/interrupt", "codex/interrupt"}, Fail, "interrupt/passed-on", "interrupt/cancelled-ending"),
			each([]string{"claude/interrupt"}, Fail, "control/interrupt-envelope"))},
	{bug: broken.SigtermOnly, cases: []string{"codex/single-tool/ignores-sigterm", "claude/single-tool/ignores-sigterm", "codex/interrupt"},
		want: each([]string{"codex/single-tool/ignores-sigterm"}, Fail, "interrupt/escalates", "lifecycle/reaps-cli")},

	// buffer
	{bug: broken.Scanner64K, cases: append(append(ladder("claude"), ladder("codex")...), "claude/long-output", "codex/long-output", "codex/plain-text"),
		want: merge(each(append(ladder("claude"), ladder("codex")...), Fail, "buffer/line-intact", "lifecycle/reports-success"),
			// Silent loss above 1 MiB: the SHOULD of long lines fails too.
			each([]string{"claude/single-tool/line-1048577", "claude/single-tool/line-8388608", "claude/single-tool/line-67108864",
				"codex/single-tool/line-1048577", "codex/single-tool/line-8388608", "codex/single-tool/line-67108864"}, NonStrict, "buffer/long-line-intact"),
			// codex/long-output has a line over 64 KiB too; claude's does
			// not (the real CLI keeps about 40 KB of a command's output),
			// so a 64 KiB scanner passes it.
			each([]string{"codex/long-output"}, Fail, "lifecycle/reports-success"))},

	// lifecycle
	// (codex/api-error-then-turn: its second turn, a resumed process, fails.)
	{bug: broken.SuccessOnFailure, cases: []string{"claude/api-error", "claude/single-tool/exit-nonzero", "codex/single-tool/killed",
		"codex/single-tool/exit-0-no-terminal", "gemini/single-tool/exit-mid-line", "gemini/long-output/pipe-cut", "codex/api-error-then-turn", "codex/plain-text"},
		want: each([]string{"claude/api-error", "claude/single-tool/exit-nonzero", "codex/single-tool/killed",
			"codex/single-tool/exit-0-no-terminal", "gemini/single-tool/exit-mid-line", "gemini/long-output/pipe-cut", "codex/api-error-then-turn"}, Fail, "lifecycle/reports-failure")},
	{bug: broken.NoSessionEnded, cases: []string{"claude/single-tool/exit-nonzero", "codex/api-error", "gemini/single-tool/killed", "codex/plain-text"},
		// The unified stream's grammar wants sessionEnded last, too.
		want: each([]string{"claude/single-tool/exit-nonzero", "codex/api-error", "gemini/single-tool/killed"}, Fail, "output/valid", "lifecycle/ends-stream")},
	// An interrupt and a turn limit reported as plain failures; an API
	// error is one.
	{bug: broken.ReasonAlwaysFailed, cases: []string{"claude/interrupt", "codex/interrupt", "gemini/single-tool/interrupt-after-2",
		"claude/multi-turn/interrupt-then-turn", "claude/max-turns", "codex/api-error", "gemini/api-error", "codex/plain-text"},
		want: each([]string{"claude/interrupt", "codex/interrupt", "gemini/single-tool/interrupt-after-2",
			"claude/multi-turn/interrupt-then-turn", "claude/max-turns"}, Fail, "lifecycle/turn-reason")},
	// The CLI's error message lost; Claude's API error still reaches the
	// caller as the synthetic assistant message's text.
	{bug: broken.DropErrorText, cases: []string{"codex/api-error", "gemini/api-error-429", "claude/max-turns", "claude/api-error", "codex/interrupt", "codex/plain-text"},
		want: each([]string{"codex/api-error", "gemini/api-error-429", "claude/max-turns"}, Fail, "lossless/error-text")},
	// The CLI blocks on its full stderr pipe before its first stdout line;
	// the adapter gives up on the silent CLI and kills it. The blocked
	// fake never gets to write out its log record of the stdin EOF it was
	// given, so invocation/stdin-closed fails too. (Claude is left out:
	// there the blocked fake loses its start record or not, by timing.)
	{bug: broken.StderrUndrained, cases: []string{"codex/single-tool/stderr-flood", "codex/plain-text"},
		want: each([]string{"codex/single-tool/stderr-flood"}, Fail, "lifecycle/reports-success", "invocation/stdin-closed")},

	// lifecycle: the adapter's own watchdog (a SHOULD)
	{bug: broken.NoWatchdog, cases: []string{"claude/single-tool/watchdog", "codex/single-tool/watchdog", "codex/plain-text"},
		want: each([]string{"claude/single-tool/watchdog", "codex/single-tool/watchdog"}, NonStrict, "lifecycle/watchdog")},
	// The turn given up on, the CLI left running: Codex's for good (the
	// adapter forgets a turn's process), Claude's until the session ends.
	{bug: broken.WatchdogNoStop, cases: []string{"claude/single-tool/watchdog", "codex/single-tool/watchdog", "codex/plain-text"},
		want: merge(each([]string{"claude/single-tool/watchdog", "codex/single-tool/watchdog"}, NonStrict, "lifecycle/watchdog"),
			each([]string{"codex/single-tool/watchdog"}, Fail, "lifecycle/reaps-cli"))},

	// forward
	{bug: broken.StrictTypes, cases: []string{"codex/single-tool/unknown-type", "codex/single-tool/unknown-field", "codex/single-tool/unknown-block", "codex/single-tool"},
		want: each([]string{"codex/single-tool/unknown-type", "codex/single-tool/unknown-field", "codex/single-tool/unknown-block"}, Fail, "forward/no-crash", "lifecycle/reports-success")},
}

// interruptWhileAsking interrupts a Claude turn while its can_use_tool
// request waits for the adapter's answer: the CLI withdraws the request
// (control_cancel_request).
func interruptWhileAsking(t *testing.T) []*Case {
	c := *pickCases(t, "claude/permission-allow")[0]
	c.ID += "/interrupt-while-asking"
	c.Interrupt = &InterruptPlan{Quiet: 300 * time.Millisecond}
	c.Expect.Cancelled = true
	c.Description = "interrupt while the CLI waits for the answer to can_use_tool"
	return []*Case{&c}
}

// atClaude2_1_197 is claude/permission-allow replaying Claude Code
// 2.1.197, as --cli-version claude=2.1.197 runs it (the ID marked with the
// version, to tell it from the default case).
func atClaude2_1_197(t *testing.T) []*Case {
	cs, err := AtVersions(pickCases(t, "claude/permission-allow"), map[string]string{"claude": "2.1.197"})
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].Unavailable != "" {
		t.Fatalf("claude/permission-allow at 2.1.197: %s", cs[0].Unavailable)
	}
	cs[0].ID += "@2.1.197"
	return cs
}

// pickCases returns the generated cases with exactly these IDs.
func pickCases(t testing.TB, ids ...string) []*Case {
	t.Helper()
	all, err := Generate([]string{"claude", "codex", "gemini"})
	if err != nil {
		t.Fatal(err)
	}
	var out []*Case
	for _, id := range ids {
		i := slices.IndexFunc(all, func(c *Case) bool { return c.ID == id })
		if i < 0 {
			t.Fatalf("no case %q", id)
		}
		out = append(out, all[i])
	}
	return out
}

// findings maps "case check" to the verdict of every check result that is
// not PASS or SKIP.
func findings(res *Results) map[string]Verdict {
	got := map[string]Verdict{}
	for _, c := range res.Cases {
		for _, r := range c.Checks {
			if r.Verdict != Pass && r.Verdict != Skip {
				got[c.ID+" "+r.Check] = r.Verdict
			}
		}
	}
	return got
}

// details renders the results that differ from want, for the log.
func details(res *Results, want map[string]Verdict) string {
	var b strings.Builder
	for _, c := range res.Cases {
		for _, r := range c.Checks {
			got := r.Verdict
			if got == Pass || got == Skip {
				got = ""
			}
			if got == want[c.ID+" "+r.Check] {
				continue
			}
			fmt.Fprintf(&b, "%s\n  wire:\n%s\n", FormatFailure(c, r), indentAll(c.Wire, "    "))
		}
	}
	return b.String()
}

// TestBrokenAdapters proves the checks: each adapter has one deliberate
// bug, and on the cases that show it the battery must find exactly the
// failures listed, every other check passing or skipping. The runs mostly
// wait (for grace periods and quiet CLIs), so they all go at once,
// whatever -parallel says; the subtests then judge them one by one.
func TestBrokenAdapters(t *testing.T) {
	t.Parallel()
	runBrokenAdapters(t, brokenAdapters)
}

// runBrokenAdapters runs each adapter of table on its cases and judges
// the findings, as TestBrokenAdapters says.
func runBrokenAdapters(t *testing.T, table []brokenAdapter) {
	type outcome struct {
		cases []*Case
		res   *Results
		err   error
	}
	outcomes := make([]outcome, len(table))
	var wg sync.WaitGroup
	// One pool for all of them, as agentconform run shares one between
	// adapters: the cases this test starts at once stay bounded however
	// many broken adapters there are, and the deadline has room for the
	// 64 MiB cases on a loaded machine.
	pool := NewPool(2 * runtime.GOMAXPROCS(0)) // and its waiting slots
	for i, ba := range table {
		cases := pickCases(t, ba.cases...)
		if ba.custom != nil {
			cases = append(cases, ba.custom(t)...)
		}
		outcomes[i].cases = cases
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcomes[i].res, outcomes[i].err = Run(context.Background(), Config{Adapter: testAdapter(t, ba.bug), Cases: cases, Jobs: 4, Pool: pool,
				Timeout: referenceTimeout, WorkDir: t.TempDir()})
		}()
	}
	wg.Wait()
	for i, ba := range table {
		t.Run(string(ba.bug), func(t *testing.T) {
			o := outcomes[i]
			if o.err != nil {
				t.Fatalf("Run: %v", o.err)
			}
			var ids, ran []string
			for _, c := range o.cases {
				ids = append(ids, c.ID)
			}
			sort.Strings(ids)
			for _, c := range o.res.Cases {
				ran = append(ran, c.ID)
			}
			if d := cmp.Diff(ids, ran); d != "" {
				t.Fatalf("cases run (-want +got):\n%s", d)
			}
			if d := cmp.Diff(ba.want, findings(o.res)); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", d, details(o.res, ba.want))
			}
		})
	}
}

// TestNaiveAdapter shows that the naive adapter, the base of the I/O
// bugs, passes without its bug every case those tests run (the ones it
// drives: Claude and Codex).
func TestNaiveAdapter(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	var ids []string
	for _, ba := range append(slices.Clone(brokenAdapters), classAdapters...) {
		if !slices.Contains(naiveBugs, ba.bug) {
			continue
		}
		for _, id := range ba.cases {
			if !seen[id] && !strings.HasPrefix(id, "gemini/") {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	cases := pickCases(t, ids...)
	res, err := Run(context.Background(), Config{Adapter: testAdapter(t, broken.Naive), Cases: cases, Jobs: 4, Timeout: referenceTimeout, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := findings(res); len(got) > 0 {
		t.Errorf("the naive adapter without a bug: %v\n%s", got, details(res, nil))
	}
}

// naiveBugs are the bugs of the naive adapter.
var naiveBugs = []broken.Bug{broken.Scanner64K, broken.StderrUndrained, broken.SigtermOnly, broken.CodexStdinOpen,
	broken.BareInterrupt, broken.EnvelopeNoRequest, broken.DoubleAnswer, broken.CodexFullAuto, broken.ClaudeNoVerbose, broken.MaxTurnsDropped, broken.StrictTypes,
	broken.ResumeLast, broken.KillClaude, broken.AnswerAfterCancel, broken.HumanPrompt, broken.ChunkLines,
	broken.NoRestart, broken.RestartNewSession,
	broken.AllowNoInput, broken.DenyNoMessage, broken.ResultTextOnly, broken.ThinkingAsText, broken.FirstBlockPerMessage,
	broken.NoWatchdog, broken.WatchdogNoStop,
	broken.MessageIDAsSession, broken.PartialsDropped, broken.ReplayDropped, broken.TurnOutputCap, broken.SessionOutputCap,
	broken.WatchdogCountsPermission, broken.WatchdogEndsSession, broken.StickyResume, broken.WarmStartTimeout}

// TestEnvelopeNeverSent shows that control/interrupt-envelope does not
// judge a case whose interrupt the runner never got to send (the turn
// ended before the adapter was quiet as long as the case waits for): there is no
// envelope to judge, and the check says so instead of failing.
func TestEnvelopeNeverSent(t *testing.T) {
	t.Parallel()
	c := *pickCases(t, "claude/single-tool/interrupt-after-1")[0]
	c.ID = "claude/single-tool/interrupt-never-sent"
	// The runner waits for an adapter quiet this long: the turn ends first.
	c.Interrupt = &InterruptPlan{Quiet: time.Hour}
	for _, bug := range []broken.Bug{broken.Naive, broken.BareInterrupt} {
		res, err := Run(context.Background(), Config{Adapter: testAdapter(t, bug), Cases: []*Case{&c}, Timeout: referenceTimeout, WorkDir: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: Run: %v", bug, err)
		}
		for _, r := range res.Cases[0].Checks {
			if r.Check != CheckEnvelope.Rule.ID {
				continue
			}
			if r.Verdict != Skip || !strings.Contains(r.Actual, "never got to send") {
				t.Errorf("%s: %s %s: %s, want SKIP: the interrupt was never sent", bug, r.Check, r.Verdict, r.Actual)
			}
		}
	}
}

// TestShellVariableAdapter shows that an adapter started by a shell
// command that holds a variable (node "$DRV", as the published drivers are
// started) is judged on a failure only its own process can see: a Claude
// CLI that exits non-zero after its turns completed. The runner's shell
// execs the command, so the adapter is the CLI's parent: one that hides
// the failure FAILs lifecycle/reports-failure, one that reports it PASSes.
// (The shell used to stay the CLI's grandparent there, and the check
// skipped both as a failure the adapter could not have seen.)
func TestShellVariableAdapter(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := pickCases(t, "claude/single-tool/exit-nonzero")
	for _, tc := range []struct {
		mode broken.Bug
		want Verdict
	}{{broken.SuccessOnFailure, Fail}, {broken.ReferenceUnified, Pass}} {
		cmd := `"${AGENTCONFORM_NO_SUCH_VARIABLE:-` + exe + `}" ` + adapterArg + " " + string(tc.mode)
		res, err := Run(context.Background(), Config{Adapter: ShellAdapter(cmd), Cases: cases, Timeout: referenceTimeout, WorkDir: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: Run: %v", tc.mode, err)
		}
		for _, r := range res.Cases[0].Checks {
			if r.Check == CheckReportsFailure.Rule.ID && r.Verdict != tc.want {
				t.Errorf("%s started as %s: %s %s: %s, want %s", tc.mode, cmd, r.Check, r.Verdict, r.Actual, tc.want)
			}
		}
	}
}

// TestNoHelloStopsRun shows that an adapter that writes no hello record
// stops the whole run with one error that says so and shows its stderr,
// instead of failing every case alike.
func TestNoHelloStopsRun(t *testing.T) {
	t.Parallel()
	_, err := Run(context.Background(), Config{Adapter: testAdapter(t, broken.NoHello), Cases: pickCases(t, "codex/plain-text"), WorkDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "no hello record") {
		t.Fatalf("Run: %v, want an error about the missing hello", err)
	}
}
