package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBuildID: buildID reads the build ID `go tool buildid` prints, and
// stands a hash of the file in for a file that has none.
func TestBuildID(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	build := exec.Command("go", "build", "-o", "hello", ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	want, err := exec.Command("go", "tool", "buildid", filepath.Join(dir, "hello")).Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := buildID(filepath.Join(dir, "hello"))
	if err != nil || got != strings.TrimSpace(string(want)) {
		t.Errorf("buildID = %q, %v; go tool buildid says %q", got, err, want)
	}
	script := filepath.Join(dir, "script")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
	if got, err := buildID(script); err != nil || !strings.HasPrefix(got, "sha256:") {
		t.Errorf("buildID of a script = %q, %v", got, err)
	}
}

// TestCheckoutBuildOfCommand: only agentconform itself built in a
// checkout builds the lean binaries, not a test binary nor a build of the
// fetched module.
func TestCheckoutBuildOfCommand(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}}
	for _, c := range []struct {
		path, version string
		settings      []debug.BuildSetting
		want          bool
	}{
		{modulePath + "/cmd/agentconform", "(devel)", nil, true},
		{modulePath + "/cmd/agentconform", "v0.2.0", vcs, true},
		{modulePath + "/cmd/agentconform", "v0.2.0", nil, false},
		{modulePath + "/cmd/agentconform.test", "(devel)", nil, false},
		{modulePath + "/cmd/agentconform-fake", "(devel)", nil, false},
	} {
		bi := &debug.BuildInfo{Path: c.path, Main: debug.Module{Path: modulePath, Version: c.version}, Settings: c.settings}
		if got := checkoutBuildOfCommand(bi); got != c.want {
			t.Errorf("%s %s %v: %v, want %v", c.path, c.version, c.settings, got, c.want)
		}
	}
}

// TestLeanBinariesFromTheCheckout runs agentconform, built alone (as go
// run builds it), as the README's first command does: in the checkout,
// with nothing next to it. The first run builds the lean fake and adapter
// into the cache and says so; the second builds nothing and starts the
// cached ones (wrapped here to leave a mark) for the fakes and the
// reference adapters. Outside a checkout nothing is built; a build that
// fails is noted and agentconform stands in.
func TestLeanBinariesFromTheCheckout(t *testing.T) {
	exe := agentconformBinary(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash for the wrappers")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	// The tests set XDG_CACHE_HOME, which the go command's build cache
	// defaults to: keep the build cache as it is, or every build starts
	// cold.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	run := func(dir string, env ...string) (string, string) {
		t.Helper()
		res := filepath.Join(t.TempDir(), "r.json")
		cmd := exec.Command(exe, "run", "-q", "--case", "codex/plain-text", "-o", res)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), "GITHUB_ACTIONS=", "GOCACHE="+strings.TrimSpace(string(gocache))), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run in %s: %v\n%s%s", dir, err, stdout.String(), stderr.String())
		}
		if !strings.Contains(stdout.String(), "PASS: reference/shim: 1 cases") {
			t.Errorf("run in %s:\n%s%s", dir, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	cache := t.TempDir()
	_, errs := run(root, "XDG_CACHE_HOME="+cache)
	if !strings.Contains(errs, "building agentconform-fake and agentconform-adapter from "+root) {
		t.Errorf("the first run in the checkout did not say it builds the lean binaries:\n%s", errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(cache, "agentconform", "lean", "*"))
	if len(dirs) != 1 {
		t.Fatalf("the cache holds %v, want one build's binaries", dirs)
	}
	marks := t.TempDir()
	for _, name := range []string{"agentconform-fake", "agentconform-adapter"} {
		p := filepath.Join(dirs[0], name)
		if err := os.Rename(p, p+".real"); err != nil {
			t.Fatal(err)
		}
		// The fake learns which CLI it is from its name: exec keeps it.
		wrapper := "#!" + bash + "\necho \"$0\" >> " + filepath.Join(marks, name) + "\nexec -a \"$0\" " + p + ".real \"$@\"\n"
		if err := os.WriteFile(p, []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, errs = run(filepath.Join(root, "cmd"), "XDG_CACHE_HOME="+cache)
	if strings.Contains(errs, "building") {
		t.Errorf("the second run built again:\n%s", errs)
	}
	for _, name := range []string{"agentconform-fake", "agentconform-adapter"} {
		if b, err := os.ReadFile(filepath.Join(marks, name)); err != nil || len(b) == 0 {
			t.Errorf("the second run did not start the cached %s: %v", name, err)
		}
	}
	fake, _ := os.ReadFile(filepath.Join(marks, "agentconform-fake"))
	if !strings.Contains(string(fake), "/codex\n") {
		t.Errorf("the cached fake was not started as codex:\n%s", fake)
	}

	// Outside a checkout: as installed, nothing built.
	other := t.TempDir()
	if _, errs := run(t.TempDir(), "XDG_CACHE_HOME="+other); strings.Contains(errs, "building") {
		t.Errorf("a run outside the checkout built the lean binaries:\n%s", errs)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("a run outside the checkout wrote to the cache: %v", entries)
	}

	// A build that fails: noted, and agentconform stands in.
	_, errs = run(root, "XDG_CACHE_HOME="+t.TempDir(), "GOFLAGS=-mod=vendor")
	if !strings.Contains(errs, "could not build the lean fake and adapter") || !strings.Contains(errs, "agentconform stands in for them") {
		t.Errorf("a failed build was not noted:\n%s", errs)
	}
}

// TestGoBuildLeanDeadline: a build that outlives its deadline is killed
// with its process group, and reported.
func TestGoBuildLeanDeadline(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	goTool := filepath.Join(dir, "go")
	// A go command that starts a child in its group and hangs.
	script := "#!/bin/sh\nsleep 300 &\necho $! > " + pidFile + "\nwait\n"
	if err := os.WriteFile(goTool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	err := goBuildLean(context.Background(), goTool, dir, t.TempDir(), 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), "did not finish within 2s") {
		t.Fatalf("err = %v", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Skipf("the stand-in go command had not started its child when it was killed: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The child was killed with the group: it is gone once reaped (its
	// parent, the shell, is gone too, so init reaps it).
	deadline := time.Now().Add(30 * time.Second)
	for {
		if syscall.Kill(pid, 0) != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the go command's child %d is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLeanDepsAreAgentconformDeps: the lean commands import nothing
// agentconform does not, and no file of the module is built only with or
// without cgo (they are built without, agentconform perhaps with), so
// agentconform's build ID, which leanKey names their binaries by, changes
// whenever theirs would (but for their own main packages, which leanKey
// reads).
func TestLeanDepsAreAgentconformDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .IgnoredGoFiles}} {{.}}{{end}}`, modulePath+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, name := range f[1:] {
			src, err := os.ReadFile(filepath.Join(f[0], name))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(src), "\n") {
				if strings.HasPrefix(l, "//go:build") && strings.Contains(l, "cgo") || l == `import "C"` {
					t.Errorf("%s/%s depends on cgo (%s): the lean binaries, built without, would not change with agentconform's build ID", f[0], name, l)
				}
			}
		}
	}
	list := func(pkg string) map[string]bool {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		m := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			m[p] = true
		}
		return m
	}
	deps := list(".")
	for _, name := range []string{"agentconform-fake", "agentconform-adapter"} {
		for p := range list("../" + name) {
			if !deps[p] && p != modulePath+"/cmd/"+name {
				t.Errorf("%s imports %s, which agentconform does not", name, p)
			}
		}
	}
}
