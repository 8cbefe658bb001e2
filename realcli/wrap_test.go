//go:build linux

package realcli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// envStandIn makes the test binary act as a stand-in for a real CLI: it
// prints its pid and a session line, answers every stdin line, reports
// every SIGINT, SIGTERM and SIGHUP it gets on stdout, and does what a
// line asks ("exit N", "die SIGNAL", "hold": leave a process holding
// stdout and exit 0).
const envStandIn = "REALCLI_TEST_STAND_IN"

func TestMain(m *testing.M) {
	if os.Getenv(envStandIn) != "" {
		os.Exit(standIn())
	}
	Main(m)
}

func standIn() int {
	if os.Getenv(envStandIn) == "refuse" {
		// A CLI that refuses its session before it reads stdin.
		fmt.Fprintln(os.Stderr, "No conversation found with session ID: 5e55104e-0000-4000-8000-0000000ee003")
		time.Sleep(200 * time.Millisecond)
		return 1
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	out := make(chan string, 8)
	go func() {
		for s := range sigs {
			out <- fmt.Sprintf(`{"type":"signal","signal":%q}`, fakecli.SignalName(s))
		}
	}()
	fmt.Printf(`{"type":"pid","pid":%d}`+"\n", os.Getpid())
	fmt.Println(`{"type":"system","subtype":"init","session_id":"stand-in-session"}`)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for {
		select {
		case s := <-out:
			fmt.Println(s)
		case l, ok := <-lines:
			if !ok {
				if os.Getenv(envStandIn) == "linger" {
					// A CLI that takes its time to end after the end of
					// its stdin, silently, and ends on a signal.
					select {
					case <-out: // a signal, not written
					case <-time.After(10 * time.Second):
					}
					return 0
				}
				fmt.Fprintln(os.Stderr, "stand-in: stdin closed")
				return 0
			}
			cmd, arg, _ := strings.Cut(l, " ")
			switch cmd {
			case "exit":
				n, _ := strconv.Atoi(arg)
				return n
			case "die":
				signal.Reset()
				return fakecli.KillSelf(map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}[arg])
			case "hold":
				c := exec.Command("sleep", arg)
				c.Stdout = os.Stdout
				c.Start()
				fmt.Printf(`{"type":"holder","pid":%d}`+"\n", c.Process.Pid)
				return 0
			default:
				fmt.Printf(`{"type":"echo","line":%q}`+"\n", l)
			}
		}
	}
}

// wrapped is one wrapper run by a test, started as the adapter would.
type wrapped struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan map[string]any
	observe string
	wire    string
	cliPID  int
}

func startWrapped(t *testing.T, faultSpec string) *wrapped {
	t.Helper()
	return startWrappedAs(t, "1", faultSpec)
}

// startWrappedAs is startWrapped with the stand-in in mode (envStandIn).
func startWrappedAs(t *testing.T, mode, faultSpec string) *wrapped {
	t.Helper()
	return startWrappedCLI(t, "claude", mode, faultSpec)
}

// startWrappedCLI is startWrappedAs with the stand-in playing cli, its
// extra settings env over the stand-in's.
func startWrappedCLI(t *testing.T, cli, mode, faultSpec string, env ...string) *wrapped {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{CLI: cli, Path: self, Version: "0.0.0-test", Env: append([]string{envStandIn + "=" + mode}, env...),
		Faults: faultSpec, Deadline: time.Now().Add(time.Minute)}
	cfgPath := filepath.Join(dir, "real.json")
	if err := WriteConfig(cfgPath, cfg); err != nil {
		t.Fatal(err)
	}
	w := &wrapped{t: t, observe: filepath.Join(dir, "observe.jsonl"), wire: filepath.Join(dir, "wire"), lines: make(chan map[string]any, 64)}
	os.Mkdir(w.wire, 0o755)
	cmd := exec.Command(self)
	cmd.Args = []string{cli, "-p", "--output-format", "stream-json"}
	cmd.Env = append(os.Environ(), EnvConfig+"="+cfgPath, fakecli.EnvObserve+"="+w.observe, fakecli.EnvWire+"="+w.wire)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w.stdin, _ = cmd.StdinPipe()
	// Not StdoutPipe: Wait would close it when the wrapper exits, and a
	// test must see how long the stdout stays open after that.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = stdoutW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdoutW.Close()
	w.cmd = cmd
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				w.lines <- m
			} else {
				w.lines <- map[string]any{"type": "raw", "text": sc.Text()}
			}
		}
	}()
	if !strings.Contains(faultSpec, "start_delay") {
		// The stand-in says it runs (a start delay keeps it from running).
		w.cliPID = int(w.next("pid")["pid"].(float64))
		w.next("system")
	}
	return w
}

