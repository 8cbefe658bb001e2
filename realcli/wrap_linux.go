package realcli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fakecli/faults"
)

// passedOn are the signals the wrapper passes on to the CLI when they
// were sent to it alone (SIGKILL needs no passing on: the CLI's
// parent-death signal is SIGKILL; SIGSTOP and SIGCONT are not passed on).
var passedOn = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// summaryWait bounds how long the wrapper, once the CLI has exited, waits
// for the relay to finish the CLI's output before it reports the exit:
// the output ends with the CLI unless a process it started holds it open.
const summaryWait = 300 * time.Millisecond

// wrap is the wrapper's whole life: start the real CLI with args under
// the relay, pass signals on, and end as the CLI ended.
func wrap(cfg *Config, args []string) int {
	start := time.Now()
	pid := os.Getpid()
	log := openLog(pid, start)
	defer log.close()
	argv := append([]string{cfg.CLI}, args...)
	cwd, _ := os.Getwd()
	stdinTTY := isTerminal(os.Stdin)
	log.log("start", "cli", cfg.CLI, "argv", argv, "env", envMarks(), "cwd", cwd,
		"transcript", TranscriptPrefix+cfg.CLI+"@"+cfg.Version, "stdin_tty", stdinTTY, "ppid", os.Getppid(), "sid", sessionOf0())
	// Written at once: a signal may end the wrapper any moment from now.
	log.flush()
	// The wire copy exists from the start, as a fake's does: the runner
	// sees a CLI by it, one still loading too.
	if dir := os.Getenv(fakecli.EnvWire); dir != "" {
		if f, err := os.Create(filepath.Join(dir, strconv.Itoa(pid)+".out")); err == nil {
			f.Close()
		}
	}
	plan, err := faults.Parse(cfg.Faults, cfg.Seed)
	if err != nil {
		return log.harness("the faults: %v", err)
	}
	// Gemini CLI from npm relaunches itself behind a launcher that ignores
	// SIGINT, SIGTERM and SIGHUP and passes none on, unless told not to.
	cliEnv := cfg.cliEnv(os.Environ())
	swallows := cfg.CLI == "gemini" && envOf(cliEnv, "GEMINI_CLI_NO_RELAUNCH") == "" && envOf(cliEnv, "SANDBOX") == ""
	var sigc chan os.Signal
	var can *canary
	defer func() { can.stop() }()
	if d := plan.StartDelay(); d > 0 {
		if swallows {
			// The launcher's handlers are in place before the delay is
			// logged.
			sigc, can = notifySignals(log)
		}
		for _, a := range plan.Applied() {
			log.log("fault", "fault", a.Fault, "params", a.Params, "detail", a.Detail)
		}
		log.flush()
		if !swallows {
			// A CLI still loading: a signal now kills it, as no handler
			// is installed yet (and there is no CLI to pass it to).
			time.Sleep(d)
		} else if code, ended := behindLauncher(log, cfg, d, sigc, can, start); ended {
			return code
		}
	}
	if sigc == nil {
		sigc, can = notifySignals(log)
	}

	// The CLI's stdin, stdout and stderr are pipes the relay holds the
	// other ends of; a terminal stdin is the CLI's own.
	var cliIn, relayIn *os.File
	if !stdinTTY {
		if cliIn, relayIn, err = os.Pipe(); err != nil {
			return log.harness("a pipe: %v", err)
		}
	} else {
		cliIn = os.Stdin
	}
	relayOut, cliOut, err := os.Pipe()
	if err != nil {
		return log.harness("a pipe: %v", err)
	}
	relayErr, cliErr, err := os.Pipe()
	if err != nil {
		return log.harness("a pipe: %v", err)
	}
	doneR, doneW, err := os.Pipe()
	if err != nil {
		return log.harness("a pipe: %v", err)
	}

	cli := exec.Command(cfg.Path, args...)
	// The mark goes first: a read of the environment that the CLI's exec
	// or exit cuts short keeps the start of it, and must not keep the run
	// mark (further on) without the mark that says whose process it is.
	// (cliEnv holds no other: it drops the runner's variables.)
	cli.Env = append([]string{EnvCLI + "=" + strconv.Itoa(pid)}, cliEnv...)
	cli.Stdin, cli.Stdout, cli.Stderr = cliIn, cliOut, cliErr
	cli.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}

	self, err := os.Executable()
	if err != nil {
		return log.harness("the wrapper's own executable: %v", err)
	}
	relay := exec.Command(self)
	relay.Env = relayEnv(pid, start, resumeAsked(cfg.CLI, args), relayIn == nil)
	relay.Stdout, relay.Stderr = os.Stdout, os.Stderr
	if relayIn != nil {
		relay.Stdin = os.Stdin
	} else if relayIn, err = os.Open(os.DevNull); err != nil {
		// The CLI reads the terminal itself: the relay gets nothing.
		return log.harness("the null device: %v", err)
	}
	// The relay keeps a read end of the CLI's stdin too, never read: what
	// is still in that pipe is what the CLI has not read yet.
	watch := cliIn
	if cliIn == os.Stdin {
		watch, _ = os.Open(os.DevNull)
	}
	relay.ExtraFiles = []*os.File{relayIn, relayOut, relayErr, doneW, watch}
	relay.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := relay.Start(); err != nil {
		return log.harness("starting the relay: %v", err)
	}
	go relay.Wait()
	log.flush()
	if err := cli.Start(); err != nil {
		log.log("note", "message", "starting the real CLI: "+err.Error())
		closeAll(relayIn, relayOut, relayErr, doneW, cliIn, cliOut, cliErr)
		log.exit(127, "")
		return 127
	}
	// The relay and the CLI hold the pipes now; the adapter's ends are
	// the relay's alone, so that they close when the relay's do.
	closeAll(relayIn, relayOut, relayErr, doneW, cliOut, cliErr)
	if watch != cliIn {
		watch.Close()
	}
	if cliIn != os.Stdin {
		cliIn.Close()
	}
	detachStdio()

	exited := make(chan error, 1)
	go func() { exited <- cli.Wait() }()
	for {
		select {
		case s := <-sigc:
			at := time.Since(start)
			sig := s.(syscall.Signal)
			group := can != nil && can.caught(sig)
			action := "forwarded"
			if !group {
				syscall.Kill(cli.Process.Pid, sig)
			} else {
				action = "group" // the CLI got it from the kill itself
			}
			if !group && swallows {
				// The launcher got it alone, and keeps it from the CLI.
				logLauncherKept(log, at, cfg, sig)
			} else {
				log.logAt(at, "signal", "signal", fakecli.SignalName(sig), "action", action)
			}
			log.flush()
			if group {
				// The canary keeps the signal pending for good: a fresh
				// one takes its place.
				next, err := startCanary()
				can.stop()
				can = next
				if err != nil {
					log.log("note", "message", "no canary after a group signal ("+err.Error()+")")
				}
			}
		case werr := <-exited:
			signal.Stop(sigc)
			return finish(log, cfg, args, cli, werr, doneR)
		}
	}
}

