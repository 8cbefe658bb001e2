//go:build unix

package fakecli_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
)

// BenchmarkStartToFirstByte starts `codex exec --json` replaying
// codex/plain-text and measures the time to its first stdout byte (what an
// adapter test waits for at every fake start). The median is reported as
// ms-median.
func BenchmarkStartToFirstByte(b *testing.B) {
	f := fakecli.Start(b, fakecli.Options{Fixture: "codex/plain-text"})
	dir := b.TempDir()
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd, _, cancel := command(b, f, "codex", append(codexExec, "hi"), cmdOpts{dir: dir})
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var one [1]byte
		if _, err := io.ReadFull(out, one[:]); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
		io.Copy(io.Discard, out)
		cmd.Wait()
		cancel()
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
}

// BenchmarkStartToFirstByteLean is BenchmarkStartToFirstByte for the
// binary users install, cmd/agentconform-fake (built here, once): the goal
// is a median under 5 ms.
func BenchmarkStartToFirstByteLean(b *testing.B) {
	dir := b.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exe := filepath.Join(dir, fakecli.LeanName)
	build := exec.CommandContext(ctx, "go", "build", "-o", exe, "../cmd/agentconform-fake")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the fuzz harness and the action build it
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the lean fake: %v\n%s", err, out)
	}
	fakes := filepath.Join(dir, "bin")
	if err := fakecli.Install(fakes, exe, false); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), fakecli.EnvFixture+"=codex/plain-text")
	b.ReportMetric(medianFirstByte(b, env, filepath.Join(fakes, "codex"), append(codexExec, "hi")...), "ms-median")
}

// BenchmarkRealCLIVersion measures the real CLIs' --version the same way
// (start to first stdout byte), when AGENTCONFORM_REAL_CLI_BIN names a
// directory holding claude, codex and gemini (npm's node_modules/.bin).
func BenchmarkRealCLIVersion(b *testing.B) {
	bin := os.Getenv("AGENTCONFORM_REAL_CLI_BIN")
	if bin == "" {
		b.Skip("set AGENTCONFORM_REAL_CLI_BIN to a directory with the real claude, codex and gemini")
	}
	for _, cli := range fakecli.Names {
		b.Run(cli, func(b *testing.B) {
			b.ReportMetric(medianFirstByte(b, os.Environ(), filepath.Join(bin, cli), "--version"), "ms-median")
		})
	}
}

// medianFirstByte starts path args b.N times (stdin closed) and returns
// the median time to its first stdout byte, in milliseconds.
func medianFirstByte(b *testing.B, env []string, path string, args ...string) float64 {
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Env = env
		cmd.Dir = b.TempDir()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var one [1]byte
		if _, err := io.ReadFull(out, one[:]); err != nil {
			b.Fatalf("%s: no output: %v", path, err)
		}
		times = append(times, time.Since(t0))
		io.Copy(io.Discard, out)
		cmd.Wait()
		cancel()
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return float64(times[len(times)/2].Microseconds()) / 1000
}

// BenchmarkReplayThroughput replays a generated Codex transcript of many
// lines into a pipe and reports stdout lines per second, from the first
// byte to EOF (the replay, not the process start or the transcript load).
func BenchmarkReplayThroughput(b *testing.B) {
	const lines = 200_000
	path := filepath.Join(b.TempDir(), "big.jsonl")
	file, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(file)
	fmt.Fprintln(w, `{"transcript":"agentconform/v1","cli":"codex","cli_version":"0.169.0","scenario":"throughput"}`)
	fmt.Fprintln(w, `{"stdin_eof":true}`)
	fmt.Fprintln(w, `{"out":"{\"type\":\"thread.started\",\"thread_id\":\"01a1fb3a-6aae-7a50-96c0-b475683253b8\"}"}`)
	for i := 0; i < lines-1; i++ {
		fmt.Fprintf(w, `{"out":"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_%d\",\"type\":\"agent_message\",\"text\":\"line %d of a long answer, with some words to make it look like one\"}}"}`+"\n", i, i)
	}
	fmt.Fprintln(w, `{"exit":0}`)
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	file.Close()

	f := fakecli.Start(b, fakecli.Options{Transcript: path})
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Without the observation log (a record per line is a write per
		// line): the replay alone.
		cmd, _, cancel := command(b, f, "codex", append(codexExec, "hi"), cmdOpts{env: []string{fakecli.EnvObserve + "="}})
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		br := bufio.NewReaderSize(out, 1<<20)
		if _, err := br.ReadByte(); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		n := 0
		for {
			_, err := br.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				break
			}
			n++
		}
		total += time.Since(t0)
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		cancel()
		if n != lines {
			b.Fatalf("%d lines, want %d", n, lines)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(lines*b.N)/total.Seconds(), "lines/s")
}

// BenchmarkLadderWrite replays each CLI's single-tool fixture with its
// text grown to one 64 MiB line (the ladder fault, as the runner's
// line-67108864 cases do, the copy of stdout the runner reads included)
// into a pipe read as fast as it can be, and reports the fake's write
// throughput from its first byte to EOF (MB/s; the goal is 1,000 or more),
// its time from start to EOF (ms-total), its CPU time and its peak
// resident memory. Claude writes the text twice: as partial-message
// deltas, then whole.
func BenchmarkLadderWrite(b *testing.B) {
	args := map[string][]string{
		"codex":  append(codexExec, "hi"),
		"gemini": {"-p", "hi", "--output-format", "stream-json"},
		"claude": {"-p", "hi", "--output-format", "stream-json", "--verbose", "--include-partial-messages"},
	}
	for _, cli := range []string{"codex", "gemini", "claude"} {
		b.Run(cli, func(b *testing.B) {
			f := fakecli.Start(b, fakecli.Options{Fixture: cli + "/single-tool"})
			var first, total, cpu time.Duration
			var bytes int64
			var peak int64
			for i := 0; i < b.N; i++ {
				env := []string{fakecli.EnvFaults + "=ladder:size=67108864", fakecli.EnvWire + "=" + b.TempDir()}
				cmd, _, cancel := command(b, f, cli, args[cli], cmdOpts{env: env})
				out, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				buf := make([]byte, 1<<20)
				n, err := io.ReadFull(out, buf[:1])
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				for err == nil {
					var k int
					k, err = out.Read(buf)
					n += k
				}
				t2 := time.Now()
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				cancel()
				first += t2.Sub(t1)
				total += t2.Sub(t0)
				bytes += int64(n)
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
					peak = max(peak, ru.Maxrss)
				}
				if n < 64<<20 {
					b.Fatalf("%d bytes on stdout", n)
				}
			}
			b.ReportMetric(float64(bytes)/first.Seconds()/1e6, "MB/s")
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-total")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s")
			b.ReportMetric(float64(peak)/1000, "peak-MB")
		})
	}
}
