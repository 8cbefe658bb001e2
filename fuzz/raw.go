package fuzz

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing/iotest"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
	"github.com/agentconform/agentconform/validate"
)

// The targets on arbitrary bytes: the JSONL reader and validate, the
// transcript format, and the fakes' command lines.

// validated is everything validate.Stream reported on one input.
type validated struct {
	Findings []string
	Result   string
	// lines and rules are each finding's line and rule ID ("" for none).
	lines []int
	rules []string
}

// runValidate validates data read through rd with jobs workers.
func runValidate(rd io.Reader, jobs int) (validated, error) {
	var v validated
	res, err := validate.Stream(context.Background(), rd, "input", validate.Options{Jobs: jobs, MaxLineBytes: 1 << 16},
		func(f finding.Finding, sev finding.Severity) {
			id := ""
			if f.Rule != nil {
				id = f.Rule.ID
			}
			v.lines, v.rules = append(v.lines, f.Line), append(v.rules, id)
			v.Findings = append(v.Findings, fmt.Sprintf("%s %s line=%d off=%d col=%d ptr=%q: %s (expected %q, actual %q)",
				sev, id, f.Line, f.Offset, f.Column, f.Pointer, f.Message, f.Expected, f.Actual))
		})
	if err != nil {
		return v, err
	}
	v.Result = fmt.Sprintf("dialect=%s profile=%s lines=%d empty=%d bytes=%d violations=%d warnings=%d counts=%v drift=%d",
		res.Dialect, res.Profile, res.Lines, res.Empty, res.Bytes, res.Violations, res.Warnings, res.Counts, len(res.Drift))
	return v, nil
}

// streamRules are the rules whose findings may be about the whole stream
// rather than one line (Line 0): the dialect and schema of the stream, and
// an agentconform/v1 transcript's file-level errors (transcript.Error
// without a line, such as a transcript with no header).
var streamRules = map[string]bool{
	validate.RuleUnknownDialect.ID: true,
	validate.RuleNoKnownEvents.ID:  true,
	validate.RuleNoSchema.ID:       true,
	validate.RuleTranscriptLine.ID: true,
}

// CheckValidate judges the JSONL reader and validate.Stream on arbitrary
// bytes: no panic, no hang (the engine's and the watchdog's business),
// every finding names a rule and a line of the input (or is one of the
// stream-level rules), and the findings are the same however the bytes
// are split into reads and however many workers validate them.
func CheckValidate(data []byte) *Failure {
	defer watchWhat(time.Now(), 10*time.Second, fmt.Sprintf("validate on %d bytes", len(data)))()
	ref, err := runValidate(bytes.NewReader(data), 1)
	if err != nil {
		return failf(PropNoPanic, "validate failed on an in-memory reader: %v", err)
	}
	physical := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		physical++
	}
	for i, line := range ref.lines {
		switch id := ref.rules[i]; {
		case id == "":
			return failf(PropValid, "a finding names no rule: %s", ref.Findings[i])
		case line < 0 || line > physical:
			return failf(PropValid, "a finding names line %d of a %d-line input: %s", line, physical, ref.Findings[i])
		case line == 0 && !streamRules[id]:
			return failf(PropValid, "a finding names no line: %s", ref.Findings[i])
		}
	}
	seed := uint64(len(data))
	for _, b := range data[:min(len(data), 16)] {
		seed = seed*131 + uint64(b)
	}
	splits := []struct {
		name string
		rd   io.Reader
		jobs int
	}{
		{"one byte per read, 2 workers", iotest.OneByteReader(bytes.NewReader(data)), 2},
		{"half reads", iotest.HalfReader(bytes.NewReader(data)), 1},
		{"random reads, 3 workers", &chunkReader{data: data, rng: rand.New(rand.NewPCG(seed, seed^0x9e37)), max: 1 + int(seed%97)}, 3},
	}
	for _, s := range splits {
		got, err := runValidate(s.rd, s.jobs)
		if err != nil {
			return failf(PropValid, "validate failed with %s: %v", s.name, err)
		}
		if !reflect.DeepEqual(got.Findings, ref.Findings) || got.Result != ref.Result {
			return failf(PropValid, "the findings depend on how the bytes are read (%s):\n whole: %s\n        %q\n split: %s\n        %q",
				s.name, ref.Result, ref.Findings, got.Result, got.Findings)
		}
	}
	return nil
}

