package conformance

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
)

// LadderSizes are the line sizes of the buffer cases: both sides of the
// limits adapters are known to have (bufio.Scanner's 64 KiB, the Python
// SDK's 1 MiB) and far beyond.
var LadderSizes = []int{64 << 10, 256 << 10, 1<<20 - 1, 1 << 20, 1<<20 + 1, 8 << 20, 64 << 20}

// lifecycle faults: how the CLI misbehaves, per variant name.
type lifecycleFault struct {
	variant, faults, description string
	expect                       Expect
	closeWhenQuiet               time.Duration
}

func lifecycleFaults(agent string) []lifecycleFault {
	terminal := map[string]string{"claude": "result", "codex": "turn.completed", "gemini": "result"}[agent]
	var banner []lifecycleFault
	switch agent {
	case "claude":
		// Claude Code has written sandbox debug lines on stdout between
		// its JSON lines (the Python SDK skips lines not starting with
		// "{" since 2026-03 for that reason).
		banner = append(banner, lifecycleFault{"banner", `banner:text=[SandboxDebug] Seccomp filtering not available`, "the CLI prints a non-JSON debug line on stdout, as Claude Code's sandbox has", Expect{}, 0})
	case "gemini":
		// Gemini CLI before 0.61 leaked its terminal warnings to stdout.
		banner = append(banner, lifecycleFault{"banner", "banner", "the CLI prints a non-JSON warning line on stdout, as Gemini CLI before 0.61 did", Expect{}, 0})
	}
	// Codex keeps stdout pure JSONL in exec --json: no banner case.
	return append(banner, []lifecycleFault{
		{"exit-mid-line", "exit_mid_line:code=1", "the CLI dies half way through its last line", Expect{TurnFails: true}, 0},
		// A Claude process with stream-json input does not exit after a turn
		// without its result; it stays silent, so the caller gives up. It
		// gives the adapter 1.5 s of quiet first: a Codex or Gemini CLI
		// exits at once, and an adapter that then reports success must
		// have had the time to, even on a loaded machine (a Python adapter
		// at load 30 took 0.9 s, and the caller's close hid its bug).
		{"exit-0-no-terminal", "drop:type=" + terminal, "the CLI writes no terminal event (and exits 0, or stays silent waiting for input)", Expect{TurnFails: true, StreamOnly: true}, 1500 * time.Millisecond},
		{"exit-nonzero", "exit_code:code=3", "the CLI exits 3 after a normal-looking stream", Expect{TurnFails: true}, 0},
		{"killed", "die:signal=SIGKILL,after=2", "the CLI is killed by SIGKILL after two lines", Expect{TurnFails: true}, 0},
		{"dies-before-output", "die:signal=SIGKILL,after=0", "the CLI is killed before it writes a line", Expect{TurnFails: true}, 0},
		{"stderr-flood", "stderr_flood:bytes=4194304", "the CLI writes 4 MiB to stderr before its first stdout line", Expect{}, 0},
		{"stall", "stall:after=2", "the CLI stops writing after two lines and stays alive; the runner closes", Expect{TurnFails: true, Stall: true}, 500 * time.Millisecond},
	}...)
}

// pipeFaults are how the bytes of a complete stream reach the adapter:
// a correct adapter reads the same session through each (and a stream cut
// short, limit-data, as a failure).
var pipeFaults = []struct {
	variant, faults, description string
	expect                       Expect
}{
	{"slicer", "slicer:max=7,delay_us=300", "every stdout line cut into writes of at most 7 bytes, 0.3 ms apart, so that a reader gets it in pieces", Expect{}},
	{"latency", "latency:ms=30", "30 ms before every stdout line", Expect{}},
	{"bandwidth", "bandwidth:bps=32768", "stdout throttled to 32 KiB/s, long lines written in pieces", Expect{}},
	{"crlf", "crlf", `every stdout line ends with "\r\n"`, Expect{}},
	{"no-final-newline", "no_final_newline", "the last stdout line (the terminal event) has no newline", Expect{}},
	{"limit-data", "limit_data:bytes=500", "stdout cut after 500 bytes, mid-line, and the CLI exits 0", Expect{TurnFails: true, StreamOnly: true}},
}

