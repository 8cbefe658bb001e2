package realcli

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fakecli/faults"
)

// The relay's file descriptors besides its standard streams (the
// adapter's ends): the wrapper's ExtraFiles, in order.
const (
	fdCLIStdin  = 3 // write end of the CLI's stdin
	fdCLIStdout = 4 // read end of its stdout
	fdCLIStderr = 5 // read end of its stderr
	fdDone      = 6 // the summary, to the wrapper
	fdCLIWatch  = 7 // a read end of the CLI's stdin, never read (unreadBytes)
)

// stderrTailMax is how much of the CLI's stderr the summary carries.
const stderrTailMax = 8 << 10

// relay passes the adapter's stdin to the CLI and the CLI's output to the
// adapter, logging every line as the fakes log theirs.
type relay struct {
	cfg    *Config
	log    *obsLog
	live   *faults.Live
	resume string
	rpc    resumeWatch // codex app-server's thread/resume refusals

	mu        sync.Mutex // guards what the summary reads (the log has a lock of its own)
	lines     int        // stdout lines of the CLI
	session   string
	stderrBuf []byte
}

// summary is what the relay tells the wrapper of the CLI's output once
// it has ended.
type summary struct {
	// StdoutLines counts the CLI's stdout lines; Session is the session
	// (thread) id its first stream line announced.
	StdoutLines int    `json:"stdout_lines"`
	Session     string `json:"session,omitempty"`
	// StderrTail is the end of its stderr.
	StderrTail string `json:"stderr_tail,omitempty"`
}

// runRelay is the relay process's whole life.
func runRelay() int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	cfg, err := ReadConfig(os.Getenv(EnvConfig))
	if err != nil {
		os.Stderr.WriteString("agentconform real relay: " + err.Error() + "\n")
		return exitHarness
	}
	pid, _ := strconv.Atoi(os.Getenv(envWrapperPID))
	ns, _ := strconv.ParseInt(os.Getenv(envWrapperStart), 10, 64)
	r := &relay{cfg: cfg, log: openLog(pid, time.Unix(0, ns)), resume: os.Getenv(envResume)}
	defer r.log.close()

	cliIn := os.NewFile(fdCLIStdin, "cli-stdin")
	cliOut := os.NewFile(fdCLIStdout, "cli-stdout")
	cliErr := os.NewFile(fdCLIStderr, "cli-stderr")
	done := os.NewFile(fdDone, "done")

	var out io.Writer = os.Stdout
	if dir := os.Getenv(fakecli.EnvWire); dir != "" && pid > 0 {
		if f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(pid)+".out"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			defer f.Close()
			out = &tee{copy: f, w: os.Stdout}
		}
	}
	plan, err := faults.Parse(cfg.Faults, cfg.Seed)
	if err == nil {
		r.live, err = faults.NewLive(plan, out, os.Stderr)
	}
	if err != nil {
		r.log.log("note", "message", "the relay's faults: "+err.Error())
		r.live, _ = faults.NewLive(nil, out, os.Stderr)
	}

	watch := os.NewFile(fdCLIWatch, "cli-stdin-watch")
	in := &stdinRelay{r: r, to: cliIn, watch: watch, start: time.Unix(0, ns)}
	if os.Getenv(envStdinTTY) == "" {
		go in.pump(os.Stdin)
	} else {
		cliIn.Close()
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.stdout(cliOut) }()
	go func() { defer wg.Done(); r.stderr(cliErr) }()
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(time.Until(r.cfg.Deadline)):
		r.log.log("note", "message", "the relay gave up at the case's deadline: the CLI's output was still open")
	}

	in.settle()
	// The adapter's next write to a CLI that is gone fails, as it would.
	os.Stdin.Close()
	r.live.Close()
	r.mu.Lock()
	if plan != nil {
		for _, a := range plan.Applied() {
			r.log.log("fault", "fault", a.Fault, "params", a.Params, "detail", a.Detail)
		}
	}
	r.log.flush()
	tail := string(r.stderrBuf)
	sum := summary{StdoutLines: r.lines, Session: r.session, StderrTail: tail}
	r.mu.Unlock()
	json.NewEncoder(done).Encode(sum)
	done.Close()
	return 0
}

// stdout passes the CLI's stdout to the adapter line by line, through the
// live faults, logging each line written.
func (r *relay) stdout(from *os.File) {
	defer from.Close()
	br := bufio.NewReaderSize(from, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			r.mu.Lock()
			r.lines++
			announce := r.session == ""
			if announce {
				r.session = sessionOf(r.cfg.CLI, line)
				announce = r.session != ""
			}
			r.mu.Unlock()
			if announce {
				r.log.log("session", "session", r.session, "resumed", r.resume != "" && r.session == r.resume)
			}
			for _, rec := range r.rpc.server(line) {
				r.log.log(rec.kind, rec.kv...)
			}
			n, werr := r.live.Line(line)
			r.log.log("out", "bytes", n, "line", 0)
			r.log.flush()
			if werr != nil {
				// The adapter closed its end: the CLI's next write fails,
				// as it would have.
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stderr passes the CLI's stderr on as it comes, logging each write and
// keeping its end for the summary.
func (r *relay) stderr(from *os.File) {
	defer from.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			r.mu.Lock()
			r.stderrBuf = append(r.stderrBuf, buf[:n]...)
			if len(r.stderrBuf) > stderrTailMax {
				r.stderrBuf = r.stderrBuf[len(r.stderrBuf)-stderrTailMax:]
			}
			announce := ""
			if r.session == "" {
				if id := stderrSession(r.cfg.CLI, r.stderrBuf); id != "" {
					r.session, announce = id, id
				}
			}
			r.mu.Unlock()
			if announce != "" {
				r.log.log("session", "session", announce, "resumed", r.resume != "" && announce == r.resume)
			}
			k, werr := r.live.Stderr(buf[:n])
			r.log.log("err", "bytes", k, "line", 0)
			r.log.flush()
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line, newline included, however long; at the end of
// the input it returns what is left (no newline) with io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, frag...)
			continue
		}
		if long != nil {
			long = append(long, frag...)
			return long, err
		}
		return append([]byte(nil), frag...), err
	}
}

// tee copies what it writes to the adapter's stdout into the wire copy
// first, as the fakes do: the copy holds every byte the adapter got.
type tee struct {
	copy io.Writer
	w    io.Writer
}

func (t *tee) Write(b []byte) (int, error) {
	t.copy.Write(b)
	return t.w.Write(b)
}
