package conformance

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// floodAdapters write without end after their hello: small events, or
// one line that never ends.
var floodAdapters = map[string]string{
	"events": `yes '{"type":"flood","pad":"` + strings.Repeat("a", 100) + `"}'`,
	"line":   `tr '\0' a < /dev/zero`,
}

func floodAdapter(kind string) Adapter {
	script := `echo '{"agentconform":"hello","profile":"native","agents":["codex"],"supports":[]}'; ` + floodAdapters[kind]
	return Adapter{Name: "flood-" + kind, Command: func(ctx context.Context) *exec.Cmd {
		return exec.CommandContext(ctx, "/bin/sh", "-c", script)
	}}
}

// TestFloodingAdapter pins the runner's bound on what an adapter writes:
// past maxAdapterOutput the case fails with that reason and the adapter
// is stopped, long before the case's deadline.
func TestFloodingAdapter(t *testing.T) {
	for kind := range floodAdapters {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			c := pickCases(t, "codex/plain-text")[0]
			o, err := Exec(context.Background(), Config{Adapter: floodAdapter(kind), Timeout: 2 * time.Minute, WorkDir: t.TempDir()}, c)
			if err != nil {
				t.Fatal(err)
			}
			if o.TimedOut || !o.OutputCapped {
				t.Fatalf("timed out %v, output capped %v; want the cap to stop the adapter (bad lines: %v)", o.TimedOut, o.OutputCapped, o.BadLines)
			}
			if got := timeoutOrFail(o); !strings.Contains(got, strconv.Itoa(maxAdapterOutput>>20)+" MiB") {
				t.Errorf("the reason %q does not name the cap", got)
			}
		})
	}
}

func timeoutOrFail(o *Observation) string {
	for _, b := range o.BadLines {
		if strings.Contains(b, "MiB") {
			return b
		}
	}
	return strings.Join(o.BadLines, "; ")
}

// BenchmarkFloodingAdapter reports the runner's peak resident memory
// (VmHWM, the whole process) while adapters flood it; run it alone:
// go test -run '^$' -bench FloodingAdapter ./conformance
func BenchmarkFloodingAdapter(b *testing.B) {
	if _, err := exec.LookPath("yes"); err != nil {
		b.Skip("no yes(1)")
	}
	c := pickCases(b, "codex/plain-text")[0]
	for i := 0; i < b.N; i++ {
		for kind := range floodAdapters {
			o, err := Exec(context.Background(), Config{Adapter: floodAdapter(kind), Timeout: 2 * time.Minute, WorkDir: b.TempDir()}, c)
			if err != nil || !o.OutputCapped {
				b.Fatalf("%s: err %v, capped %v", kind, err, o != nil && o.OutputCapped)
			}
		}
	}
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-MiB")
}

// peakRSS is the process's peak resident set size in bytes (0 if unknown).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