// chunkReader reads data in random-sized pieces.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.rng.IntN(c.max))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// CheckTranscript judges the transcript format on arbitrary bytes: Load
// never panics; every error names a line (or is about the whole file); a
// transcript that loads writes out (Write) to one that loads back equal.
func CheckTranscript(data []byte) *Failure {
	defer watchWhat(time.Now(), 10*time.Second, fmt.Sprintf("transcript.Load on %d bytes", len(data)))()
	t, err := transcript.Load(bytes.NewReader(data), "input", transcript.Options{MaxLineBytes: 1 << 16})
	if err != nil {
		es, ok := transcript.IsErrors(err)
		if !ok {
			return failf(PropValid, "Load of an in-memory transcript failed without saying where: %v", err)
		}
		for _, e := range es {
			if e.Line < 0 || strings.TrimSpace(e.Msg) == "" {
				return failf(PropValid, "a Load error without a line or a message: %+v", *e)
			}
		}
		return nil
	}
	var buf bytes.Buffer
	if err := transcript.Write(&buf, t); err != nil {
		return failf(PropValid, "Write of a transcript Load accepted failed: %v", err)
	}
	again, err := transcript.Load(bytes.NewReader(buf.Bytes()), "again", transcript.Options{})
	if err != nil {
		return failf(PropValid, "Load rejects what Write wrote: %v\n%s", err, clip(buf.String(), 2000))
	}
	if !sameTranscript(t, again) {
		return failf(PropValid, "Write then Load changed the transcript:\n%s", clip(buf.String(), 2000))
	}
	return nil
}

// sameTranscript compares two transcripts, line numbers and names aside.
func sameTranscript(a, b *transcript.Transcript) bool {
	if !reflect.DeepEqual(normalHeader(a.Header), normalHeader(b.Header)) || len(a.Steps) != len(b.Steps) {
		return false
	}
	for i := range a.Steps {
		x, y := a.Steps[i], b.Steps[i]
		x.Line, x.Offset, y.Line, y.Offset = 0, 0, 0, 0
		if !reflect.DeepEqual(normalStep(x), normalStep(y)) {
			return false
		}
	}
	return true
}

// normalHeader evens out what Write normalizes: an empty format is
// written as agentconform/v1.
func normalHeader(h transcript.Header) transcript.Header {
	if h.Format == "" {
		h.Format = transcript.Format
	}
	if len(h.Argv) == 0 {
		h.Argv = nil
	}
	if len(h.Env) == 0 {
		h.Env = nil
	}
	return h
}

func normalStep(s transcript.Step) transcript.Step {
	if len(s.Capture) == 0 {
		s.Capture = nil
	}
	if len(s.Cases) == 0 {
		s.Cases = nil
	}
	if len(s.OnSignal) == 0 {
		s.OnSignal = nil
	}
	return s
}

