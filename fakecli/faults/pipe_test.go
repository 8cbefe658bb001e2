package faults

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// writeLines writes each line in one Write, as the engine does, and checks
// that every Write reports the whole line written.
func writeLines(t testing.TB, w io.Writer, ls [][]byte) {
	t.Helper()
	for _, l := range ls {
		n, err := w.Write(l)
		if n != len(l) || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v", len(l), n, err)
		}
	}
}

func TestSlicerMax1(t *testing.T) {
	_, steps := load(t, "claude/b_tool_bash.stdout.jsonl")
	in := lines(steps)
	p, _ := mustParse(t, "slicer:max=1", 1)
	var rec recorder
	writeLines(t, p.Stdout(&rec, nil), in)
	for i, w := range rec.writes {
		if len(w) != 1 {
			t.Fatalf("write %d has %d bytes, want 1", i, len(w))
		}
	}
	if want := bytes.Join(in, nil); !bytes.Equal(rec.joined(), want) {
		t.Fatal("the writes do not add up to the stream")
	}
	if a := onlyApplied(t, p.Applied(), "slicer"); a.Params["max"] != "1" {
		t.Errorf("Applied params = %v", a.Params)
	}
}

func TestSlicer(t *testing.T) {
	_, steps := load(t, "codex/c_mixed_items.stdout.jsonl")
	in := lines(steps)
	for _, spec := range []string{"slicer", "slicer:max=7"} {
		p, _ := mustParse(t, spec, 3)
		var rec recorder
		w := p.Stdout(&rec, nil)
		for _, l := range in {
			before := len(rec.writes)
			writeLines(t, w, [][]byte{l})
			got := rec.writes[before:]
			if !bytes.Equal(bytes.Join(got, nil), l) {
				t.Fatalf("%s: a line's writes do not add up to the line", spec)
			}
			if spec == "slicer" && len(got) < 2 {
				t.Errorf("%s: a %d-byte line went out in %d write", spec, len(l), len(got))
			}
			for _, piece := range got {
				if len(piece) == 0 || (spec == "slicer:max=7" && len(piece) > 7) {
					t.Errorf("%s: a write of %d bytes", spec, len(piece))
				}
			}
		}
	}
}

func TestSlicerDelay(t *testing.T) {
	p, s := mustParse(t, "slicer:max=1,delay_us=250", 1)
	var rec recorder
	writeLines(t, p.Stdout(&rec, nil), [][]byte{[]byte("abcd\n")})
	// A pause between the pieces of a line, none before the first.
	if len(s.d) != 4 || s.total() != time.Millisecond {
		t.Errorf("sleeps = %v, want 4 of 250µs", s.d)
	}
}

func TestSlicerUTF8(t *testing.T) {
	p, s := mustParse(t, "slicer:utf8=1,delay_us=100", 1)
	var rec recorder
	line := []byte("{\"text\":\"a é — 日 🎉 z\"}\n")
	writeLines(t, p.Stdout(&rec, nil), [][]byte{line})
	if !bytes.Equal(rec.joined(), line) {
		t.Fatal("the writes do not add up to the line")
	}
	// é (2 bytes), — (3), 日 (3), 🎉 (4): each cut after its first byte.
	var got []string
	for _, w := range rec.writes {
		got = append(got, string(w))
	}
	want := []string{"{\"text\":\"a \xc3", "\xa9 \xe2", "\x80\x94 \xe6", "\x97\xa5 \xf0", "\x9f\x8e\x89 z\"}\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("writes %q, want %q", got, want)
	}
	if len(s.d) != 4 {
		t.Errorf("sleeps = %v, want 4", s.d)
	}
	var ascii recorder
	p, _ = mustParse(t, "slicer:utf8=1", 1)
	writeLines(t, p.Stdout(&ascii, nil), [][]byte{[]byte("plain ascii\n")})
	if len(ascii.writes) != 1 {
		t.Errorf("an ASCII line went out in %d writes, want 1", len(ascii.writes))
	}
}

// boundaries are the sizes of the writes a slicer makes of a stream.
func boundaries(t *testing.T, spec string, seed int64, in [][]byte) []int {
	p, _ := mustParse(t, spec, seed)
	var rec recorder
	writeLines(t, p.Stdout(&rec, nil), in)
	var sizes []int
	for _, w := range rec.writes {
		sizes = append(sizes, len(w))
	}
	return sizes
}

