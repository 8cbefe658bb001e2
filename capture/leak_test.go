//go:build !windows

package capture

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/transcript"
)

// fakeClaudePaths stands in for claude -p where it reports paths of the
// machine, as Claude Code 2.1.331 does in system/init: memory_paths names
// the project directory after the root of the git repository holding the
// working directory (any ancestor with a .git), original_cwd is the
// working directory, and the messaging socket is
// $XDG_RUNTIME_DIR/cc-socks/<pid>.sock (else under $TMPDIR), or
// /tmp/cc-socks-<uid>/<pid>.sock when that is longer than 103 bytes. It
// appends the runtime directory it was given to the file RUNLOG.
const fakeClaudePaths = `#!/bin/sh
echo "$XDG_RUNTIME_DIR" >> RUNLOG
d=$PWD; root=
while :; do
  if [ -e "$d/.git" ]; then root=$d; break; fi
  [ "$d" = / ] && break
  d=$(dirname "$d")
done
[ -n "$root" ] || root=$PWD
slug=$(printf %s "$root" | sed 's/[^A-Za-z0-9]/-/g')
sock=${XDG_RUNTIME_DIR:-$TMPDIR}/cc-socks/$$.sock
if [ ${#sock} -gt 103 ]; then sock=/tmp/cc-socks-$(id -u)/$$.sock; fi
echo "{\"type\":\"system\",\"subtype\":\"init\",\"cwd\":\"$PWD\",\"session_id\":\"s-1\",\"memory_paths\":{\"auto\":\"$CLAUDE_CONFIG_DIR/projects/$slug/memory/\"},\"original_cwd\":\"$PWD\",\"messaging_socket_path\":\"$sock\"}"
echo '{"type":"result","subtype":"success","is_error":false,"result":"Hello!","session_id":"s-1"}'
`

// TestCaptureLeavesNoMachinePath runs a work directory inside a git
// repository (given relative, and long enough that Claude's socket would
// leave the sandbox) and finds none of the machine's paths in the
// transcript, and nothing left behind.
func TestCaptureLeavesNoMachinePath(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "my-checkout")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	runlog := filepath.Join(top, "runtime-dirs")
	bin := fakeBinary(t, "claude", strings.ReplaceAll(fakeClaudePaths, "RUNLOG", runlog))
	long := "a-work-directory-with-a-name-long-enough-for-the-socket-path-to-pass-103-bytes"
	for _, tc := range []struct{ name, work string }{
		{"in a git repository", filepath.Join(repo, "work")},
		{"relative", "rel-work"},
		{"long", filepath.Join(repo, long)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(repo)
			os.Remove(runlog)
			res, err := Capture(context.Background(), bin, scenario(t, "plain-text"), Options{WorkDir: tc.work, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := transcript.Write(&buf, res.Transcript); err != nil {
				t.Fatal(err)
			}
			text := buf.String()
			for _, leak := range []string{top, slugOf(top), "/tmp/cc-socks-", long} {
				if strings.Contains(text, leak) {
					t.Errorf("the transcript holds %s:\n%s", leak, text)
				}
			}
			for _, want := range []string{`\"original_cwd\":\"/home/user/project\"`, `\"messaging_socket_path\":\"/home/user/tmp/cc-socks/`,
				`\"auto\":\"/home/user/.claude/projects/<redacted:path:`} {
				if !strings.Contains(text, want) {
					t.Errorf("the transcript lacks %s:\n%s", want, text)
				}
			}
			b, err := os.ReadFile(runlog)
			if err != nil {
				t.Fatal(err)
			}
			if run := strings.TrimSpace(string(b)); run != "" {
				if _, err := os.Stat(run); err == nil {
					t.Errorf("the runtime directory %s is left behind", run)
				}
			} else if tc.name == "long" {
				t.Error("a long work directory gave Claude no short runtime directory")
			}
			work := tc.work
			if !filepath.IsAbs(work) {
				work = filepath.Join(repo, work)
			}
			if entries, _ := os.ReadDir(work); len(entries) != 0 {
				t.Errorf("sandboxes left behind in %s: %v", work, entries)
			}
		})
	}
}

// slugOf is Claude Code's dash form of a path.
func slugOf(p string) string {
	b := []byte(p)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// TestFallbackSocketDirCleanup: the fallback socket directory is removed
// after a run only when the run created it and left it empty.
func TestFallbackSocketDirCleanup(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cc-socks-1000")
	done := removeFallbackSocketDir(dir, Options{})
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	done()
	if _, err := os.Stat(dir); err == nil {
		t.Error("the directory the run created is left behind")
	}
	// One that existed before is someone else's.
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	removeFallbackSocketDir(dir, Options{})()
	if _, err := os.Stat(dir); err != nil {
		t.Error("a directory that existed before the run was removed")
	}
	// One that holds a socket of another process stays.
	os.Remove(dir)
	done = removeFallbackSocketDir(dir, Options{})
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "99.sock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	done()
	if _, err := os.Stat(filepath.Join(dir, "99.sock")); err != nil {
		t.Error("another process's socket was removed")
	}
}
