//go:build unix

package fakecli_test

// Tests that hold the fakes' session handling to what the real CLIs do:
// each compares the fake with a recording of the real CLI in
// testdata/captures/<cli>/<version>/ (made with `agentconform record`
// against the mock model API; testdata/captures/README.md says how).

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// capture is what a recording shows: stdout and stderr lines, the exit
// status, and the argv.
type capture struct {
	argv     []string
	out, err []string
	exit     int
}

// readCapture reads testdata/captures/<name>.jsonl.
func readCapture(t *testing.T, name string) capture {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "captures", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var c capture
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s line %d: %v", name, n, err)
		}
		switch {
		case n == 1:
			for _, a := range m["argv"].([]any) {
				c.argv = append(c.argv, a.(string))
			}
		case m["out"] != nil:
			c.out = append(c.out, m["out"].(string))
		case m["err"] != nil:
			c.err = append(c.err, m["err"].(string))
		case m["exit"] != nil:
			c.exit = int(m["exit"].(float64))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// argOf returns the value after flag in argv.
func argOf(argv []string, flag string) string {
	for i, a := range argv {
		if a == flag && i+1 < len(argv) {
			return argv[i+1]
		}
	}
	return ""
}

// keysOf returns the top-level keys of a JSON object line in order.
func keysOf(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// sessionRecords returns the session and session_error records of the
// fakes' log.
func sessionRecords(t *testing.T, f *fakecli.Fakes) []fakecli.Observation {
	t.Helper()
	log, err := f.Observations()
	if err != nil {
		t.Fatal(err)
	}
	var out []fakecli.Observation
	for _, r := range log {
		if r.Kind == "session" || r.Kind == "session_error" {
			out = append(out, r)
		}
	}
	return out
}

// seed puts a session of fixture into the fakes' store.
func seed(t *testing.T, f *fakecli.Fakes, s fakecli.SessionSeed) {
	t.Helper()
	if err := fakecli.SeedSession(f.Sessions, s); err != nil {
		t.Fatal(err)
	}
}

// stderrLines splits stderr into lines, without the empty last one.
func stderrLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

const unknownID = "11111111-2222-4333-8444-555555555555"

// TestClaudeResumeUnknown: a resume of a session nobody has fails as
// Claude Code 2.1.329 and 2.1.331 fail it: the message on stderr, exit 1,
// and with stream-json output a result error_during_execution with the
// recorded keys, in the recorded order, before the exit; nothing on stdout
// otherwise. It is a session error, not a flags error.
func TestClaudeResumeUnknown(t *testing.T) {
	for _, ver := range []string{"2.1.331", "2.1.329"} {
		for _, tc := range []struct{ name, stdin string }{
			{"resume-unknown-id", ""}, {"resume-unknown-id-text", ""},
			{"resume-unknown-id-stdin", `{"type":"user","session_id":"","message":{"role":"user","content":"Say hello."},"parent_tool_use_id":null}` + "\n"},
		} {
			path := "claude/" + ver + "/" + tc.name
			if _, err := os.Stat(filepath.Join("..", "testdata", "captures", path+".jsonl")); err != nil {
				continue // recorded for one version only
			}
			t.Run(path, func(t *testing.T) {
				want := readCapture(t, path)
				f := fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text"})
				r := runFake(t, f, "claude", want.argv[1:], cmdOpts{stdin: tc.stdin, env: []string{"IS_SANDBOX=1"}})
				if r.code != want.exit || !reflect.DeepEqual(stderrLines(r.stderr), want.err) {
					t.Errorf("exit %d, stderr %q; the real CLI: exit %d, stderr %q", r.code, r.stderr, want.exit, want.err)
				}
				got := lines(r.stdout)
				if r.stdout == "" {
					got = nil
				}
				if len(got) != len(want.out) {
					t.Fatalf("stdout %q; the real CLI wrote %d lines: %q", r.stdout, len(want.out), want.out)
				}
				for i := range got {
					if k, wk := keysOf(t, got[i]), keysOf(t, want.out[i]); !reflect.DeepEqual(k, wk) {
						t.Errorf("line %d keys %v, the real CLI's %v", i+1, k, wk)
					}
					g, w := decode(t, got[i]), decode(t, want.out[i])
					delete(g, "uuid")
					delete(w, "uuid")
					if !reflect.DeepEqual(g, w) {
						t.Errorf("line %d:\n got %s\nwant %s", i+1, got[i], want.out[i])
					}
				}
				recs := sessionRecords(t, f)
				if len(recs) != 1 || recs[0].Kind != "session_error" || recs[0].Reason != "not_found" || recs[0].Session != unknownID {
					t.Errorf("session records %+v, want one session_error not_found for %s", recs, unknownID)
				}
			})
		}
	}
}

// TestClaudeSessionIDInUse: --session-id naming a session of this
// project is refused ("already in use", exit 1, nothing on stdout)
// whether or not a process still runs it (2.1.331 and 2.1.329,
// session-id-in-use*.jsonl); the same id from another directory, or with
// --fork-session of that very --resume, is accepted.
func TestClaudeSessionIDInUse(t *testing.T) {
	for _, path := range []string{"claude/2.1.331/session-id-in-use", "claude/2.1.329/session-id-in-use", "claude/2.1.331/session-id-in-use-running"} {
		t.Run(path, func(t *testing.T) {
			want := readCapture(t, path)
			old := argOf(want.argv, "--session-id")
			id := "0f6a5e1c-4d1b-4c8e-9f0a-2b3c4d5e6f70"
			argv := append([]string(nil), want.argv[1:]...)
			for i := range argv {
				argv[i] = strings.ReplaceAll(argv[i], old, id)
			}
			f := fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text"})
			dir := t.TempDir()
			seed(t, f, fakecli.SessionSeed{CLI: "claude", ID: id, Fixture: "claude/plain-text", Next: 1, Cwd: dir})
			r := runFake(t, f, "claude", argv, cmdOpts{dir: dir, env: []string{"IS_SANDBOX=1"}})
			wantErr := strings.ReplaceAll(strings.Join(want.err, "\n"), old, id)
			if r.code != want.exit || strings.TrimSuffix(r.stderr, "\n") != wantErr || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; the real CLI: exit %d, nothing on stdout, stderr %q", r.code, r.stdout, r.stderr, want.exit, wantErr)
			}
			if recs := sessionRecords(t, f); len(recs) != 1 || recs[0].Reason != "in_use" {
				t.Errorf("session records %+v, want one session_error in_use", recs)
			}

			// Another project's session of that id does not count.
			r = runFake(t, f, "claude", argv, cmdOpts{env: []string{"IS_SANDBOX=1"}})
			if r.code != 0 || !strings.Contains(r.stdout, `"session_id":"`+id+`"`) {
				t.Errorf("from another directory: exit %d, stdout %q; want the run, in session %s", r.code, r.stdout, id)
			}
			// --fork-session of that very --resume.
			r = runFake(t, f, "claude", append(argv, "--resume", id, "--fork-session"), cmdOpts{dir: dir, env: []string{"IS_SANDBOX=1"}})
			if r.code != 0 {
				t.Errorf("--fork-session --resume %s --session-id %s: exit %d, stderr %q", id, id, r.code, r.stderr)
			}
		})
	}
}

// TestClaudeResumeRunning: a resume of a session another process still
// runs is not refused (2.1.331, resume-running.jsonl): the run continues
// that session.
func TestClaudeResumeRunning(t *testing.T) {
	want := readCapture(t, "claude/2.1.331/resume-running")
	id := argOf(want.argv, "--resume")
	if want.exit != 0 || len(want.out) == 0 || jsonField(want.out[0], "session_id") != id {
		t.Fatalf("the capture does not show the resumed session running: exit %d, %d lines", want.exit, len(want.out))
	}
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/multi-turn"})
	dir := t.TempDir()
	seed(t, f, fakecli.SessionSeed{CLI: "claude", ID: id, Fixture: "claude/multi-turn", Next: 1, Cwd: dir})
	// The holder: a stream-json process of that session, waiting for its
	// next message.
	holder := startFake(t, f, "claude", []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--resume", id}, cmdOpts{dir: dir, env: []string{"IS_SANDBOX=1"}})
	holder.send(`{"type":"user","session_id":"","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}`)
	holder.until("result", typeIs("result"))
	r := runFake(t, f, "claude", want.argv[1:], cmdOpts{dir: dir, env: []string{"IS_SANDBOX=1"}})
	if r.code != 0 || jsonField(lines(r.stdout)[0], "session_id") != id {
		t.Errorf("exit %d, stdout %q, stderr %q; want the run in session %s", r.code, r.stdout, r.stderr, id)
	}
	recs := sessionRecords(t, f)
	if len(recs) != 2 || !recs[0].Resumed || !recs[1].Resumed || recs[1].Session != id {
		t.Errorf("session records %+v, want two resumes of %s", recs, id)
	}
}

// TestCodexResumeAsRecorded: `codex exec resume` as 0.169.0 answers it
// (codex/0.169.0/resume-*.jsonl): an unknown UUID fails with exit 1; --last
// with no thread of this directory, or a word that names no thread, starts
// a new thread; a word that is a thread's name resumes it; a resume with a
// prompt does not read stdin, so stdin left open does not hold it up.
func TestCodexResumeAsRecorded(t *testing.T) {
	t.Run("unknown-id", func(t *testing.T) {
		want := readCapture(t, "codex/0.169.0/resume-unknown-id")
		f := fakecli.Start(t, fakecli.Options{Fixture: "codex/plain-text"})
		r := runFake(t, f, "codex", want.argv[1:], cmdOpts{})
		if r.code != want.exit || !reflect.DeepEqual(stderrLines(r.stderr), want.err) || r.stdout != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; the real CLI: exit %d, stderr %q", r.code, r.stdout, r.stderr, want.exit, want.err)
		}
		if recs := sessionRecords(t, f); len(recs) != 1 || recs[0].Reason != "not_found" {
			t.Errorf("session records %+v, want one session_error not_found", recs)
		}
	})
	for _, name := range []string{"resume-last-none", "resume-name-unknown", "resume-last-other-cwd"} {
		t.Run(name, func(t *testing.T) {
			want := readCapture(t, "codex/0.169.0/"+name)
			if want.exit != 0 || len(want.out) == 0 || jsonField(want.out[0], "type") != "thread.started" {
				t.Fatalf("the capture does not show a new thread: exit %d", want.exit)
			}
			f := fakecli.Start(t, fakecli.Options{Fixture: "codex/multi-turn"})
			// A thread of another directory, which --last must not take.
			seed(t, f, fakecli.SessionSeed{CLI: "codex", ID: "0199aaaa-0000-7000-8000-000000000001", Fixture: "codex/multi-turn", Next: 1, Cwd: t.TempDir(), Title: "earlier"})
			r := runFake(t, f, "codex", want.argv[1:], cmdOpts{})
			if r.code != 0 || len(lines(r.stdout)) == 0 || jsonField(lines(r.stdout)[0], "type") != "thread.started" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want a new thread", r.code, r.stdout, r.stderr)
			}
			if recs := sessionRecords(t, f); len(recs) != 1 || recs[0].Kind != "session" || recs[0].Resumed || recs[0].Session == "0199aaaa-0000-7000-8000-000000000001" {
				t.Errorf("session records %+v, want one new thread", recs)
			}
		})
	}
	t.Run("name", func(t *testing.T) {
		f := fakecli.Start(t, fakecli.Options{Fixture: "codex/multi-turn"})
		dir := t.TempDir()
		id := "0199aaaa-0000-7000-8000-000000000002"
		seed(t, f, fakecli.SessionSeed{CLI: "codex", ID: id, Fixture: "codex/multi-turn", Next: 1, Cwd: dir, Title: "fix the bug"})
		r := runFake(t, f, "codex", []string{"exec", "--json", "--skip-git-repo-check", "resume", "fix the bug", "and now?"}, cmdOpts{dir: dir})
		if r.code != 0 || jsonField(lines(r.stdout)[0], "thread_id") != id {
			t.Errorf("exit %d, stdout %q; want thread %s resumed by its name", r.code, r.stdout, id)
		}
	})
	t.Run("stdin-open", func(t *testing.T) {
		want := readCapture(t, "codex/0.169.0/resume-existing")
		for _, e := range want.err {
			if strings.Contains(e, "Reading") {
				t.Fatalf("the capture shows stdin read: %q", e)
			}
		}
		f := fakecli.Start(t, fakecli.Options{Fixture: "codex/multi-turn"})
		dir := t.TempDir()
		id := argOf(want.argv, "resume")
		seed(t, f, fakecli.SessionSeed{CLI: "codex", ID: id, Fixture: "codex/multi-turn", Next: 1, Cwd: dir})
		l := startFake(t, f, "codex", want.argv[1:], cmdOpts{dir: dir})
		l.until("turn.completed", typeIs("turn.completed"))
		r, _ := l.wait() // stdin still open
		if r.code != want.exit || strings.Contains(r.stderr, "Reading") {
			t.Errorf("exit %d, stderr %q; the real CLI exits %d without reading stdin", r.code, r.stderr, want.exit)
		}
	})
}

