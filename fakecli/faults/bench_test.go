package faults

import (
	"io"
	"testing"
	"time"
)

// benchLines is a real Claude stream, written line by line as the engine
// does.
func benchLines(b *testing.B) ([][]byte, int64) {
	_, steps := load(b, "claude/f_bidi_multiturn.stdout.jsonl")
	ls := lines(steps)
	var n int64
	for _, l := range ls {
		n += int64(len(l))
	}
	return ls, n
}

func benchStdout(b *testing.B, spec string) {
	ls, n := benchLines(b)
	var w io.Writer = io.Discard
	if spec != "" {
		p, _ := mustParse(b, spec, 1)
		w = p.Stdout(io.Discard, func(int) {})
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range ls {
			w.Write(l)
		}
	}
}

// BenchmarkStdout/direct is the baseline; /no_writer_fault is a plan with
// only step faults, whose Stdout returns the writer itself (the same cost
// as direct); the others go through the fault writers.
func BenchmarkStdout(b *testing.B) {
	for _, tt := range []struct{ name, spec string }{
		{"direct", ""},
		{"no_writer_fault", "crlf;drop:nth=1"},
		{"latency_0ms", "latency:ms=0"},
		{"slicer", "slicer"},
		{"slicer_max64", "slicer:max=64"},
		{"slicer_max1", "slicer:max=1"},
		{"limit_data_unreached", "limit_data:bytes=1000000000"},
	} {
		b.Run(tt.name, func(b *testing.B) { benchStdout(b, tt.spec) })
	}
}

func BenchmarkSteps(b *testing.B) {
	cli, steps := load(b, "claude/f_bidi_multiturn.stdout.jsonl")
	for _, spec := range []string{"drop", "unknown_field", "ladder:size=1048577", "repeat_id;break_pair"} {
		p, _ := mustParse(b, spec, 1)
		b.Run(spec, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Steps(cli, steps)
			}
		})
	}
}

// BenchmarkSlicerPause is one 300 µs pause of the slicer (delay_us=300):
// its time per operation says how long the pause really lasts (about
// 1.1 ms with time.Sleep, whose timers wake on the millisecond).
func BenchmarkSlicerPause(b *testing.B) {
	for b.Loop() {
		preciseSleep(300 * time.Microsecond)
	}
}
