package conformance

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/agentconform/agentconform/fakecli"
)

// normTextRune is normText as it was written first, rune by rune: the
// fast one must give the same text.
func normTextRune(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestNormTextAgrees compares normText with the rune-by-rune version on
// text with every kind of white space, invalid UTF-8 and long runs.
func TestNormTextAgrees(t *testing.T) {
	pieces := []string{"a", "bc", " ", "  ", "\t", "\n", "\r\n", "\v", "\f", "\u0085", "\u00a0", "\u2003", "\u3000",
		"é", "日本", "\xff", "\xe6\x97", "\ufffd", "x y", strings.Repeat("z", 100)}
	rng := rand.New(rand.NewPCG(7, 8))
	inputs := []string{"", " ", "a", " a ", "a  b", "a\u00a0b", "\xffa \xff"}
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		inputs = append(inputs, b.String())
	}
	for _, in := range inputs {
		if got, want := normText(in), normTextRune(in); got != want {
			t.Errorf("normText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestObserveLogAgrees reads a log while it grows (a torn last line, a
// record split across reads, a record longer than the read buffer, a line
// that does not decode) and holds every read to fakecli.ReadObservations
// on the file as it stands.
func TestObserveLogAgrees(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observe.jsonl")
	rec := func(pid int, text string) string {
		return `{"t_ms":1,"pid":` + strconv.Itoa(pid) + `,"kind":"stdin","text":"` + text + `"}` + "\n"
	}
	steps := []string{
		"",
		rec(1, "a"),
		rec(2, "b")[:10],
		rec(2, "b")[10:] + rec(3, strings.Repeat("c", 200<<10)),
		"\n   \n",
		rec(4, "d"),
		"not json\n",
		rec(5, "e"),
	}
	l := newObserveLog(path)
	if got, err := l.read(); err == nil || len(got) != 0 {
		t.Errorf("no log yet: %d records, %v", len(got), err)
	}
	var content string
	for i, s := range steps {
		content += s
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		f, _ := os.Open(path)
		want, werr := fakecli.ReadObservations(f)
		f.Close()
		got, gerr := l.read()
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(want, got) && (len(want) > 0 || len(got) > 0) {
			t.Errorf("step %d: %d records (%v), ReadObservations %d (%v)", i, len(got), gerr, len(want), werr)
		}
		got = append(got, fakecli.Observation{Kind: "appended"}) // the caller's to append to
	}
}

// TestContainsJoined holds containsJoined to strings.Contains on the
// chunks joined.
func TestContainsJoined(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	alphabet := "ab"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 20000 {
		var chunks []string
		for range rng.IntN(6) {
			chunks = append(chunks, word(rng.IntN(5)))
		}
		joined := strings.Join(chunks, "")
		s := word(rng.IntN(7))
		if rng.IntN(3) == 0 && len(joined) > 0 {
			i := rng.IntN(len(joined))
			s = joined[i : i+rng.IntN(len(joined)-i+1)]
		}
		if got, want := containsJoined(chunks, s), strings.Contains(joined, s); got != want {
			t.Errorf("containsJoined(%q, %q) = %v, want %v", chunks, s, got, want)
		}
	}
}
