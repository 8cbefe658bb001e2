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
	// Source says where it came from: "flag", "PATH" or "npm".
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
	// Timeout bounds npm; 0 means 10 minutes.
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
