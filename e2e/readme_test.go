//go:build unix

package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's first-hour commands, and the guides' that the README
// showed before, run as written from a fresh directory that holds nothing
// but the user's adapter (my_adapter.py, a correct minimal Codex adapter:
// conformance/testdata/adapters/single-turn.py): the CLI with a relative
// adapter path, and the Go example as a test of a new module. Each runs
// one case, so that the test stays short. The README's shape and the
// links of the README and the guides are checked too.

// readme returns the repository's README.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// guide returns the guide docs/guides/name.
func guide(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "guides", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newUserDir makes the fresh directory of a new user: my_adapter.py, and
// my-adapter, the same adapter as an executable.
func newUserDir(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true, so the README tests must run, but python3 is not on PATH")
		}
		t.Skip("python3 is not on PATH")
	}
	dir := t.TempDir()
	// The adapter and the harness module it imports.
	for from, to := range map[string]string{"single-turn.py": "my_adapter.py", "_harness.py": "_harness.py"} {
		src, err := os.ReadFile(filepath.Join("..", "conformance", "testdata", "adapters", from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := "#!/bin/sh\nexec " + py + " \"$(dirname \"$0\")/my_adapter.py\" \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "my-adapter"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadmeRun runs the README's three commands to test an adapter from
// the user's directory, agentconform built from the checkout standing in
// for the installed one: the relative adapter path must reach the adapter
// in every case's fresh directory. The full battery is narrowed to one
// case (--case codex/plain-text), so that the test stays short; the
// third command, one case again with its files kept, runs as written.
func TestReadmeRun(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) != 2 || strings.Join(cmds[0], " ") != "run --adapter python3 my_adapter.py" {
		t.Fatalf("the README's three commands are no longer install, agentconform run --adapter 'python3 my_adapter.py', and one case again: %q", cmds)
	}
	dir := newUserDir(t)
	exe := filepath.Join(t.TempDir(), "agentconform")
	if out, err := exec.Command("go", "build", "-o", exe, "../cmd/agentconform").CombinedOutput(); err != nil {
		t.Fatalf("building agentconform: %v\n%s", err, out)
	}
	cmd := exec.Command(exe, append(cmds[0], "--case", "codex/plain-text")...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentconform run: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("PASS: python3 my_adapter.py: 1 cases")) {
		t.Errorf("output:\n%s", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("the run left files in the user's directory: %v", entries)
	}

	// One case again, its directory kept, as a failure's reproduce line
	// has it.
	cmd = exec.Command(exe, cmds[1]...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	kept := regexp.MustCompile(`keeping every case's directory in (\S+)`).FindStringSubmatch(stderr.String())
	if kept != nil {
		defer os.RemoveAll(kept[1])
	}
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("%q: %v\n%s%s", cmds[1], err, stdout.String(), stderr.String())
	}
	if kept == nil {
		t.Fatalf("%q did not say where it kept the case:\n%s", cmds[1], stderr.String())
	}
	if entries, err := os.ReadDir(kept[1]); err != nil || len(entries) == 0 {
		t.Errorf("the kept directory %s: %v, %d entries", kept[1], err, len(entries))
	}
	for i, a := range cmds[1] {
		if a == "--case" && i+1 < len(cmds[1]) && !strings.Contains(stdout.String(), cmds[1][i+1]) {
			t.Errorf("the output does not name the case %s:\n%s", cmds[1][i+1], stdout.String())
		}
	}
}

// readmeCommands returns the agentconform commands of the README's "Test
// an adapter in three commands" (after the install), as argument lists.
func readmeCommands(t *testing.T) [][]string {
	t.Helper()
	text := readme(t)
	i := strings.Index(text, "## Test an adapter in three commands")
	if i < 0 {
		t.Fatal("the README has no section Test an adapter in three commands")
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(text[i:])
	if block == nil {
		t.Fatal("no commands in Test an adapter in three commands")
	}
	lines := strings.Split(strings.TrimSpace(block[1]), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "go install github.com/agentconform/agentconform/cmd/agentconform@") {
		t.Fatalf("not three commands, the install first: %q", lines)
	}
	var cmds [][]string
	for _, l := range lines[1:] {
		args := shellWords(t, l)
		if len(args) < 2 || args[0] != "agentconform" {
			t.Fatalf("not an agentconform command: %q", l)
		}
		cmds = append(cmds, args[1:])
	}
	return cmds
}

// shellWords splits a command line as sh does for the README's commands:
// words, single quotes, and a comment from an unquoted #.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			w.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(line)
		case c == '"' || c == '\\' || c == '$' || c == '`':
			t.Fatalf("shellWords handles no %c: %q", c, line)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote: %q", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// TestGuideGoExample runs the Go example of the guide to testing an
// adapter as written, in a new module of the user's, selecting one case
// with go test -run.
func TestGuideGoExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	m := regexp.MustCompile("(?s)```go\n(func TestMain.*?)```").FindStringSubmatch(guide(t, "test-an-adapter.md"))
	if m == nil {
		t.Fatal("no Go example with TestMain in docs/guides/test-an-adapter.md")
	}
	dir := newUserDir(t)
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	src := "package mine\n\nimport (\n\t\"context\"\n\t\"os/exec\"\n\t\"testing\"\n\n\t\"github.com/agentconform/agentconform/conformance\"\n\t\"github.com/agentconform/agentconform/fakecli\"\n)\n\n" + m[1]
	mod := "module example.com/mine\n\ngo 1.26\n\nrequire github.com/agentconform/agentconform v0.0.0\n\nreplace github.com/agentconform/agentconform => " + repo + "\n"
	for name, body := range map[string]string{"adapter_test.go": src, "go.mod": mod} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if sum, err := os.ReadFile(filepath.Join(repo, "go.sum")); err == nil {
		os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
	}
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	cmd := exec.Command("go", "test", "-run", "TestMyAdapter/codex/plain-text$", "-v", "-count=1", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	for _, want := range []string{"--- PASS: TestMyAdapter/codex/plain-text", "\nok "} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("go test output lacks %q:\n%s", want, out)
		}
	}
	if bytes.Contains(out, []byte("TestMyAdapter/codex/multi-turn")) {
		t.Errorf("-run selected one case, but others ran:\n%s", out)
	}
}
