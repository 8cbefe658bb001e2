package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// capturesDir holds genuine CLI output; every line must decode exactly as
// encoding/json decodes it.
const capturesDir = "../testdata/captures"

// captureLines returns every line of every .jsonl capture, plus the raw
// lines that transcript files quote in their "line" fields.
func captureLines(t testing.TB) (lines [][]byte, names []string) {
	t.Helper()
	err := filepath.WalkDir(capturesDir, func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		r := NewReader(bytes.NewReader(data), Options{})
		for {
			l, err := r.Next()
			if err != nil {
				break
			}
			name := path + ":" + strconv.Itoa(l.Number)
			lines, names = append(lines, bytes.Clone(l.Bytes)), append(names, name)
			var tr struct {
				Line *string `json:"line"`
			}
			if json.Unmarshal(l.Bytes, &tr) == nil && tr.Line != nil && json.Valid([]byte(*tr.Line)) {
				lines, names = append(lines, []byte(*tr.Line)), append(names, name+" (quoted line)")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 50 {
		t.Fatalf("found only %d capture lines under %s", len(lines), capturesDir)
	}
	return lines, names
}

// randomLines generates n valid JSON objects that exercise the decoder:
// nesting, escapes of every kind, raw and escaped non-ASCII, surrogate
// pairs, numbers in many spellings, and whitespace between tokens. Keys are
// unique and numbers stay within float64's exact range, so encoding/json
// must agree with Parse exactly.
func randomLines(n int, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 99))
	g := &gen{rng: rng}
	out := make([][]byte, n)
	for i := range out {
		g.b.Reset()
		g.object(0)
		out[i] = bytes.Clone(g.b.Bytes())
	}
	return out
}

type gen struct {
	rng *rand.Rand
	b   bytes.Buffer
}

func (g *gen) ws() {
	if g.rng.IntN(4) == 0 {
		g.b.WriteString([]string{" ", "\t", "  ", "\r", " \t "}[g.rng.IntN(5)])
	}
}

func (g *gen) value(depth int) {
	k := g.rng.IntN(10)
	if depth > 6 && k < 3 {
		k = 3 + g.rng.IntN(7)
	}
	switch k {
	case 0, 1:
		g.object(depth + 1)
	case 2:
		g.array(depth + 1)
	case 3, 4, 5:
		g.str()
	case 6, 7:
		g.number()
	case 8:
		g.b.WriteString([]string{"true", "false"}[g.rng.IntN(2)])
	default:
		g.b.WriteString("null")
	}
}

func (g *gen) object(depth int) {
	g.b.WriteByte('{')
	g.ws()
	n := g.rng.IntN(8)
	if depth == 0 {
		n++
	}
	for i := range n {
		if i > 0 {
			g.b.WriteByte(',')
			g.ws()
		}
		// A unique prefix keeps keys distinct however str() spells them.
		g.b.WriteString(`"` + strconv.Itoa(i) + `_`)
		g.strBody()
		g.b.WriteByte('"')
		g.ws()
		g.b.WriteByte(':')
		g.ws()
		g.value(depth)
		g.ws()
	}
	g.b.WriteByte('}')
}

func (g *gen) array(depth int) {
	g.b.WriteByte('[')
	g.ws()
	for i := range g.rng.IntN(6) {
		if i > 0 {
			g.b.WriteByte(',')
			g.ws()
		}
		g.value(depth)
		g.ws()
	}
	g.b.WriteByte(']')
}

func (g *gen) str() {
	g.b.WriteByte('"')
	g.strBody()
	g.b.WriteByte('"')
}

// strBody writes string content; the length distribution crosses the
// intern limit and the 8-byte word boundaries of the scanner.
func (g *gen) strBody() {
	n := g.rng.IntN(12)
	if g.rng.IntN(8) == 0 {
		n = g.rng.IntN(120)
	}
	for range n {
		switch g.rng.IntN(20) {
		case 0: // short escapes
			g.b.WriteString([]string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`}[g.rng.IntN(8)])
		case 1: // \u escape of a BMP character, controls included
			g.b.WriteString(`\u` + hex16(uint16(g.rng.IntN(0xD800))))
		case 2: // surrogate pair escape
			r := rune(0x10000 + g.rng.IntN(0x100000))
			hi, lo := 0xD800+(r-0x10000)>>10, 0xDC00+(r-0x10000)&0x3FF
			g.b.WriteString(`\u` + hex16(uint16(hi)) + `\u` + strings.ToUpper(hex16(uint16(lo))))
		case 3: // raw non-ASCII
			r := rune(0x80 + g.rng.IntN(0x10FFFF-0x80))
			if !utf8.ValidRune(r) {
				r = 'é'
			}
			g.b.WriteRune(r)
		default:
			g.b.WriteByte(byte(' ' + g.rng.IntN(95)))
			if c := g.b.Bytes()[g.b.Len()-1]; c == '"' || c == '\\' {
				g.b.Truncate(g.b.Len() - 1)
				g.b.WriteString("x")
			}
		}
	}
}

func hex16(v uint16) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", 4-len(s)) + s
}

func (g *gen) number() {
	switch g.rng.IntN(6) {
	case 0:
		g.b.WriteString(strconv.Itoa(g.rng.IntN(2000) - 1000))
	case 1:
		v := g.rng.Int64N(1 << 53)
		if g.rng.IntN(2) == 0 {
			v = -v
		}
		g.b.WriteString(strconv.FormatInt(v, 10))
	case 2:
		f := math.Float64frombits(g.rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 1.5
		}
		format := []byte("eEfg")[g.rng.IntN(4)]
		if format == 'f' && math.Abs(f) >= 1<<53 {
			format = 'e' // 'f' would spell it as an integer beyond 2^53
		}
		g.b.WriteString(strconv.FormatFloat(f, format, -1, 64))
	case 3:
		g.b.WriteString([]string{"0", "-0", "0.0", "-0.0e0", "1E5", "1e+2", "2.5E-3", "1.0", "0.1", "123.456e7"}[g.rng.IntN(10)])
	default:
		g.b.WriteString(strconv.FormatFloat(g.rng.NormFloat64()*1000, 'f', g.rng.IntN(6), 64))
	}
}

// checkSameAsEncodingJSON parses line with both decoders and demands equal
// values and no findings.
func checkSameAsEncodingJSON(t *testing.T, name string, line []byte) {
	t.Helper()
	m, fs := Parse(line, ParseOptions{})
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Errorf("%s: encoding/json rejects the line: %v\n%s", name, err, clip(string(line), 300))
		return
	}
	if len(fs) > 0 {
		t.Errorf("%s: unexpected findings %v\n%s", name, fs, clip(string(line), 300))
		return
	}
	if !reflect.DeepEqual(any(m), v) {
		t.Errorf("%s: values differ\nParse:         %s\nencoding/json: %s\nline: %s", name,
			clip(fmt.Sprintf("%#v", m), 500), clip(fmt.Sprintf("%#v", v), 500), clip(string(line), 300))
	}
}

func TestDifferentialGenerated(t *testing.T) {
	for i, l := range randomLines(5000, 1) {
		checkSameAsEncodingJSON(t, "random line "+strconv.Itoa(i), l)
	}
	for i, l := range unifiedLines(500) {
		checkSameAsEncodingJSON(t, "unified line "+strconv.Itoa(i), l)
	}
}

func TestDifferentialCaptures(t *testing.T) {
	lines, names := captureLines(t)
	for i, l := range lines {
		checkSameAsEncodingJSON(t, names[i], l)
	}
}

// TestDifferentialExceptions pins the documented differences from
// encoding/json: the first duplicate key wins, and numbers beyond float64
// are kept as json.Number where encoding/json rounds or fails.
func TestDifferentialExceptions(t *testing.T) {
	line := []byte(`{"id":"item_1","id":"ws_1","n":12345678901234567890123}`)
	m, _ := Parse(line, ParseOptions{})
	var v map[string]any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Fatal(err)
	}
	if m["id"] != "item_1" || v["id"] != "ws_1" {
		t.Errorf("duplicate key: Parse %v, encoding/json %v", m["id"], v["id"])
	}
	if m["n"] != json.Number("12345678901234567890123") || v["n"] != 1.2345678901234568e22 {
		t.Errorf("big integer: Parse %#v, encoding/json %#v", m["n"], v["n"])
	}
	if err := json.Unmarshal([]byte(`{"n":1e400}`), &v); err == nil {
		t.Error("encoding/json accepted 1e400; the exception is no longer needed")
	}
}

// TestRandomBinary feeds random bytes through the Reader and Parse: no
// panics, and every line gets a MUST finding.
func TestRandomBinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	r := NewReader(bytes.NewReader(data), Options{MaxLineBytes: 1 << 12})
	lines := 0
	for {
		l, err := r.Next()
		if err != nil {
			break
		}
		lines++
		fs := FramingFindings(l)
		if !l.TooLong {
			_, pfs := Parse(l.Bytes, ParseOptions{})
			fs = append(fs, pfs...)
		}
		must := false
		for _, f := range fs {
			must = must || f.Rule.Level == 0
		}
		if !must {
			t.Errorf("line %d %q: no MUST finding in %v", l.Number, l.Bytes, fs)
		}
	}
	if lines < 1000 {
		t.Errorf("only %d lines in 1 MiB of random bytes", lines)
	}
}

// TestInternCollisions parses strings whose fingerprints agree (same
// length, first and last 8 bytes) but whose middles differ, repeatedly, so
// that warm caches are exercised: no string may come back as another.
func TestInternCollisions(t *testing.T) {
	var lines [][]byte
	for i := range 40 {
		mid := strings.Repeat(string(rune('a'+i%26)), 1+i%16)
		s := "01234567" + mid + "89abcdef"
		lines = append(lines, []byte(`{"`+s+`":"`+s+`","x`+mid+`":"`+mid+`"}`))
	}
	for range 3 {
		for i, l := range lines {
			checkSameAsEncodingJSON(t, "collision line "+strconv.Itoa(i), l)
		}
	}
}
