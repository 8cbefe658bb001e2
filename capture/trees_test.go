//go:build linux

package capture

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/capture/proctree"
)

// fakeCodexBackground stands in for codex exec --json whose command leaves
// two processes behind: one in a session of its own that ignores SIGTERM,
// SIGINT and SIGHUP (as Claude Code's Bash tool leaves them), one in the
// CLI's process group holding its stdout (as no real CLI does).
const fakeCodexBackground = `#!/bin/sh
cat >/dev/null
sleep 0.5
echo '{"type":"thread.started","thread_id":"0199a000-0000-7000-8000-000000000002"}'
echo '{"type":"turn.started"}'
echo '{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"bg","aggregated_output":"","exit_code":null,"status":"in_progress"}}'
setsid sh -c 'trap "" TERM INT HUP; exec sleep 60' </dev/null >/dev/null 2>&1 &
sleep 60 &
echo '{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"bg","aggregated_output":"started","exit_code":0,"status":"completed"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}'
`

// TestCaptureRecordsTheProcessTree captures bg-ignores-signals with a fake
// Codex: the processes its command left are recorded at the tool's result
// and after the exit, relative to the CLI process, written beside the
// transcript without a path of this machine, and reaped.
func TestCaptureRecordsTheProcessTree(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid on PATH")
	}
	bin := fakeBinary(t, "codex", fakeCodexBackground)
	o := Options{WorkDir: t.TempDir(), Timeout: time.Minute}
	res, err := Capture(context.Background(), bin, scenario(t, "bg-ignores-signals"), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trees) != 1 {
		t.Fatalf("trees %+v, want one", res.Trees)
	}
	tree := res.Trees[0]
	if tree.Error != "" || tree.Exit != 0 || tree.Reaped != 2 || tree.Unreaped != 0 {
		t.Fatalf("tree %+v, want exit 0 and two processes reaped", tree)
	}
	var whens []string
	for _, s := range tree.Snapshots {
		whens = append(whens, s.When)
	}
	if got := strings.Join(whens, "|"); got != whenToolResult+"|"+whenTurnEnd+"|"+whenExited {
		t.Fatalf("snapshots taken %s", got)
	}
	left := tree.Snapshots[len(tree.Snapshots)-1]
	if left.CLIRunning || len(left.Processes) != 2 {
		t.Fatalf("after the exit: %+v, want the CLI gone and two processes left", left)
	}
	var loner, holder *proctree.Entry
	for i, e := range left.Processes {
		switch {
		case e.Session == "own":
			loner = &left.Processes[i]
		case e.Group == "cli":
			holder = &left.Processes[i]
		}
	}
	if loner == nil || holder == nil {
		t.Fatalf("left %+v, want one in a session of its own and one in the CLI's group", left.Processes)
	}
	if strings.Join(loner.Argv, " ") != "sleep 60" || loner.Group != "own" || loner.HoldsCLIStdout || loner.Stdout != "/dev/null" ||
		strings.Join(loner.Ignores, ",") != "SIGHUP,SIGINT,SIGTERM" || loner.Parent != "outside" {
		t.Errorf("the process in its own session: %+v", *loner)
	}
	// A background job of a non-interactive shell ignores SIGINT.
	if !holder.HoldsCLIStdout || holder.Stdout != "cli stdout" || holder.Session != "cli" || strings.Join(holder.Ignores, ",") != "SIGINT" {
		t.Errorf("the process in the CLI's group: %+v (started %+v, seen %+v)", *holder, tree.Started, tree.Seen)
	}
	if tree.Started.Label != "cli" || len(tree.Started.Argv) == 0 {
		t.Errorf("the process started: %+v", tree.Started)
	}

	dir := t.TempDir()
	if err := WriteTranscript(dir, res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(TreesPath(dir, "codex", "9.9.9", "bg-ignores-signals"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(o.WorkDir)) || bytes.Contains(b, []byte(bin.Path)) {
		t.Errorf("the process trees name a path of this machine:\n%s", b)
	}
	cli, version, sc, trees, err := ReadTrees(TreesPath(dir, "codex", "9.9.9", "bg-ignores-signals"))
	if err != nil || cli != "codex" || version != "9.9.9" || sc != "bg-ignores-signals" || len(trees) != 1 || trees[0].Reaped != 2 {
		t.Errorf("ReadTrees = %s %s %s %+v %v", cli, version, sc, trees, err)
	}
	if entries, _ := os.ReadDir(o.WorkDir); len(entries) != 0 {
		t.Errorf("sandboxes left behind: %v", entries)
	}
}

// fakeCodexLauncher stands in for codex.js in front of codex exec --json:
// the process the driver starts only waits for its child, which goes on
// writing to stdout after its launcher is killed.
const fakeCodexLauncher = `#!/bin/sh
cat >/dev/null
sh -c '
echo "{\"type\":\"thread.started\",\"thread_id\":\"0199a000-0000-7000-8000-000000000003\"}"
echo "{\"type\":\"turn.started\"}"
echo "{\"type\":\"item.started\",\"item\":{\"id\":\"item_0\",\"type\":\"command_execution\",\"command\":\"sleep\",\"aggregated_output\":\"\",\"exit_code\":null,\"status\":\"in_progress\"}}"
sleep 3
echo "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"command_execution\",\"command\":\"sleep\",\"aggregated_output\":\"\",\"exit_code\":0,\"status\":\"completed\"}}"
echo "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"cached_input_tokens\":0,\"cache_write_input_tokens\":0,\"output_tokens\":1,\"reasoning_output_tokens\":0}}"
' &
wait
`

// TestCaptureKillsTheLauncherAlone captures launcher-sigkill with a fake
// launcher: SIGKILL reaches the process started alone, the CLI behind it
// goes on holding stdout (seen a second after the kill), and its output is
// read to the end.
func TestCaptureKillsTheLauncherAlone(t *testing.T) {
	bin := fakeBinary(t, "codex", fakeCodexLauncher)
	o := Options{WorkDir: t.TempDir(), Timeout: time.Minute, InterruptDelay: 300 * time.Millisecond}
	res, err := Capture(context.Background(), bin, scenario(t, "launcher-sigkill"), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Processes) != 1 || res.Processes[0].Signal != "SIGKILL" || res.Processes[0].Killed || res.Processes[0].Interrupt != "SIGKILL" {
		t.Fatalf("processes %+v, want the one run, killed by the driver's SIGKILL", res.Processes)
	}
	var buf bytes.Buffer
	for _, s := range res.Transcript.Steps {
		buf.WriteString(s.Text + "\n")
	}
	if !strings.Contains(buf.String(), "turn.completed") {
		t.Errorf("the CLI's output after its launcher died was not read to the end:\n%s", buf.String())
	}
	if len(res.Trees) != 1 {
		t.Fatalf("trees %+v", res.Trees)
	}
	var after *proctree.Snapshot
	for i, s := range res.Trees[0].Snapshots {
		if s.When == whenAfterInterrupt {
			after = &res.Trees[0].Snapshots[i]
		}
	}
	if after == nil || after.CLIRunning {
		t.Fatalf("snapshots %+v, want one after the interrupt with the launcher gone", res.Trees[0].Snapshots)
	}
	held := false
	for _, e := range after.Processes {
		held = held || e.HoldsCLIStdout && e.Group == "cli" && e.Parent == "outside"
	}
	if !held {
		t.Errorf("after the kill: %+v, want the CLI behind the launcher, orphaned, holding stdout", after.Processes)
	}
}
