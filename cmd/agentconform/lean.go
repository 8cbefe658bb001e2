package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fuzz"
)

// The lean binaries: agentconform-fake (the fakes alone) and
// agentconform-adapter (the reference adapter alone) start in a fraction
// of the time agentconform takes, and run starts one of each for nearly
// every case. Installed side by side (go install …/cmd/..., or the
// action) they sit next to agentconform. Under `go run ./cmd/agentconform`
// they do not: the go command builds agentconform alone, into a directory
// of its own. So a build of agentconform run in its checkout (a
// development build: go run, go build) builds them from the checkout
// once, into a cache directory named by its own build's identity, and
// every later run of the same build finds them there.

// Names of the lean binaries.
const (
	leanFakeName    = fakecli.LeanName
	leanAdapterName = "agentconform-adapter"
)

// leanBuildTimeout bounds the build of the lean binaries: a first build
// with a cold build cache compiles the module again (without cgo; the
// whole first run of a fresh clone, cold cache, took 4 min 19 s on a
// 2-core machine at a load average of 29); after a change, a build
// compiles what changed and links two binaries. A build cut short keeps
// what it compiled in the build cache, for the next run's.
const leanBuildTimeout = 10 * time.Minute

// leanKeep is how many builds' lean binaries the cache keeps (the most
// recently used): one per checkout and source state a developer switches
// between.
const leanKeep = 8

// leanBins are the programs run starts as the fakes and as the reference
// adapter: the lean binaries, or this executable standing in for either.
type leanBins struct {
	// Fake is installed as claude, codex and gemini.
	Fake string
	// Adapter runs the reference adapter; when it is this executable, it
	// takes the "adapter" command first.
	Adapter string
}

// leanBinaries returns the binaries run starts: those next to self when
// they are there; else, for a development build of agentconform run in
// its checkout with the go command on PATH, those built from the checkout
// into the cache (built now, under a deadline, if they are not there yet,
// with a note on stderr); else self. A failed build is noted on stderr and
// self stands in.
func leanBinaries(ctx context.Context, self string, stderr io.Writer) leanBins {
	bins := leanBins{Fake: self, Adapter: self}
	next := filepath.Dir(self)
	if isExecutable(filepath.Join(next, leanFakeName)) {
		bins.Fake = filepath.Join(next, leanFakeName)
	}
	if isExecutable(filepath.Join(next, leanAdapterName)) {
		bins.Adapter = filepath.Join(next, leanAdapterName)
	}
	if bins.Fake != self && bins.Adapter != self {
		return bins
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok || !checkoutBuildOfCommand(bi) {
		return bins
	}
	root, err := fuzz.ModuleRoot(".")
	if err != nil {
		return bins // not in a checkout: as installed
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return bins
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		fmt.Fprintf(stderr, "agentconform run: note: no cache directory for the lean fake and adapter (%v); agentconform stands in for them, which is slower\n", err)
		return bins
	}
	dir, err := leanBuild(ctx, goTool, root, self, filepath.Join(cache, "agentconform", "lean"), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentconform run: note: could not build the lean fake and adapter: %v\nagentconform run: agentconform stands in for them, which is slower\n", err)
		return bins
	}
	if bins.Fake == self {
		bins.Fake = filepath.Join(dir, leanFakeName)
	}
	if bins.Adapter == self {
		bins.Adapter = filepath.Join(dir, leanAdapterName)
	}
	return bins
}

// checkoutBuildOfCommand reports whether bi is agentconform (this command,
// not a test binary) built in a checkout: not from a fetched module.
func checkoutBuildOfCommand(bi *debug.BuildInfo) bool {
	return bi.Path == modulePath+"/cmd/agentconform" && bi.Main.Path == modulePath && moduleVersionOf(bi) == ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// leanBuild returns the directory under cache that holds the lean
// binaries of this build of agentconform (self, built from the checkout at
// root), building them there first if they are not.
func leanBuild(ctx context.Context, goTool, root, self, cache string, stderr io.Writer) (string, error) {
	key, err := leanKey(self, root)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, key)
	if isExecutable(filepath.Join(dir, leanFakeName)) && isExecutable(filepath.Join(dir, leanAdapterName)) {
		now := time.Now()
		os.Chtimes(dir, now, now) // most recently used: pruned last
		return dir, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, key+".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(stderr, "agentconform run: building %s and %s from %s into %s (once for this build of agentconform; they start in a fraction of its time)\n",
		leanFakeName, leanAdapterName, root, dir)
	if err := goBuildLean(ctx, goTool, root, tmp, leanBuildTimeout); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run built them at the same time: theirs will do.
		if !isExecutable(filepath.Join(dir, leanFakeName)) || !isExecutable(filepath.Join(dir, leanAdapterName)) {
			return "", err
		}
	}
	pruneLean(cache, key)
	return dir, nil
}

