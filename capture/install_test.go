//go:build !windows

package capture

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// placeholderStub is what npm leaves in bin/claude.exe of
// @anthropic-ai/claude-code when its install script did not run (the
// text of 2.1.331's, 500 bytes).
const placeholderStub = `echo "Error: claude native binary not installed." >&2
echo "" >&2
echo "Either postinstall did not run (--ignore-scripts, some pnpm configs)" >&2
echo "or the platform-native optional dependency was not downloaded" >&2
echo "(--omit=optional)." >&2
echo "" >&2
echo "Run the postinstall manually (adjust path for local vs global install):" >&2
echo "  node node_modules/@anthropic-ai/claude-code/install.cjs" >&2
echo "" >&2
echo "Or reinstall without --ignore-scripts / --omit=optional." >&2
exit 1
`

// installScripts are stand-ins for the package's install.cjs: one that
// puts a native binary in place, one that cannot, one that hangs.
var installScripts = map[string]string{
	"works": `const fs = require('fs'), path = require('path')
const dst = path.join(__dirname, 'bin', 'claude.exe')
fs.unlinkSync(dst)
fs.writeFileSync(dst, '#!/bin/sh\necho "9.9.9 (Claude Code)"\n', { mode: 0o755 })
`,
	"fails": `console.error('the platform package @anthropic-ai/claude-code-linux-x64 is not installed')
process.exit(1)
`,
	"hangs": `require('fs').writeFileSync(require('path').join(__dirname, 'pid'), String(process.pid))
setInterval(() => {}, 1000)
`,
}

// fakeNPM is an npm that installs a Claude Code package as npm does with
// scripts off: "npm install --prefix DIR ... PKG@VERSION" writes
// DIR/node_modules/.bin/claude, a link to the placeholder, and the
// package's install.cjs (a copy of $FAKE_INSTALL_SCRIPT). Like npm, it
// takes a relative --prefix relative to its working directory.
const fakeNPM = `#!/bin/sh
[ "$1" = install ] || { echo "fake npm: $1 is not supported" >&2; exit 1; }
shift
prefix=
while [ $# -gt 0 ]; do
  case "$1" in
  --prefix) prefix=$2; shift ;;
  esac
  shift
done
pkg=$prefix/node_modules/@anthropic-ai/claude-code
mkdir -p "$pkg/bin" "$prefix/node_modules/.bin" || exit 1
cp "$FAKE_PLACEHOLDER" "$pkg/bin/claude.exe" && chmod 755 "$pkg/bin/claude.exe" || exit 1
cp "$FAKE_INSTALL_SCRIPT" "$pkg/install.cjs" || exit 1
ln -sf ../@anthropic-ai/claude-code/bin/claude.exe "$prefix/node_modules/.bin/claude"
`

// npmSetup writes the fake npm and its inputs, and a PATH with node (for
// the install script) and without any claude.
func npmSetup(t *testing.T, script string) (npm string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake npm is a shell script")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node: Claude Code's install script runs with node")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"npm": fakeNPM, "placeholder": placeholderStub, "install.cjs": installScripts[script]}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if name == "npm" {
			p = filepath.Join(bin, name)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(node, filepath.Join(bin, "node")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+"/usr/bin"+string(os.PathListSeparator)+"/bin")
	if p, err := exec.LookPath("claude"); err == nil {
		t.Skipf("a claude on the system PATH (%s) would be found first", p)
	}
	t.Setenv("FAKE_PLACEHOLDER", filepath.Join(dir, "placeholder"))
	t.Setenv("FAKE_INSTALL_SCRIPT", filepath.Join(dir, "install.cjs"))
	return filepath.Join(bin, "npm")
}

