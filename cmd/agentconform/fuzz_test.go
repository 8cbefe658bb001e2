package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFuzzReplay replays the committed crashers: each is reported as
// FIXED, FAILED or ERROR, and an open issue makes the exit status 1.
func TestFuzzReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "fuzz", "testdata", "crashers", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Skip("no committed crashers")
	}
	var stdout, stderr bytes.Buffer
	code := runFuzz(context.Background(), append([]string{"replay"}, files...), nil, &stdout, &stderr)
	out := stdout.String()
	for _, f := range files {
		if !strings.Contains(out, f) {
			t.Errorf("no verdict for %s:\n%s", f, out)
		}
	}
	if !strings.Contains(out, "crashers: ") || (code != exitOK && code != exitFindings) {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, stderr.String())
	}
	if strings.Contains(out, "FAILED") != (code == exitFindings) {
		t.Errorf("exit %d does not match the verdicts:\n%s", code, out)
	}
	// A file that is no crasher is an ERROR (exit 2).
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{}\n"), 0o644)
	stdout.Reset()
	if code := runFuzz(context.Background(), []string{"replay", bad}, nil, &stdout, &stderr); code != exitUsage || !strings.Contains(stdout.String(), "ERROR") {
		t.Errorf("a bad crasher: exit %d, %s", code, stdout.String())
	}
}

// TestFuzzRandomEngine runs the built-in engine briefly on a parser
// target, and checks the usage errors.
func TestFuzzRandomEngine(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runFuzz(context.Background(), []string{"--engine", "random", "--target", "transcript", "--time", "1s", "--jobs", "1", "--seed", "1", "--crashers", t.TempDir()}, nil, &stdout, &stderr)
	if code != exitOK || !strings.Contains(stdout.String(), "executions in") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
	for _, args := range [][]string{
		{"--target", "nonsense"},
		{"--target", "external"},
		{"--target", "shim", "--adapter", "x"},
		{"--engine", "warp"},
		{"--agents", "copilot"},
		{"stray"},
		{"--profile", "acp"},
		{"--profile", "mcp", "--adapter", "x"},
		{"--profile", "acp", "--adapter", "x", "--agents", "codex-app-server"},
	} {
		stderr.Reset()
		if code := runFuzz(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %s)", args, code, exitUsage, stderr.String())
		}
	}
}

// TestFuzzRandomEngineJSONRPC runs the built-in engine briefly on the
// JSON-RPC parser targets.
func TestFuzzRandomEngineJSONRPC(t *testing.T) {
	for _, target := range []string{"rpc-message", "acp", "app-server"} {
		var stdout, stderr bytes.Buffer
		code := runFuzz(context.Background(), []string{"--engine", "random", "--target", target, "--time", "1s", "--jobs", "1", "--seed", "1", "--crashers", t.TempDir()}, nil, &stdout, &stderr)
		if code != exitOK || !strings.Contains(stdout.String(), "executions in") {
			t.Errorf("%s: exit %d\nstdout %s\nstderr %s", target, code, stdout.String(), stderr.String())
		}
	}
}

// TestFuzzSeeds exports the OSS-Fuzz seed corpora.
func TestFuzzSeeds(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := runFuzz(context.Background(), []string{"seeds", "--out", out}, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "fuzz_targets_FuzzReferenceShim_seed_corpus.zip")); err != nil {
		t.Errorf("%v\n%s", err, stdout.String())
	}
}
