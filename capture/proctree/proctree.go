// Package proctree records which processes a captured CLI run has
// running, or left behind, and how each stands to the CLI process: its
// parent, its process group and session, whether it holds the CLI's
// stdin, stdout or stderr, and which terminating signals it ignores. It
// finds a run's processes by the run's throwaway HOME (or a marker
// variable) in their environment, wherever they moved (a new session, a
// parent that died), describes them without this machine's pids (the CLI
// is "cli", the others p1, p2, ... in the order first seen), and reaps
// what is left with a deadline.
//
// It reads /proc, so it works on Linux only; elsewhere Scan and Read
// return ErrUnsupported.
package proctree

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// StableRead calls read until two calls in a row return the same bytes
// (at most three calls); stable is false when none did, and b is then the
// last read. It is for /proc/PID/environ: that file reads the process's
// memory, and a process that replaces its program (exec) or exits while
// it is read leaves the read cut short, at any byte (a program that forks
// and execs 3,000 times, its children's environments each read 40 times:
// 15 cut reads in 120,000, some ending on a whole entry, so that a cut
// cannot be told from the text). A cut read may lack the very entry that
// says whose a process is.
func StableRead(read func() ([]byte, error)) (b []byte, stable bool, err error) {
	b, err = read()
	for i := 0; i < 2 && err == nil; i++ {
		again, aerr := read()
		if aerr != nil {
			return b, false, nil
		}
		if bytes.Equal(again, b) {
			return b, true, nil
		}
		b = again
	}
	return b, false, err
}

// ErrUnsupported is returned where there is no /proc to read.
var ErrUnsupported = errors.New("proctree: process trees are read from /proc (Linux only)")

// Match tells which processes belong to one run: those whose environment
// holds HOME=Home, or the entry Env (NAME=VALUE). The CLIs pass their
// environment on to the tools they run, so everything a run starts
// carries its HOME, even after it moved to a session of its own.
type Match struct {
	Home string
	Env  string
	// From, when set, is the first pid to look at: pids grow until they
	// wrap, so while the last one handed out is not below From, a run
	// started at From has no process below it, and the machine's other
	// processes are not read at all. After a wrap every pid is read.
	From int
}

// entries are the environment entries that mark a run's process.
func (m Match) entries() []string {
	var out []string
	if m.Home != "" {
		out = append(out, "HOME="+m.Home)
	}
	if m.Env != "" {
		out = append(out, m.Env)
	}
	return out
}

// Proc is one process as /proc showed it.
type Proc struct {
	PID, PPID, PGID, SID int
	// Start is when it started, in clock ticks after boot: a pid handed
	// out again is another process.
	Start int64
	// State is the state letter of /proc/PID/stat (R, S, Z, ...).
	State byte
	Argv  []string
	// Stdio are the targets of descriptors 0, 1 and 2 ("pipe:[N]",
	// "/dev/null", a path, "socket:[N]"); "" for a closed one.
	Stdio [3]string
	// FDs are the targets of every open descriptor, by number.
	FDs map[int]string
	// SigIgn is the set of ignored signals: bit n-1 for signal n.
	SigIgn uint64
}

// Ignores reports whether the process ignores sig.
func (p Proc) Ignores(sig syscall.Signal) bool {
	return sig > 0 && sig <= 64 && p.SigIgn&(1<<(uint(sig)-1)) != 0
}

// holds reports whether any of the process's descriptors is target.
func (p Proc) holds(target string) bool {
	if target == "" {
		return false
	}
	for _, t := range p.FDs {
		if t == target {
			return true
		}
	}
	return false
}

// FindChild returns the process of the run that parent started (its
// parent is parent), found by m; ok is false when there is none.
func FindChild(m Match, parent int) (Proc, bool, error) {
	ps, err := Scan(m)
	if err != nil {
		return Proc{}, false, err
	}
	for _, p := range ps {
		if p.PPID == parent {
			return p, true, nil
		}
	}
	return Proc{}, false, nil
}

