//go:build unix

package fakecli_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
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
