package conformance

import (
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentconform/agentconform/jsonl"
)

// TestLineReaderAgrees holds lineReader to jsonl.Reader, which it stands
// in for: the same lines (numbers, bytes, lengths, BOM, "\r", too long,
// no newline) from the same input, read in pieces of every size, with
// lines longer than its buffer and its chunks.
func TestLineReaderAgrees(t *testing.T) {
	long := strings.Repeat("x", 3*lineChunk+17)
	inputs := map[string]string{
		"plain":       "{\"a\":1}\n{\"b\":2}\n",
		"framing":     "\xef\xbb\xbf{\"a\":1}\r\n\n\r\n\r\r\n{\"b\":2}",
		"bom line":    "\xef\xbb\xbf\n{}\n",
		"long":        "{}\n" + long + "\n" + long + "\r\n" + long,
		"too long":    long[:2000] + "\n" + long[:1500] + "\r\n" + "\xef\xbb\xbf" + long[:900] + "\n" + long[:1001],
		"half buffer": strings.Repeat(long[:lineReadSize/2+1]+"\n", 5) + long[:lineReadSize-1],
		"empty":       "",
		"newline":     "\n",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range 40 {
		n := []int{0, 1, 10, 200, lineReadSize - 1, lineReadSize, lineReadSize + 1, lineChunk + 5}[rng.IntN(8)]
		b.WriteString(long[:n])
		b.WriteString([]string{"\n", "\r\n", "\n\n", "\r"}[rng.IntN(4)])
	}
	inputs["random"] = b.String()
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"odd":      func(s string) io.Reader { return &oddReader{r: strings.NewReader(s), rng: rand.New(rand.NewPCG(3, 4))} },
	}
	for name, in := range inputs {
		for _, max := range []int64{1000, maxAdapterLine} {
			want := readAll(t, jsonl.NewReader(strings.NewReader(in), jsonl.Options{MaxLineBytes: max}))
			for rname, r := range readers {
				if rname == "one byte" && len(in) > 1<<20 {
					continue
				}
				got := readAll(t, newLineReader(r(in), max))
				if len(got) != len(want) {
					t.Errorf("%s, limit %d, %s reads: %d lines, jsonl.Reader %d", name, max, rname, len(got), len(want))
					continue
				}
				for i := range want {
					if got[i] != want[i] {
						g, w := got[i], want[i]
						g.Bytes, w.Bytes = clip(g.Bytes, 40), clip(w.Bytes, 40)
						t.Errorf("%s, limit %d, %s reads: line %d is %+v, jsonl.Reader's %+v", name, max, rname, i, g, w)
						break
					}
				}
			}
		}
	}
}

type nexter interface {
	Next() (jsonl.Line, error)
}

// line is a jsonl.Line with its bytes as a string, to compare.
type line struct {
	Number        int
	Offset, Len   int64
	Bytes         string
	Nil           bool
	BOM, CR, Long bool
	NoNewline     bool
}

// readAll reads every line.
func readAll(t *testing.T, r nexter) []line {
	t.Helper()
	var out []line
	for {
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, line{l.Number, l.Offset, l.Len, string(l.Bytes), l.Bytes == nil, l.BOM, l.CR, l.TooLong, l.NoNewline})
	}
}

// oddReader reads in random sizes.
type oddReader struct {
	r   io.Reader
	rng *rand.Rand
}

func (o *oddReader) Read(p []byte) (int, error) {
	return o.r.Read(p[:min(len(p), 1+o.rng.IntN(3*lineReadSize))])
}

// TestLineReaderOwnsLines checks that every line the reader returns stays
// as it was while the reader goes on reading (the runner keeps them all).
func TestLineReaderOwnsLines(t *testing.T) {
	long := strings.Repeat("y", 2*lineChunk+3)
	in := "{\"a\":1}\n" + long + "\n{\"b\":2}\n" + long[:lineReadSize] + "\nlast"
	r := newLineReader(iotest.HalfReader(strings.NewReader(in)), maxAdapterLine)
	var kept []string
	var lines [][]byte
	for {
		l, err := r.Next()
		if err != nil {
			break
		}
		kept = append(kept, string(l.Bytes))
		lines = append(lines, l.Bytes)
	}
	for i, l := range lines {
		if string(l) != kept[i] {
			t.Errorf("line %d changed after it was returned", i+1)
		}
	}
	if strings.Join(kept, "\n") != in {
		t.Errorf("the lines do not make the input")
	}
}
