package recorder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentconform/agentconform/redact"
	"github.com/agentconform/agentconform/transcript"
)

// The environment of the PATH-shim mode.
const (
	// EnvDir names the directory recordings are written to; when it is
	// set and the agentconform binary runs as "claude", "codex" or
	// "gemini", it records instead of doing anything else.
	EnvDir = "AGENTCONFORM_RECORD_DIR"
	// EnvReal is the path of the real CLI. Without it the shim runs the
	// first other executable of its name on PATH.
	EnvReal = "AGENTCONFORM_RECORD_REAL"
	// EnvTimeout is the child's deadline as a Go duration ("30m");
	// default DefaultTimeout.
	EnvTimeout = "AGENTCONFORM_RECORD_TIMEOUT"
	// EnvScenario is written to the transcripts' header.
	EnvScenario = "AGENTCONFORM_RECORD_SCENARIO"
	// EnvRedact names a redaction rule file (redact.RulesFormat) whose
	// rules apply besides the built-in ones.
	EnvRedact = "AGENTCONFORM_RECORD_REDACT"
)

// ShimMain is the PATH-shim mode. Called first thing with os.Args[0] and
// os.Args[1:], it reports handled=false unless EnvDir is set and name (its
// base, without .exe) is exactly "claude", "codex" or "gemini". Otherwise
// it runs the real CLI (EnvReal) with args, passing stdio and signals
// through, writes the recording to EnvDir/<cli>-<UTC time>-<pid>.jsonl,
// and returns the CLI's exit status for os.Exit; when the CLI died by
// SIGINT, SIGTERM, SIGHUP or SIGKILL it dies by the same signal instead of
// returning. The child's environment is the shim's without the
// AGENTCONFORM_RECORD_* variables (so a real CLI that is itself an
// agentconform fake does not record again). The shim prints nothing of its
// own except when it cannot start the CLI (exit 127) or write the
// recording.
func ShimMain(name string, args []string) (handled bool, code int) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return false, 0
	}
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(name)), ".exe")
	if !knownCLI(base) {
		return false, 0
	}
	cli := base
	fail := func(code int, format string, a ...any) (bool, int) {
		fmt.Fprintf(os.Stderr, "%s: agentconform recording shim: %s\n", cli, fmt.Sprintf(format, a...))
		return true, code
	}
	real, err := realCLI(cli)
	if err != nil {
		return fail(127, "%v", err)
	}
	timeout := DefaultTimeout
	if v := os.Getenv(EnvTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fail(127, "%s=%q is not a positive duration", EnvTimeout, v)
		}
		timeout = d
	}
	var rules []redact.Rule
	if path := os.Getenv(EnvRedact); path != "" {
		if rules, err = redact.ReadRulesFile(path); err != nil {
			return fail(127, "%s: %v", EnvRedact, err)
		}
	}
	started := time.Now().UTC()
	file := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.jsonl", cli, started.Format("20060102T150405Z"), os.Getpid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(127, "creating the recording directory: %v", err)
	}
	out, err := CreateFile(file)
	if err != nil {
		return fail(127, "%v", err)
	}
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	env := childEnv(os.Environ())
	signals, stop := NotifySignals()
	res, err := Record(context.Background(), Config{
		Argv:     append([]string{name}, args...),
		Path:     real,
		CLI:      cli,
		Scenario: os.Getenv(EnvScenario),
		Env:      env,
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Timeout:  timeout,
		Signals:  signals,
		Redactor: redact.New(redact.Options{Home: home, Cwd: cwd, Secrets: redact.EnvSecrets(env), Rules: rules}),
	})
	stop()
	if err != nil {
		out.Abort()
		return fail(127, "%v", err)
	}
	if err := out.Commit(res.Transcript); err != nil {
		fmt.Fprintf(os.Stderr, "%s: agentconform recording shim: %v\n", cli, err)
	}
	if res.Signal != "" {
		dieBySignal(res.SignalNumber)
	}
	return true, res.Status()
}

// childEnv is environ without the recorder's own variables.
func childEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "AGENTCONFORM_RECORD_") {
			out = append(out, kv)
		}
	}
	return out
}

// realCLI finds the CLI the shim stands in for: EnvReal, or else the first
// executable named cli on PATH that is not the running binary.
func realCLI(cli string) (string, error) {
	if p := os.Getenv(EnvReal); p != "" {
		if st, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s: %w", EnvReal, err)
		} else if st.IsDir() {
			return "", fmt.Errorf("%s=%s is a directory", EnvReal, p)
		}
		return p, nil
	}
	var self os.FileInfo
	if exe, err := os.Executable(); err == nil {
		self, _ = os.Stat(exe)
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, cli)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 || (self != nil && os.SameFile(st, self)) {
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("%s is not set and there is no other %s on PATH", EnvReal, cli)
}

// File is a transcript file being recorded: created (as a hidden temporary
// file next to its final name) before the CLI starts, so a path that
// cannot be written fails early, and renamed into place by Commit.
type File struct {
	path string
	tmp  *os.File
}

// CreateFile prepares path for a recording. The file is private to the
// user (mode 0600): redaction is thorough, not perfect.
func CreateFile(path string) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("creating the transcript file: %w", err)
	}
	return &File{path: path, tmp: f}, nil
}

// Commit writes t and moves the file to its final name.
func (f *File) Commit(t *transcript.Transcript) error {
	err := transcript.Write(f.tmp, t)
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.tmp.Name())
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// Abort removes the temporary file.
func (f *File) Abort() {
	f.tmp.Close()
	os.Remove(f.tmp.Name())
}

// WriteFile writes t to path (mode 0600), replacing it atomically.
func WriteFile(path string, t *transcript.Transcript) error {
	f, err := CreateFile(path)
	if err != nil {
		return err
	}
	return f.Commit(t)
}
