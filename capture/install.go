package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Binary is an installed CLI found or installed for a capture.
type Binary struct {
	// CLI is "claude", "codex" or "gemini".
	CLI string
	// Path is the executable (a launcher script or a native binary).
	Path string
	// Version is what "<Path> --version" printed, reduced to the number.
	Version string
	// Source says where it came from: "flag", "PATH", "cache" (an earlier
	// npm install in the cache directory) or "npm".
	Source string
	// InstallTime is how long npm took, when Source is "npm".
	InstallTime time.Duration
}

// LocateOptions say where to look for a CLI.
type LocateOptions struct {
	// Path is the executable given on the command line; it wins.
	Path string
	// Install installs the CLI from npm into CacheDir when it is not on
	// PATH (or always, with ForceInstall).
	Install, ForceInstall bool
	// Version is the npm version or tag to install ("" means "latest").
	Version string
	// CacheDir is where npm installs go; "" means DefaultCacheDir().
	CacheDir string
	// NPM is the npm executable; "" means "npm" on PATH.
	NPM string
	// Timeout bounds npm (and the native binary's install script); 0
	// means 10 minutes.
	Timeout time.Duration
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
}

// DefaultCacheDir is where npm installs of the CLIs go:
// os.UserCacheDir()/agentconform/npm.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "agentconform", "npm")
}

// Locate finds a CLI's executable (the path given, then PATH, then an npm
// install into the cache directory when allowed) and its version.
func Locate(ctx context.Context, cli string, o LocateOptions) (*Binary, error) {
	if !knownCLI(cli) {
		return nil, fmt.Errorf("capture: unknown CLI %q (want claude, codex or gemini)", cli)
	}
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	b := &Binary{CLI: cli}
	switch {
	case o.Path != "":
		p, err := exec.LookPath(o.Path)
		if err != nil {
			return nil, fmt.Errorf("capture: %s: %w", cli, err)
		}
		b.Path, b.Source = p, "flag"
	case !o.ForceInstall:
		if p, err := exec.LookPath(cli); err == nil {
			b.Path, b.Source = p, "PATH"
		}
	}
	if b.Path == "" && !o.ForceInstall && (o.Version == "" || o.Version == "latest") {
		if p, ok := newestCached(o.CacheDir, cli); ok {
			b.Path, b.Source = p, "cache"
		}
	}
	if b.Path == "" {
		if !o.Install && !o.ForceInstall {
			return nil, fmt.Errorf("capture: %s is not on PATH; pass --%s-path or --install to install %s from npm", cli, cli, Packages[cli])
		}
		start := time.Now()
		p, err := npmInstall(ctx, cli, o, logf)
		if err != nil {
			return nil, err
		}
		b.Path, b.Source, b.InstallTime = p, "npm", time.Since(start)
	}
	abs, err := filepath.Abs(b.Path)
	if err == nil {
		b.Path = abs
	}
	if cli == "claude" {
		if err := ensureNative(ctx, b, o, logf); err != nil {
			return nil, err
		}
	}
	v, err := probeVersion(ctx, b.Path)
	if err != nil {
		return nil, fmt.Errorf("capture: %s --version: %w", b.Path, err)
	}
	b.Version = v
	return b, nil
}

