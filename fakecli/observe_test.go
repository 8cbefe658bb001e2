//go:build unix

package fakecli_test

import (
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// TestObservationLog checks what the log records of two processes sharing
// it: argv, the names (never values) of the adapter's environment, each
// stdin line with what took it and when, stdin_closed, stdout writes by
// transcript line, signals and the exit.
func TestObservationLog(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Transcript: toolTurns(t, 200)})
	env := []string{"CLAUDE_CODE_ENTRYPOINT=sdk-go", "ANTHROPIC_API_KEY=sk-secret-value"}

	l := startFake(t, f, "claude", claudeStream, cmdOpts{env: env})
	l.send(initialize)
	l.send(`{"type":"keep_alive"}`)
	l.send(user("hello"))
	l.until("result", typeIs("result"))
	if r, _ := l.wait(); r.code != 0 {
		t.Fatalf("first process: exit %d", r.code)
	}
	l2 := startFake(t, f, "claude", claudeStream, cmdOpts{env: env})
	l2.send(user("hello"))
	l2.until("tool_use", isToolUse)
	l2.signal(syscall.SIGINT)
	if r, _ := l2.wait(); r.code != 0 {
		t.Fatalf("second process: exit %d", r.code)
	}

	raw, err := os.ReadFile(f.ObserveLog)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "sk-secret-value") {
		t.Error("the log holds an environment value")
	}
	obs, err := f.Observations()
	if err != nil {
		t.Fatal(err)
	}
	byPID := map[int][]fakecli.Observation{}
	var pids []int
	for _, o := range obs {
		if _, ok := byPID[o.PID]; !ok {
			pids = append(pids, o.PID)
		}
		byPID[o.PID] = append(byPID[o.PID], o)
	}
	if len(pids) != 2 {
		t.Fatalf("records of %d processes, want 2", len(pids))
	}
	first, second := byPID[pids[0]], byPID[pids[1]]

	start := first[0]
	if start.Kind != "start" || start.CLI != "claude" || !slices.Equal(start.Argv, append([]string{"claude"}, claudeStream...)) {
		t.Errorf("start record: %+v", start)
	}
	for _, name := range []string{"CLAUDE_CODE_ENTRYPOINT", "ANTHROPIC_API_KEY", "PATH"} {
		if !slices.Contains(start.Env, name) {
			t.Errorf("start env %v lacks %s", start.Env, name)
		}
	}
	if start.Transcript == "" || start.Cwd == "" || start.StdinTTY {
		t.Errorf("start record: %+v", start)
	}

	var stdin []fakecli.Observation
	kinds := map[string]int{}
	for _, o := range first {
		kinds[o.Kind]++
		if o.Kind == "stdin" {
			stdin = append(stdin, o)
		}
		if o.Kind == "out" && o.Bytes <= 0 {
			t.Errorf("out record without bytes: %+v", o)
		}
	}
	if len(stdin) != 3 {
		t.Fatalf("stdin records: %+v", stdin)
	}
	// A line is logged when it is matched or set aside, so an ignored
	// keep_alive read while initialize waits for its step may come first.
	byText := map[string]fakecli.Observation{}
	for _, o := range stdin {
		byText[o.Text] = o
	}
	if o := byText[initialize]; o.Matched != "step" || o.MatchedStep == 0 {
		t.Errorf("initialize: %+v", stdin)
	}
	var ignored, matched int
	for _, o := range stdin {
		switch {
		case o.Text == initialize:
		case o.Matched == "ignored":
			ignored++
		case o.Matched == "step":
			matched++
		}
	}
	if ignored != 1 || matched != 1 {
		t.Errorf("keep_alive and user: %+v", stdin)
	}
	if kinds["stdin_closed"] != 1 || kinds["out"] < 7 || kinds["exit"] != 1 {
		t.Errorf("record kinds: %v", kinds)
	}
	if last := first[len(first)-1]; last.Kind != "exit" || last.Code == nil || *last.Code != 0 {
		t.Errorf("last record: %+v", last)
	}

	var sig, exit *fakecli.Observation
	for i, o := range second {
		switch o.Kind {
		case "signal":
			sig = &second[i]
		case "exit":
			exit = &second[i]
		}
	}
	if sig == nil || sig.Signal != "SIGINT" || sig.Action != "default" {
		t.Errorf("signal record: %+v", sig)
	}
	if exit == nil || exit.Code == nil || *exit.Code != 0 {
		t.Errorf("exit record: %+v", exit)
	}
	// Synthesized lines (the interrupt's) are logged with line 0.
	synth := 0
	for _, o := range second {
		if o.Kind == "out" && o.Step == 0 {
			synth++
		}
	}
	if synth != 3 {
		t.Errorf("%d synthesized out records, want 3 (tool_result, interrupted, result)", synth)
	}
}