func TestSlicerDeterministic(t *testing.T) {
	_, steps := load(t, "gemini/tool_multi.stdout.jsonl")
	in := lines(steps)
	a, b := boundaries(t, "slicer", 42, in), boundaries(t, "slicer", 42, in)
	if !equalInts(a, b) {
		t.Error("same seed, different writes")
	}
	if c := boundaries(t, "slicer", 43, in); equalInts(a, c) {
		t.Error("seeds 42 and 43 split the stream the same way")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLatency(t *testing.T) {
	in := [][]byte{[]byte("{}\n"), []byte("{}\n"), []byte("{}\n"), []byte("{}\n"), []byte("{}\n"), []byte("{}\n")}
	p, s := mustParse(t, "latency:ms=50", 1)
	var rec recorder
	writeLines(t, p.Stdout(&rec, nil), in)
	for _, d := range s.d {
		if d != 50*time.Millisecond {
			t.Errorf("slept %v, want 50ms", d)
		}
	}
	if len(s.d) != len(in) || len(rec.writes) != len(in) {
		t.Errorf("%d sleeps and %d writes for %d lines", len(s.d), len(rec.writes), len(in))
	}

	jittered := func(seed int64) []time.Duration {
		p, s := mustParse(t, "latency:ms=50,jitter=10", seed)
		writeLines(t, p.Stdout(io.Discard, nil), in)
		return s.d
	}
	a := jittered(1)
	distinct := map[time.Duration]bool{}
	for _, d := range a {
		distinct[d] = true
		if d < 40*time.Millisecond || d > 60*time.Millisecond {
			t.Errorf("slept %v, want 40ms to 60ms", d)
		}
	}
	if len(distinct) < 2 {
		t.Errorf("jitter gave the same delay %d times", len(a))
	}
	if b := jittered(1); len(a) != len(b) || a[0] != b[0] || a[5] != b[5] {
		t.Error("same seed, different delays")
	}

	// line=N: one sleep, before the Nth write, and every line written.
	p, s = mustParse(t, "latency:ms=3000,line=4", 1)
	var one recorder
	writeLines(t, p.Stdout(&one, nil), in)
	if len(s.d) != 1 || s.d[0] != 3*time.Second || len(one.writes) != len(in) {
		t.Errorf("line=4: sleeps %v and %d writes for %d lines, want one of 3s", s.d, len(one.writes), len(in))
	}
}

func TestBandwidth(t *testing.T) {
	_, steps := load(t, "claude/b_tool_bash.stdout.jsonl")
	in := lines(steps)
	p, s := mustParse(t, "bandwidth:bps=1000", 1)
	var rec recorder
	writeLines(t, p.Stdout(&rec, nil), in)
	total := len(rec.joined())
	if !bytes.Equal(rec.joined(), bytes.Join(in, nil)) {
		t.Fatal("throttled stream differs")
	}
	for _, w := range rec.writes {
		if len(w) > 50 {
			t.Fatalf("a write of %d bytes; at 1000 B/s pieces are 50 bytes", len(w))
		}
	}
	want := time.Duration(total) * time.Millisecond // 1 ms per byte
	if got := s.total(); got < want-time.Millisecond || got > want+time.Millisecond {
		t.Errorf("slept %v for %d bytes at 1000 B/s, want %v", got, total, want)
	}
}

func TestLimitData(t *testing.T) {
	_, steps := load(t, "codex/c_mixed_items.stdout.jsonl")
	in := lines(steps)
	stream := bytes.Join(in, nil)
	for _, n := range []int{0, 1, len(in[0]) - 1, len(in[0]), len(in[0]) + 7, 1000, len(stream) - 1} {
		p, _ := mustParse(t, "limit_data:bytes="+itoa(n), 1)
		var rec recorder
		var ends []int
		var w io.Writer
		w = p.Stdout(&rec, func(code int) {
			ends = append(ends, code)
			// end runs outside the writer's lock: writing here must not
			// deadlock, and is discarded.
			w.Write([]byte("late\n"))
		})
		writeLines(t, w, in)
		if !bytes.Equal(rec.joined(), stream[:n]) {
			t.Errorf("bytes=%d: wrote %d bytes, want the first %d of the stream", n, len(rec.joined()), n)
		}
		if len(ends) != 1 || ends[0] != 0 {
			t.Errorf("bytes=%d: end calls = %v, want [0]", n, ends)
		}
		onlyApplied(t, p.Applied(), "limit_data")
	}

	// A limit beyond the stream changes nothing and never ends it.
	p, _ := mustParse(t, "limit_data:bytes="+itoa(len(stream)+1), 1)
	var rec recorder
	ended := false
	writeLines(t, p.Stdout(&rec, func(int) { ended = true }), in)
	if ended || !bytes.Equal(rec.joined(), stream) || p.Applied() != nil {
		t.Errorf("limit beyond the stream: ended=%v, %d bytes, applied %v", ended, len(rec.joined()), p.Applied())
	}
}

// TestPipeCut: the lines before the first one longer than at are written
// whole, that one only up to at bytes (a multiple of 64 KiB), nothing after,
// and the process is not ended: Gemini CLI exits as it would (process.exit
// in google-gemini/gemini-cli@5411f113 packages/cli/src/gemini.tsx right
// after runNonInteractive, without draining stdout), as in
// testdata/captures/gemini/pipe_cut.meta.json.
func TestPipeCut(t *testing.T) {
	small := []byte(`{"type":"message","role":"assistant","content":"` + strings.Repeat("x", 5000) + `","delta":true}` + "\n")
	big := []byte(`{"type":"tool_result","tool_id":"t1","status":"success","output":"` + strings.Repeat("y", 368000) + `"}` + "\n")
	in := [][]byte{small, small, small, big, small, []byte(`{"type":"result","status":"success"}` + "\n")}
	head := bytes.Join(in[:3], nil)
	for _, at := range []int{65536, 131072, 327680} {
		p, _ := mustParse(t, "pipe_cut:at="+itoa(at), 1)
		var rec recorder
		ended := false
		writeLines(t, p.Stdout(&rec, func(int) { ended = true }), in)
		want := append(append([]byte(nil), head...), big[:at]...)
		if !bytes.Equal(rec.joined(), want) || ended {
			t.Errorf("at=%d: wrote %d bytes (want %d: three lines and %d of the big one), ended %v", at, len(rec.joined()), len(want), at, ended)
		}
		a := onlyApplied(t, p.Applied(), "pipe_cut")
		if a.Params["at"] != itoa(at) || !strings.Contains(a.Detail, "stdout lost "+itoa(at)+" bytes into write 4") {
			t.Errorf("at=%d: applied %+v", at, a)
		}
	}
	// No line longer than at: left alone, however long the stream.
	p, _ := mustParse(t, "pipe_cut", 1)
	var rec recorder
	var many [][]byte
	for i := 0; i < 60; i++ {
		many = append(many, small)
	}
	writeLines(t, p.Stdout(&rec, nil), many)
	if !bytes.Equal(rec.joined(), bytes.Join(many, nil)) || p.Applied() != nil {
		t.Errorf("short lines: %d bytes, applied %v", len(rec.joined()), p.Applied())
	}
}

func TestWriterComposition(t *testing.T) {
	_, steps := load(t, "gemini/tool_single.stdout.jsonl")
	in := lines(steps)
	p, s := mustParse(t, "latency:ms=5;slicer:max=3;limit_data:bytes=500", 7)
	var rec recorder
	ends := 0
	writeLines(t, p.Stdout(&rec, func(int) { ends++ }), in)
	if !bytes.Equal(rec.joined(), bytes.Join(in, nil)[:500]) || ends != 1 {
		t.Fatalf("wrote %d bytes, ended %d times", len(rec.joined()), ends)
	}
	for _, w := range rec.writes {
		if len(w) > 3 {
			t.Fatalf("a write of %d bytes after slicer:max=3", len(w))
		}
	}
	// latency comes first: it sleeps once per engine write, not per piece.
	if len(s.d) != len(in) {
		t.Errorf("%d sleeps for %d lines", len(s.d), len(in))
	}
	var names []string
	for _, a := range p.Applied() {
		names = append(names, a.Fault)
	}
	if got := join(names); got != "latency,slicer,limit_data" {
		t.Errorf("applied %s", got)
	}
}

func TestStdoutWithoutWriterFaults(t *testing.T) {
	p, _ := mustParse(t, "crlf;drop:nth=1", 1)
	var buf bytes.Buffer
	if w := p.Stdout(&buf, nil); w != &buf {
		t.Error("a plan without writer faults wrapped stdout")
	}
}
