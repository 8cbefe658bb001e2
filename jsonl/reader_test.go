package jsonl

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll reads every line of rd, copying Bytes so that they survive the
// next call to Next.
func readAll(rd io.Reader, opts Options) ([]Line, Stats, error) {
	r := NewReader(rd, opts)
	var lines []Line
	for {
		l, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return lines, r.Stats(), err
		}
		if l.Bytes != nil {
			l.Bytes = bytes.Clone(l.Bytes)
		}
		lines = append(lines, l)
	}
}

// chunkReader returns the data in chunks of random sizes between 1 and max.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1 + c.rng.IntN(c.max)
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// splits are the ways every framing test feeds its input to the Reader;
// all of them must produce identical lines.
var splits = []struct {
	name string
	wrap func([]byte) io.Reader
}{
	{"whole", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"one-byte", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
	{"half", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
	{"data-err", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
	{"random-chunks", func(b []byte) io.Reader {
		return &chunkReader{data: b, rng: rand.New(rand.NewPCG(1, 2)), max: 7}
	}},
}

func TestReaderFraming(t *testing.T) {
	bomS := "\xef\xbb\xbf"
	tests := []struct {
		name  string
		in    string
		max   int64
		want  []Line
		stats Stats
	}{
		{name: "empty input", in: "", stats: Stats{}},
		{name: "only newlines", in: "\n\n\n", stats: Stats{Empty: 3, Bytes: 3}},
		{name: "one line", in: "{}\n", want: []Line{{Number: 1, Bytes: []byte("{}"), Len: 2}},
			stats: Stats{Lines: 1, Bytes: 3}},
		{name: "no final newline", in: "{}\n{\"a\":1}", want: []Line{
			{Number: 1, Bytes: []byte("{}"), Len: 2},
			{Number: 2, Offset: 3, Bytes: []byte(`{"a":1}`), Len: 7, NoNewline: true},
		}, stats: Stats{Lines: 2, Bytes: 10}},
		{name: "crlf", in: "a\r\nbc\r\n", want: []Line{
			{Number: 1, Bytes: []byte("a"), Len: 1, CR: true},
			{Number: 2, Offset: 3, Bytes: []byte("bc"), Len: 2, CR: true},
		}, stats: Stats{Lines: 2, Bytes: 7}},
		{name: "cr at end without newline", in: "a\r", want: []Line{
			{Number: 1, Bytes: []byte("a"), Len: 1, CR: true, NoNewline: true},
		}, stats: Stats{Lines: 1, Bytes: 2}},
		{name: "empty lines counted", in: "a\n\n\r\nb\n", want: []Line{
			{Number: 1, Bytes: []byte("a"), Len: 1},
			{Number: 4, Offset: 5, Bytes: []byte("b"), Len: 1},
		}, stats: Stats{Lines: 2, Empty: 2, Bytes: 7}},
		{name: "bom", in: bomS + "{}\n{}\n", want: []Line{
			{Number: 1, Bytes: []byte("{}"), Len: 2, BOM: true},
			{Number: 2, Offset: 6, Bytes: []byte("{}"), Len: 2},
		}, stats: Stats{Lines: 2, Bytes: 9}},
		{name: "bom with crlf", in: bomS + "{}\r\n", want: []Line{
			{Number: 1, Bytes: []byte("{}"), Len: 2, BOM: true, CR: true},
		}, stats: Stats{Lines: 1, Bytes: 7}},
		{name: "bom alone", in: bomS + "\n{}\n", want: []Line{
			{Number: 1, Bytes: []byte{}, Len: 0, BOM: true},
			{Number: 2, Offset: 4, Bytes: []byte("{}"), Len: 2},
		}, stats: Stats{Lines: 2, Bytes: 7}},
		{name: "bom after line 1 is content", in: "{}\n" + bomS + "{}\n", want: []Line{
			{Number: 1, Bytes: []byte("{}"), Len: 2},
			{Number: 2, Offset: 3, Bytes: []byte(bomS + "{}"), Len: 5},
		}, stats: Stats{Lines: 2, Bytes: 9}},
		{name: "too long then fine", in: "12345\n1234\n", max: 4, want: []Line{
			{Number: 1, Len: 5, TooLong: true},
			{Number: 2, Offset: 6, Bytes: []byte("1234"), Len: 4},
		}, stats: Stats{Lines: 2, TooLong: 1, Bytes: 11}},
		{name: "cr and bom do not count against the limit", in: bomS + "1234\r\n1234\r\n", max: 4, want: []Line{
			{Number: 1, Bytes: []byte("1234"), Len: 4, BOM: true, CR: true},
			{Number: 2, Offset: 9, Bytes: []byte("1234"), Len: 4, CR: true},
		}, stats: Stats{Lines: 2, Bytes: 15}},
		{name: "too long with bom and crlf", in: bomS + "12345\r\nab\n", max: 4, want: []Line{
			{Number: 1, Len: 5, BOM: true, CR: true, TooLong: true},
			{Number: 2, Offset: 10, Bytes: []byte("ab"), Len: 2},
		}, stats: Stats{Lines: 2, TooLong: 1, Bytes: 13}},
		{name: "too long at end without newline", in: "ab\n" + strings.Repeat("x", 100), max: 4, want: []Line{
			{Number: 1, Bytes: []byte("ab"), Len: 2},
			{Number: 2, Offset: 3, Len: 100, TooLong: true, NoNewline: true},
		}, stats: Stats{Lines: 2, TooLong: 1, Bytes: 103}},
		{name: "longer than the initial buffer", in: strings.Repeat("y", 3*initialBufSize+5) + "\nz\n", want: []Line{
			{Number: 1, Bytes: []byte(strings.Repeat("y", 3*initialBufSize+5)), Len: 3*initialBufSize + 5},
			{Number: 2, Offset: 3*initialBufSize + 6, Bytes: []byte("z"), Len: 1},
		}, stats: Stats{Lines: 2, Bytes: 3*initialBufSize + 8}},
	}
	for _, tt := range tests {
		for _, sp := range splits {
			t.Run(tt.name+"/"+sp.name, func(t *testing.T) {
				lines, stats, err := readAll(sp.wrap([]byte(tt.in)), Options{MaxLineBytes: tt.max})
				if err != nil {
					t.Fatal(err)
				}
				limit := tt.max
				if limit == 0 {
					limit = DefaultMaxLineBytes
				}
				var want []Line
				for _, l := range tt.want {
					l.Limit = limit
					want = append(want, l)
				}
				if !reflect.DeepEqual(lines, want) {
					t.Errorf("lines:\n got %+v\nwant %+v", lines, want)
				}
				if stats != tt.stats {
					t.Errorf("stats = %+v, want %+v", stats, tt.stats)
				}
			})
		}
	}
}

// TestReaderSplitsAgree feeds a larger mixed input through every split and
// several limits and demands identical results.
func TestReaderSplitsAgree(t *testing.T) {
	var in bytes.Buffer
	in.WriteString("\xef\xbb\xbf")
	for i, l := range unifiedLines(300) {
		switch i % 7 {
		case 1:
			in.WriteString("\r")
		case 2:
			in.WriteString("\n")
		case 3:
			in.WriteString(strings.Repeat("z", 300))
		}
		in.Write(l)
		in.WriteByte('\n')
	}
	in.WriteString("tail")
	for _, max := range []int64{0, 1, 2, 3, 100, 250, 400} {
		ref, refStats, err := readAll(bytes.NewReader(in.Bytes()), Options{MaxLineBytes: max})
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range splits[1:] {
			got, stats, err := readAll(sp.wrap(in.Bytes()), Options{MaxLineBytes: max})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, ref) || stats != refStats {
				t.Errorf("max %d, %s: lines or stats differ from a whole read", max, sp.name)
			}
		}
	}
}

// xReader yields n bytes of 'x' without allocating, then the tail.
type xReader struct {
	n    int64
	tail []byte
}

var xs = bytes.Repeat([]byte("x"), 64<<10)

func (x *xReader) Read(p []byte) (int, error) {
	if x.n > 0 {
		k := copy(p, xs[:min(int64(len(xs)), x.n)])
		x.n -= int64(k)
		return k, nil
	}
	if len(x.tail) == 0 {
		return 0, io.EOF
	}
	k := copy(p, x.tail)
	x.tail = x.tail[k:]
	return k, nil
}

// TestReaderHugeLine streams a 100 MB line: it must come back TooLong with
// the right length, the next line must still be read, and the memory
// allocated must stay far below the line's size.
func TestReaderHugeLine(t *testing.T) {
	const size = 100_000_000
	tests := []struct {
		name     string
		max      int64
		maxAlloc uint64
	}{
		// The default limit needs a 64 MiB buffer to accept lines up to
		// 64 MiB; growth to it costs another ~5 MiB.
		{"default limit", 0, 72 << 20},
		{"1 MiB limit", 1 << 20, 4 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r := NewReader(&xReader{n: size, tail: []byte("\n{\"next\":true}\n")}, Options{MaxLineBytes: tt.max})
			l, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !l.TooLong || l.Len != size || l.Bytes != nil || l.NoNewline {
				t.Errorf("huge line = %+v, want TooLong with Len %d", l, size)
			}
			l, err = r.Next()
			if err != nil || string(l.Bytes) != `{"next":true}` || l.Number != 2 || l.Offset != size+1 {
				t.Errorf("next line = %+v, %v", l, err)
			}
			if _, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Errorf("after the last line: %v, want io.EOF", err)
			}
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d bytes for a %d-byte line", alloc, size)
			if alloc > tt.maxAlloc {
				t.Errorf("allocated %d bytes reading a %d-byte line, want at most %d", alloc, size, tt.maxAlloc)
			}
			if st := r.Stats(); st.Bytes != size+15 || st.TooLong != 1 || st.Lines != 2 {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

func TestReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), Options{})
	l, err := r.Next()
	if err != nil || string(l.Bytes) != "a" {
		t.Fatalf("first line = %+v, %v", l, err)
	}
	_, err = r.Next()
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("read error = %v, want boom wrapped with the line number", err)
	}
	if _, err2 := r.Next(); !errors.Is(err2, boom) {
		t.Errorf("error is not sticky: %v", err2)
	}

	// A reader that never makes progress must not hang.
	r = NewReader(stuckReader{}, Options{})
	if _, err := r.Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("stuck reader: %v, want io.ErrNoProgress", err)
	}

	// An error while a too-long line is being discarded.
	r = NewReader(io.MultiReader(strings.NewReader("123456789"), iotest.ErrReader(boom)), Options{MaxLineBytes: 2})
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("error while discarding: %v, want boom", err)
	}
}

type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }
