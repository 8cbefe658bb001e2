package fakecli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Options configure the fakes Start sets up. The zero value replays each
// CLI's plain-text fixture, fast, with seed 1 and no faults.
type Options struct {
	// Transcript is a transcript file to replay (AGENTCONFORM_TRANSCRIPT);
	// Fixture an embedded fixture such as "codex/single-tool"
	// (AGENTCONFORM_FIXTURE). Set at most one.
	Transcript string
	Fixture    string
	// Faults is a fault spec (AGENTCONFORM_FAULTS).
	Faults string
	// Seed seeds the fakes' random choices; 0 means 1.
	Seed int64
	// Timing is "fast" (default), "recorded" or a scale factor.
	Timing string
	// Sessions is the session store directory; "" gives the fakes one of
	// their own, so tests never share sessions by accident.
	Sessions string
	// Env is extra NAME=value entries for Fakes.Env.
	Env []string
}

// Fakes is a directory holding claude, codex and gemini for one test, in
// the style of httptest.Server: put Dir first on PATH (Env does) and start
// the CLIs as usual.
type Fakes struct {
	// Dir holds the three executables.
	Dir string
	// Sessions is the session store; ObserveLog the observation log every
	// fake started with Env appends to.
	Sessions   string
	ObserveLog string

	opts Options
}

// Start makes a temporary directory with claude, codex and gemini linked
// to the running test binary, which acts as them because its TestMain
// calls Main. It fails the test if Main was not called (the links would
// run the tests again instead) or the links cannot be made.
func Start(t testing.TB, opts Options) *Fakes {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("fakecli.Start: the test binary must call fakecli.Main(m) from TestMain to act as the fakes")
	}
	if opts.Transcript != "" && opts.Fixture != "" {
		t.Fatal("fakecli.Start: set Options.Transcript or Options.Fixture, not both")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("fakecli.Start: %v", err)
	}
	root := t.TempDir()
	f := &Fakes{Dir: filepath.Join(root, "bin"), Sessions: opts.Sessions, ObserveLog: filepath.Join(root, "observe.jsonl"), opts: opts}
	if f.Sessions == "" {
		f.Sessions = filepath.Join(root, "sessions")
	}
	if err := Install(f.Dir, exe, false); err != nil {
		t.Fatalf("fakecli.Start: %v", err)
	}
	if opts.Transcript != "" {
		abs, err := filepath.Abs(opts.Transcript)
		if err != nil {
			t.Fatalf("fakecli.Start: %v", err)
		}
		f.opts.Transcript = abs
	}
	return f
}

// Path is the full path of one fake ("claude", "codex" or "gemini").
func (f *Fakes) Path(cli string) string { return filepath.Join(f.Dir, cli) }

// Env is the environment to start an adapter (or a fake) with: the
// current environment, PATH led by Dir, the AGENTCONFORM_* variables of
// the options (any inherited ones removed), then Options.Env.
func (f *Fakes) Env() []string {
	var env []string
	path := f.Dir
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "AGENTCONFORM_"):
			continue
		case k == "PATH":
			if v != "" {
				path += string(os.PathListSeparator) + v
			}
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "PATH="+path, EnvSessions+"="+f.Sessions, EnvObserve+"="+f.ObserveLog)
	seed := f.opts.Seed
	if seed == 0 {
		seed = 1
	}
	env = append(env, EnvSeed+"="+strconv.FormatInt(seed, 10))
	if f.opts.Transcript != "" {
		env = append(env, EnvTranscript+"="+f.opts.Transcript)
	}
	if f.opts.Fixture != "" {
		env = append(env, EnvFixture+"="+f.opts.Fixture)
	}
	if f.opts.Faults != "" {
		env = append(env, EnvFaults+"="+f.opts.Faults)
	}
	if f.opts.Timing != "" {
		env = append(env, EnvTiming+"="+f.opts.Timing)
	}
	return append(env, f.opts.Env...)
}

// Observations parses the observation log so far (empty if no fake has
// run yet).
func (f *Fakes) Observations() ([]Observation, error) {
	file, err := os.Open(f.ObserveLog)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening the observation log: %w", err)
	}
	defer file.Close()
	return ReadObservations(file)
}

// Install writes claude, codex and gemini into dir (created if needed) as
// symbolic links to exe, or as copies of it when copyFiles is set or links
// cannot be made. Existing files of those names are replaced.
func Install(dir, exe string, copyFiles bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	for _, name := range Names {
		dst := filepath.Join(dir, name)
		tmp := filepath.Join(dir, "."+name+".tmp")
		os.Remove(tmp)
		var err error
		if !copyFiles {
			err = os.Symlink(exe, tmp)
		}
		if copyFiles || err != nil {
			if err = copyExecutable(exe, tmp); err != nil {
				return fmt.Errorf("installing %s: %w", name, err)
			}
		}
		if err := os.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("installing %s: %w", name, err)
		}
	}
	return nil
}

func copyExecutable(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

// LeanName is the file name of the small fake-only binary
// (cmd/agentconform-fake).
const LeanName = "agentconform-fake"

// Executable returns what to install as the fakes for a running binary
// self: the lean agentconform-fake next to it when there is one (it starts
// faster, since it initialises only what the fakes need), else self.
func Executable(self string) string {
	lean := filepath.Join(filepath.Dir(self), LeanName)
	if st, err := os.Stat(lean); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return lean
	}
	return self
}
