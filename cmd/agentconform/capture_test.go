package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
)

func runCaptureCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// fakeGemini writes a stand-in for gemini that prints the stdout of the
// gemini/plain-text fixture, with extra appended to its result line.
func fakeGemini(t *testing.T, extra string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake CLI is a shell script")
	}
	fx, err := fixtures.Load("gemini/plain-text")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 0.61.0; exit 0; fi\ncat <<'EOF'\n")
	for _, s := range fx.Steps {
		if s.Op != transcript.OpOut {
			continue
		}
		line := s.Text
		if strings.Contains(line, `"type":"result"`) && extra != "" {
			line = strings.TrimSuffix(line, "}") + "," + extra + "}"
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("EOF\n")
	p := filepath.Join(t.TempDir(), "gemini")
	if err := os.WriteFile(p, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCaptureList(t *testing.T) {
	code, out, _ := runCaptureCmd(t, "capture", "--list")
	if code != exitOK || !strings.Contains(out, "* interrupt") || !strings.Contains(out, "permission-deny") {
		t.Errorf("capture --list: %d\n%s", code, out)
	}
	if code, _, errs := runCaptureCmd(t, "capture", "--scenario", "nope"); code != exitUsage || !strings.Contains(errs, "nope") {
		t.Errorf("unknown scenario: %d %s", code, errs)
	}
	if code, _, errs := runCaptureCmd(t, "capture", "--cli", "codex", "--codex-path", filepath.Join(t.TempDir(), "missing")); code != exitUsage {
		t.Errorf("missing CLI: %d %s", code, errs)
	}
}

func TestCaptureAndDriftWithAFakeCLI(t *testing.T) {
	dir := t.TempDir()
	work := t.TempDir()
	code, out, errs := runCaptureCmd(t, "capture", "--cli", "gemini", "--gemini-path", fakeGemini(t, ""), "--scenario", "plain-text",
		"-o", dir, "--work-dir", work)
	if code != exitOK {
		t.Fatalf("capture: %d\n%s\n%s", code, out, errs)
	}
	file := filepath.Join(dir, "gemini", "0.61.0", "plain-text.jsonl")
	if _, err := os.Stat(file); err != nil || !strings.Contains(out, "gemini  0.61.0") {
		t.Fatalf("no transcript (%v):\n%s", err, out)
	}

	// Same shape as the fixture: no drift.
	code, out, errs = runCaptureCmd(t, "drift", "--captures", dir, "--cli", "gemini")
	if code != exitOK || !strings.Contains(out, "gemini/plain-text 0.61.0 vs fixture gemini/plain-text") || !strings.Contains(out, "no drift") {
		t.Errorf("drift of an unchanged stream: %d\n%s\n%s", code, out, errs)
	}

	// A new field in result: drift against the fixture and the schema.
	dir2 := t.TempDir()
	if code, out, errs := runCaptureCmd(t, "capture", "--cli", "gemini", "--gemini-path", fakeGemini(t, `"retries":0`), "--scenario", "plain-text",
		"-o", dir2, "--work-dir", work); code != exitOK {
		t.Fatalf("capture: %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = runCaptureCmd(t, "drift", "--captures", dir2)
	if code != exitFindings || !strings.Contains(out, "+ new field /retries in result/success") || !strings.Contains(out, `unknown-field "retries"`) {
		t.Errorf("drift of a changed stream: %d\n%s", code, out)
	}
	// Against a directory baseline holding the first capture.
	code, out, _ = runCaptureCmd(t, "drift", "--captures", dir2, "--baseline", dir, "--json")
	if code != exitFindings || !strings.Contains(out, `"path": "/retries"`) {
		t.Errorf("drift --baseline --json: %d\n%s", code, out)
	}
	if code, _, errs := runCaptureCmd(t, "drift", "--captures", dir2, "--update-fixtures"); code != exitUsage || !strings.Contains(errs, "--accept") {
		t.Errorf("--update-fixtures without --accept: %d %s", code, errs)
	}
}

// TestDriftFollowsLinkedVersions: version directories that are symbolic
// links count, in --captures and in --baseline.
func TestDriftFollowsLinkedVersions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	real, err := filepath.Abs(filepath.Join("..", "..", "testdata", "captures", "codex", "0.169.0"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "codex", "0.169.0")); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCaptureCmd(t, "drift", "--captures", dir, "--cli", "codex", "--scenario", "plain-text")
	if code != exitOK || !strings.Contains(out, "codex/plain-text 0.169.0 vs fixture codex/plain-text") {
		t.Errorf("drift --captures with a linked version: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCaptureCmd(t, "drift", "--captures", dir, "--baseline", dir, "--cli", "codex", "--scenario", "plain-text")
	if code != exitOK || !strings.Contains(out, "vs "+filepath.Join(dir, "codex", "0.169.0", "plain-text.jsonl")) {
		t.Errorf("drift --baseline with a linked version: %d\n%s\n%s", code, out, errs)
	}
}