// notifySignals has the wrapper catch the signals it passes on, and
// starts the canary that tells a signal to its pid alone from its group's.
func notifySignals(log *obsLog) (chan os.Signal, *canary) {
	sigc := make(chan os.Signal, 16)
	notify := make([]os.Signal, len(passedOn))
	for i, s := range passedOn {
		notify[i] = s
	}
	signal.Notify(sigc, notify...)
	signal.Ignore(syscall.SIGPIPE)
	can, err := startCanary()
	if err != nil {
		log.log("note", "message", "no canary ("+err.Error()+"): every signal is passed on, as if sent to the wrapper alone")
	}
	return sigc, can
}

// behindLauncher plays a start delay of a Gemini CLI that runs behind
// its npm launcher: what loads slowly is the CLI the launcher relaunched
// (the launcher relaunches within a second or so), so a signal to the
// pid alone reaches the launcher, which ignores it, and one to the group
// reaches the loading CLI, which dies of it (no handler yet) while the
// launcher exits 1 (docs/protocols/gemini.md#launcher). ended is true,
// with the exit code, when the wrapper has ended as the launcher would.
func behindLauncher(log *obsLog, cfg *Config, d time.Duration, sigc chan os.Signal, can *canary, start time.Time) (code int, ended bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return 0, false
		case s := <-sigc:
			sig := s.(syscall.Signal)
			at := time.Since(start)
			if can != nil && can.caught(sig) {
				log.logAt(at, "signal", "signal", fakecli.SignalName(sig), "action", "group")
				log.exit(1, "")
				log.close()
				return 1, true
			}
			logLauncherKept(log, at, cfg, sig)
			log.flush()
		}
	}
}