// Entry describes one process of a snapshot relative to the CLI process.
type Entry struct {
	// Label is "cli" for the CLI process, else p1, p2, ... in the order
	// the tree first saw the process.
	Label string   `json:"label"`
	Argv  []string `json:"argv"`
	// Parent is the parent's label, or "outside" for a process that is
	// not the run's (init or a subreaper, which adopt a process whose
	// parent died).
	Parent string `json:"parent"`
	// Group and Session say whose process group and session it is in:
	// "cli" (the CLI process's), "own" (it leads it), another process's
	// label (one that may be gone by now), or "other".
	Group   string `json:"group"`
	Session string `json:"session"`
	// Stdin, Stdout and Stderr say what its descriptors 0, 1 and 2 are:
	// "cli stdin", "cli stdout", "cli stderr" (the CLI process's own),
	// "/dev/null", "pipe", "socket", "terminal", "closed", or a file's
	// path (redacted; "(deleted)" when it was removed).
	Stdin  string `json:"stdin"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// HoldsCLIStdout says one of its descriptors, whichever, is the CLI
	// process's stdout: while it lives, a reader of that stdout sees no
	// end of it.
	HoldsCLIStdout bool `json:"holds_cli_stdout"`
	// Ignores lists which of SIGHUP, SIGINT and SIGTERM it ignores.
	Ignores []string `json:"ignores,omitempty"`
}

// Snapshot is the run's processes at one moment.
type Snapshot struct {
	// When says at what moment ("at the tool's result", "1 s after the
	// CLI exited").
	When string `json:"when"`
	// CLIRunning says whether the CLI process itself was still running.
	CLIRunning bool `json:"cli_running"`
	// Processes are the run's other live processes (zombies left out).
	Processes []Entry `json:"processes"`
}

// Tree follows the processes of one CLI run: it labels them the same way
// across snapshots, and describes them relative to the CLI process.
type Tree struct {
	m      Match
	root   Proc
	redact func(string) string

	mu     sync.Mutex
	labels map[procKey]string
	byPID  map[int]string // the label of a pid, also once it is gone
	next   int
	seen   []Entry // every process as first seen
	// forked are the labels whose first sight was a fork that had not
	// yet run its program (its parent's command line, its parent's
	// descriptors): that sight is replaced by the first after the exec.
	forked map[string]bool
	argv   map[int][]string // the command line of each pid, at the last look
}

type procKey struct {
	pid   int
	start int64
}

// NewTree starts following the run m whose CLI process is root; redact
// cleans the command lines and paths it reports (nil keeps them).
func NewTree(m Match, root Proc, redact func(string) string) *Tree {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	m.From = root.PID
	t := &Tree{m: m, root: root, redact: redact, labels: map[procKey]string{}, byPID: map[int]string{},
		forked: map[string]bool{}, argv: map[int][]string{root.PID: root.Argv}}
	t.labels[procKey{root.PID, root.Start}] = "cli"
	t.byPID[root.PID] = "cli"
	return t
}

// Root is the CLI process as the tree last saw it running: its command
// line and descriptors are the last seen (a sight during its exec is
// corrected by the next).
func (t *Tree) Root() Proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.root
}

// Snapshot describes the run's live processes now, and returns them (the
// CLI process left out) for Reap.
func (t *Tree) Snapshot(when string) (Snapshot, []Proc, error) {
	ps, err := Scan(t.m)
	if err != nil {
		return Snapshot{When: when}, nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	snap := Snapshot{When: when, Processes: []Entry{}}
	// Label in pid order, parents (usually) before their children.
	sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
	var others []Proc
	for _, p := range ps {
		if p.PID == t.root.PID && p.Start == t.root.Start {
			snap.CLIRunning = true
			t.root = p // the program it runs now (after an exec), its descriptors
			continue
		}
		t.label(p)
		others = append(others, p)
	}
	for _, p := range others {
		snap.Processes = append(snap.Processes, t.describe(p))
	}
	return snap, others, nil
}

// Observe looks at the run's processes once, between snapshots, so that
// processes that live only a moment (the shell a tool runs a command in)
// get a label and a first sight (Seen) too.
func (t *Tree) Observe() error {
	ps, err := Scan(t.m)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
	for _, p := range ps {
		if p.PID == t.root.PID && p.Start == t.root.Start {
			t.root = p // the program it runs now (after an exec), its descriptors
			t.argv[p.PID] = p.Argv
			continue
		}
		t.label(p)
	}
	return nil
}

// Seen lists every process of the run the tree saw, the CLI's left out,
// as it was when first seen, in that order.
func (t *Tree) Seen() []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Entry{}, t.seen...)
}

// label gives p its label, a new one the first time it is seen.
func (t *Tree) label(p Proc) string {
	k := procKey{p.PID, p.Start}
	parentArgv, parentKnown := t.argv[p.PPID]
	t.argv[p.PID] = p.Argv
	if l, ok := t.labels[k]; ok {
		if t.forked[l] && !(parentKnown && slices.Equal(p.Argv, parentArgv)) {
			// It has run its program now: this is its first true sight.
			delete(t.forked, l)
			for i := range t.seen {
				if t.seen[i].Label == l {
					t.seen[i] = t.describe(p)
				}
			}
		}
		return l
	}
	t.next++
	l := fmt.Sprintf("p%d", t.next)
	t.labels[k] = l
	t.byPID[p.PID] = l
	if parentKnown && slices.Equal(p.Argv, parentArgv) {
		t.forked[l] = true
	}
	t.seen = append(t.seen, t.describe(p))
	return l
}

// Describe says how p stands to the CLI process (p may be the CLI
// process itself: the tree's root).
func (t *Tree) Describe(p Proc) Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.describe(p)
}

// describe says how p stands to the CLI process.
func (t *Tree) describe(p Proc) Entry {
	e := Entry{Label: t.labels[procKey{p.PID, p.Start}], Argv: make([]string, len(p.Argv)),
		HoldsCLIStdout: t.root.Stdio[1] != "" && t.root.Stdio[1] != "/dev/null" && p.holds(t.root.Stdio[1])}
	for i, a := range p.Argv {
		e.Argv[i] = t.redact(a)
	}
	e.Parent = "outside"
	if l, ok := t.byPID[p.PPID]; ok {
		e.Parent = l
	}
	e.Group = t.whose(p.PID, p.PGID, t.root.PGID)
	e.Session = t.whose(p.PID, p.SID, t.root.SID)
	e.Stdin, e.Stdout, e.Stderr = t.stdio(p.Stdio[0]), t.stdio(p.Stdio[1]), t.stdio(p.Stdio[2])
	for _, s := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGHUP, "SIGHUP"}, {syscall.SIGINT, "SIGINT"}, {syscall.SIGTERM, "SIGTERM"}} {
		if p.Ignores(s.sig) {
			e.Ignores = append(e.Ignores, s.name)
		}
	}
	return e
}

// whose names the leader id of a group or session: the CLI's, the
// process's own, another process's label, or "other".
func (t *Tree) whose(pid, id, cliID int) string {
	switch {
	case id == cliID:
		return "cli"
	case id == pid:
		return "own"
	}
	if l, ok := t.byPID[id]; ok {
		return l
	}
	return "other"
}

// stdio says what a descriptor's target is, relative to the CLI's.
func (t *Tree) stdio(target string) string {
	switch {
	case target == "":
		return "closed"
	case target == "/dev/null":
		return "/dev/null"
	case target == t.root.Stdio[1]:
		return "cli stdout"
	case target == t.root.Stdio[2]:
		return "cli stderr"
	case target == t.root.Stdio[0]:
		return "cli stdin"
	case strings.HasPrefix(target, "pipe:"):
		return "pipe"
	case strings.HasPrefix(target, "socket:"):
		return "socket"
	case strings.HasPrefix(target, "/dev/pts/"), strings.HasPrefix(target, "/dev/tty"), target == "/dev/ptmx":
		return "terminal"
	case strings.HasPrefix(target, "anon_inode:"):
		return "anon_inode"
	}
	return t.redact(target)
}

// marked reports whether a NUL-separated environment holds one of want.
func marked(environ []byte, want []string) bool {
	for _, kv := range strings.Split(string(environ), "\x00") {
		if slices.Contains(want, kv) {
			return true
		}
	}
	return false
}
