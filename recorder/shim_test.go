//go:build unix

package recorder

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/transcript"
)

// shimSetup makes a directory with "codex" linked to the test binary and
// a directory for recordings.
func shimSetup(t *testing.T) (codex, recDir string) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	codex = filepath.Join(bin, "codex")
	if err := os.Symlink(self(t), codex); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	return codex, filepath.Join(dir, "recordings")
}

// command prepares a process in its own group with a deadline; the group
// is killed when the deadline passes and when the test ends.
func command(t *testing.T, path string, argv, env []string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, path)
	cmd.Args = argv
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	t.Cleanup(func() {
		cancel()
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	return cmd
}

type view struct {
	stdout, stderr string
	code           int
	signal         syscall.Signal
}

func runView(t *testing.T, cmd *exec.Cmd, stdin string) view {
	t.Helper()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return viewOf(cmd, out.String(), errb.String())
}

func viewOf(cmd *exec.Cmd, stdout, stderr string) view {
	v := view{stdout: stdout, stderr: stderr, code: cmd.ProcessState.ExitCode()}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		v.signal = ws.Signal()
	}
	return v
}

func TestShimRecordsAndBehavesLikeTheCLI(t *testing.T) {
	codex, recDir := shimSetup(t)
	home := t.TempDir()
	argv := []string{"codex", "exec", "--json", "-"}
	env := testEnv(t, home, "echo", "RECORDER_TEST_PLAIN=1", "RECORDER_TEST_EXIT=5", "RECORDER_TEST_PARTIAL=1")
	stdin := "line one\nline two\n"

	direct := runView(t, command(t, self(t), argv, env), stdin)
	shim := command(t, codex, argv, append(env, EnvDir+"="+recDir, EnvReal+"="+self(t), EnvScenario+"=shim"))
	viaShim := runView(t, shim, stdin)
	if d := cmp.Diff(direct, viaShim, cmp.AllowUnexported(view{})); d != "" {
		t.Errorf("the client sees a difference (-direct +shim):\n%s", d)
	}
	if direct.code != 5 {
		t.Errorf("direct exit %d", direct.code)
	}

	entries, err := os.ReadDir(recDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("recordings: %v", entries)
	}
	name := entries[0].Name()
	if !regexp.MustCompile(`^codex-\d{8}T\d{6}Z-` + strconv.Itoa(shim.Process.Pid) + `\.jsonl$`).MatchString(name) {
		t.Errorf("file name %q", name)
	}
	if st, _ := entries[0].Info(); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	tr, err := transcript.LoadFile(os.DirFS(recDir), name, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := tr.Header
	if h.CLI != "codex" || h.Source != "recorded" || h.Scenario != "shim" || h.CLIVersion != childVersion || h.Argv[0] != "codex" || h.Cwd != "<cwd>" {
		t.Errorf("header = %+v", h)
	}
	for _, e := range h.Env {
		if strings.HasPrefix(e, "AGENTCONFORM_RECORD_") {
			t.Errorf("recorder variable in env: %s", e)
		}
	}
	var ins []string
	for _, s := range tr.Steps {
		if s.Op == transcript.OpIn {
			ins = append(ins, s.Text)
		}
	}
	if d := cmp.Diff([]string{"line one", "line two"}, ins); d != "" {
		t.Errorf("in steps (-want +got):\n%s", d)
	}
	if got := replay(tr, transcript.OpOut, nil); got != direct.stdout {
		t.Errorf("replay differs:\n%s", cmp.Diff(direct.stdout, got))
	}
	if end := tr.Steps[len(tr.Steps)-1]; end.Op != transcript.OpExit || end.Code != 5 {
		t.Errorf("end = %+v", end)
	}
}

func TestShimDiesByTheSameSignal(t *testing.T) {
	codex, recDir := shimSetup(t)
	env := testEnv(t, t.TempDir(), "die")
	direct := runView(t, command(t, self(t), []string{"codex"}, env), "")
	viaShim := runView(t, command(t, codex, []string{"codex"}, append(env, EnvDir+"="+recDir, EnvReal+"="+self(t))), "")
	if direct.signal != syscall.SIGTERM {
		t.Fatalf("direct = %+v", direct)
	}
	if d := cmp.Diff(direct, viaShim, cmp.AllowUnexported(view{})); d != "" {
		t.Errorf("(-direct +shim):\n%s", d)
	}
}

func TestShimForwardsSIGINT(t *testing.T) {
	codex, recDir := shimSetup(t)
	cmd := command(t, codex, []string{"codex", "exec"}, append(testEnv(t, t.TempDir(), "signal"), EnvDir+"="+recDir, EnvReal+"="+self(t)))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("first line %q", sc.Text())
	}
	// Only the shim gets the signal; the child is in a group of its own.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if !sc.Scan() || sc.Text() != "got SIGINT" {
		t.Errorf("after SIGINT the child said %q", sc.Text())
	}
	for sc.Scan() {
	}
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d (%v)", code, err)
	}
	entries, _ := os.ReadDir(recDir)
	if len(entries) != 1 {
		t.Fatalf("recordings: %v", entries)
	}
	tr, err := transcript.LoadFile(os.DirFS(recDir), entries[0].Name(), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := replay(tr, transcript.OpOut, nil); got != "ready\ngot SIGINT\n" {
		t.Errorf("recorded stdout %q", got)
	}
}