// TestCodexNewThreadPerRun: every run of Codex 0.171.0 that resumes nothing
// starts a thread of its own (two runs of one scenario, two thread ids),
// and `exec resume` keeps the thread (codex/0.171.0-threads). The fake
// does the same: a case's first fresh run replays the recorded thread id,
// a second fresh run in the same store gets another, and a resume of the
// first keeps the first's.
func TestCodexNewThreadPerRun(t *testing.T) {
	a, b := readCapture(t, "codex/0.171.0-threads/plain-text-1"), readCapture(t, "codex/0.171.0-threads/plain-text-2")
	if ida, idb := jsonField(a.out[0], "thread_id"), jsonField(b.out[0], "thread_id"); ida == "" || ida == idb {
		t.Fatalf("the captures do not show a new thread per run: %q, %q", ida, idb)
	}
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/multi-turn"})
	dir := t.TempDir()
	fresh := []string{"exec", "--json", "--skip-git-repo-check", "What does greet.go do?"}
	first := runFake(t, f, "codex", fresh, cmdOpts{dir: dir})
	second := runFake(t, f, "codex", fresh, cmdOpts{dir: dir})
	id1, id2 := jsonField(lines(first.stdout)[0], "thread_id"), jsonField(lines(second.stdout)[0], "thread_id")
	if first.code != 0 || second.code != 0 || id1 == "" || id2 == "" {
		t.Fatalf("exit %d and %d, thread ids %q and %q", first.code, second.code, id1, id2)
	}
	if id1 == id2 {
		t.Errorf("two runs that resume nothing share thread %s; the real CLI gives each a thread of its own", id1)
	}
	resumed := runFake(t, f, "codex", []string{"exec", "--json", "--skip-git-repo-check", "resume", id1, "and now?"}, cmdOpts{dir: dir})
	if got := jsonField(lines(resumed.stdout)[0], "thread_id"); resumed.code != 0 || got != id1 {
		t.Errorf("exec resume %s: exit %d, thread %q", id1, resumed.code, got)
	}
	recs := sessionRecords(t, f)
	if len(recs) != 3 || recs[0].Session != id1 || recs[1].Session != id2 || recs[1].Resumed || recs[2].Session != id1 || !recs[2].Resumed {
		t.Errorf("session records %+v, want %s new, %s new, %s resumed", recs, id1, id2, id1)
	}
}

