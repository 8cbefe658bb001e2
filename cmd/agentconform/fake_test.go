package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/conformance"
)

// TestFakeInstall installs the fakes into a directory, as links and as
// copies, and checks the usage errors.
func TestFakeInstall(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"install"}, {"--copy", "install"}} {
		dir := filepath.Join(t.TempDir(), "bin")
		var stdout, stderr bytes.Buffer
		if code := runFake(context.Background(), append(args, dir), nil, &stdout, &stderr); code != exitOK {
			t.Fatalf("%v: exit %d, stderr %s", args, code, stderr.String())
		}
		for _, name := range []string{"claude", "codex", "gemini"} {
			p := filepath.Join(dir, name)
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if args[0] == "--copy" {
				if fi.Mode()&os.ModeSymlink != 0 || fi.Mode()&0o111 == 0 {
					t.Errorf("%s: mode %v, want an executable copy", name, fi.Mode())
				}
				continue
			}
			if target, err := os.Readlink(p); err != nil || target != exe {
				t.Errorf("%s links to %q (%v), want %q", name, target, err, exe)
			}
		}
		// Installing again replaces the files.
		if code := runFake(context.Background(), append(args, dir), nil, &stdout, &stderr); code != exitOK {
			t.Errorf("%v again: exit %d, stderr %s", args, code, stderr.String())
		}
	}
	var stderr bytes.Buffer
	if code := runFake(context.Background(), []string{"uninstall", "x"}, nil, &bytes.Buffer{}, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "Usage: agentconform fake install") {
		t.Errorf("bad usage: exit %d, stderr %q", code, stderr.String())
	}
}

// TestReferenceAdaptersPreferLean checks that the default run starts the
// lean agentconform-adapter when it sits next to agentconform, and this
// executable's adapter command otherwise.
func TestReferenceAdaptersPreferLean(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "agentconform")
	args := func() string {
		a := referenceAdapters(self, conformance.DefaultStallAfter)[0]
		return strings.Join(a.Command(context.Background()).Args, " ")
	}
	if got := args(); !strings.Contains(got, self+"' adapter --profile unified") && !strings.Contains(got, self+" adapter --profile unified") {
		t.Errorf("without the lean adapter: %s", got)
	}
	lean := filepath.Join(dir, "agentconform-adapter")
	if err := os.WriteFile(lean, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := args(); !strings.Contains(got, lean) || strings.Contains(got, " adapter --profile") {
		t.Errorf("with the lean adapter: %s", got)
	}
}

// TestRunDefaultOnRealCLIs: with no --adapter, --cli fake,real runs the
// reference adapters on both, the real run named for the real CLIs (here
// none is found, so its cases SKIP with the reason).
func TestRunDefaultOnRealCLIs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "results.json")
	args := []string{"--cli", "fake,real", "--case", "codex/plain-text", "-q", "-o", out}
	for _, cli := range []string{"claude", "codex", "gemini"} {
		args = append(args, "--"+cli+"-path", filepath.Join(dir, "no-"+cli))
	}
	var stdout, stderr bytes.Buffer
	code := runRun(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"reference/unified", "reference/shim"} {
		for _, want := range []string{`"adapter": "` + name + `"`, `"adapter": "` + conformance.RealRunName(name) + `"`} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("no run %s in the results", want)
			}
		}
	}
	if !strings.Contains(stderr.String(), "no real codex") {
		t.Errorf("stderr does not say the real codex is missing:\n%s", stderr.String())
	}
}
