package fuzz

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPlantedBugs shows that the fuzzing finds bugs nobody wrote a case
// for: each planted bug, in a copy of a reference adapter, is found by a
// short run of Go's engine (go test -fuzz on package targets, instrumented
// for coverage) from the committed seeds, and the failing input shrinks
// to a crasher that replays. It also says whether the seeds alone catch
// the bug: the underscore and long-line bugs show on the fixtures and the
// ladder, the after-unknown bug only once the mutator has made an event
// of an unknown type. AGENTCONFORM_FUZZ_PLANT_BUDGET bounds each run (45s).
func TestPlantedBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the fuzz targets")
	}
	budget := 45 * time.Second
	if d, err := time.ParseDuration(os.Getenv("AGENTCONFORM_FUZZ_PLANT_BUDGET")); err == nil {
		budget = d
	}
	bin := buildTargets(t)
	for _, bug := range []struct {
		name, profile string
		seedsFind     bool
	}{
		{"underscore", "unified", true},
		{"long-line", "shim", true},
		{"after-unknown", "unified", false},
	} {
		t.Run(bug.name, func(t *testing.T) {
			target, err := plantedTarget(bug.name, bug.profile)
			if err != nil {
				t.Fatal(err)
			}
			known, err := LoadKnown(CrashersDir)
			if err != nil {
				t.Fatal(err)
			}
			seeds := Seeds(InProcessSeeds)
			found := 0
			for _, s := range seeds {
				if _, f := CheckInput(target, s.Input); f != nil && MatchKnown(known, knownAs(target), f) == "" {
					found++
				}
			}
			t.Logf("the committed seeds alone: %d of %d fail", found, len(seeds))
			if (found > 0) != bug.seedsFind {
				t.Errorf("the seeds alone find the bug: %v, want %v", found > 0, bug.seedsFind)
			}

			fuzzFunc := "Fuzz" + "Reference" + strings.ToUpper(bug.profile[:1]) + bug.profile[1:]
			took, dir, input, log := fuzzRun(t, bin, fuzzFunc, bug.name, budget)
			if input == "" {
				t.Fatalf("%s with the %s bug: nothing found in %s\n%s", fuzzFunc, bug.name, budget, clip(log, 4000))
			}
			t.Logf("%s found the %s bug in %s (input %s)", fuzzFunc, bug.name, took.Round(10*time.Millisecond), input)

			// The failing input shrinks to a crasher that still fails.
			crashers := t.TempDir()
			out := rerun(t, bin, dir, fuzzFunc, bug.name, input, crashers)
			paths := CrasherPaths(out)
			if len(paths) == 0 {
				t.Fatalf("re-running %s saved no crasher:\n%s", input, clip(out, 4000))
			}
			c, err := LoadCrasher(paths[0])
			if err != nil {
				t.Fatal(err)
			}
			if f := target.Check(c.Case()); f == nil || f.Property != c.Meta.Property {
				t.Errorf("the crasher %s (breaks %s) does not fail the same way: %v", paths[0], c.Meta.Property, f)
			}
			ref, _ := NewReferenceTarget(bug.profile)
			if f := ref.Check(c.Case()); f != nil {
				t.Errorf("the crasher fails the real reference adapter too: %v", f)
			}
			t.Logf("shrunk to %d steps, breaking %s: %s", len(c.Transcript.Steps), c.Meta.Property, c.Meta.Input)
		})
	}
}

// buildTargets builds the fuzz targets' test binary with the coverage
// instrumentation go test -fuzz uses.
func buildTargets(t *testing.T) string {
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "targets.test")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-fuzz=.", "-o", bin, "./fuzz/targets")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the fuzz targets: %v\n%s", err, out)
	}
	return bin
}

// FailingInput finds what go test -fuzz reports as failing: an input it
// wrote (testdata/fuzz/<Func>/<file>), or a seed of the corpus.
var failingInput = regexp.MustCompile(`Failing input written to testdata/fuzz/\S+/(\S+)|failure while testing seed corpus entry: \S+/(\S+)`)

// fuzzRun runs Go's engine on fuzzFunc with a planted bug, in a scratch
// directory holding a copy of the committed corpus, and returns how long
// it took to find a failing input, the directory, and the input's name
// (its subtest name: a file of the corpus, or seed#N).
func fuzzRun(t *testing.T, bin, fuzzFunc, bug string, budget time.Duration) (time.Duration, string, string, string) {
	dir := t.TempDir()
	if err := copyDir(filepath.Join("targets", "testdata", "fuzz", fuzzFunc), filepath.Join(dir, "testdata", "fuzz", fuzzFunc)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget+60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^$", "-test.fuzz=^"+fuzzFunc+"$", "-test.fuzztime="+budget.String(),
		"-test.fuzzminimizetime=1x", "-test.fuzzcachedir="+filepath.Join(dir, "cache"), "-test.timeout=0")
	cmd.Dir = dir
	root, _ := ModuleRoot(".")
	cmd.Env = append(os.Environ(), EnvPlant+"="+bug, EnvSrc+"="+root)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	cmd.Run()
	took := time.Since(start)
	m := failingInput.FindStringSubmatch(out.String())
	if m == nil {
		return took, dir, "", out.String()
	}
	return took, dir, m[1] + m[2], out.String()
}

// rerun replays one failing input with shrinking on.
func rerun(t *testing.T, bin, dir, fuzzFunc, bug, input, crashers string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^"+fuzzFunc+"$/^"+regexp.QuoteMeta(input)+"$", "-test.v")
	cmd.Dir = dir
	root, _ := ModuleRoot(".")
	cmd.Env = append(os.Environ(), EnvPlant+"="+bug, EnvCrashers+"="+crashers, EnvSrc+"="+root)
	cmd.WaitDelay = 5 * time.Second
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
