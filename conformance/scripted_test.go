package conformance

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scriptedAdapter is one adapter of testdata/adapters (Node or Python,
// so that it spawns, signals and reads as those runtimes do), the cases
// that show what it does, and every finding a correct judge gives there:
// the buggy ones must be caught by the check that names their bug, the
// correct-but-unusual ones must pass.
type scriptedAdapter struct {
	file string
	// args follow the file on the command line (a variant of the adapter).
	args  []string
	cases []string
	want  map[string]Verdict
}

// name is the adapter's file and its arguments, for the subtest.
func (sa scriptedAdapter) name() string {
	return strings.Join(append([]string{sa.file}, sa.args...), " ")
}

// lostTail is what lost-tail.py loses on a normal turn: the CLI's last
// line (its terminal event, so the usage with it), and for Codex the final
// answer too.
func lostTail(c string, answer bool) map[string]Verdict {
	m := merge(each([]string{c}, Fail, "lifecycle/ending-delivered", "lossless/usage"), each([]string{c}, Informational, "lossless/events"))
	if answer {
		m[c+" lossless/text"] = Fail
	}
	return m
}

// splitCharacters are the cases of the chunk-decode adapters: the unicode
// fixtures as recorded, with every multibyte character split across two
// reads, and a stream whose lines are split (in ASCII).
var splitCharacters = []string{"claude/unicode", "codex/unicode", "gemini/unicode",
	"claude/unicode/split-characters", "codex/unicode/split-characters", "gemini/unicode/split-characters", "codex/single-tool/slicer"}

// splitCharactersLost is what a correct judge finds there: the answer's
// text corrupted where the characters were split, and the events no longer
// the CLI's.
var splitCharactersLost = merge(
	each([]string{"claude/unicode/split-characters", "codex/unicode/split-characters", "gemini/unicode/split-characters"}, Fail, "lossless/text"),
	each([]string{"claude/unicode/split-characters", "codex/unicode/split-characters", "gemini/unicode/split-characters"}, Informational, "lossless/events"))

// textUnifiedCases are the cases of text-unified.py: a text and a JSON
// answer, one with tools, and an interrupt; textUnifiedCompleting those
// whose turn completes.
var (
	textUnifiedCompleting = []string{"gemini/plain-text", "claude/plain-text", "claude/multi-tool", "gemini/unicode"}
	textUnifiedCases      = append(slices.Clone(textUnifiedCompleting), "claude/interrupt")
)

var scriptedAdapters = []scriptedAdapter{
	// Issue class: a CLI left running. The adapter sends one SIGTERM and
	// exits without waiting; the CLI ignores SIGTERM and is still running
	// after the adapter's exit, in the adapter's own process group.
	{file: "orphan-sigterm.mjs", cases: []string{"codex/single-tool/ignores-sigterm", "gemini/single-tool/ignores-sigterm", "codex/interrupt", "codex/plain-text"},
		// Gemini's launcher ignores the SIGTERM: the CLI never gets it, and
		// the launcher is left running beside it.
		want: merge(each([]string{"codex/single-tool/ignores-sigterm", "gemini/single-tool/ignores-sigterm"}, Fail, "lifecycle/reaps-cli", "interrupt/escalates"),
			each([]string{"gemini/single-tool/ignores-sigterm"}, Fail, "interrupt/passed-on", "lifecycle/no-stray-process"))},
	// An interrupt claimed and never passed on: the CLI is only killed at
	// close, which must not count.
	{file: "ignores-cancel.py", cases: []string{"codex/single-tool/interrupt-after-2", "gemini/single-tool/interrupt-after-2", "claude/single-tool/interrupt-after-2", "codex/plain-text"},
		want: each([]string{"codex/single-tool/interrupt-after-2", "gemini/single-tool/interrupt-after-2", "claude/single-tool/interrupt-after-2"}, Fail, "interrupt/passed-on")},
	// The end of a turn lost, the turn reported ok.
	// (Gemini CLI's own pipe cut, exit 0 and no result, is such a failure.)
	{file: "lost-tail.py", cases: []string{"codex/plain-text", "codex/single-tool", "claude/plain-text", "gemini/plain-text", "codex/single-tool/exit-0-no-terminal",
		"gemini/long-output/pipe-cut"},
		want: merge(lostTail("codex/plain-text", true), lostTail("codex/single-tool", true),
			lostTail("claude/plain-text", false), lostTail("gemini/plain-text", false),
			each([]string{"codex/single-tool/exit-0-no-terminal", "gemini/long-output/pipe-cut"}, Fail, "lifecycle/reports-failure"))},
	// A turn that ends only with the CLI's terminal event hangs when Gemini
	// CLI loses the end of its stdout on a pipe and exits 0.
	{file: "waits-for-result.py", cases: []string{"gemini/plain-text", "codex/single-tool", "gemini/long-output/pipe-cut"},
		want: each([]string{"gemini/long-output/pipe-cut"}, Timeout, "output/records")},
	// A CLI that goes on writing after SIGINT crashes an adapter that
	// closed its stream at the interrupt.
	{file: "closed-stream.mjs", cases: []string{"codex/single-tool/writes-after-interrupt", "gemini/single-tool/writes-after-interrupt", "codex/interrupt"},
		want: each([]string{"codex/single-tool/writes-after-interrupt", "gemini/single-tool/writes-after-interrupt"}, Crash, "output/records")},

	// The CLI's error kept back, the failure reported by exit status: the
	// user never learns why. Claude's API error still reaches the caller
	// as the synthetic assistant message's text.
	{file: "error-swallowed.mjs", cases: []string{"codex/api-error", "gemini/api-error-429", "claude/max-turns", "claude/api-error", "codex/plain-text"},
		want: merge(each([]string{"codex/api-error", "gemini/api-error-429", "claude/max-turns"}, Fail, "lossless/error-text"))},
	// The user's own stop reported as a failure, and a turn limit too.
	{file: "abort-as-error.py", cases: []string{"codex/interrupt", "gemini/interrupt", "claude/interrupt", "claude/max-turns", "codex/api-error", "codex/single-tool/ignores-sigterm", "codex/plain-text"},
		// (The ignores-sigterm case interrupts the interrupt fixture: SIGINT
		// ends it with exit 1 before any escalation.)
		want: each([]string{"codex/interrupt", "gemini/interrupt", "claude/interrupt", "claude/max-turns", "codex/single-tool/ignores-sigterm"}, Fail, "lifecycle/turn-reason")},

	// An interrupt that is one SIGINT and a wait for the CLI's exit: Claude
	// Code holds a SIGINT that comes before its turn has begun, so a CLI
	// slow to start ends the turn only when it gets that far (10 s). Once
	// the turn has begun (interrupt-after-1: system/init written) the
	// SIGINT works at once.
	{file: "sigint-only.py", cases: []string{"claude/slow-start", "claude/single-tool/interrupt-after-1", "claude/plain-text"},
		want: each([]string{"claude/slow-start"}, Fail, "interrupt/cancelled-ending")},

	// Each read decoded by itself (Node chunk.toString(), Python
	// bytes.decode per read): a character split across reads is lost.
	// Lines split across reads (the ASCII slicer case) come out whole.
	{file: "chunk-decode.mjs", cases: splitCharacters, want: splitCharactersLost},
	{file: "chunk-decode.py", cases: splitCharacters, want: splitCharactersLost},

	// Helpers left behind in a new session and by a double fork: found
	// by the case's mark in their environment, reported, then reaped.
	{file: "daemon-leak.py", cases: []string{"codex/plain-text"},
		want: each([]string{"codex/plain-text"}, Fail, "lifecycle/no-stray-process")},

	// A fixed start-up timeout: a slow start taken for a failure, and the
	// CLI given up on left running (on a slow start it may have ended by
	// itself when the leftovers are looked for: only the hang is sure).
	{file: "handshake-timeout.mjs", cases: []string{"codex/plain-text/slow-start", "gemini/plain-text/hangs-at-start", "codex/plain-text"},
		want: merge(each([]string{"codex/plain-text/slow-start"}, Fail, "lifecycle/reports-success"),
			// Gemini's launcher is left running beside the CLI.
			each([]string{"gemini/plain-text/hangs-at-start"}, Fail, "lifecycle/reaps-cli", "lifecycle/no-stray-process"))},
	// --session-id on every turn: the CLI refuses the id of a session that
	// exists.
	{file: "session-id-per-turn.py", cases: []string{"claude/multi-turn", "claude/multi-turn/resume", "claude/plain-text"},
		want: merge(each([]string{"claude/multi-turn"}, Fail, "lifecycle/same-session", "lifecycle/reports-success"),
			each([]string{"claude/multi-turn/resume"}, Fail, "invocation/resume-session", "lifecycle/reports-success"),
			each([]string{"claude/multi-turn"}, Informational, "invocation/claude-stdin"))},
	// Process trees. Signals to the CLI's pid alone: Gemini's launcher
	// ignores them and Claude's fallback launcher dies of them alone, so
	// the CLI never sees the interrupt and is left running after the
	// SIGKILL to its launcher (Codex's launcher passes the signal on).
	{file: "pid-signals.mjs", cases: []string{"gemini/interrupt/npm-launcher", "claude/interrupt/npm-launcher", "codex/interrupt/npm-launcher", "codex/plain-text"},
		want: each([]string{"gemini/interrupt/npm-launcher", "claude/interrupt/npm-launcher"}, Fail, "interrupt/passed-on", "lifecycle/reaps-cli")},
	// The same signals, and the turn over only at the end of stdout, which
	// the CLI behind a launcher that stopped the signal holds while it
	// goes on with the turn: the case times out.
	{file: "await-close.mjs", cases: []string{"gemini/interrupt/npm-launcher", "claude/interrupt/npm-launcher", "codex/interrupt/npm-launcher", "codex/plain-text"},
		want: each([]string{"gemini/interrupt/npm-launcher", "claude/interrupt/npm-launcher"}, Timeout, "output/records")},

	// Correct adapters the judge once failed.
	// Names, ids and result shapes of its own (unified profile).
	{file: "unified-renamed.py", cases: []string{"codex/single-tool", "codex/multi-tool", "codex/tool-error", "codex/file-change", "codex/multi-turn", "codex/todo-list"}},
	// A new thread for every turn: each turn's usage is what its own
	// turn.completed says, not a difference from another thread's total;
	// the thread never continued is the session's loss.
	{file: "unified-renamed.py", args: []string{"new-thread"}, cases: []string{"codex/multi-turn", "codex/multi-turn/interrupt-then-turn", "codex/single-tool"},
		want: each([]string{"codex/multi-turn", "codex/multi-turn/interrupt-then-turn"}, Fail, "invocation/resume-id", "lifecycle/same-session")},
	// Re-serialised events (empty values dropped) and events of its own.
	{file: "native-reserialise.mjs", cases: []string{"codex/plain-text", "codex/multi-tool", "claude/multi-tool", "claude/interrupt", "codex/interrupt", "codex/background-command"},
		want: merge(each([]string{"codex/plain-text", "codex/multi-tool", "claude/multi-tool", "codex/background-command"}, Informational, "lossless/events"))},
	// Text and JSON output modes.
	{file: "text-mode.py", cases: []string{"gemini/plain-text", "gemini/interrupt", "claude/plain-text", "claude/interrupt", "gemini/single-tool/line-65536", "gemini/single-tool/exit-0-no-terminal", "claude/multi-tool"}},
	// The same answers in the unified profile: a text or JSON turn's answer
	// is the assistant's answer. Handed on as a notice, or not at all, it
	// is lost.
	{file: "text-unified.py", cases: textUnifiedCases},
	{file: "text-unified.py", args: []string{"notice"}, cases: textUnifiedCases,
		want: each(textUnifiedCompleting, Fail, "lossless/text")},
	{file: "text-unified.py", args: []string{"drop"}, cases: textUnifiedCases,
		want: merge(each(textUnifiedCompleting, Fail, "lossless/text"),
			// The final text is the end of a turn that hands on no events
			// of the CLI's.
			each(textUnifiedCompleting, Fail, "lifecycle/ending-delivered"))},
	// Hands nothing on before the turn is over, and is interrupted all the same.
	{file: "non-streaming.py", cases: []string{"codex/interrupt", "codex/single-tool/ignores-sigterm", "codex/single-tool"}},
	// Declares nothing: never sent send or interrupt.
	{file: "single-turn.py", cases: []string{"codex/multi-turn", "codex/interrupt", "codex/plain-text"}},
	// The CLI's process group signalled and reaped, stdout not waited for
	// once the CLI has exited: every process-tree case passes.
	{file: "process-group.mjs", cases: []string{"claude/interrupt/npm-launcher", "codex/interrupt/npm-launcher", "gemini/interrupt/npm-launcher", "codex/interrupt"}},
	// A 1 MiB line limit with a clear error above it: no silent loss, but a
	// lost turn all the same, which the SHOULD of lines over 1 MiB reports.
	{file: "ladder-limit.py", cases: []string{"codex/single-tool/line-1048576", "codex/single-tool/line-1048577", "codex/single-tool/line-8388608"},
		want: each([]string{"codex/single-tool/line-1048577", "codex/single-tool/line-8388608"}, NonStrict, "buffer/long-line-intact")},

	// Nothing twice: a native adapter that hands on the CLI's events, one
	// kind of them twice. Every piece of information arrives, so only the
	// count finds the copy.
	{file: "double-events.py", cases: []string{"claude/single-tool", "codex/single-tool", "gemini/multi-tool", "codex/multi-turn"},
		want: merge(each([]string{"claude/single-tool", "codex/single-tool", "gemini/multi-tool", "codex/multi-turn"}, Fail, "lossless/no-doubles"),
			each([]string{"claude/single-tool", "codex/single-tool", "gemini/multi-tool", "codex/multi-turn"}, Informational, "lossless/events"))},
	{file: "double-events.py", args: []string{"tool-result"}, cases: []string{"claude/multi-tool", "codex/single-tool", "gemini/multi-tool", "codex/plain-text"},
		want: merge(each([]string{"claude/multi-tool", "codex/single-tool", "gemini/multi-tool"}, Fail, "lossless/no-doubles"),
			each([]string{"claude/multi-tool", "codex/single-tool", "gemini/multi-tool"}, Informational, "lossless/events"))},
	// Partial messages shown as text deltas of its own: every block once
	// whole (the CLI's messages) and once in pieces, as the CLI wrote it.
	{file: "partials.py", cases: []string{"claude/plain-text", "claude/multi-tool", "claude/text-blocks"},
		want: each([]string{"claude/plain-text", "claude/multi-tool", "claude/text-blocks"}, Informational, "lossless/events")},
	// Asked for and dropped: every block reaches the caller whole only.
	{file: "partials.py", args: []string{"drop"}, cases: []string{"claude/plain-text", "claude/multi-tool", "claude/text-blocks"},
		want: merge(each([]string{"claude/plain-text", "claude/multi-tool", "claude/text-blocks"}, Fail, "lossless/opt-in-streams"),
			each([]string{"claude/plain-text", "claude/multi-tool", "claude/text-blocks"}, Informational, "lossless/events"))},
	// The deltas, then the whole block as one more delta: the caller's
	// text shows every block twice.
	{file: "partials.py", args: []string{"double"}, cases: []string{"claude/plain-text", "claude/multi-tool", "claude/text-blocks"},
		want: merge(each([]string{"claude/plain-text", "claude/multi-tool", "claude/text-blocks"}, Fail, "lossless/no-doubles"),
			each([]string{"claude/plain-text", "claude/multi-tool", "claude/text-blocks"}, Informational, "lossless/events"))},
}

// interpreter returns the command that runs a script adapter, or skips
// the test when it cannot run here (under CI=true it fails instead: CI
// must never pass by skipping them).
func interpreter(t *testing.T, file string) []string {
	t.Helper()
	name := "python3"
	if strings.HasSuffix(file, ".mjs") {
		name = "node"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, so the scripted adapters must run, but %s is not on PATH", name)
		}
		t.Skipf("%s is not on PATH", name)
	}
	abs, err := filepath.Abs(filepath.Join("testdata", "adapters", file))
	if err != nil {
		t.Fatal(err)
	}
	return []string{path, abs}
}