// TestGeminiResumeAsRecorded: --resume and --session-id as Gemini CLI 0.61.0 answers
// them (gemini/0.61.0/*.jsonl): stderr byte for byte (HOME as the
// recording's placeholder), exit status, and nothing on stdout for a
// refusal; "latest" with no session warns and starts one.
func TestGeminiResumeAsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sessions bool // the project has a session (existing) when the run starts
	}{
		{"resume-unknown-id", false}, {"resume-latest-none", false}, {"resume-invalid-id", true},
		{"resume-index-out-of-range", true}, {"session-id-exists", true}, {"resume-existing", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := readCapture(t, "gemini/0.61.0/"+tc.name)
			// The session the recording's project had (the one the
			// recording names, else any).
			existing := argOf(want.argv, "--session-id")
			if tc.name == "resume-existing" {
				existing = argOf(want.argv, "--resume")
			}
			if existing == "" {
				existing = "0f6a5e1c-4d1b-4c8e-9f0a-2b3c4d5e6f71"
			}
			f := fakecli.Start(t, fakecli.Options{Fixture: "gemini/multi-turn"})
			dir := filepath.Join(t.TempDir(), "project")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.sessions {
				seed(t, f, fakecli.SessionSeed{CLI: "gemini", ID: existing, Fixture: "gemini/multi-turn", Next: 1, Cwd: dir, Title: "Say hello."})
			}
			r := runFake(t, f, "gemini", want.argv[1:], cmdOpts{dir: dir, env: []string{"HOME=/home/user"}})
			if r.code != want.exit {
				t.Errorf("exit %d, stderr %q; the real CLI exits %d", r.code, r.stderr, want.exit)
			}
			recs := sessionRecords(t, f)
			if want.exit != 0 {
				if got := stderrLines(r.stderr); !reflect.DeepEqual(got, want.err) || r.stdout != "" {
					t.Errorf("stdout %q, stderr:\n%q\nthe real CLI's:\n%q", r.stdout, got, want.err)
				}
				if len(recs) != 1 || recs[0].Kind != "session_error" {
					t.Errorf("session records %+v, want one session_error", recs)
				}
				return
			}
			if tc.name == "resume-latest-none" && !strings.HasPrefix(r.stderr, want.err[0]+"\n") {
				t.Errorf("stderr %q, want it to begin with the real CLI's warning %q", r.stderr, want.err[0])
			}
			got := lines(r.stdout)
			resumed := tc.name == "resume-existing"
			if sid := jsonField(got[0], "session_id"); (sid == existing) != resumed || (sid == existing) != (jsonField(want.out[0], "session_id") == existing) {
				t.Errorf("init session_id %s; resumed %v", sid, resumed)
			}
			if len(recs) != 1 || recs[0].Kind != "session" || recs[0].Resumed != resumed {
				t.Errorf("session records %+v, want one session, resumed %v", recs, resumed)
			}
		})
	}
}

