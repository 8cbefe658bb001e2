package fuzz

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The throughput of the targets, in executions per second of CPU time (so
// per core, whatever else the machine runs) and per second of wall time:
//
//	go test -run '^$' -bench . -cpu 1 ./fuzz
//
// BenchmarkExternal builds the lean adapter and fake it runs (or takes
// them from AGENTCONFORM_FUZZ_BENCH_ADAPTER and AGENTCONFORM_FUZZ_FAKE).

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchInputs runs inputs round-robin and reports executions per CPU
// second and per wall second, with the collector tuned as in a fuzzing
// worker (WorkerGCPercent).
func benchInputs(b *testing.B, t Target, inputs []Input) {
	b.Helper()
	defer tuneGC()()
	cpu0, wall0 := cpuTime(), time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		CheckInput(t, inputs[i%len(inputs)])
	}
	b.StopTimer()
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "execs/cpu-s")
	b.ReportMetric(float64(b.N)/wall.Seconds(), "execs/s")
}

// BenchmarkInProcess measures the in-process reference adapters on the
// unmutated fixtures (light ones, heavy ones) and on the fuzzer's mix
// (inputs decoded from random bytes, as Go's engine makes them).
func BenchmarkInProcess(b *testing.B) {
	var light, heavy []Input
	for _, fx := range Fixtures() {
		if fixtureBytes()[fx] > heavyFixture {
			heavy = append(heavy, Input{Fixture: fx})
		} else {
			light = append(light, Input{Fixture: fx})
		}
	}
	mix := randomInputs(2000)
	for _, profile := range []string{"unified", "shim"} {
		t, err := NewReferenceTarget(profile)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(profile+"/fixtures", func(b *testing.B) { benchInputs(b, t, light) })
		b.Run(profile+"/long-output", func(b *testing.B) { benchInputs(b, t, heavy) })
		b.Run(profile+"/mix", func(b *testing.B) { benchInputs(b, t, mix) })
	}
}

// BenchmarkExternal measures an external adapter through the harness and
// the fakes, on unmutated single-process fixtures: by default the lean
// reference adapter (cmd/agentconform-adapter) and the lean fake, both
// built static here; AGENTCONFORM_FUZZ_BENCH_ADAPTER and
// AGENTCONFORM_FUZZ_FAKE name others.
func BenchmarkExternal(b *testing.B) {
	cmd, fake := os.Getenv("AGENTCONFORM_FUZZ_BENCH_ADAPTER"), os.Getenv(EnvFakeExe)
	if cmd == "" {
		cmd = buildLean(b, "./cmd/agentconform-adapter")
	}
	if fake == "" {
		fake = buildLean(b, "./cmd/agentconform-fake")
	}
	e, err := NewExternal(cmd, ExternalOptions{FakeExe: fake})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	var inputs []Input
	for _, fx := range Fixtures() {
		if strings.HasSuffix(fx, "/plain-text") || strings.HasSuffix(fx, "/single-tool") {
			inputs = append(inputs, Input{Fixture: fx})
		}
	}
	benchInputs(b, e, inputs)
}

// buildLean builds a command of the module, static, into a temporary
// directory of the benchmark.
func buildLean(b *testing.B, pkg string) string {
	b.Helper()
	root, err := CheckoutRoot()
	if err != nil {
		b.Skip("no checkout to build ", pkg, " from: ", err)
	}
	exe, err := buildStatic(root, pkg, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return exe
}

// BenchmarkSpawnTwo is what the external figure is measured against:
// starting and reaping two trivial processes, one after the other.
func BenchmarkSpawnTwo(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for k := 0; k < 2; k++ {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Skip(err)
			}
		}
	}
}

// BenchmarkSpawnTwoGo is the same with the most trivial Go program (an
// empty main, static): the floor for an adapter and a fake written in Go,
// whose runtime alone takes longer to start than /bin/true.
func BenchmarkSpawnTwoGo(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module trivial\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	exe := filepath.Join(dir, "trivial")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		b.Skipf("building a trivial Go program: %v\n%s", err, out)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := 0; k < 2; k++ {
			if err := exec.Command(exe).Run(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
