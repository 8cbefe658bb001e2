package validate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentconform/agentconform/finding"
)

// writeUnified writes n §8.1 unified events shaped like the reference
// generator (shared bench/gen_unified.py): about 228 bytes per event.
func writeUnified(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewSource(7))
	i := 0
	ev := func(typ string, rest string) {
		i++
		fmt.Fprintf(bw, `{"id":"ev_%d","sessionId":"sess_abc123","timestamp":"2025-12-03T10:00:00.000Z","type":%q%s}`+"\n", i, typ, rest)
	}
	ev("sessionStarted", `,"agentType":"claude","config":{"agentType":"claude","model":"sonnet","approvalMode":"autoAll"}`)
	for i < n {
		content := strings.Repeat("I'll analyze the codebase and refactor the authentication module ", 1+rng.Intn(4))
		ev("textChunk", fmt.Sprintf(`,"content":%q,"isPartial":%t,"role":"assistant"`, content, rng.Float64() < 0.5))
		tid := fmt.Sprintf("toolu_%d", i)
		ev("toolStarted", fmt.Sprintf(`,"toolId":%q,"toolName":"Edit","arguments":{"file_path":"/src/auth.ts","old_string":"function login()","new_string":"async function login()"}`, tid))
		ev("toolProgress", fmt.Sprintf(`,"toolId":%q,"output":%q,"progress":0.5`, tid, strings.Repeat("line of output\n", 1+rng.Intn(5))))
		ev("toolCompleted", fmt.Sprintf(`,"toolId":%q,"success":true,"result":"File updated successfully"`, tid))
		ev("fileChanged", `,"filePath":"/src/auth.ts","changeType":"modified","before":"function login()","after":"async function login()"`)
		ev("turnCompleted", `,"usage":{"inputTokens":1250,"outputTokens":487,"totalTokens":1737},"durationMs":5000`)
	}
	ev("sessionEnded", `,"reason":"completed","finalUsage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}`)
	return bw.Flush()
}

var (
	benchOnce sync.Once
	benchData []byte
)

// unified300k is the 300k-event stream of the speed goal (about 68 MB).
func unified300k(b *testing.B) []byte {
	benchOnce.Do(func() {
		var buf bytes.Buffer
		if err := writeUnified(&buf, 300000); err != nil {
			b.Fatal(err)
		}
		benchData = buf.Bytes()
	})
	return benchData
}

// BenchmarkValidateUnified300k is the throughput goal: validate checks the
// 300k-event stream against the §8.1 schema as written (the same schema
// ajv is given in the reference measurement), on every core.
func BenchmarkValidateUnified300k(b *testing.B) {
	benchValidate(b, Options{Profile: "spec"})
}

// BenchmarkValidateUnified300kUnifiedProfile is the same stream under the
// default (corrected) unified profile.
func BenchmarkValidateUnified300kUnifiedProfile(b *testing.B) {
	benchValidate(b, Options{})
}

// BenchmarkValidateUnified300kOneCore shows the single-core figure.
func BenchmarkValidateUnified300kOneCore(b *testing.B) {
	benchValidate(b, Options{Profile: "spec", Jobs: 1})
}

func benchValidate(b *testing.B, opts Options) {
	data := unified300k(b)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Stream(context.Background(), bytes.NewReader(data), "bench", opts, func(f finding.Finding, _ finding.Severity) {
			b.Fatalf("unexpected finding: %s", f)
		})
		if err != nil {
			b.Fatal(err)
		}
		if res.Lines != bytes.Count(data, []byte("\n")) || len(res.Drift) > 0 {
			b.Fatalf("lines=%d drift=%d", res.Lines, len(res.Drift))
		}
	}
}

// BenchmarkDecodeOnlyEncodingJSON is the floor the goal is measured
// against: merely decoding every line with encoding/json, one core.
func BenchmarkDecodeOnlyEncodingJSON(b *testing.B) {
	data := unified300k(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var v any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkAjvReference runs the reference measurement's ajv script on the
// same stream when AGENTCONFORM_AJV_DIR names a directory holding
// ajv_validate.mjs with ajv and ajv-formats installed (npm install in a copy
// of the shared bench directory), so both figures come from one run.
func BenchmarkAjvReference(b *testing.B) {
	dir := os.Getenv("AGENTCONFORM_AJV_DIR")
	if dir == "" {
		b.Skip("set AGENTCONFORM_AJV_DIR to a directory with ajv_validate.mjs and node_modules (ajv, ajv-formats)")
	}
	data := unified300k(b)
	tmp := filepath.Join(b.TempDir(), "unified-300k.jsonl")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		b.Fatal(err)
	}
	schema := filepath.Join("..", "schemas", "spec", "unified-event.schema.json")
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("node", filepath.Join(dir, "ajv_validate.mjs"), schema, tmp)
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte(`"invalid":0`)) {
			b.Fatalf("ajv: %v: %s", err, out)
		}
	}
}

