package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion pins `agentconform version` and `--version`.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{arg}, nil, &out, &errb); code != exitOK {
			t.Fatalf("%s: exit %d: %s", arg, code, errb.String())
		}
		if !strings.HasPrefix(out.String(), "agentconform ") {
			t.Errorf("%s printed %q", arg, out.String())
		}
	}
}

// TestVersionOf: a build of the fetched module reports its module
// version; a build in a checkout ("(devel)", or stamped from its VCS with
// a version of its own) reports the toolkit's version, the stamp and the
// commit, as before.
func TestVersionOf(t *testing.T) {
	mod := func(v string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: modulePath, Version: v}, Settings: settings}
	}
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{mod("v0.2.0", debug.BuildSetting{Key: "CGO_ENABLED", Value: "0"}), "agentconform v0.2.0 go1.26.8"},
		{mod("v0.0.0-20260101000000-0123456789ab"), "agentconform v0.0.0-20260101000000-0123456789ab go1.26.8"},
		{mod("(devel)"), "agentconform 0.1.0-dev go1.26.8"},
		{mod(""), "agentconform 0.1.0-dev go1.26.8"},
		{mod("v0.2.0", vcs...), "agentconform 0.1.0-dev (module v0.2.0) (commit 0123456789ab) go1.26.8"},
		{mod("v0.2.1-0.20260101000000-0123456789ab+dirty", vcs...), "agentconform 0.1.0-dev (module v0.2.1-0.20260101000000-0123456789ab+dirty) (commit 0123456789ab) go1.26.8"},
	} {
		if got := versionOf(c.bi, "0.1.0-dev"); got != c.want {
			t.Errorf("version of %s %v: %q, want %q", c.bi.Main.Version, c.bi.Settings, got, c.want)
		}
	}
}

// TestVersionInstalledFromAModuleProxy installs agentconform as a user
// does, go install …/cmd/agentconform@VERSION, from a module proxy (a
// directory) serving this checkout at a test version: `agentconform
// version` reports that version, and the results of a run carry it.
func TestVersionInstalledFromAModuleProxy(t *testing.T) {
	env := moduleProxy(t)
	bin := t.TempDir()
	install := exec.Command("go", "install", modulePath+"/cmd/agentconform@"+proxyVersion)
	install.Dir = t.TempDir()
	install.Env = append(append(os.Environ(), env...), "GOBIN="+bin, "CGO_ENABLED=0")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	exe := filepath.Join(bin, "agentconform")
	out, err := exec.Command(exe, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("agentconform version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "agentconform "+proxyVersion+" go") {
		t.Errorf("agentconform version printed %q, want agentconform %s and the Go version", out, proxyVersion)
	}
	res := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(exe, "run", "--case", "codex/plain-text", "-q", "-o", res)
	cmd.Dir = t.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	data, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"version": "` + strings.TrimPrefix(proxyVersion, "v") + `"`; !strings.Contains(string(data), want) {
		t.Errorf("the results do not carry %s:\n%.600s", want, data)
	}
}