// TestInstallIntoARelativeCacheDir: --cache-dir given as a relative path
// is where the install goes, not a copy nested inside itself.
func TestInstallIntoARelativeCacheDir(t *testing.T) {
	npm := npmSetup(t, "works")
	t.Chdir(t.TempDir())
	b, err := Locate(context.Background(), "claude", LocateOptions{Install: true, Version: "9.9.9", CacheDir: "cache", NPM: npm})
	if err != nil {
		t.Fatalf("Locate with a relative cache directory: %v", err)
	}
	wd, _ := os.Getwd()
	want := filepath.Join(wd, "cache", "claude", "9.9.9", "node_modules", ".bin", "claude")
	if b.Path != want || b.Version != "9.9.9" || b.Source != "npm" {
		t.Errorf("Locate: %+v, want %s", b, want)
	}
	if _, err := os.Stat(filepath.Join("cache", "claude", "9.9.9", "cache")); err == nil {
		t.Error("npm installed into a nested copy of the cache directory")
	}
}

// TestInstallRunsTheNativeInstallScript: an npm install with scripts off
// leaves Claude Code's placeholder; capture runs the package's install
// script itself, at once and when it reuses such an install.
func TestInstallRunsTheNativeInstallScript(t *testing.T) {
	npm := npmSetup(t, "works")
	cache := t.TempDir()
	o := LocateOptions{Install: true, Version: "9.9.9", CacheDir: cache, NPM: npm}
	b, err := Locate(context.Background(), "claude", o)
	if err != nil || b.Version != "9.9.9" {
		t.Fatalf("Locate: %+v %v", b, err)
	}
	if _, ph := nativePlaceholder(b.Path); ph {
		t.Error("the placeholder is still there")
	}
	// An earlier install left with its placeholder is fixed when reused.
	exe := filepath.Join(cache, "claude", "9.9.9", "node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte(placeholderStub), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := Locate(context.Background(), "claude", o); err != nil || b.Version != "9.9.9" {
		t.Errorf("Locate of the reused install: %+v %v", b, err)
	}
}

// TestInstallSaysHowToFixThePlaceholder: when the install script cannot
// help, or the install is the user's, the error gives the command.
func TestInstallSaysHowToFixThePlaceholder(t *testing.T) {
	npm := npmSetup(t, "fails")
	cache := t.TempDir()
	_, err := Locate(context.Background(), "claude", LocateOptions{Install: true, Version: "9.9.9", CacheDir: cache, NPM: npm})
	script := filepath.Join(cache, "claude", "9.9.9", "node_modules", "@anthropic-ai", "claude-code", "install.cjs")
	if err == nil || !strings.Contains(err.Error(), "node "+shellQuote(script)) || !strings.Contains(err.Error(), "claude-code-linux-x64 is not installed") {
		t.Errorf("a failing install script: %v", err)
	}
	// The user's own install (given with --claude-path) is left alone.
	link := filepath.Join(cache, "claude", "9.9.9", "node_modules", ".bin", "claude")
	_, err = Locate(context.Background(), "claude", LocateOptions{Path: link})
	if err == nil || !strings.Contains(err.Error(), "run its install script (node "+shellQuote(script)+")") {
		t.Errorf("a placeholder given with --claude-path: %v", err)
	}
	if _, ph := nativePlaceholder(link); !ph {
		t.Error("the user's install was changed")
	}
}

// TestInstallScriptDeadline: an install script that hangs is killed, its
// process group with it, when the deadline passes.
func TestInstallScriptDeadline(t *testing.T) {
	npm := npmSetup(t, "hangs")
	cache := t.TempDir()
	_, err := Locate(context.Background(), "claude", LocateOptions{Install: true, Version: "9.9.9", CacheDir: cache, NPM: npm, Timeout: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("a hanging install script: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(cache, "claude", "9.9.9", "node_modules", "@anthropic-ai", "claude-code", "pid"))
	if err != nil {
		t.Fatalf("the script never ran: %v", err)
	}
	pid, _ := strconv.Atoi(string(b))
	if pid > 0 && syscall.Kill(pid, 0) == nil {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the install script (pid %d) outlived its deadline", pid)
	}
}