// Generate builds the default cases for the given agents from the
// embedded fixtures: every fixture as recorded, interrupts (the interrupt
// fixtures and a sweep over the single-tool fixture), the line-size
// ladder, process-lifecycle faults, unknown events and fields, the
// permission policies, and (cases_recovery.go) start-up and timing, the
// next turn after a failure, and resume.
func Generate(agents []string) ([]*Case, error) { return generate(agents, nil) }

// generate is Generate with the CLIs in versions at those versions
// (GenerateAt).
func generate(agents []string, versions map[string]string) ([]*Case, error) {
	all, err := fixtures.All()
	if err != nil {
		return nil, err
	}
	byName := map[string]*transcript.Transcript{}
	for _, fx := range all {
		t, err := fixtures.Load(fx.Name)
		if err != nil {
			return nil, fmt.Errorf("fixture %s: %w", fx.Name, err)
		}
		byName[fx.Name] = t
	}
	atVersion(byName, versions)
	var cases []*Case
	for _, agent := range agents {
		for _, fx := range all {
			if path.Dir(fx.Name) != agent {
				continue
			}
			t := byName[fx.Name]
			scenario := path.Base(fx.Name)
			c := &Case{ID: fx.Name, Agent: agent, Fixture: fx.Name, Permission: "allow",
				Prompts: Prompts(t), Description: t.Header.Description}
			if recoveryFixture(c, scenario) || slowStartCase(c, scenario) {
				cases = append(cases, c)
				continue
			}
			switch {
			case scenario == "interrupt":
				c.Interrupt = &InterruptPlan{AfterEvents: 1}
				c.Expect.Cancelled = true
				cases = append(cases, c)
				continue
			case scenario == "permission-deny":
				c.Permission = "deny"
			case scenario == "max-turns":
				// Captured with --max-turns 1: the caller's limit.
				c.Expect.TurnFails, c.MaxTurns = true, 1
			case strings.HasPrefix(scenario, "api-error"):
				c.Expect.TurnFails = true
			}
			cases = append(cases, c)
			if scenario == "multi-turn" && agent == "claude" {
				// The first turn stalls after its second line and is
				// interrupted there; the recorded second turn must still work.
				then := *c
				then.ID = fx.Name + "/interrupt-then-turn"
				then.Faults = "stall:after=2"
				then.FaultsFirstOnly = true
				then.Interrupt = &InterruptPlan{ThenTurn: true}
				then.Expect.Cancelled = true
				then.Description = "interrupt the first turn, then run the next turn in the same process"
				cases = append(cases, &then)
			}
			if scenario == "unicode" {
				cases = append(cases, withSplitCharacters(c))
			}
			if result := map[string]string{"claude": "user", "gemini": "tool_result"}[agent]; scenario == "multi-tool" && result != "" {
				// Claude Code and Gemini CLI run the tool calls of one
				// response at once (Claude's concurrency-safe ones, such as
				// a read-only Bash command; Gemini's all but edits) and
				// write each result when its call finishes: the results of
				// parallel calls come in the order they complete. The
				// fixtures' first two calls run in parallel.
				ooo := *c
				ooo.ID = fx.Name + "/results-out-of-order"
				ooo.Faults = "reorder:type=" + result + ",nth=1"
				ooo.Description = "the second of two parallel tool calls finishes first: its result comes before the first call's, as the CLI writes results in the order its parallel calls complete"
				cases = append(cases, &ooo)
			}
			if scenario == "long-output" && agent == "gemini" {
				// Gemini CLI's own quirk on a pipe, as captured on 0.61.0
				// (testdata/captures/gemini/pipe_cut.long-output.jsonl): it
				// exits without draining stdout, and the end of a long
				// line and everything after it are lost.
				cut := *c
				cut.ID = fx.Name + "/pipe-cut"
				cut.Faults = "pipe_cut:at=196608"
				cut.Expect.TurnFails, cut.Expect.StreamOnly = true, true
				cut.Description = "the CLI's stdout on a pipe ends 196608 bytes (3 x 64 KiB) into the 400 KB tool_result line, with no result, and the CLI exits 0: Gemini CLI 0.61.0 exits without draining stdout (captured)"
				cases = append(cases, &cut)
			}
			if scenario == "permission-allow" {
				deny := *c
				deny.ID = fx.Name + "/policy-deny"
				deny.Permission = "deny"
				deny.Description = "the same session with a deny policy: the adapter must answer deny"
				cases = append(cases, &deny)
			}
		}
		cases = append(cases, recoveryCases(agent, byName)...)
		cases = append(cases, startupCases(agent, byName)...)
		cases = append(cases, classCases(agent, byName)...) // cases_classes.go
		base := agent + "/single-tool"
		t := byName[base]
		if t == nil {
			continue
		}
		one := Prompts(t)
		outs := countOut(t.Steps)
		for k := 1; k < outs; k++ {
			cases = append(cases, &Case{ID: base + "/interrupt-after-" + strconv.Itoa(k), Agent: agent, Fixture: base,
				Faults: "stall:after=" + strconv.Itoa(k), Permission: "allow", Prompts: one,
				Interrupt: &InterruptPlan{}, Expect: Expect{Cancelled: true, Stall: true},
				Description: fmt.Sprintf("interrupt after the CLI's line %d of %d (it stalls there)", k, outs)})
		}
		for _, pf := range pipeFaults {
			if pf.variant == "no-final-newline" && agent == "claude" {
				// Claude ends every line while it runs; only a process that
				// exits has a last line, and a stream-json Claude exits
				// after its caller closes stdin (exit-mid-line covers the
				// line it dies in).
				continue
			}
			cases = append(cases, &Case{ID: base + "/" + pf.variant, Agent: agent, Fixture: base, Faults: pf.faults,
				Permission: "allow", Prompts: one, Expect: pf.expect, Description: pf.description})
		}
		if agent != "claude" {
			// Codex and Gemini are interrupted by a signal, and a CLI
			// flushes what it had under way while it shuts down.
			cases = append(cases, &Case{ID: base + "/writes-after-interrupt", Agent: agent, Fixture: base,
				Faults: "linger:after=2", Permission: "allow", Prompts: one,
				Interrupt: &InterruptPlan{}, Expect: Expect{Cancelled: true, Stall: true},
				Description: "interrupt after the CLI's line 2; it goes on writing the lines still to come (terminal event aside) for a moment, then ends as on that signal"})
		}
		for _, size := range LadderSizes {
			cases = append(cases, &Case{ID: base + "/line-" + strconv.Itoa(size), Agent: agent, Fixture: base,
				Faults: "ladder:size=" + strconv.Itoa(size), Permission: "allow", Prompts: one,
				Expect:      Expect{LineSize: size},
				Description: fmt.Sprintf("one event of exactly %d bytes on one line", size)})
		}
		for _, lf := range lifecycleFaults(agent) {
			cases = append(cases, &Case{ID: base + "/" + lf.variant, Agent: agent, Fixture: base, Faults: lf.faults,
				Permission: "allow", Prompts: one, Expect: lf.expect, CloseWhenQuiet: lf.closeWhenQuiet, Description: lf.description})
		}
		cases = append(cases,
			&Case{ID: base + "/ignores-sigterm", Agent: agent, Fixture: agent + "/interrupt", Faults: "ignore_signal:signal=SIGTERM",
				Permission: "allow", Prompts: one, Interrupt: &InterruptPlan{AfterEvents: 1},
				Expect:      Expect{Cancelled: true, IgnoresSIGTERM: true},
				Description: "interrupt a CLI that ignores SIGTERM: only SIGKILL stops it"},
			&Case{ID: base + "/unknown-type", Agent: agent, Fixture: base, Faults: "unknown_type", Permission: "allow", Prompts: one,
				Expect: Expect{Unknown: true}, Description: "an event of a type no adapter knows"},
			&Case{ID: base + "/unknown-field", Agent: agent, Fixture: base, Faults: "unknown_field", Permission: "allow", Prompts: one,
				Expect: Expect{Unknown: true}, Description: "a field no adapter knows"},
		)
		cases = append(cases, treeCases(agent, byName)...)
		cases = append(cases, watchdogCase(agent, one))
		if agent != "gemini" {
			// Gemini's stream has no content arrays or items to extend.
			cases = append(cases, &Case{ID: base + "/unknown-block", Agent: agent, Fixture: base, Faults: "unknown_block:nth=1",
				Permission: "allow", Prompts: one, Expect: Expect{Unknown: true},
				Description: "content of a kind no adapter knows inside a message: a new Claude content block, a new Codex item type"})
		}
	}
	for _, c := range cases {
		pinCase(c, versions[c.Agent], false)
	}
	as, err := appServerCases(agents) // appserver.go
	if err != nil {
		return nil, err
	}
	ac, err := acpClientCases(agents) // acpclient.go
	if err != nil {
		return nil, err
	}
	return append(append(cases, as...), ac...), nil
}