// CheckFakeFlags runs a fake CLI in process with an arbitrary command
// line: the first byte chooses claude, codex or gemini, the rest is the
// arguments, NUL-separated. It replays the CLI's plain-text fixture with
// stdin closed, in dir (its session store and working directory). The fake
// must end within a deadline with a status from 0 to 255, and say why on
// stderr when the status is not 0.
//
// Codex writes its last message to the file --output-last-message names:
// so that no input writes outside dir, a Codex command line with a "/" in
// it is skipped, and the fake runs with dir as the working directory (one
// at a time: the working directory belongs to the process).
func CheckFakeFlags(data []byte, dir string) *Failure {
	if len(data) == 0 {
		return nil
	}
	cli := fakecli.Names[int(data[0])%len(fakecli.Names)]
	var args []string
	if len(data) > 1 {
		args = strings.Split(string(data[1:]), "\x00")
	}
	if cli == "codex" && bytes.ContainsRune(data[1:], '/') {
		return nil
	}
	env := map[string]string{fakecli.EnvFixture: cli + "/plain-text", fakecli.EnvSessions: filepath.Join(dir, "sessions")}
	var stdout, stderr bytes.Buffer
	fakeMu.Lock()
	defer fakeMu.Unlock()
	wd, err := os.Getwd()
	if err != nil {
		return failf(PropNoPanic, "the case could not run: %v", err)
	}
	if err := os.Chdir(dir); err != nil {
		return failf(PropNoPanic, "the case could not run: %v", err)
	}
	defer os.Chdir(wd)
	start := time.Now()
	stop := watchWhat(start, 20*time.Second, fmt.Sprintf("%s %q", cli, args))
	code := fakecli.Run(cli, args, bytes.NewReader(nil), &stdout, &stderr, func(k string) string { return env[k] })
	stop()
	if took := time.Since(start); took > 5*time.Second {
		return failf(PropDeadline, "%s %q took %s", cli, args, took.Round(time.Millisecond))
	}
	if code < 0 || code > 255 {
		return failf(PropValid, "%s %q exited %d, not a status from 0 to 255", cli, args, code)
	}
	if code != 0 && stderr.Len() == 0 {
		return failf(PropValid, "%s %q exited %d without a word on stderr", cli, args, code)
	}
	return nil
}

// fakeMu serialises CheckFakeFlags, which changes the working directory.
var fakeMu sync.Mutex

// The targets on arbitrary bytes, for RawSeeds.
const (
	RawValidate   = "validate"
	RawTranscript = "transcript"
	RawFakeFlags  = "fake-flags"
)

// rawSeedMax bounds the seeds of the targets on arbitrary bytes.
const rawSeedMax = 64 << 10

// RawSeeds returns the seeds of a target on arbitrary bytes: every fixture
// file but the long-output ones for validate and transcript, and the streams the reference adapters
// make of three of them for validate; real invocations for the fakes.
func RawSeeds(target string) [][]byte {
	var out [][]byte
	switch target {
	case RawValidate, RawTranscript:
		all, _ := fixtures.All()
		for _, fx := range all {
			// The long-output fixtures (300 KiB) are left out: Go's engine
			// minimizes every new interesting input byte by byte, and on
			// inputs that size it does little else.
			if b, err := fsRead(fx.Path); err == nil && len(b) <= rawSeedMax {
				out = append(out, b)
			}
		}
		out = append(out, []byte("{}\n"), []byte("\xef\xbb\xbf{\"type\":\"system\",\"subtype\":\"init\"}\r\n{"), []byte("not json\n\n{\"a\":1}{\"b\":2}\n"))
		if target == RawValidate {
			for _, profile := range []string{"unified", "shim"} {
				tr, _ := Reference(profile)
				for _, name := range []string{"claude/single-tool", "codex/file-change", "gemini/multi-tool"} {
					c, _ := CaseOf(Input{Fixture: name})
					if run, err := Execute(c, tr); err == nil {
						out = append(out, append(bytes.Join(run.Events, []byte("\n")), '\n'))
					}
				}
			}
		}
	case RawRPCMessage, RawACP, RawAppServer:
		out = rpcSeeds(target)
	case RawFakeFlags:
		for _, s := range []string{
			"\x00-p\x00--output-format\x00stream-json\x00--verbose\x00hi",
			"\x00--output-format\x00stream-json\x00--verbose\x00--input-format\x00stream-json\x00--permission-prompt-tool\x00stdio",
			"\x00--resume\x00abc\x00-p\x00x",
			"\x00--version",
			"\x01exec\x00--json\x00hello",
			"\x01exec\x00--json\x00resume\x00--last\x00again",
			"\x01exec\x00--json\x00-c\x00sandbox_mode=\"read-only\"\x00-",
			"\x02-p\x00hi\x00--output-format\x00stream-json",
			"\x02--output-format\x00stream-json\x00--yolo\x00-p\x00x",
			"\x02-r\x00latest\x00-o\x00json\x00x",
			"\x00--\x00-x", "\x01-", "\x02---",
		} {
			out = append(out, []byte(s))
		}
	}
	return out
}

func fsRead(p string) ([]byte, error) {
	f, err := fixtures.FS().Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
