package fuzz

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// F is what a fuzz target uses of *testing.F. It is an interface so that
// the libFuzzer builds of ClusterFuzzLite and OSS-Fuzz, which hand the
// targets their own F, fit too.
type F interface {
	Add(args ...any)
	Fuzz(ff any)
	TempDir() string
	Cleanup(func())
	Fatal(args ...any)
}

// T is what a fuzz target uses of *testing.T.
type T interface {
	Fatal(args ...any)
	Skip(args ...any)
}

// TargetValidate is the body of FuzzValidate.
func TargetValidate(f F) {
	for _, b := range RawSeeds(RawValidate) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fatalIf(t, CheckValidate(data)) })
}

// TargetTranscript is the body of FuzzTranscript.
func TargetTranscript(f F) {
	for _, b := range RawSeeds(RawTranscript) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fatalIf(t, CheckTranscript(data)) })
}

// TargetRPCMessage is the body of FuzzRPCMessage.
func TargetRPCMessage(f F) { rawTarget(f, RawRPCMessage, CheckRPCMessage) }

// TargetACP is the body of FuzzACP.
func TargetACP(f F) { rawTarget(f, RawACP, CheckACP) }

// TargetAppServer is the body of FuzzAppServer.
func TargetAppServer(f F) { rawTarget(f, RawAppServer, CheckAppServer) }

// rawTarget is the body of a target on arbitrary bytes: its seeds, and
// check on every input.
func rawTarget(f F, seeds string, check func([]byte) *Failure) {
	for _, b := range RawSeeds(seeds) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fatalIf(t, check(data)) })
}

// TargetFakeFlags is the body of FuzzFakeFlags.
func TargetFakeFlags(f F) {
	for _, b := range RawSeeds(RawFakeFlags) {
		f.Add(b)
	}
	sessions := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) { fatalIf(t, CheckFakeFlags(data, sessions)) })
}

func fatalIf(t T, f *Failure) {
	if f != nil {
		t.Fatal(f.Error())
	}
}

// TargetReference is the body of FuzzReferenceUnified and
// FuzzReferenceShim: the reference adapter of profile in process (or,
// in TestPlantedBugs's runs, a copy with a planted bug).
func TargetReference(f F, profile string) {
	target, err := inProcessTarget(profile)
	if err != nil {
		f.Fatal(err)
		return
	}
	addSeeds(f, InProcessSeeds)
	tuneGC()
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOne(t, target, Decode(data, nil)) })
}

// WorkerGCPercent is the garbage collector's target (GOGC) in a process
// that fuzzes in process, unless $GOGC says otherwise. An execution
// allocates its transcript's bytes several times over and keeps none of
// them, while the live heap stays small: at the default of 100 the
// collector ran every few executions and took a sixth of the time. At 800
// a benchmark process peaks at about 240 MB resident (150 MB at 400, for
// 5-10% fewer executions).
const WorkerGCPercent = 800

// tuneGC sets WorkerGCPercent unless $GOGC is set, and returns what puts
// the previous setting back.
func tuneGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(WorkerGCPercent)
	return func() { debug.SetGCPercent(old) }
}

// TargetExternal is the body of FuzzExternalAdapter: the adapter
// $AGENTCONFORM_FUZZ_ADAPTER starts, through the harness and the fakes;
// without one, every input skips.
func TargetExternal(f F) {
	cmd := os.Getenv(EnvAdapter)
	if cmd == "" {
		addSeeds(f, ExternalSeeds)
		f.Fuzz(func(t *testing.T, data []byte) { t.Skip("no adapter: set " + EnvAdapter) })
		return
	}
	opts, err := externalOptionsFromEnv(f)
	if err != nil {
		f.Fatal(err)
		return
	}
	target, err := NewExternal(cmd, opts)
	if err != nil {
		f.Fatal(err)
		return
	}
	f.Cleanup(func() { target.Close() })
	// The seeds of the agents the adapter drives, encoded for them (an
	// ACP agent's default agents are the CLIs its command names).
	agents := target.Agents()
	seeds, err := SeedsFor(agents)
	if err != nil {
		f.Fatal(err)
		return
	}
	for _, b := range seeds {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOne(t, target, Decode(data, agents)) })
}

// externalOptionsFromEnv reads the external target's options. Without
// $AGENTCONFORM_FUZZ_FAKE, it builds the lean fake (cmd/agentconform-fake)
// into the test's temporary directory: a test binary is no fake.
func externalOptionsFromEnv(f F) (ExternalOptions, error) {
	opts := ExternalOptions{FakeExe: os.Getenv(EnvFakeExe), SignalInterrupt: os.Getenv(EnvSignalInterrupt) != "",
		Profile: os.Getenv(EnvProfile), EditorExe: os.Getenv(EnvEditor)}
	if opts.Profile == ProfileACP && opts.EditorExe == "" {
		return opts, fmt.Errorf("%s=%s needs %s, the agentconform binary that plays the editor", EnvProfile, ProfileACP, EnvEditor)
	}
	if d, err := time.ParseDuration(os.Getenv(EnvDeadline)); err == nil {
		opts.Deadline = d
	}
	if a := os.Getenv(EnvAgents); a != "" {
		opts.Agents = strings.Split(a, ",")
	}
	if opts.FakeExe == "" {
		root, err := CheckoutRoot()
		if err != nil {
			return opts, fmt.Errorf("no %s, and no checkout to build the fake from: %w", EnvFakeExe, err)
		}
		exe, err := buildStatic(root, "./cmd/agentconform-fake", f.TempDir())
		if err != nil {
			return opts, err
		}
		opts.FakeExe = exe
	}
	return opts, nil
}

// buildStatic builds a command of the checkout at root into dir, static:
// pflag imports net, which links libc otherwise, and a static binary
// starts a millisecond sooner, on every execution.
func buildStatic(root, pkg, dir string) (string, error) {
	exe := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", exe, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	return exe, nil
}

func addSeeds(f F, set SeedSet) {
	seeds, err := SeedBytes(set)
	if err != nil {
		f.Fatal(err)
		return
	}
	for _, b := range seeds {
		f.Add(b)
	}
}

// fuzzOne runs one input and reports its failure, shrunk and saved when
// $AGENTCONFORM_FUZZ_CRASHERS names a directory. A failure that is a known
// open issue (testdata/crashers/KNOWN) skips, so that fuzzing goes on.
func fuzzOne(t T, target Target, in Input) {
	_, fail := CheckInput(target, in)
	if fail == nil {
		return
	}
	if k := knownIssue(target, fail); k != "" {
		t.Skip("known issue " + k + ": " + fail.Property)
		return
	}
	t.Fatal(Report(target, in, fail, os.Getenv(EnvCrashers)))
}
