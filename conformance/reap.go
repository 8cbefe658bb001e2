package conformance

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/capture/proctree"
	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/realcli"
)

// Leftover is a process that was still running after the adapter had
// exited and its CLIs had had exitGrace to follow: a fake CLI the adapter
// never stopped, or any other process started under the case (found by
// the case's mark in its environment, or in the adapter's process group).
type Leftover struct {
	PID  int      `json:"pid"`
	Argv []string `json:"argv"`
	// CLI is true for a fake CLI process (it logged a start record), and
	// for the program a real CLI's wrapper started (the real CLI).
	CLI bool `json:"cli"`
	// Tool is true for a process a real CLI's tool started in a session
	// of its own (run --cli real): a command's background process, which
	// the real CLIs leave running by design and no adapter can reach
	// (docs/protocols/claude.md#background-processes), not the adapter's.
	Tool bool `json:"tool,omitempty"`
	// Session and Group are the process's session and process group
	// (0 for a fake found by its start record): what tells a tool's
	// process from the adapter's, printed with a real CLI's leftovers.
	Session int `json:"session,omitempty"`
	Group   int `json:"group,omitempty"`
	// Env is what the process's environment said of it when it was
	// judged ("run mark", "run mark, real CLI", "unread": found by its
	// group): printed with a real CLI's leftovers, so that a process
	// judged the adapter's says which mark it lacked.
	Env string `json:"env,omitempty"`
	// Sessions names the sessions a real CLI's process was judged against
	// ("the CLI's 0, the runner's 0"; 0 is a session led from outside the
	// pid namespace): printed with a real CLI's leftovers, so that a
	// process judged the adapter's says which sessions it was not in.
	Sessions string `json:"sessions,omitempty"`
}

// envRunMark marks every process started under one case: the runner puts
// a fresh value in the adapter's environment, which the adapter's children
// inherit, so that they can be found wherever they moved (another process
// group, a new session, a double fork).
const envRunMark = "AGENTCONFORM_RUN_MARK"

// exitGrace is how long, after the adapter has exited, its CLIs get to exit
// on their own (they see EOF on stdin, or finish what a signal started)
// before what still runs is recorded as left behind.
const exitGrace = time.Second

// realExitGrace is exitGrace for a real CLI, which may take seconds to
// finish what a signal or the end of its stdin started on a loaded machine
// (Claude Code 2.1.332 was still running 1 s after two SIGTERMs at a load
// of 16): it has not been left behind until then.
const realExitGrace = 5 * time.Second

// exitGraceOf is the exit grace of a case run on a real CLI (real) or on
// the fakes.
func exitGraceOf(real bool) time.Duration {
	if real {
		return realExitGrace
	}
	return exitGrace
}

// Exit records the runner adds to the fakes' log (Action of an exit record
// with Signal SIGKILL): the fake cannot log a SIGKILL, so the runner says
// who killed it.
const (
	// killedOutright: the process vanished without an exit record before
	// the runner killed anything, so something else killed it (the adapter).
	killedOutright = "killed-outright"
	// killedByRunner: the runner killed the process (it was left running,
	// or the case timed out).
	killedByRunner = "killed-by-runner"
)

