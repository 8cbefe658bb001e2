package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/jsonl"
	"github.com/agentconform/agentconform/schemas"
)

// TestLinesAgrees holds Lines to Stream on the same lines joined with
// "\n": the same findings, in the same order, and the same result, for
// clean streams, broken lines (BOM, "\r", empty, too long, not JSON,
// schema violations), every dialect, and a transcript.
func TestLinesAgrees(t *testing.T) {
	long := `{"type":"textChunk","sessionId":"s","content":"` + strings.Repeat("x", 200) + `"}`
	inputs := map[string]string{
		"unified": `{"type":"sessionStarted","sessionId":"s","agent":"codex"}` + "\n" + long + "\n" +
			`{"type":"turnCompleted","sessionId":"s","status":"completed"}`,
		"framing": "\xef\xbb\xbf{\"a\":1}\r\n\n\r\n{\"b\":2}\r\r\n" + long + "\nnot json\n{\"type\":\"nope\"}",
		"decoding": `{"type":"textChunk","type":"textChunk","sessionId":"s"}` + "\n" + `{"type":"textChunk"} {"a":1}` + "\n" +
			`{"type":"textChunk","content":"\ud800"}` + "\n" + `{"type":"textChunk",` + "\n" + "\x1b[0m" + long,
		"too long":  long + "\n" + long + long,
		"bom only":  "\xef\xbb\xbf\n{\"a\":1}",
		"empty":     "",
		"one blank": "\r",
	}
	for _, dir := range []string{"../testdata/captures/claude", "../testdata/captures/codex", "../testdata/captures/gemini"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.stdout.jsonl"))
		files2, _ := filepath.Glob(filepath.Join(dir, "*.transcript.jsonl"))
		for _, f := range append(files, files2...) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			inputs[f] = strings.TrimSuffix(string(b), "\n")
		}
	}
	optss := map[string]Options{
		"detect":  {},
		"unified": {Dialect: schemas.UnifiedEvents, Jobs: 1},
		"limit":   {MaxLineBytes: 150, Jobs: 3},
	}
	type found struct {
		F   finding.Finding
		Sev finding.Severity
	}
	run := func(f func(report Reporter) (*Result, error)) ([]found, *Result, error) {
		var fs []found
		res, err := f(func(f finding.Finding, sev finding.Severity) { fs = append(fs, found{f, sev}) })
		return fs, res, err
	}
	for name, in := range inputs {
		var lines [][]byte
		if in != "" {
			for _, l := range strings.Split(in, "\n") {
				lines = append(lines, []byte(l))
			}
		}
		for oname, opts := range optss {
			wantF, wantR, wantErr := run(func(r Reporter) (*Result, error) {
				joined := bytes.Join(lines, []byte("\n"))
				if len(lines) > 0 {
					joined = append(joined, '\n')
				}
				return Stream(context.Background(), bytes.NewReader(joined), "t.jsonl", opts, r)
			})
			gotF, gotR, gotErr := run(func(r Reporter) (*Result, error) {
				return Lines(context.Background(), lines, "t.jsonl", opts, r)
			})
			if (wantErr == nil) != (gotErr == nil) {
				t.Errorf("%s, %s: error %v, Stream's %v", name, oname, gotErr, wantErr)
			}
			if d := cmp.Diff(wantF, gotF, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s, %s: findings differ from Stream's (-Stream +Lines):\n%s", name, oname, d)
			}
			if d := cmp.Diff(wantR, gotR, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s, %s: result differs from Stream's (-Stream +Lines):\n%s", name, oname, d)
			}
			// LinesDecoded with every line decoded by the caller (all of
			// them, or the first half only) agrees too, and leaves the
			// caller's decodings as they were.
			for _, part := range []int{len(lines), len(lines) / 2} {
				decoded := make([]Decoded, part)
				for i := range decoded {
					obj, fs := jsonl.Parse(lines[i], jsonl.ParseOptions{ShareMin: i % 2})
					decoded[i] = Decoded{Obj: obj, Findings: fs}
				}
				before := cloneDecoded(decoded)
				gotF, gotR, gotErr := run(func(r Reporter) (*Result, error) {
					return LinesDecoded(context.Background(), lines, decoded, "t.jsonl", opts, r)
				})
				if (wantErr == nil) != (gotErr == nil) {
					t.Errorf("%s, %s, %d decoded: error %v, Stream's %v", name, oname, part, gotErr, wantErr)
				}
				if d := cmp.Diff(wantF, gotF, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("%s, %s, %d decoded: findings differ from Stream's (-Stream +LinesDecoded):\n%s", name, oname, part, d)
				}
				if d := cmp.Diff(wantR, gotR, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("%s, %s, %d decoded: result differs from Stream's (-Stream +LinesDecoded):\n%s", name, oname, part, d)
				}
				if d := cmp.Diff(before, decoded, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("%s, %s: LinesDecoded changed the decodings (-before +after):\n%s", name, oname, d)
				}
			}
		}
	}
}

// cloneDecoded copies the decodings deeply enough to see a change.
func cloneDecoded(ds []Decoded) []Decoded {
	out := make([]Decoded, len(ds))
	for i, d := range ds {
		b, _ := json.Marshal(d.Obj)
		var obj map[string]any
		json.Unmarshal(b, &obj)
		out[i] = Decoded{Obj: obj, Findings: append([]finding.Finding(nil), d.Findings...)}
	}
	return out
}
