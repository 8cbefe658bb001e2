//go:build linux

package conformance

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/capture"
)

// The real CLIs' costs, as benchmarks (run alone, on a quiet machine):
//
//	go test -run '^$' -bench Real -benchtime 1x ./conformance
//
// They need the real CLIs: on PATH, or installed in the cache (agentconform
// capture --install-all, or run --cli real --install, puts them there);
// a CLI that is missing skips its benchmark. The goal, on 2 cores: every
// case of the three CLIs a real CLI can play, for both reference adapters
// (agentconform run --cli real), in under 3 minutes.

// realBenchCLIs returns the real CLIs found, skipping b when none is.
func realBenchCLIs(b *testing.B) *RealCLIs {
	b.Helper()
	r := &RealCLIs{Binaries: map[string]*capture.Binary{}}
	for _, cli := range capture.CLIs {
		bin, err := capture.Locate(context.Background(), cli, capture.LocateOptions{})
		if err == nil {
			r.Binaries[cli] = bin
		}
	}
	if len(r.Binaries) == 0 {
		b.Skip("no real CLI on PATH or in the cache (agentconform capture --install-all installs them)")
	}
	return r
}

// plainArgs are the one-shot invocations of a plain-text turn.
var plainArgs = map[string][]string{
	"claude": {"-p", "Say hello in one short sentence.", "--output-format", "stream-json", "--verbose"},
	"codex":  {"exec", "--json", "--skip-git-repo-check", "Say hello in one short sentence."},
	"gemini": {"-p", "Say hello in one short sentence.", "-o", "stream-json"},
}

// BenchmarkRealStartup is each real CLI's cost for one plain-text turn,
// run directly (no adapter, no wrapper) in its stage: the time to its
// first stdout line (first-line-ms), to its exit (the op), and the CPU
// time of the CLI and everything it started (cpu-s/op).
func BenchmarkRealStartup(b *testing.B) {
	real := realBenchCLIs(b)
	for _, cli := range capture.CLIs {
		bin := real.Binaries[cli]
		b.Run(cli, func(b *testing.B) {
			if bin == nil {
				b.Skip("no real " + cli)
			}
			st, err := capture.OpenStage(bin, "plain-text", capture.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			var first time.Duration
			_, kids0 := cpuUsage()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				cmd := exec.CommandContext(ctx, bin.Path, plainArgs[cli]...)
				cmd.Dir = st.Home
				cmd.Env = append(st.Env, "PATH="+os.Getenv("PATH"))
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
				out, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				sc := bufio.NewScanner(out)
				sc.Buffer(nil, 64<<20)
				if sc.Scan() {
					first += time.Since(start)
				}
				for sc.Scan() {
				}
				if err := cmd.Wait(); err != nil {
					b.Fatalf("%s: %v", cli, err)
				}
				cancel()
			}
			b.StopTimer()
			_, kids1 := cpuUsage()
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-line-ms")
			b.ReportMetric((kids1-kids0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkRealRun is `agentconform run --cli real`: both reference
// adapters, every case the real CLIs found can play, through one pool of
// their own as run gives them. It fails on any FAIL, CRASH or TIMEOUT,
// and reports the cases played (played/op) and the CPU time of
// everything (cpu-s/op).
func BenchmarkRealRun(b *testing.B) {
	real := realBenchCLIs(b)
	adapter, fake := benchBinaries(b)
	var cfgs []Config
	for _, p := range []string{"unified", "shim"} {
		args := ReferenceArgs(p, RealStallAfter)
		a := Adapter{Name: RealRunName("reference/" + p), Command: func(ctx context.Context) *exec.Cmd {
			return exec.CommandContext(ctx, adapter, args...)
		}}
		cfgs = append(cfgs, Config{Adapter: a, FakeExe: fake, Real: real, Timeout: RealTimeout})
	}
	self0, kids0 := cpuUsage()
	played := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pool := NewPoolWaiting(0, 1) // as run gives the real CLIs
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, cfg := range cfgs {
			cfg.Pool = pool
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := Run(context.Background(), cfg)
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for _, c := range res.Cases {
					if c.Real != nil {
						played++
					}
					for _, r := range c.Checks {
						if r.Verdict.Failed(false) {
							b.Errorf("%s %s %s: %s", cfg.Adapter.Name, c.ID, r.Check, r.Verdict)
						}
					}
				}
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	self1, kids1 := cpuUsage()
	b.ReportMetric(float64(played)/float64(b.N), "played/op")
	b.ReportMetric(((self1-self0)+(kids1-kids0)).Seconds()/float64(b.N), "cpu-s/op")
}