func newRunMark() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// settle judges the world as the adapter left it, before the runner
// cleans up: it gives the fake CLIs grace (exitGraceOf) to exit, records every
// process of the case still running (fakes, and processes carrying mark or
// in the adapter's process group pgid), and only then kills them all and
// the adapter's group. It returns the fakes' final log, in which every
// fake process without an exit record has one added (killed outright by
// the adapter, or killed by the runner), and what was left running.
// runnerKilled says the runner already killed the adapter's group (the
// case timed out): a fake gone then was killed by the runner.
func settle(observe *observeLog, pgid int, mark string, since time.Time, runnerKilled bool, grace time.Duration) ([]fakecli.Observation, []Leftover) {
	deadline := time.Now().Add(grace)
	var log []fakecli.Observation
	for {
		log, _ = observe.read()
		if len(runningFakes(log)) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The runner has killed nothing yet (unless the case timed out): a
	// fake that is gone without an exit record was killed outright.
	gone := map[int]bool{}
	for _, pid := range unrecordedExits(log) {
		if !alive(pid) {
			gone[pid] = true
		}
	}
	fakes := map[int][]string{}
	for _, r := range log {
		if r.Kind == "start" {
			fakes[r.PID] = r.Argv
		}
	}
	sessions := cliSessions(log)
	left := findLeftovers(pgid, mark, since, fakes, sessions)
	for len(left) > 0 && time.Now().Before(deadline) {
		// Other processes of the adapter's (an MCP server, a wrapper) may
		// still be on their way out.
		time.Sleep(50 * time.Millisecond)
		left = findLeftovers(pgid, mark, since, fakes, sessions)
	}
	for _, l := range left {
		syscall.Kill(l.PID, syscall.SIGKILL)
	}
	killGroup(pgid)
	for _, l := range left {
		killGroup(l.PID) // a leftover that leads a group of its own
	}
	waitGone(left, 2*time.Second)

	final, err := observe.read()
	if err != nil || len(final) < len(log) {
		final = log
	}
	how := killedOutright
	if runnerKilled {
		how = killedByRunner
	}
	killedLater := map[int]bool{}
	for _, l := range left {
		killedLater[l.PID] = true
	}
	for _, pid := range unrecordedExits(final) {
		switch {
		case gone[pid]:
			final = append(final, fakecli.Observation{Kind: "exit", PID: pid, Signal: "SIGKILL", Action: how})
		case killedLater[pid]:
			final = append(final, fakecli.Observation{Kind: "exit", PID: pid, Signal: "SIGKILL", Action: killedByRunner})
		default:
			// It exited between the two reads and its record is in final,
			// or it outlived even the runner's kill: say the runner did it.
			final = append(final, fakecli.Observation{Kind: "exit", PID: pid, Signal: "SIGKILL", Action: killedByRunner})
		}
	}
	return final, left
}

// runningFakes returns the fake processes that logged a start, no exit,
// and are alive (not zombies).
func runningFakes(log []fakecli.Observation) []int {
	var out []int
	for _, pid := range unrecordedExits(log) {
		if alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// unrecordedExits returns the pids that logged a start and no exit.
func unrecordedExits(log []fakecli.Observation) []int {
	exited := map[int]bool{}
	for _, r := range log {
		if r.Kind == "exit" {
			exited[r.PID] = true
		}
	}
	var out []int
	seen := map[int]bool{}
	for _, r := range log {
		if r.Kind == "start" && !exited[r.PID] && !seen[r.PID] {
			seen[r.PID] = true
			out = append(out, r.PID)
		}
	}
	return out
}

// waitGone waits until the processes are gone (dead or zombies), at most d.
func waitGone(ps []Leftover, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		any := false
		for _, p := range ps {
			if alive(p.PID) {
				any = true
				break
			}
		}
		if !any {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// findLeftovers lists the live processes of the case: the fakes (pids of
// fakes, with their argv) and any process in the group pgid or carrying
// mark in its environment, started since the case began. The runner
// itself and its own children outside the case are never listed.
func findLeftovers(pgid int, mark string, since time.Time, fakes map[int][]string, cliSessions map[int]bool) []Leftover {
	var out []Leftover
	seen := map[int]bool{}
	for pid, argv := range fakes {
		if alive(pid) {
			seen[pid] = true
			out = append(out, Leftover{PID: pid, Argv: argv, CLI: true})
		}
	}
	self := os.Getpid()
	selfSID := -1 // the runner's session (read once; -1: not known)
	if st, ok := procStat(self); ok {
		selfSID = st.sid
	}
	entries, err := os.ReadDir("/proc")
	if err == nil {
		boot, hz := bootTime(), int64(100) // USER_HZ is 100 on Linux (bootTime is read once)
		newer := newerPids(pgid)
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self || seen[pid] || !newer(pid) {
				continue
			}
			st, ok := procStat(pid)
			if !ok || st.state == 'Z' || st.state == 'X' {
				continue
			}
			if !boot.IsZero() && boot.Add(time.Duration(st.start*int64(time.Second)/hz)).Before(since.Add(-time.Second)) {
				continue // older than the case
			}
			env, read := procEnv(pid, st.start)
			in := st.pgrp == pgid && pgid > 0 || mark != "" && read && slices.Contains(env.marks, mark)
			if !in {
				continue
			}
			helper, tool := realProcess(st, env, selfSID, cliSessions)
			if helper {
				continue // the wrapper's own (its canary), gone with the wrapper
			}
			seen[pid] = true
			// The program a real CLI's wrapper started (its child) is the
			// CLI itself, as the fake in its place would be one process
			// with the wrapper; what that program started in turn (a
			// launcher's CLI) is another process, as a fake launcher's is.
			_, wrapped := fakes[st.ppid]
			cli := wrapped && !tool && env.cli
			l := Leftover{PID: pid, Argv: procArgv(pid), Tool: tool, CLI: cli, Session: st.sid, Group: st.pgrp, Env: env.String(read)}
			if env.cli {
				l.Sessions = sessionsSaid(cliSessions, selfSID)
			}
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// newerPids returns a quick test for pids that may have been handed out
// since first (the adapter's) was: pids grow until they wrap, so while
// the last one handed out (ns_last_pid) is not below first, only those
// from first to it can be the case's. Other processes of the machine are
// then not read at all (a busy machine runs hundreds). After a wrap, or
// without ns_last_pid, every pid may be.
func newerPids(first int) func(pid int) bool {
	b, err := os.ReadFile("/proc/sys/kernel/ns_last_pid")
	last, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil || first <= 0 || last < first {
		return func(int) bool { return true }
	}
	return func(pid int) bool { return pid >= first && pid <= last }
}

// envCache holds what the runner reads in the environments of processes
// (envFacts), by pid and start time (a pid handed out again is another
// key): the cases running at once all settle while one another's
// processes run, and each read only the environments it had not seen, not
// all of them (a tenth of the runner's time on short cases went to reading
// them again). One reading serves every question asked of a process: an
// environment read again later may be gone (a process on its way out, or
// one that made itself unreadable, as Codex's processes make themselves
// undumpable), and a process then found by its mark must not lose the
// mark that says it is a real CLI's tool.
var envCache = struct {
	sync.Mutex
	m map[procKey]envFacts
}{m: map[procKey]envFacts{}}

// maxEnvCache bounds envCache: past it, it starts afresh.
const maxEnvCache = 4096

type procKey struct {
	pid   int
	start int64
}

// envFacts is what a process's environment says of it.
type envFacts struct {
	marks  []string // the values of envRunMark
	cli    bool     // it carries realcli.EnvCLI: the real CLI or a process it started
	canary bool     // it carries realcli.EnvCanary: the real CLI wrapper's canary
}

// procEnv returns what the environment of pid (started at start, in clock
// ticks after boot) says of it; ok is false when it cannot be read (the
// process is gone, or not the runner's to read) and was not read before.
func procEnv(pid int, start int64) (facts envFacts, ok bool) {
	k := procKey{pid, start}
	envCache.Lock()
	facts, ok = envCache.m[k]
	envCache.Unlock()
	if ok {
		return facts, true
	}
	// Two reads that agree: a read cut short by an exec or exit once made
	// a real Codex's sandbox helper the adapter's stray process.
	env, stable, err := proctree.StableRead(func() ([]byte, error) { return readEnviron(pid) })
	if err != nil {
		return envFacts{}, false
	}
	facts = readEnvFacts(env)
	if !stable {
		return facts, true // read again at the next look
	}
	if len(env) == 0 {
		// Not kept: a process in the middle of an exec shows an empty
		// environment until the new program's is set up, and its pid and
		// start time stay the same after. Cached, that one read hid a
		// grandchild a concurrent case happened to read then from every
		// later look (a planted leak passed once on a loaded runner).
		return facts, true
	}
	envCache.Lock()
	if len(envCache.m) >= maxEnvCache {
		clear(envCache.m)
	}
	envCache.m[k] = facts
	envCache.Unlock()
	return facts, true
}

// readEnviron reads the environment of pid (a variable so that a test can
// make it unreadable, as a process that made itself undumpable is to a
// runner without the privilege to read it).
var readEnviron = func(pid int) ([]byte, error) {
	return os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
}

// String says which marks the facts hold ("unread" when read is false).
func (f envFacts) String(read bool) string {
	var says []string
	switch {
	case !read:
		return "unread"
	case len(f.marks) > 0:
		says = append(says, "run mark")
	}
	if f.cli {
		says = append(says, "real CLI")
	}
	if len(says) == 0 {
		return "no mark"
	}
	return strings.Join(says, ", ")
}

// readEnvFacts reads envFacts from a process environment (NUL-separated
// KEY=VALUE entries).
func readEnvFacts(env []byte) envFacts {
	f := envFacts{marks: runMarks(env)}
	for _, kv := range bytes.Split(env, []byte{0}) {
		switch {
		case bytes.HasPrefix(kv, []byte(realcli.EnvCanary+"=")):
			f.canary = true
		case bytes.HasPrefix(kv, []byte(realcli.EnvCLI+"=")):
			f.cli = true
		}
	}
	return f
}

// runMarks returns the values of every envRunMark entry of a process
// environment (NUL-separated KEY=VALUE entries).
func runMarks(env []byte) []string {
	var marks []string
	prefix := []byte(envRunMark + "=")
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			marks = append(marks, string(v))
		}
	}
	return marks
}

type procStatus struct {
	state byte
	ppid  int
	pgrp  int
	sid   int   // session
	start int64 // clock ticks after boot
}

// procStat reads the state, process group and start time of pid.
func procStat(pid int) (procStatus, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStatus{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStatus{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime
	if len(f) < 20 {
		return procStatus{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	sid, _ := strconv.Atoi(f[3])
	start, _ := strconv.ParseInt(f[19], 10, 64)
	return procStatus{state: f[0][0], ppid: ppid, pgrp: pgrp, sid: sid, start: start}, true
}

// procArgv reads the command line of pid.
func procArgv(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// bootTime is when the system booted (zero if unknown), read once.
var bootTime = sync.OnceValue(readBootTime)

func readBootTime() time.Time {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return time.Unix(n, 0)
			}
		}
	}
	return time.Time{}
}

// cliSessions returns the sessions the start records say the real CLIs'
// wrappers ran in. A wrapper whose session is led by a process outside
// its pid namespace (a container's, a CI sandbox's) logs none: getsid
// and /proc say 0 there, for the wrapper, the CLI and the runner alike,
// and 0 is then the CLIs' session (a session of its own never reads 0:
// its leader is the process itself). Reading no session there for the
// CLI, the runner took every real tool's process for the adapter's.
func cliSessions(log []fakecli.Observation) map[int]bool {
	sessions := map[int]bool{}
	for _, r := range log {
		if r.Kind == "start" && strings.HasPrefix(r.Transcript, realcli.TranscriptPrefix) {
			sessions[r.SID] = true // 0: a session led from outside the namespace
		}
	}
	return sessions
}

// sessionsSaid names the sessions a real CLI's process is judged
// against: the CLIs' (from their start records) and the runner's.
func sessionsSaid(cliSessions map[int]bool, selfSID int) string {
	ids := make([]string, 0, len(cliSessions))
	for _, id := range slices.Sorted(maps.Keys(cliSessions)) {
		ids = append(ids, strconv.Itoa(id))
	}
	cli := "none"
	if len(ids) > 0 {
		cli = strings.Join(ids, ", ")
	}
	runner := "unknown"
	if selfSID >= 0 {
		runner = strconv.Itoa(selfSID)
	}
	return "the CLI's " + cli + "; the runner's " + runner
}

// realProcess tells the processes of a run on the real CLIs apart by the
// marks the wrapper gives them (realcli.EnvCanary, realcli.EnvCLI): the
// wrapper's canary is its own (helper), and a process the real CLI
// started that is in no session of a CLI (cliSessions, from the start
// records) nor the runner's is a tool's (tool): the CLIs run every command
// in a session of its own. A real CLI left running in its own session (a
// launcher's child, say) is no tool's. A fake run has neither mark.
func realProcess(st procStatus, env envFacts, selfSID int, cliSessions map[int]bool) (helper, tool bool) {
	switch {
	case env.canary:
		return true, false
	case env.cli:
		return false, selfSID >= 0 && st.sid > 0 && st.sid != selfSID && len(cliSessions) > 0 && !cliSessions[st.sid]
	}
	return false, false
}
