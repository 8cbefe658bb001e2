package fuzz

import (
	"os"
	"os/exec"
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
// BenchmarkExternal needs an adapter and the fake:
// AGENTCONFORM_FUZZ_BENCH_ADAPTER='agentconform adapter --profile unified'
// and AGENTCONFORM_FUZZ_FAKE=/path/to/agentconform-fake.

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
// the fakes, on unmutated single-process fixtures.
func BenchmarkExternal(b *testing.B) {
	cmd := os.Getenv("AGENTCONFORM_FUZZ_BENCH_ADAPTER")
	if cmd == "" || os.Getenv(EnvFakeExe) == "" {
		b.Skip("set AGENTCONFORM_FUZZ_BENCH_ADAPTER and " + EnvFakeExe)
	}
	e, err := NewExternal(cmd, ExternalOptions{FakeExe: os.Getenv(EnvFakeExe)})
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