// next returns the next stdout line of type typ, failing on anything else
// and on a 30 s wait.
func (w *wrapped) next(typ string) map[string]any {
	w.t.Helper()
	select {
	case m, ok := <-w.lines:
		if !ok {
			w.t.Fatalf("stdout ended, want a %s line", typ)
		}
		if m["type"] != typ {
			w.t.Fatalf("stdout line %v, want type %s", m, typ)
		}
		return m
	case <-time.After(30 * time.Second):
		w.t.Fatalf("no %s line in 30 s", typ)
	}
	return nil
}

func (w *wrapped) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
		w.t.Fatal(err)
	}
}

func (w *wrapped) wait() *os.ProcessState {
	w.t.Helper()
	done := make(chan struct{})
	go func() { w.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		w.t.Fatal("the wrapper did not exit in 30 s")
	}
	return w.cmd.ProcessState
}

func (w *wrapped) log() []fakecli.Observation {
	w.t.Helper()
	f, err := os.Open(w.observe)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	recs, err := fakecli.ReadObservations(f)
	if err != nil {
		w.t.Fatal(err)
	}
	return recs
}

func kinds(recs []fakecli.Observation, kind string) []fakecli.Observation {
	var out []fakecli.Observation
	for _, r := range recs {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// TestSignalsReachTheCLIOnce: a signal to the process group reaches the
// CLI directly and is not passed on again; one to the wrapper alone is
// passed on. Each reaches the CLI exactly once.
func TestSignalsReachTheCLIOnce(t *testing.T) {
	w := startWrapped(t, "")
	syscall.Kill(-w.cmd.Process.Pid, syscall.SIGINT)
	if got := w.next("signal")["signal"]; got != "SIGINT" {
		t.Fatalf("the CLI got %v, want SIGINT", got)
	}
	syscall.Kill(w.cmd.Process.Pid, syscall.SIGTERM)
	if got := w.next("signal")["signal"]; got != "SIGTERM" {
		t.Fatalf("the CLI got %v, want SIGTERM", got)
	}
	// A line after both: had either signal come twice, its second copy
	// would stand before this echo.
	w.send("after the signals")
	if got := w.next("echo")["line"]; got != "after the signals" {
		t.Fatalf("echo %v", got)
	}
	w.send("exit 3")
	st := w.wait()
	if st.ExitCode() != 3 {
		t.Fatalf("the wrapper ended %v, want exit 3 as the CLI", st)
	}
	recs := w.log()
	var actions []string
	for _, r := range kinds(recs, "signal") {
		actions = append(actions, r.Signal+" "+r.Action)
	}
	if want := []string{"SIGINT group", "SIGTERM forwarded"}; !slices.Equal(actions, want) {
		t.Errorf("signal records %v, want %v", actions, want)
	}
	if s := kinds(recs, "start"); len(s) != 1 || s[0].PID != w.cmd.Process.Pid || s[0].CLI != "claude" || s[0].Transcript != "real:claude@0.0.0-test" {
		t.Errorf("start records %+v", s)
	}
	if s := kinds(recs, "session"); len(s) != 1 || s[0].Session != "stand-in-session" || s[0].Resumed {
		t.Errorf("session records %+v", s)
	}
	if e := kinds(recs, "exit"); len(e) != 1 || e[0].Code == nil || *e[0].Code != 3 {
		t.Errorf("exit records %+v", e)
	}
	var stdin []string
	for _, r := range kinds(recs, "stdin") {
		stdin = append(stdin, r.Text)
	}
	if want := []string{"after the signals", "exit 3"}; !slices.Equal(stdin, want) {
		t.Errorf("stdin records %q, want %q", stdin, want)
	}
	wire, err := os.ReadFile(filepath.Join(w.wire, strconv.Itoa(w.cmd.Process.Pid)+".out"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(wire), "\n"); n != len(kinds(recs, "out")) {
		t.Errorf("the wire copy has %d lines, the log %d out records", n, len(kinds(recs, "out")))
	}
}

// TestDeathBySignal: a CLI killed by a signal makes the wrapper die by
// the same signal.
func TestDeathBySignal(t *testing.T) {
	w := startWrapped(t, "")
	w.send("die SIGTERM")
	st := w.wait()
	ws := st.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the wrapper ended %v, want death by SIGTERM", st)
	}
	if e := kinds(w.log(), "exit"); len(e) != 1 || e[0].Signal != "SIGTERM" {
		t.Errorf("exit records %+v", e)
	}
}

// TestSIGKILLOfTheWrapperKillsTheCLI: the CLI does not outlive a wrapper
// killed outright.
func TestSIGKILLOfTheWrapperKillsTheCLI(t *testing.T) {
	w := startWrapped(t, "")
	syscall.Kill(w.cmd.Process.Pid, syscall.SIGKILL)
	w.wait()
	for i := 0; i < 300; i++ {
		if syscall.Kill(w.cliPID, 0) != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the CLI (pid %d) still runs 3 s after its wrapper was killed", w.cliPID)
}

// TestOutputHeldOpen: a process the CLI leaves holding its stdout keeps
// the adapter's stdout open after the CLI, and so the wrapper, exited.
func TestOutputHeldOpen(t *testing.T) {
	w := startWrapped(t, "")
	w.send("hold 5")
	holder := int(w.next("holder")["pid"].(float64))
	st := w.wait()
	if st.ExitCode() != 0 {
		t.Fatalf("the wrapper ended %v, want exit 0", st)
	}
	if syscall.Kill(holder, 0) != nil {
		t.Skip("the holder ended before the wrapper did: a loaded machine")
	}
	select {
	case m, ok := <-w.lines:
		if ok {
			t.Fatalf("stdout line %v after the CLI exited", m)
		}
		t.Fatal("stdout closed while a process still held it")
	case <-time.After(200 * time.Millisecond):
	}
	syscall.Kill(holder, syscall.SIGKILL)
	select {
	case _, ok := <-w.lines:
		if ok {
			t.Fatal("a line after the holder died")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("stdout still open 30 s after the holder died")
	}
}

// TestLiveFaults: the relay applies live faults to the CLI's stdout
// (here crlf and a banner before the first line), and the wire copy holds
// what the adapter got.
func TestLiveFaults(t *testing.T) {
	dir := t.TempDir()
	self, _ := os.Executable()
	cfg := &Config{CLI: "claude", Path: self, Env: []string{envStandIn + "=1"}, Faults: "crlf;banner:text=hello banner", Deadline: time.Now().Add(time.Minute)}
	cfgPath := filepath.Join(dir, "real.json")
	WriteConfig(cfgPath, cfg)
	wire := filepath.Join(dir, "wire")
	os.Mkdir(wire, 0o755)
	cmd := exec.Command(self)
	cmd.Args = []string{"claude"}
	cmd.Env = append(os.Environ(), EnvConfig+"="+cfgPath, fakecli.EnvObserve+"="+filepath.Join(dir, "o.jsonl"), fakecli.EnvWire+"="+wire)
	cmd.Stdin = strings.NewReader("exit 0\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.HasPrefix(string(out), "hello banner\n{\"type\":\"pid\"") || !strings.Contains(string(out), "}\r\n") {
		t.Errorf("stdout %q: want the banner first and CR LF line ends", out)
	}
	copyOf, _ := os.ReadFile(filepath.Join(wire, strconv.Itoa(cmd.Process.Pid)+".out"))
	if string(copyOf) != string(out) {
		t.Errorf("wire copy %q, stdout %q", copyOf, out)
	}
}

// TestUnreadStdin: a line the CLI never read (it refused its session
// first) is in no stdin record, as with a fake; the refusal is logged as
// the fakes log it.
func TestUnreadStdin(t *testing.T) {
	dir := t.TempDir()
	self, _ := os.Executable()
	cfg := &Config{CLI: "claude", Path: self, Env: []string{envStandIn + "=refuse"}, Deadline: time.Now().Add(time.Minute)}
	cfgPath := filepath.Join(dir, "real.json")
	WriteConfig(cfgPath, cfg)
	observe := filepath.Join(dir, "o.jsonl")
	cmd := exec.Command(self)
	cmd.Args = []string{"claude", "--output-format", "stream-json", "--input-format", "stream-json", "--verbose", "--resume", "5e55104e-0000-4000-8000-0000000ee003"}
	cmd.Env = append(os.Environ(), EnvConfig+"="+cfgPath, fakecli.EnvObserve+"="+observe)
	in, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(in, `{"type":"user","message":{"role":"user","content":"hi"}}`+"\n")
	cmd.Wait()
	in.Close()
	if cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1", cmd.ProcessState)
	}
	f, _ := os.Open(observe)
	recs, err := fakecli.ReadObservations(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if s := kinds(recs, "stdin"); len(s) != 0 {
		t.Errorf("stdin records %+v: the CLI never read that line", s)
	}
	if e := kinds(recs, "session_error"); len(e) != 1 || e[0].Session != "5e55104e-0000-4000-8000-0000000ee003" || e[0].Reason != "not_found" {
		t.Errorf("session_error records %+v, want the refused session", e)
	}
}

// TestCloseThenSignal: an adapter that closes the CLI's stdin and signals
// it a moment later, before the CLI ended on its own, closed stdin first:
// the end is logged (a fake, reading, logs it at once), though the CLI
// wrote nothing after it.
func TestCloseThenSignal(t *testing.T) {
	w := startWrappedAs(t, "linger", "")
	w.send("hello")
	w.next("echo")
	w.stdin.Close()
	time.Sleep(20 * time.Millisecond)
	syscall.Kill(w.cmd.Process.Pid, syscall.SIGTERM)
	w.wait()
	recs := w.log()
	closed, sigs := kinds(recs, "stdin_closed"), kinds(recs, "signal")
	if len(sigs) != 1 || len(closed) != 1 || closed[0].TMS > sigs[0].TMS {
		t.Errorf("stdin_closed %+v, signals %+v: want the end logged before the signal", closed, sigs)
	}
}

// TestGeminiLauncherKeepsSignals: a signal to a Gemini CLI's pid alone
// reaches its npm launcher, which keeps it from the CLI: it is logged as a
// note, not as the CLI's signal (a fake gemini's launcher logs none
// either); a group signal reaches the CLI. Without the launcher
// (GEMINI_CLI_NO_RELAUNCH) the signal is passed on and logged.
func TestGeminiLauncherKeepsSignals(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		want []string
	}{
		{"launcher", nil, []string{"SIGINT group"}},
		{"no launcher", []string{"GEMINI_CLI_NO_RELAUNCH=true"}, []string{"SIGINT group", "SIGTERM forwarded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := startWrappedCLI(t, "gemini", "1", "", tc.env...)
			syscall.Kill(-w.cmd.Process.Pid, syscall.SIGINT)
			w.next("signal")
			syscall.Kill(w.cmd.Process.Pid, syscall.SIGTERM)
			w.next("signal") // the stand-in is no launcher: it got it
			w.send("exit 0")
			w.wait()
			recs := w.log()
			var got []string
			for _, r := range kinds(recs, "signal") {
				got = append(got, r.Signal+" "+r.Action)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("signal records %v, want %v", got, tc.want)
			}
			notes := 0
			for _, r := range kinds(recs, "note") {
				if strings.Contains(r.Message, "SIGTERM to the gemini launcher alone") {
					notes++
				}
			}
			if want := len(tc.env) == 0; (notes == 1) != want {
				t.Errorf("%d notes of the launcher's SIGTERM, want one: %v", notes, want)
			}
		})
	}
}

// TestGeminiStartDelayBehindLauncher: a start delay of a Gemini CLI that
// runs behind its npm launcher is played as the launcher's CLI loading:
// a signal to the pid alone is the launcher's, which ignores it; one to
// the group kills the loading CLI, and the launcher exits 1. Without the
// launcher, a signal to the pid kills the CLI still loading.
func TestGeminiStartDelayBehindLauncher(t *testing.T) {
	w := startWrappedCLI(t, "gemini", "1", "start_delay:ms=60000")
	waitLogged(t, w, "fault")
	syscall.Kill(w.cmd.Process.Pid, syscall.SIGTERM)
	waitLogged(t, w, "note")
	syscall.Kill(-w.cmd.Process.Pid, syscall.SIGINT)
	st := w.wait()
	if st.ExitCode() != 1 {
		t.Errorf("the wrapper ended %v, want exit 1 (the launcher's, its CLI killed)", st)
	}
	recs := w.log()
	notes := 0
	for _, r := range kinds(recs, "note") {
		if strings.Contains(r.Message, "SIGTERM to the gemini launcher alone") {
			notes++
		}
	}
	sigs := kinds(recs, "signal")
	if notes != 1 || len(sigs) != 1 || sigs[0].Signal != "SIGINT" || sigs[0].Action != "group" {
		t.Errorf("%d notes of the launcher's SIGTERM, signals %+v; want one note and the group's SIGINT", notes, sigs)
	}

	w = startWrappedCLI(t, "gemini", "1", "start_delay:ms=60000", "GEMINI_CLI_NO_RELAUNCH=true")
	waitLogged(t, w, "fault")
	syscall.Kill(w.cmd.Process.Pid, syscall.SIGTERM)
	if st := w.wait(); st.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("without the launcher the wrapper ended %v, want death by SIGTERM", st)
	}
}

// waitLogged waits until the wrapper has logged a record of kind.
func waitLogged(t *testing.T, w *wrapped, kind string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		f, err := os.Open(w.observe)
		if err != nil {
			continue // not written yet
		}
		recs, _ := fakecli.ReadObservations(f)
		f.Close()
		if len(kinds(recs, kind)) > 0 {
			return
		}
	}
	t.Fatalf("no %s record after 30 s", kind)
}