// TestSeedSessionErrors: seeding names where it went wrong.
func TestSeedSessionErrors(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []fakecli.SessionSeed{
		{CLI: "vim", ID: "x", Fixture: "codex/plain-text"},
		{CLI: "codex", ID: "x"},
		{CLI: "codex", ID: "x", Fixture: "codex/plain-text", Transcript: "t.jsonl"},
		{CLI: "codex", ID: "x", Fixture: "claude/plain-text"},
		{CLI: "codex", ID: "../x", Fixture: "codex/plain-text"},
	} {
		if err := fakecli.SeedSession(dir, s); err == nil {
			t.Errorf("SeedSession(%+v): no error", s)
		}
	}
}

// TestGeminiResumeAfterAPIError: a Gemini session whose only turn failed
// with an API error has nothing to resume (0.61.0 takes the failed prompt
// back out of the history), so --resume of it fails as when there is no
// session (gemini/0.61.0/resume-after-api-error.jsonl); after a turn that
// completed, the session stays resumable whatever fails later.
func TestGeminiResumeAfterAPIError(t *testing.T) {
	want := readCapture(t, "gemini/0.61.0/resume-after-api-error")
	f := fakecli.Start(t, fakecli.Options{Fixture: "gemini/api-error"})
	dir := t.TempDir()
	first := runFake(t, f, "gemini", []string{"-p", "Say hello.", "-o", "stream-json"}, cmdOpts{dir: dir})
	if first.code != 144 {
		t.Fatalf("the failing turn: exit %d", first.code)
	}
	sid := jsonField(lines(first.stdout)[0], "session_id")
	argv := append([]string(nil), want.argv[1:]...)
	argv[1] = sid
	r := runFake(t, f, "gemini", argv, cmdOpts{dir: dir})
	if r.code != want.exit || !reflect.DeepEqual(stderrLines(r.stderr), want.err) || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; the real CLI: exit %d, stderr %q", r.code, r.stdout, r.stderr, want.exit, want.err)
	}

	g := fakecli.Start(t, fakecli.Options{Fixture: "gemini/api-error-then-turn"})
	r = runFake(t, g, "gemini", []string{"-p", "one", "-o", "stream-json"}, cmdOpts{dir: dir})
	sid = jsonField(lines(r.stdout)[0], "session_id")
	for i, code := range []int{144, 0} {
		r = runFake(t, g, "gemini", []string{"--resume", sid, "-p", "more", "-o", "stream-json"}, cmdOpts{dir: dir})
		if r.code != code || jsonField(lines(r.stdout)[0], "session_id") != sid {
			t.Errorf("resume %d: exit %d (want %d), stdout %q, stderr %q", i+1, r.code, code, r.stdout, r.stderr)
		}
	}
}

// TestClaudeTakesStdinBeforeRefusing: a Claude asked to resume a session
// it does not have takes what its client wrote at once before it refuses
// (Node reads the pipe as it starts), so the client's first line is read
// and logged, not left for an EPIPE; the refusal is unchanged.
func TestClaudeTakesStdinBeforeRefusing(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text"})
	msg := `{"type":"user","message":{"role":"user","content":"hi"}}`
	r := runFake(t, f, "claude", []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--resume", "11111111-2222-4333-8444-555555555555"}, cmdOpts{stdin: msg + "\n"})
	if r.code != 1 || !strings.HasPrefix(r.stderr, "No conversation found with session ID: ") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	obs, err := f.Observations()
	if err != nil {
		t.Fatal(err)
	}
	read := false
	for _, o := range obs {
		read = read || o.Kind == "stdin" && o.Text == msg
	}
	if !read {
		t.Errorf("the client's line was not read before the refusal: %+v", obs)
	}
}
