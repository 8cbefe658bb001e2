//go:build unix

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's first-hour commands, run as written from a fresh directory
// that holds nothing but the user's adapter (my_adapter.py, a correct
// minimal Codex adapter: conformance/testdata/adapters/single-turn.py):
// the CLI with a relative adapter path, and the Go example as a test of a
// new module. Each runs one case, so that the test stays short.

// readme returns the repository's README.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
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

// TestReadmeRun runs the README's `agentconform run --adapter 'python3
// my_adapter.py'` from the user's directory: the relative path must reach
// the adapter in every case's fresh directory.
func TestReadmeRun(t *testing.T) {
	if !strings.Contains(readme(t), "agentconform run --adapter 'python3 my_adapter.py'") {
		t.Fatal("the README no longer shows agentconform run --adapter 'python3 my_adapter.py'")
	}
	dir := newUserDir(t)
	exe := filepath.Join(t.TempDir(), "agentconform")
	if out, err := exec.Command("go", "build", "-o", exe, "../cmd/agentconform").CombinedOutput(); err != nil {
		t.Fatalf("building agentconform: %v\n%s", err, out)
	}
	cmd := exec.Command(exe, "run", "--adapter", "python3 my_adapter.py", "--case", "codex/plain-text")
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
}

// TestReadmeGoExample runs the README's Go example as written, in a new
// module of the user's, selecting one case with go test -run.
func TestReadmeGoExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	m := regexp.MustCompile("(?s)```go\n(func TestMain.*?)```").FindStringSubmatch(readme(t))
	if m == nil {
		t.Fatal("no Go example with TestMain in the README")
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
