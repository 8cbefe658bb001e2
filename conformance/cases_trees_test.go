package conformance

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/capture"
	"github.com/agentconform/agentconform/capture/proctree"
)

// capturedTrees reads the process trees captured beside the real CLIs'
// transcripts (testdata/captures/<cli>/<version>/<scenario>.processes.json)
// whose scenario matches pattern, by CLI.
func capturedTrees(t *testing.T, pattern string) map[string][]capture.ProcessTree {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "captures", "*", "*", pattern+".processes.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]capture.ProcessTree{}
	for _, f := range files {
		cli, _, _, trees, err := capture.ReadTrees(f)
		if err != nil {
			t.Fatal(err)
		}
		out[cli] = append(out[cli], trees...)
	}
	return out
}

// toolProcess reports whether an entry is a process of the bg-* scenarios'
// commands (the CLIs' own helpers are not).
func toolProcess(e proctree.Entry) bool {
	argv := strings.Join(e.Argv, " ")
	for _, cmd := range []string{"sleep 120", "sleep 30", "sleep 8", "echo late"} {
		if strings.Contains(argv, cmd) {
			return true
		}
	}
	return false
}

// TestNoToolLeftoverCase keeps the tool-leftover cases out as long as the
// real CLIs give them no ground: in every captured run of every CLI (the
// bg-* scenarios), no process of a command is in the CLI's process group
// or session, or holds the CLI's stdout, whether the turn completed or was
// interrupted. A capture that shows one means a real CLI leaves a tool's
// process where an adapter reaches it, and the cases that judge what the
// adapter does about it must come back (cases_trees.go).
func TestNoToolLeftoverCase(t *testing.T) {
	byCLI := capturedTrees(t, "bg-*")
	for _, cli := range []string{"claude", "codex", "gemini"} {
		trees := byCLI[cli]
		seen, left := 0, 0
		for _, tree := range trees {
			if tree.Error != "" {
				t.Errorf("%s: a captured tree without its processes: %s", cli, tree.Error)
			}
			entries := append([]proctree.Entry(nil), tree.Seen...)
			for _, s := range tree.Snapshots {
				entries = append(entries, s.Processes...)
			}
			for _, e := range entries {
				if !toolProcess(e) {
					continue
				}
				seen++
				if e.Group == "cli" || e.Session == "cli" || e.HoldsCLIStdout {
					t.Errorf("%s (%s run, interrupt %q): a command's process %s %q is in the CLI's process group or session or holds its stdout (group %s, session %s, stdout %s): a tool-leftover case has ground again",
						cli, tree.Run, tree.Interrupt, e.Label, strings.Join(e.Argv, " "), e.Group, e.Session, e.Stdout)
				}
			}
			if n := len(tree.Snapshots); n > 0 {
				for _, e := range tree.Snapshots[n-1].Processes {
					if toolProcess(e) {
						left++
					}
				}
			}
		}
		// The evidence is not empty: the commands' processes were seen,
		// and some outlived the CLI (so that where they were is known).
		if seen == 0 || left == 0 {
			t.Errorf("%s: %d captured trees, %d sights of a command's process, %d left after the CLI exited: no evidence for the removed cases", cli, len(trees), seen, left)
		}
	}
}

// TestLauncherCaseRestsOnCaptures checks the premise of the npm-launcher
// cases in the captures of the real launchers: a SIGKILL to the launcher
// alone leaves the CLI behind it running, in the launcher's process
// group, holding stdout; a SIGTERM to it reaches Codex's CLI (codex.js
// passes it on, and ends as the CLI did) but not Gemini's or Claude's.
func TestLauncherCaseRestsOnCaptures(t *testing.T) {
	killed := capturedTrees(t, "launcher-sigkill")
	termed := capturedTrees(t, "launcher-sigterm")
	for _, cli := range []string{"claude", "codex", "gemini"} {
		if len(killed[cli]) == 0 || len(termed[cli]) == 0 {
			t.Errorf("%s: no capture of its launcher", cli)
			continue
		}
		for _, tree := range killed[cli] {
			if after := snapshot(tree, "1 s after the interrupt"); after == nil || after.CLIRunning || !holdsInGroup(after) {
				t.Errorf("%s: a second after the SIGKILL to the launcher, %+v: want the launcher gone and the CLI in its group holding stdout", cli, after)
			}
		}
		for _, tree := range termed[cli] {
			if tree.Run != "interrupted" {
				continue
			}
			switch cli {
			case "codex":
				if tree.Signal != "SIGTERM" {
					t.Errorf("codex: the launcher ended with exit %d %s after SIGTERM; codex.js ends as its child, which dies of SIGTERM", tree.Exit, tree.Signal)
				}
			default:
				// Gemini's launcher ignores it; Claude's dies of it alone:
				// either way the CLI goes on, holding stdout.
				if after := snapshot(tree, "1 s after the interrupt"); after == nil || !holdsInGroup(after) {
					t.Errorf("%s: a second after the SIGTERM to the launcher, %+v: want the CLI behind it running, holding stdout", cli, after)
				}
			}
		}
	}
}

// snapshot returns the tree's snapshot taken when, nil if there is none.
func snapshot(tree capture.ProcessTree, when string) *proctree.Snapshot {
	for i := range tree.Snapshots {
		if tree.Snapshots[i].When == when {
			return &tree.Snapshots[i]
		}
	}
	return nil
}

// holdsInGroup reports whether a process of the snapshot, in the started
// process's group, holds its stdout (the CLI behind the launcher).
func holdsInGroup(s *proctree.Snapshot) bool {
	for _, e := range s.Processes {
		if e.Group == "cli" && e.HoldsCLIStdout {
			return true
		}
	}
	return false
}