func TestShimMainOnlyWhenAsked(t *testing.T) {
	t.Setenv(EnvDir, "")
	if handled, _ := ShimMain("codex", nil); handled {
		t.Error("handled without " + EnvDir)
	}
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	if handled, _ := ShimMain("/usr/bin/agentconform", []string{"record"}); handled {
		t.Error("handled under the agentconform name")
	}
	if handled, _ := ShimMain("claude-wrapper", nil); handled {
		t.Error("handled under a name that only contains a CLI's")
	}
	t.Setenv(EnvReal, filepath.Join(dir, "no-such-cli"))
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = stderr
	handled, code := ShimMain(filepath.Join(dir, "gemini"), nil)
	os.Stderr = saved
	if !handled || code != 127 {
		t.Errorf("missing real CLI: handled %v, code %d", handled, code)
	}
	msg, _ := os.ReadFile(stderr.Name())
	if !strings.HasPrefix(string(msg), "gemini: agentconform recording shim: "+EnvReal) {
		t.Errorf("stderr %q", msg)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left files behind: %v", entries)
	}
}

func TestRealCLIFromPATHSkipsTheShim(t *testing.T) {
	codex, _ := shimSetup(t)
	other := t.TempDir()
	real := filepath.Join(other, "codex")
	if err := os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvReal, "")
	t.Setenv("PATH", filepath.Dir(codex)+string(os.PathListSeparator)+other)
	got, err := realCLI("codex")
	if err != nil || got != real {
		t.Errorf("realCLI = %q, %v; want %s", got, err, real)
	}
	t.Setenv("PATH", filepath.Dir(codex))
	if _, err := realCLI("codex"); err == nil {
		t.Error("found only itself and took it")
	}
}

// TestShimRedactRuleFile: the shim applies the rule file that
// AGENTCONFORM_RECORD_REDACT names, and refuses to run with a broken one.
func TestShimRedactRuleFile(t *testing.T) {
	codex, recDir := shimSetup(t)
	dir := t.TempDir()
	lines := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(lines, []byte(`{"type":"item.completed","item":{"type":"agent_message","text":"ticket ACME-4711 done"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(dir, "r.rules")
	if err := os.WriteFile(rules, []byte("acme-ticket ACME-([0-9]+)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(testEnv(t, t.TempDir(), "lines", "RECORDER_TEST_LINES="+lines), EnvDir+"="+recDir, EnvReal+"="+self(t))
	v := runView(t, command(t, codex, []string{"codex", "exec", "--json", "x"}, append(env, EnvRedact+"="+rules)), "")
	if v.code != 0 || !strings.Contains(v.stdout, "ACME-4711") {
		t.Fatalf("shim: %+v", v)
	}
	entries, err := os.ReadDir(recDir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("recordings: %v %v", entries, err)
	}
	data, _ := os.ReadFile(filepath.Join(recDir, entries[0].Name()))
	if strings.Contains(string(data), "4711") || !strings.Contains(string(data), "ACME-<redacted:acme-ticket:1>") {
		t.Errorf("recording:\n%s", data)
	}
	bad := filepath.Join(dir, "bad.rules")
	os.WriteFile(bad, []byte("x (\n"), 0o600)
	v = runView(t, command(t, codex, []string{"codex", "exec", "--json", "x"}, append(env, EnvRedact+"="+bad)), "")
	if v.code != 127 || !strings.Contains(v.stderr, bad+":1:") {
		t.Errorf("shim with a broken rule file: %+v", v)
	}
}