// TestScriptedAdapters proves the judge on adapters written in Node and
// Python: each buggy one is caught by exactly the checks that name its
// bug, each correct one passes (informational records aside). The runs
// mostly wait, so they all go at once; the subtests judge them one by one.
func TestScriptedAdapters(t *testing.T) {
	t.Parallel()
	type outcome struct {
		res  *Results
		err  error
		skip string
	}
	outcomes := make([]outcome, len(scriptedAdapters))
	// One pool for every adapter's run: each starts an interpreter per
	// case, and a pool per run would start them all at once.
	pool := NewPool(0)
	var dirs []string
	var wg sync.WaitGroup
	for i, sa := range scriptedAdapters {
		argv := append(interpreter(t, sa.file), sa.args...)
		cases := pickCases(t, sa.cases...)
		dir := t.TempDir()
		dirs = append(dirs, dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := Adapter{Name: sa.name(), Command: func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, argv[0], argv[1:]...) }}
			outcomes[i].res, outcomes[i].err = Run(context.Background(), Config{Adapter: a, Cases: cases, Jobs: 3, Pool: pool, WorkDir: dir})
		}()
	}
	wg.Wait()
	if left := markedProcesses(dirs); len(left) > 0 {
		t.Errorf("processes of the runs still running after them: %v", left)
	}
	for i, sa := range scriptedAdapters {
		t.Run(sa.name(), func(t *testing.T) {
			o := outcomes[i]
			if o.err != nil {
				t.Fatalf("Run: %v", o.err)
			}
			if len(o.res.Cases) != len(sa.cases) {
				t.Fatalf("%d cases ran, want %d", len(o.res.Cases), len(sa.cases))
			}
			want := sa.want
			if want == nil {
				want = map[string]Verdict{}
			}
			if d := cmp.Diff(want, findings(o.res)); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", d, details(o.res, want))
			}
		})
	}
}

// markedProcesses lists the live processes that carry a case's mark in
// their environment and ran in a case under one of dirs (the runs' work
// directories; other runs on the machine are not this test's): after a
// run there must be none.
func markedProcesses(dirs []string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, []byte(envRunMark+"=")) {
			continue
		}
		ours := false
		for _, d := range dirs {
			ours = ours || bytes.Contains(env, []byte("="+d+string(os.PathSeparator)))
		}
		if !ours {
			continue
		}
		if st, ok := procStat(pid); ok && st.state != 'Z' && st.state != 'X' {
			out = append(out, strings.Join(procArgv(pid), " "))
		}
	}
	return out
}
