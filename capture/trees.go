package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentconform/agentconform/capture/proctree"
)

// ProcessTree is what a capture saw of the processes around one CLI
// process, for the scenarios that record it (the bg-* and launcher-*
// ones): the processes of the run at a few moments of the turn and after
// the CLI exited, each described relative to the CLI process (package
// proctree), and how many the capture had to kill afterwards. It is the
// evidence of what a tool's background processes do: which process group
// and session they are in, whether they hold the CLI's stdout, and
// whether the CLI ends them.
type ProcessTree struct {
	// Run is "main" (left alone) or "interrupted" for a scenario captured
	// twice, "" otherwise; Process counts the run's CLI processes from 1.
	Run     string `json:"run,omitempty"`
	Process int    `json:"process"`
	// Argv, Interrupt, Exit and Signal are the process's, as in Process.
	Argv      []string `json:"argv"`
	Interrupt string   `json:"interrupt,omitempty"`
	Exit      int      `json:"exit"`
	Signal    string   `json:"signal,omitempty"`
	// Started is the process the capture started (the CLI, or the npm
	// launcher in front of it) as first seen: its command line says which.
	Started proctree.Entry `json:"started"`
	// Seen are the run's processes (the CLI's left out) as first seen:
	// the capture looks every 20 ms while the CLI runs, so the shell a
	// command ran in shows up even when it lived only a moment.
	Seen []proctree.Entry `json:"seen"`
	// Snapshots are the run's processes (the CLI's left out) at the
	// tool's result, at the interrupt, at the end of the turn, and after
	// the CLI exited; the last one is what the CLI left behind.
	Snapshots []proctree.Snapshot `json:"snapshots"`
	// Reaped counts what the capture killed after the last snapshot, and
	// Unreaped what still ran after its deadline.
	Reaped   int `json:"reaped"`
	Unreaped int `json:"unreaped,omitempty"`
	// Error says why the tree could not be followed (no /proc, the CLI
	// process never seen).
	Error string `json:"error,omitempty"`
}

// The moments a tree is looked at.
const (
	whenToolResult = "at the tool's result"
	whenInterrupt  = "at the interrupt, before it is sent"
	// whenAfterInterrupt is afterInterrupt after it.
	whenAfterInterrupt = "1 s after the interrupt"
	whenTurnEnd        = "at the turn's terminal event"
	whenExited         = "1 s after the CLI exited and its output ended"
)

// afterExit is how long after a CLI process ended the tree is looked at
// for what it left behind (a process still on its way out has gone by
// then), as the conformance runner gives an adapter's CLIs.
const afterExit = time.Second

// afterInterrupt is when the tree is looked at after an interrupt.
const afterInterrupt = time.Second

// reapGrace bounds the wait for killed leftovers to be gone.
const reapGrace = 5 * time.Second

// treeWatch follows the processes of one CLI process of a run.
type treeWatch struct {
	m      proctree.Match
	redact func(string) string

	mu    sync.Mutex
	tree  *proctree.Tree
	rec   ProcessTree
	found chan struct{}
	stop  chan struct{}
}

// watchTree starts looking for the CLI process of the run m (the child of
// this process that carries m) and follows its tree from then on.
func watchTree(m proctree.Match, redact func(string) string) *treeWatch {
	w := &treeWatch{m: m, redact: redact, found: make(chan struct{}), stop: make(chan struct{})}
	go w.findRoot()
	return w
}

// observeEvery is how often the watch looks at the run's processes
// between snapshots.
const observeEvery = 20 * time.Millisecond

// findRoot polls for the CLI process until it is found (the sooner, the
// surer its stdout is known), then looks at the run's processes every
// observeEvery until the watch ends.
func (w *treeWatch) findRoot() {
	tick := time.NewTicker(observeEvery)
	defer tick.Stop()
	for {
		if w.tryRoot() {
			w.mu.Lock()
			tree := w.tree
			w.mu.Unlock()
			if tree != nil {
				_ = tree.Observe() // a failing look is reported by the snapshots
			}
		}
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
	}
}

// tryRoot looks for the CLI process once; it reports whether the tree
// is set up (or cannot be).
func (w *treeWatch) tryRoot() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tree != nil || w.rec.Error != "" {
		return true
	}
	root, ok, err := proctree.FindChild(w.m, os.Getpid())
	if err != nil {
		w.rec.Error = err.Error()
		close(w.found)
		return true
	}
	if !ok {
		return false
	}
	w.tree = proctree.NewTree(w.m, root, w.redact)
	close(w.found)
	return true
}