// Prompts returns the prompts the runner sends for a transcript, one per
// turn: per user message Claude waits for, per process of Codex and
// Gemini. The fuzz targets send the same.
func Prompts(t *transcript.Transcript) []string {
	n := 0
	if t.Header.CLI == "claude" {
		for _, s := range t.Steps {
			if s.Op == transcript.OpIn && s.Match != nil && s.Match["type"] == "user" {
				n++
			}
		}
	} else {
		n = len(t.Processes())
	}
	if n == 0 {
		n = 1
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("prompt %d of %s", i+1, t.Header.Scenario)
		if i == 0 {
			out[i] = "Please do what the fixture " + t.Header.Scenario + " shows."
		}
	}
	return out
}

func countOut(steps []transcript.Step) int {
	n := 0
	for _, s := range steps {
		if s.Op == transcript.OpOut {
			n++
		}
		if s.Op == transcript.OpExit || s.Op == transcript.OpNextProcess {
			break
		}
	}
	return n
}

// matchCase reports whether id matches one of the globs: a plain case ID
// selects that case alone (so that a printed reproduce command runs one
// case); a prefix ending in "/" selects every case under it; a glob
// (path.Match) selects the cases it matches and their variants:
// "codex/*" and "codex/single-tool*" select "codex/single-tool/line-65536".
func matchCase(id string, globs []string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if strings.HasSuffix(g, "/") && strings.HasPrefix(id, g) {
			return true
		}
		if !strings.ContainsAny(g, "*?[") {
			if id == g {
				return true
			}
			continue
		}
		for p := id; ; {
			if ok, _ := path.Match(g, p); ok || p == g {
				return true
			}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	return false
}

// TranscriptCase is the case that replays a transcript file as recorded
// (for `agentconform run --transcript`, and for fuzz crashers).
func TranscriptCase(t *transcript.Transcript, file string) *Case {
	return &Case{ID: "transcript/" + t.Header.CLI + "/" + sanitize(path.Base(file)), Agent: t.Header.CLI, Transcript: file,
		Permission: "allow", Prompts: Prompts(t), Description: t.Header.Description, CLIVersion: t.Header.CLIVersion}
}

// withSplitCharacters is c with every multibyte character on stdout written in
// two pieces 10 ms apart: a pipe hands a reader what has been written so
// far, so the character arrives in two reads (10 ms is long enough that
// even a busy reader gets two), and a program that decodes each read by
// itself turns it into U+FFFD.
func withSplitCharacters(c *Case) *Case {
	split := *c
	split.ID = c.ID + "/split-characters"
	split.Faults = "slicer:utf8=1,delay_us=10000"
	split.Description = "every multibyte character on stdout written in two pieces 10 ms apart, so that a reader gets it split across two reads: a program that decodes each read by itself turns it into U+FFFD"
	return &split
}