// goBuildLean builds the lean binaries from the checkout at root into
// out, as the side-by-side install does (CGO_ENABLED=0: static binaries,
// which start faster), within limit, in a process group of its own that
// is killed at the deadline.
func goBuildLean(ctx context.Context, goTool, root, out string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", out+string(filepath.Separator), "./cmd/"+leanFakeName, "./cmd/"+leanAdapterName)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the go command left running
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("go build did not finish within %s", limit)
	case err != nil:
		msg := strings.TrimSpace(output.String())
		if lines := strings.Split(msg, "\n"); len(lines) > 8 {
			msg = strings.Join(lines[:8], "\n") + "\n…"
		}
		return fmt.Errorf("go build in %s: %w\n%s", root, err, msg)
	}
	return nil
}

// leanKey names the lean binaries of this build of agentconform: its
// build's identity (the Go build ID, which changes with any source file,
// embedded file, flag or toolchain agentconform was built with: every
// package the lean binaries import is one of agentconform's), the sources
// of the two lean commands themselves, and the platform.
func leanKey(self, root string) (string, error) {
	id, err := buildID(self)
	if err != nil {
		return "", fmt.Errorf("the build ID of %s: %w", self, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "agentconform lean binaries 1\n%s\n%s/%s\n", id, runtime.GOOS, runtime.GOARCH)
	for _, name := range []string{leanFakeName, leanAdapterName} {
		files, err := filepath.Glob(filepath.Join(root, "cmd", name, "*.go"))
		if err != nil {
			return "", err
		}
		sort.Strings(files)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s/%s %d\n", name, filepath.Base(f), len(data))
			h.Write(data)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// buildID returns the Go build ID of the executable at path (as `go tool
// buildid` prints it): from its ELF note, or from the text where other
// formats keep it; failing both, a hash of the whole file, which is as
// unique and only slower.
func buildID(path string) (string, error) {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if s := f.Section(".note.go.buildid"); s != nil {
			if data, err := s.Data(); err == nil {
				if id, ok := goNote(data, f.ByteOrder); ok {
					return id, nil
				}
			}
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 32<<10)
	n, _ := io.ReadFull(f, head)
	if i := bytes.Index(head[:n], []byte("\xff Go build ID: \"")); i >= 0 {
		rest := head[i+len("\xff Go build ID: \"") : n]
		if j := bytes.IndexByte(rest, '"'); j > 0 {
			return string(rest[:j]), nil
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// goNote reads the Go build ID note: name size, description size and type
// (4), the name "Go\x00\x00", then the ID.
func goNote(data []byte, order binary.ByteOrder) (string, bool) {
	if len(data) < 16 {
		return "", false
	}
	nameSize, descSize, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
	if nameSize != 4 || typ != 4 || string(data[12:16]) != "Go\x00\x00" || uint64(len(data)) < 16+uint64(descSize) {
		return "", false
	}
	return string(data[16 : 16+descSize]), true
}

// pruneLean removes what the cache holds beyond the leanKeep most
// recently used builds' lean binaries (never key's), and builds left
// half-done by a run killed more than a day ago.
func pruneLean(cache, key string) {
	entries, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	type entry struct {
		name string
		used time.Time
	}
	var builds []entry
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !e.IsDir() {
			continue
		}
		if strings.Contains(e.Name(), ".build-") {
			if time.Since(info.ModTime()) > 24*time.Hour {
				os.RemoveAll(filepath.Join(cache, e.Name()))
			}
			continue
		}
		if e.Name() != key {
			builds = append(builds, entry{e.Name(), info.ModTime()})
		}
	}
	sort.Slice(builds, func(i, j int) bool { return builds[i].used.After(builds[j].used) })
	for i, b := range builds {
		if i >= leanKeep-1 {
			os.RemoveAll(filepath.Join(cache, b.name))
		}
	}
}