// BenchmarkPeakRSS1GB validates a 1 GB unified stream piped into the real
// command and reports the child's peak resident set size ("peak-MB").
// Goal: under 100 MB. Skipped under -short.
func BenchmarkPeakRSS1GB(b *testing.B) {
	if testing.Short() {
		b.Skip("1 GB stream")
	}
	bin := filepath.Join(b.TempDir(), "agentconform")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/agentconform").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	const events = 4_400_000 // about 1 GB
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "validate", "-q", "--format", "json", "-")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		cw := &countingWriter{w: stdin}
		werr := writeUnified(cw, events)
		stdin.Close()
		if err := cmd.Wait(); err != nil || werr != nil {
			b.Fatalf("validate: %v %v\n%s", err, werr, out.String())
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-MB")
		b.ReportMetric(float64(cw.n)/1e9, "GB")
		b.SetBytes(cw.n)
	}
	_ = runtime.NumCPU()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// BenchmarkValidatePeakRSS pipes about 260 MB of valid unified events
// into the real command at several --jobs and reports the child's peak
// resident set size ("peak-RSS-MB", the kernel's maxrss, which is the
// process's VmHWM at exit). Goal: under 64 MB at any --jobs and input
// size. The "1MiB-lines" runs pipe 260 lines of 1 MiB each. Skipped under
// -short.
func BenchmarkValidatePeakRSS(b *testing.B) {
	if testing.Short() {
		b.Skip("260 MB stream")
	}
	bin := filepath.Join(b.TempDir(), "agentconform")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/agentconform").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	const events = 1_140_000 // about 260 MB
	for _, run := range []struct {
		jobs  int
		write func(io.Writer) error
		name  string
	}{
		{1, func(w io.Writer) error { return writeUnified(w, events) }, ""},
		{8, func(w io.Writer) error { return writeUnified(w, events) }, ""},
		{32, func(w io.Writer) error { return writeUnified(w, events) }, ""},
		{1, func(w io.Writer) error { return writeLongLines(w, 260, 1<<20) }, "/1MiB-lines"},
		{8, func(w io.Writer) error { return writeLongLines(w, 260, 1<<20) }, "/1MiB-lines"},
	} {
		jobs := run.jobs
		b.Run(fmt.Sprintf("jobs=%d%s", jobs, run.name), func(b *testing.B) {
			var peak float64
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(bin, "validate", "-q", "--jobs", fmt.Sprint(jobs), "-")
				stdin, err := cmd.StdinPipe()
				if err != nil {
					b.Fatal(err)
				}
				var out bytes.Buffer
				cmd.Stdout = &out
				cmd.Stderr = &out
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				cw := &countingWriter{w: stdin}
				werr := run.write(cw)
				stdin.Close()
				if err := cmd.Wait(); err != nil || werr != nil {
					b.Fatalf("validate: %v %v\n%s", err, werr, out.String())
				}
				if !bytes.Contains(out.Bytes(), []byte("OK: 1 stream")) {
					b.Fatalf("validate: %s", out.String())
				}
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				peak = max(peak, float64(ru.Maxrss)/1024)
				b.SetBytes(cw.n)
			}
			b.ReportMetric(peak, "peak-RSS-MB")
		})
	}
}

// writeLongLines writes a valid unified session of n events, most of them
// text chunks of about size bytes.
func writeLongLines(w io.Writer, n, size int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	head := `{"id":"ev_%d","sessionId":"s1","timestamp":"2025-12-03T10:00:00.000Z","type":%q`
	fmt.Fprintf(bw, head+`,"agentType":"claude","config":{"agentType":"claude","model":"sonnet","approvalMode":"autoAll"}}`+"\n", 0, "sessionStarted")
	content := strings.Repeat("I'll analyze the codebase. ", size/27)
	for i := 1; i < n-1; i++ {
		fmt.Fprintf(bw, head+`,"content":%q,"isPartial":true,"role":"assistant"}`+"\n", i, "textChunk", content)
	}
	fmt.Fprintf(bw, head+`,"reason":"completed","finalUsage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}`+"\n", n-1, "sessionEnded")
	return bw.Flush()
}
