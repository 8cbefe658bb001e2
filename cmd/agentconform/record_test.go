//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/redact/redacttest"
)

// TestRecordRedactRuleFile records a CLI (a script that prints the corpus
// of fake credentials and a line with the user's own secrets, on stdout
// and on stderr) with --redact FILE: no credential of the corpus is left,
// the user's rules and the built-in ones both apply, the user's names are
// the placeholders' kinds, and a broken rule file is refused, naming its
// line, by record and by capture.
func TestRecordRedactRuleFile(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for _, c := range redacttest.Corpus() {
		lines = append(lines, c.Lines...)
	}
	lines = append(lines, `{"type":"assistant","message":{"content":[{"type":"text","text":"deploy with acme_live_0123456789abcdef0123456789abcdef"}]},"internal_pass":"zebra-moon-42"}`)
	stdoutFile := filepath.Join(dir, "stdout.jsonl")
	if err := os.WriteFile(stdoutFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(dir, "claude")
	if err := os.WriteFile(cli, []byte("#!/bin/sh\ncat '"+stdoutFile+"'\ncat '"+stdoutFile+"' >&2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(dir, "acme.rules")
	if err := os.WriteFile(rules, []byte("# Acme\nacme-token acme_live_[0-9a-f]{32}\nacme-password key:(?i)^internal_pass$\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "rec.jsonl")
	code, stdout, stderr := runCmd(t, "", "record", "--out", out, "--cli", "claude", "--cli-version", "1.0.0", "--redact", rules, "--", cli)
	if code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "acme_live_0123456789abcdef") {
		t.Errorf("the passthrough must be untouched")
	}
	rec, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range redacttest.Corpus() {
		if left := redacttest.Survivors(string(rec), c.Secrets); len(left) > 0 {
			t.Errorf("%s: %q is in the recording", c.Kind, left)
		}
	}
	for _, gone := range []string{"acme_live_0123456789abcdef", "zebra-moon-42"} {
		if strings.Contains(string(rec), gone) {
			t.Errorf("%q is in the recording", gone)
		}
	}
	for _, want := range []string{"<redacted:acme-token:1>", "<redacted:acme-password:1>", "<redacted:stripe-key:", "<redacted:private-key:"} {
		if !strings.Contains(string(rec), want) {
			t.Errorf("the recording lacks %s", want)
		}
	}

	bad := filepath.Join(dir, "bad.rules")
	if err := os.WriteFile(bad, []byte("fine x+\nacme-token acme_(\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, "", "record", "--out", filepath.Join(dir, "x.jsonl"), "--cli", "claude", "--redact", bad, "--", cli)
	if code != exitUsage || !strings.Contains(stderr, bad+":2: regexp:") {
		t.Errorf("record with a broken rule file: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCmd(t, "", "capture", "--redact", bad, "--scenario", "plain-text")
	if code != exitUsage || !strings.Contains(stderr, bad+":2: regexp:") {
		t.Errorf("capture with a broken rule file: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCmd(t, "", "record", "--help")
	if code != 0 || !strings.Contains(stderr, "--redact-literal") || !strings.Contains(stderr, "NAME key:KEYREGEXP") {
		t.Errorf("record --help: %s", stderr)
	}
}

// TestCaptureRedactsTheCorpus captures a stand-in for gemini that prints
// every line of the corpus of fake credentials on stdout and on stderr:
// none of them, and no part of a URL password, is in the transcript
// capture writes (the lines are no gemini events, so the capture may fail
// validation; the transcript is written before).
func TestCaptureRedactsTheCorpus(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for _, c := range redacttest.Corpus() {
		lines = append(lines, c.Lines...)
	}
	stdoutFile := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(stdoutFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(dir, "gemini")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 0.61.0; exit 0; fi\ncat '" + stdoutFile + "'\ncat '" + stdoutFile + "' >&2\n"
	if err := os.WriteFile(cli, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "captures")
	code, stdout, stderr := runCmd(t, "", "capture", "--cli", "gemini", "--gemini-path", cli, "--scenario", "plain-text", "-o", out, "--work-dir", t.TempDir())
	if code != exitOK && code != exitFindings {
		t.Fatalf("capture: exit %d\n%s\n%s", code, stdout, stderr)
	}
	rec, err := os.ReadFile(filepath.Join(out, "gemini", "0.61.0", "plain-text.jsonl"))
	if err != nil {
		t.Fatalf("no transcript: %v\n%s\n%s", err, stdout, stderr)
	}
	if n := strings.Count(string(rec), "\n"); n < 2*len(lines) {
		t.Fatalf("the transcript has %d lines for %d lines on stdout and stderr each:\n%s", n, len(lines), rec)
	}
	for _, c := range redacttest.Corpus() {
		if left := redacttest.Survivors(string(rec), c.Secrets); len(left) > 0 {
			t.Errorf("%s: %q is in the capture", c.Kind, left)
		}
	}
	if !strings.Contains(string(rec), "<redacted:url-password:") {
		t.Errorf("no URL password was redacted:\n%s", rec)
	}
}
