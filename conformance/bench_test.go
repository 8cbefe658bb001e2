//go:build linux

package conformance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The runner's speed goals, each a benchmark (never a timed test): run
// them alone, on a machine as quiet as can be had,
//
//	go test -run '^$' -bench . -benchtime 3x ./conformance
//
// They run what `agentconform run` runs: the lean reference adapter and
// the lean fake, built here (static, as the action builds them) unless
// AGENTCONFORM_BENCH_BIN names a directory that holds agentconform-adapter
// and agentconform-fake already. Besides the wall time per operation they
// report the CPU time of the runner and of every process it started
// (cpu-s), of the runner alone (runner-cpu-s), and the runner's peak
// resident memory (runner-peak-MB, VmHWM reset before the first
// operation). The peaks of the adapter and the fakes are not among them:
// a child's ru_maxrss counts its parent's resident memory from before it
// executed (os/exec starts it sharing the parent's memory); measure them
// with /usr/bin/time around the adapter (--adapter '/usr/bin/time -v
// agentconform-adapter ...') and BenchmarkLadderWrite in fakecli.
//
// The goals, on 2 cores: the default run (both reference adapters, every
// case) under 5 s, the runner's peak under 300 MB; one 64 MiB ladder case
// under 1 s per adapter, every process's peak under 4× the line plus
// 100 MB; a plain case (spawn, handshake, judging) under 15 ms median.
// The fake's write throughput is fakecli's BenchmarkLadderWrite.

// benchBinaries returns the lean adapter and fake.
func benchBinaries(b *testing.B) (adapter, fake string) {
	b.Helper()
	if dir := os.Getenv("AGENTCONFORM_BENCH_BIN"); dir != "" {
		return filepath.Join(dir, "agentconform-adapter"), filepath.Join(dir, "agentconform-fake")
	}
	dir := b.TempDir()
	for _, pkg := range []string{"agentconform-adapter", "agentconform-fake"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, pkg), "../cmd/"+pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("building %s: %v\n%s", pkg, err, out)
		}
	}
	return filepath.Join(dir, "agentconform-adapter"), filepath.Join(dir, "agentconform-fake")
}

// benchConfigs are the two reference adapters as `agentconform run`
// judges them by default.
func benchConfigs(b *testing.B) []Config {
	adapter, fake := benchBinaries(b)
	var out []Config
	for _, p := range []string{"unified", "shim"} {
		// As agentconform run starts it: directly, not through a shell.
		args := ReferenceArgs(p, ReferenceStallAfter)
		a := Adapter{Name: "reference/" + p, Command: func(ctx context.Context) *exec.Cmd {
			return exec.CommandContext(ctx, adapter, args...)
		}}
		out = append(out, Config{Adapter: a, FakeExe: fake}) // case directories where run puts them (TempDir)
	}
	return out
}

// cpuUsage is the CPU time of this process, and of the children it
// reaped.
func cpuUsage() (self, children time.Duration) {
	var s, c syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &s)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c)
	d := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return d(s.Utime) + d(s.Stime), d(c.Utime) + d(c.Stime)
}

// resetPeak resets the process's peak resident size (VmHWM), so that
// peakMB reads the peak since.
func resetPeak() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakMB is the process's peak resident size, in MB.
func peakMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1000
		}
	}
	return 0
}

// benchRun runs cfgs at once through one pool, as agentconform run does,
// b.N times (Match selects the cases) and reports the figures, failing on
// any verdict other than PASS, SKIP or INFORMATIONAL.
func benchRun(b *testing.B, cfgs []Config) {
	b.Helper()
	// As agentconform run does.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(MemoryLimit))
	resetPeak()
	self0, kids0 := cpuUsage()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pool := NewPoolWaiting(0, LeanWaitSlots) // as run gives the reference adapters
		var wg sync.WaitGroup
		for _, cfg := range cfgs {
			cfg.Pool = pool
			cfg.Progress = func(cr *CaseResult) {
				switch cr.Verdict {
				case Pass, Skip, Informational:
				default:
					b.Errorf("%s %s: %s", cfg.Adapter.Name, cr.ID, cr.Verdict)
				}
			}
			wg.Go(func() {
				if _, err := Run(context.Background(), cfg); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	self, kids := cpuUsage()
	b.ReportMetric((self-self0+kids-kids0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric((self-self0).Seconds()/float64(b.N), "runner-cpu-s/op")
	b.ReportMetric(peakMB(), "runner-peak-MB")
}

// BenchmarkDefaultRun is `agentconform run`: both reference adapters,
// every case.
func BenchmarkDefaultRun(b *testing.B) {
	benchRun(b, benchConfigs(b))
}

// BenchmarkLadder64MiB is `agentconform run --case
// <cli>/single-tool/line-67108864`, one adapter at a time: the runner
// reads, stores and judges a 64 MiB line the fake wrote and the adapter
// passed on (Claude's comes twice: as 4,096 text deltas, then whole).
// The goal is the Claude case's.
func BenchmarkLadder64MiB(b *testing.B) {
	cfgs := benchConfigs(b)
	for _, cli := range []string{"claude", "codex", "gemini"} {
		for _, cfg := range cfgs {
			b.Run(cli+"/"+strings.TrimPrefix(cfg.Adapter.Name, "reference/"), func(b *testing.B) {
				cfg.Match = []string{cli + "/single-tool/line-67108864"}
				benchRun(b, []Config{cfg})
			})
		}
	}
}

// BenchmarkLadder is `agentconform run --case '*/single-tool/line-*'`:
// every ladder case (one event of 64 KiB up to 64 MiB on one line), both
// reference adapters at once.
func BenchmarkLadder(b *testing.B) {
	cfgs := benchConfigs(b)
	for i := range cfgs {
		cfgs[i].Match = []string{"*/single-tool/line-*"}
	}
	benchRun(b, cfgs)
}

// BenchmarkPlainCase runs one plain case (codex/plain-text: spawn,
// handshake, judging) per operation against the unified reference
// adapter and reports the median (ms-median).
func BenchmarkPlainCase(b *testing.B) {
	cfg := benchConfigs(b)[0]
	cleanup, err := cfg.prepare("agentconform-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	c := pickCases(b, "codex/plain-text")[0]
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		cr, err := runOne(context.Background(), &cfg, c, nil)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
		if cr.Verdict != Pass {
			b.Fatalf("%s: %s", c.ID, cr.Verdict)
		}
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
}