// npmInstall installs the CLI's package into CacheDir/<cli>/<version> and
// returns its executable. A complete earlier install of the same version
// is reused ("latest" is resolved with npm view first).
func npmInstall(ctx context.Context, cli string, o LocateOptions, logf func(string, ...any)) (string, error) {
	npm := o.NPM
	if npm == "" {
		npm = "npm"
	}
	npmPath, err := exec.LookPath(npm)
	if err != nil {
		return "", fmt.Errorf("capture: installing %s needs npm: %w", cli, err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pkg := Packages[cli]
	want := o.Version
	if want == "" {
		want = "latest"
	}
	version := want
	if !semverRE.MatchString(want) {
		out, err := runQuiet(ctx, npmPath, nil, "", "view", pkg+"@"+want, "version")
		if err != nil {
			return "", fmt.Errorf("capture: npm view %s@%s: %w", pkg, want, err)
		}
		lines := strings.Fields(strings.TrimSpace(out))
		if len(lines) == 0 {
			return "", fmt.Errorf("capture: npm view %s@%s printed no version", pkg, want)
		}
		version = strings.Trim(lines[len(lines)-1], `'"`)
	}
	cache := o.CacheDir
	if cache == "" {
		cache = DefaultCacheDir()
	}
	// npm runs in the install directory with --prefix: a relative cache
	// directory would be taken relative to that directory again.
	cache, err = filepath.Abs(cache)
	if err != nil {
		return "", fmt.Errorf("capture: the cache directory %s: %w", o.CacheDir, err)
	}
	dir := filepath.Join(cache, cli, version)
	bin := filepath.Join(dir, "node_modules", ".bin", cli)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil && !o.ForceInstall {
		if _, err := os.Stat(bin); err == nil {
			logf("%s %s: reusing the npm install in %s", cli, version, dir)
			return bin, nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("capture: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("capture: %w", err)
	}
	logf("%s: npm install %s@%s into %s", cli, pkg, version, dir)
	// Optional dependencies stay: they carry the native binaries.
	if out, err := runQuiet(ctx, npmPath, nil, dir, "install", "--prefix", dir, "--no-audit", "--no-fund",
		"--no-save", "--loglevel=error", pkg+"@"+version); err != nil {
		return "", fmt.Errorf("capture: npm install %s@%s: %w\n%s", pkg, version, err, lastLines(out, 20))
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("capture: npm installed %s@%s but %s is missing", pkg, version, bin)
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), []byte(version+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("capture: %w", err)
	}
	return bin, nil
}

var (
	semverRE  = regexp.MustCompile(`^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$`)
	versionRE = regexp.MustCompile(`\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?`)
)

// probeVersion runs "<path> --version" in a throwaway home, with a
// deadline, and returns the version number it prints.
func probeVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	home, err := os.MkdirTemp("", "agentconform-version-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home, "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1",
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "CODEX_HOME=" + home,
		"GEMINI_CLI_NO_RELAUNCH=true"}
	out, err := runQuiet(ctx, path, env, home, "--version")
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, lastLines(out, 5))
	}
	for _, line := range strings.Split(out, "\n") {
		if v := versionRE.FindString(line); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("no version number in %q", lastLines(out, 3))
}

// runQuiet runs a command in its own process group with the context's
// deadline (the whole group is killed when it passes) and returns its
// combined output.
func runQuiet(ctx context.Context, path string, env []string, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	setGroup(cmd)
	cmd.Cancel = func() error { killGroup(cmd); return nil }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	killGroup(cmd) // whatever it left behind
	if ctx.Err() != nil && err != nil {
		err = errors.Join(err, ctx.Err())
	}
	return out.String(), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// The placeholder npm leaves where Claude Code's native binary goes when
// the package's install script did not run (npm --ignore-scripts, some
// pnpm configurations) or the platform's optional package is missing: a
// shell script of about 500 bytes that prints "claude native binary not
// installed" and exits 1.
const (
	nativePlaceholderMax  = 4096
	nativePlaceholderText = "native binary not installed"
	// nativeInstallScript is the package's install script (its
	// postinstall), relative to the package directory: it copies the
	// platform's binary over the placeholder.
	nativeInstallScript = "install.cjs"
)

// nativePlaceholder reports whether the executable path leads to Claude
// Code's placeholder, and the package directory holding it.
func nativePlaceholder(path string) (pkgDir string, ok bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() || st.Size() > nativePlaceholderMax {
		return "", false
	}
	b, err := os.ReadFile(real)
	if err != nil || !strings.Contains(string(b), nativePlaceholderText) {
		return "", false
	}
	return filepath.Dir(filepath.Dir(real)), true
}

// ensureNative makes sure a Claude Code install has its native binary. An
// install of ours (Source "npm", in the cache directory) whose install
// script did not run gets it run now: "node install.cjs" in the package
// directory, with a deadline, its whole process group killed when it
// passes; then the binary is checked again. Any other install is the
// user's, left as it is: the error says the command that fixes it.
func ensureNative(ctx context.Context, b *Binary, o LocateOptions, logf func(string, ...any)) error {
	pkg, ok := nativePlaceholder(b.Path)
	if !ok {
		return nil
	}
	script := filepath.Join(pkg, nativeInstallScript)
	fix := fmt.Sprintf("run its install script (node %s), or reinstall it without --ignore-scripts and --omit=optional", shellQuote(script))
	if b.Source != "npm" {
		return fmt.Errorf("capture: %s is npm's placeholder for Claude Code's native binary: the package's install script did not run. To fix it, %s; or pass --install-all to install a copy into the cache directory", b.Path, fix)
	}
	if _, err := os.Stat(script); err != nil {
		return fmt.Errorf("capture: %s is npm's placeholder for Claude Code's native binary, and the package has no %s: reinstall it without --ignore-scripts and --omit=optional (%w)", b.Path, nativeInstallScript, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("capture: %s is npm's placeholder for Claude Code's native binary; running its install script needs node (%w). To fix it, %s", b.Path, err, fix)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	logf("claude: npm left a placeholder for the native binary (install scripts off?); running %s", script)
	out, err := runQuiet(ctx, node, nil, pkg, script)
	if err != nil {
		return fmt.Errorf("capture: the install script of Claude Code's native binary failed: %w\n%s\nTo fix it, %s", err, lastLines(out, 20), fix)
	}
	if _, still := nativePlaceholder(b.Path); still {
		return fmt.Errorf("capture: the install script of Claude Code's native binary ran but left the placeholder (is the platform's optional package @anthropic-ai/claude-code-<platform> missing?):\n%s\nTo fix it, reinstall without --omit=optional", lastLines(out, 20))
	}
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// newestCached returns the executable of the newest complete npm install
// of cli in the cache directory ("" means DefaultCacheDir()): what an
// earlier --install left there.
func newestCached(cache, cli string) (string, bool) {
	if cache == "" {
		cache = DefaultCacheDir()
	}
	entries, err := os.ReadDir(filepath.Join(cache, cli))
	if err != nil {
		return "", false
	}
	var best []int
	path := ""
	for _, e := range entries {
		if !e.IsDir() || !semverRE.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(cache, cli, e.Name())
		bin := filepath.Join(dir, "node_modules", ".bin", cli)
		if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
			continue
		}
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		if v := versionNumbers(e.Name()); best == nil || slices.Compare(v, best) > 0 {
			best, path = v, bin
		}
	}
	return path, path != ""
}

// versionNumbers are the numbers of a version's major.minor.patch.
func versionNumbers(v string) []int {
	core, _, _ := strings.Cut(v, "-")
	var out []int
	for _, p := range strings.Split(core, ".") {
		n, _ := strconv.Atoi(p)
		out = append(out, n)
	}
	return out
}
