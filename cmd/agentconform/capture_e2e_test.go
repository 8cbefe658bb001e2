package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/capture"
)

// TestCaptureAsAUser runs capture, validate and drift as a user would, on
// the newest release of each real CLI from npm: from a git repository
// (Claude Code names its memory directory after the repository's root),
// with a relative cache directory and a relative work directory deep
// enough that Claude's socket path under the sandbox would be too long.
// The captures must validate, drift must compare them (with the
// permission capture against the fixture's allow branch), and no path of
// the machine may be in the captures or the reports: not the temporary
// directory, the git root, HOME, nor Claude's fallback socket directory
// (which must not be left behind either).
//
// Gated like TestCaptureE2E: it runs when AGENTCONFORM_CAPTURE_E2E=1 or
// CI=true (and then fails rather than skips when npm, node or git is
// missing), and AGENTCONFORM_CAPTURE_E2E=done skips it. It needs the npm
// registry (or an npm cache holding the newest releases). It captures
// plain-text, single-tool and permission-allow (30 to 60 s with the
// installs on a shared 2-core machine); AGENTCONFORM_CAPTURE_E2E_SCENARIOS
// names others, e.g.
// "plain-text,permission-allow,interrupt" to compare what follows a
// signal too (about 45 s more: each interrupt is captured twice).
func TestCaptureAsAUser(t *testing.T) {
	mode := os.Getenv("AGENTCONFORM_CAPTURE_E2E")
	switch {
	case mode == "done":
		t.Skip("AGENTCONFORM_CAPTURE_E2E=done: already run (by .ci/run)")
	case mode != "1" && os.Getenv("CI") != "true":
		t.Skip("set AGENTCONFORM_CAPTURE_E2E=1 (or CI=true) to install the real CLIs from npm and capture them as a user would")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the CLIs' sockets and signals are POSIX here")
	}
	for _, tool := range []string{"npm", "node", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("this test needs %s: %v", tool, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	top := t.TempDir()
	repo := filepath.Join(top, "a-checkout-whose-path-is-long-enough-for-claudes-socket", "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, "git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	t.Chdir(repo)
	socks := capture.FallbackSocketDir()
	_, statErr := os.Stat(socks)
	socksBefore := statErr == nil

	step := func(args ...string) (int, string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		start := time.Now()
		code := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
		t.Logf("agentconform %s: exit %d in %s", strings.Join(args, " "), code, time.Since(start).Round(100*time.Millisecond))
		return code, stdout.String(), stderr.String()
	}
	scenarios := os.Getenv("AGENTCONFORM_CAPTURE_E2E_SCENARIOS")
	if scenarios == "" {
		scenarios = "plain-text,single-tool,permission-allow"
	}
	t0 := time.Now()
	code, out, errs := step("capture", "--install-all", "--cache-dir", ".agentconform/npm", "--work-dir", ".agentconform/work",
		"-o", "captures", "--scenario", scenarios)
	if code != exitOK {
		t.Fatalf("capture: exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("capture:\n%s\n%s", errs, out)
	for _, cli := range capture.CLIs {
		dirs, _ := filepath.Glob(filepath.Join(".agentconform", "npm", cli, "*", "node_modules", ".bin", cli))
		if len(dirs) != 1 {
			t.Errorf("%s is not installed in the cache directory given: %v", cli, dirs)
		}
	}
	if nested, _ := filepath.Glob(filepath.Join(".agentconform", "npm", "*", "*", ".agentconform")); len(nested) > 0 {
		t.Errorf("npm installed into a nested copy of the cache directory: %v", nested)
	}
	if entries, _ := os.ReadDir(filepath.Join(".agentconform", "work")); len(entries) != 0 {
		t.Errorf("sandboxes left behind: %v", entries)
	}
	if _, err := os.Stat(socks); err == nil && !socksBefore {
		t.Errorf("Claude's fallback socket directory %s was left behind", socks)
	}

	vcode, vout, verrs := step("validate", "captures")
	if vcode != exitOK || !strings.Contains(vout, "0 violations") {
		t.Errorf("validate: exit %d\n%s\n%s", vcode, vout, verrs)
	}
	dcode, dout, derrs := step("drift", "--captures", "captures")
	if dcode != exitOK && dcode != exitFindings {
		t.Errorf("drift: exit %d\n%s\n%s", dcode, dout, derrs)
	}
	for _, want := range []string{"claude/permission-allow", "codex/single-tool", "gemini/single-tool", "captures drifted from embedded fixtures"} {
		if !strings.Contains(dout, want) {
			t.Errorf("the drift report lacks %s:\n%s", want, dout)
		}
	}
	for _, bad := range []string{"vanished event kind system/permission_denied", "changed path of"} {
		if strings.Contains(dout, bad) {
			t.Errorf("drift compared unlike things (%s):\n%s", bad, dout)
		}
	}
	var heads []string
	for _, l := range strings.Split(dout, "\n") {
		if l != "" && !strings.HasPrefix(l, " ") {
			heads = append(heads, l)
		}
	}
	t.Logf("drift:\n%s", strings.Join(heads, "\n"))

	// No path of this machine in what a user would share.
	home, _ := os.UserHomeDir()
	var needles []*regexp.Regexp
	for _, p := range []string{top, repo, home, socks, os.TempDir()} {
		if p == "" || p == "/" || p == "/tmp" {
			continue
		}
		forms := []string{p}
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			forms = append(forms, real)
		}
		for _, f := range forms {
			needles = append(needles, regexp.MustCompile(regexp.QuoteMeta(f)+`(?:[/"\\\s:]|$)`))
			if strings.Count(strings.Trim(f, "/"), "/") >= 1 {
				needles = append(needles, regexp.MustCompile(regexp.QuoteMeta(dashed(f))+`(?:[^A-Za-z0-9]|$)`))
			}
		}
	}
	texts := map[string]string{"validate output": vout + verrs, "drift output": dout + derrs}
	files := 0
	err := filepath.WalkDir("captures", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		texts[path] = string(b)
		files++
		return err
	})
	if err != nil || files < 7 {
		t.Fatalf("captures: %d files, %v", files, err)
	}
	for name, text := range texts {
		for _, re := range needles {
			if loc := re.FindStringIndex(text); loc != nil {
				from, to := max(0, loc[0]-80), min(len(text), loc[1]+40)
				t.Errorf("%s holds a path of this machine (%s): ...%s...", name, re, text[from:to])
			}
		}
	}
	t.Logf("closing note: capture --install-all (claude, codex, gemini; %s), validate and drift as a user, from a relative cache directory inside a git repository, in %s; %d capture files and both reports hold no path of this machine",
		scenarios, time.Since(t0).Round(100*time.Millisecond), files)
}

// dashed is Claude Code's dash form of a path: every byte that is not an
// ASCII letter or digit becomes '-'.
func dashed(p string) string {
	b := []byte(p)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}