// logLauncherKept notes a signal to Gemini CLI's launcher alone, which
// the CLI behind it never gets.
func logLauncherKept(log *obsLog, at time.Duration, cfg *Config, sig syscall.Signal) {
	log.logAt(at, "note", "message", fmt.Sprintf("%s to the %s launcher alone, which ignores it and passes on none (docs/protocols/gemini.md#launcher): the CLI behind it never got it", fakecli.SignalName(sig), cfg.CLI))
}

// finish logs how the CLI ended (and what its output said of a refused
// invocation), then ends the wrapper the same way.
func finish(log *obsLog, cfg *Config, args []string, cli *exec.Cmd, werr error, doneR *os.File) int {
	sum := readSummary(doneR, summaryWait)
	doneR.Close()
	st := cli.ProcessState
	code, sig := -1, syscall.Signal(0)
	if st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			sig = ws.Signal()
		} else {
			code = st.ExitCode()
		}
	}
	if st == nil && werr != nil {
		log.log("note", "message", "waiting for the real CLI: "+werr.Error())
		code = 127
	}
	if sum != nil && sig == 0 && code != 0 {
		for _, r := range refusals(cfg.CLI, args, code, sum) {
			log.log(r.kind, r.kv...)
		}
	}
	if sig != 0 {
		log.exit(0, fakecli.SignalName(sig))
		log.close()
		return fakecli.KillSelf(sig)
	}
	log.exit(code, "")
	log.close()
	return code
}

// readSummary reads the relay's summary, or gives up after wait (the
// output is still open: a process the CLI started holds it).
func readSummary(r *os.File, wait time.Duration) *summary {
	r.SetReadDeadline(time.Now().Add(wait))
	var s summary
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil
	}
	return &s
}

// relayEnv is the relay's environment: its role, the wrapper's pid and
// start (its records are the wrapper's), the resume id the CLI was asked
// for, and what the fakes read (the log, the wire copies, the
// configuration) — not the run mark, so that the runner never counts it
// among the processes an adapter left behind.
func relayEnv(pid int, start time.Time, resume string, tty bool) []string {
	env := []string{
		envRole + "=" + roleRelay,
		envWrapperPID + "=" + strconv.Itoa(pid),
		envWrapperStart + "=" + strconv.FormatInt(start.UnixNano(), 10),
		envResume + "=" + resume,
	}
	if tty {
		env = append(env, envStdinTTY+"=1")
	}
	for _, k := range []string{EnvConfig, fakecli.EnvObserve, fakecli.EnvWire, "PATH"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// detachStdio points the wrapper's own standard streams at the null
// device: the relay holds the adapter's pipes, and they must close when
// its copies do.
func detachStdio() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer null.Close()
	for fd := 0; fd <= 2; fd++ {
		syscall.Dup3(int(null.Fd()), fd, 0)
	}
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return e == 0
}

// sessionOf0 is this process's session.
func sessionOf0() int {
	sid, _, e := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	if e != 0 {
		return 0
	}
	return int(sid)
}

// envOf returns the value of name in env, "" if unset.
func envOf(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val // the last one counts
		}
	}
	return v
}