// snapshot records the run's processes now; before the CLI process is
// found it records nothing.
func (w *treeWatch) snapshot(when string) []proctree.Proc {
	w.tryRoot()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tree == nil {
		return nil
	}
	snap, procs, err := w.tree.Snapshot(when)
	if err != nil {
		w.rec.Error = err.Error()
		return nil
	}
	w.rec.Snapshots = append(w.rec.Snapshots, snap)
	return procs
}

// kill kills the CLI process (the process the driver started) alone
// with SIGKILL, which the recorder does not pass on: the tree knows its
// pid.
func (w *treeWatch) kill() error {
	w.tryRoot()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tree == nil {
		return errors.New("capture: SIGKILL: the process to kill was never seen")
	}
	return killAlone(w.tree.Root())
}

// finish is called once the CLI process ended: it waits afterExit, records
// what was left, kills it, and returns the record.
func (w *treeWatch) finish(p Process) ProcessTree {
	close(w.stop)
	time.Sleep(afterExit)
	left := w.snapshot(whenExited)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tree == nil && w.rec.Error == "" {
		w.rec.Error = "the CLI process was never seen (it ended before the first look)"
	}
	if len(left) > 0 {
		still := proctree.Reap(left, reapGrace)
		w.rec.Reaped, w.rec.Unreaped = len(left)-len(still), len(still)
	}
	w.rec.Argv, w.rec.Interrupt, w.rec.Exit, w.rec.Signal = p.Argv, p.Interrupt, p.Exit, p.Signal
	if w.tree != nil {
		w.rec.Seen = w.tree.Seen()
		w.rec.Started = w.tree.Describe(w.tree.Root())
	}
	return w.rec
}

// reapRun kills whatever of the run m still runs (every capture ends so,
// whether it records trees or not) and says how many it killed.
func reapRun(m proctree.Match, o Options) {
	ps, err := proctree.Scan(m)
	if err != nil {
		if !errors.Is(err, proctree.ErrUnsupported) {
			o.logf("looking for processes the run left: %v", err)
		}
		return
	}
	if len(ps) == 0 {
		return
	}
	still := proctree.Reap(ps, reapGrace)
	o.logf("killed %d process(es) the run left running", len(ps)-len(still))
	if len(still) > 0 {
		o.logf("%d process(es) of the run still running after %v", len(still), reapGrace)
	}
}

// toolResulted reports whether an event carries a tool's result.
func toolResulted(cli string, ev map[string]any) bool {
	switch cli {
	case "claude":
		if ev["type"] != "user" {
			return false
		}
		msg, _ := ev["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if b, ok := c.(map[string]any); ok && b["type"] == "tool_result" {
				return true
			}
		}
	case "codex":
		if ev["type"] == "item.completed" {
			item, _ := ev["item"].(map[string]any)
			return item["type"] == "command_execution"
		}
	case "gemini":
		return ev["type"] == "tool_result"
	}
	return false
}

// turnEnded reports whether an event ends a turn.
func turnEnded(cli string, ev map[string]any) bool {
	switch cli {
	case "codex":
		return ev["type"] == "turn.completed" || ev["type"] == "turn.failed"
	default:
		return ev["type"] == "result"
	}
}

// TreesPath is where the process trees of a capture go, beside its
// transcript: dir/<cli>/<version>/<scenario>.processes.json.
func TreesPath(dir, cli, version, scenario string) string {
	return filepath.Join(dir, cli, version, scenario+".processes.json")
}

// treesFile is the JSON of a capture's process trees.
type treesFile struct {
	CLI         string        `json:"cli"`
	Version     string        `json:"cli_version"`
	Scenario    string        `json:"scenario"`
	Description string        `json:"description"`
	Trees       []ProcessTree `json:"trees"`
}

// writeTrees writes the capture's process trees beside its transcript.
func writeTrees(dir string, res *Result) error {
	b, err := json.MarshalIndent(treesFile{CLI: res.CLI, Version: res.Version, Scenario: res.Scenario,
		Description: res.Description, Trees: res.Trees}, "", "  ")
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	p := TreesPath(dir, res.CLI, res.Version, res.Scenario)
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	return nil
}

// ReadTrees reads the process trees written beside a capture.
func ReadTrees(path string) (cli, version, scenario string, trees []ProcessTree, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", "", nil, fmt.Errorf("capture: %w", err)
	}
	var f treesFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return "", "", "", nil, fmt.Errorf("capture: %s: %w", path, err)
	}
	return f.CLI, f.Version, f.Scenario, f.Trees, nil
}
