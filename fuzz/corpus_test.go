package fuzz

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli/faults"
)

// envUpdate rewrites the committed seed corpora (go test ./fuzz -run
// TestSeedCorpus with AGENTCONFORM_FUZZ_UPDATE=1), after fixtures or the
// vocabulary change.
const envUpdate = "AGENTCONFORM_FUZZ_UPDATE"

// committedSeeds is what targets/testdata/fuzz/<Func> must hold for each
// target: the seeds F.Add adds, named.
func committedSeeds(t *testing.T) map[string]map[string][]byte {
	named := map[SeedSet][]Seed{InProcessSeeds: Seeds(InProcessSeeds), ExternalSeeds: Seeds(ExternalSeeds)}
	out := map[string]map[string][]byte{}
	for fn, seeds := range TargetSeeds() {
		files := map[string][]byte{}
		var names []Seed
		switch {
		case strings.HasSuffix(fn, "ExternalAdapter"):
			names = named[ExternalSeeds]
		case strings.Contains(fn, "Reference"):
			names = named[InProcessSeeds]
		}
		for i, b := range seeds {
			if names != nil {
				files[names[i].Name] = CorpusFile(b)
			} else {
				files[fmt.Sprintf("seed-%03d", i)] = CorpusFile(b)
			}
		}
		if len(files) == 0 {
			t.Fatalf("%s: no seeds", fn)
		}
		out[fn] = files
	}
	return out
}

// TestSeedCorpus checks that the committed corpora are the seeds: every
// fixture, the interrupt-position sweep, the line-size ladder.
func TestSeedCorpus(t *testing.T) {
	update := os.Getenv(envUpdate) != ""
	for fn, files := range committedSeeds(t) {
		dir := filepath.Join("targets", "testdata", "fuzz", fn)
		if update {
			old, _ := os.ReadDir(dir)
			for _, e := range old {
				if _, seed := files[e.Name()]; !seed && (strings.HasPrefix(e.Name(), "seed-") || strings.Contains(e.Name(), "-")) {
					os.Remove(filepath.Join(dir, e.Name()))
				}
			}
			os.MkdirAll(dir, 0o755)
			for name, b := range files {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		got := map[string][]byte{}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			got[e.Name()] = b
		}
		for name, want := range files {
			if !bytes.Equal(got[name], want) {
				t.Errorf("%s/%s is missing or stale (run with %s=1 to rewrite the corpora)", dir, name, envUpdate)
			}
		}
		for name, b := range got {
			if _, seed := files[name]; !seed {
				// A failing input Go's engine saved: keep it, but it must parse.
				if _, err := ParseCorpusFile(b); err != nil {
					t.Errorf("%s/%s: %v", dir, name, err)
				}
			}
		}
	}
}

// TestEncodeDecode checks that every seed decodes to itself.
func TestEncodeDecode(t *testing.T) {
	for _, set := range []SeedSet{InProcessSeeds, ExternalSeeds} {
		for _, s := range Seeds(set) {
			b, err := Encode(s.Input)
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			if got := Decode(b, nil); !reflect.DeepEqual(got, s.Input) && !(len(got.Mutations) == 0 && len(s.Input.Mutations) == 0 && got.Fixture == s.Input.Fixture && got.Seed == s.Input.Seed) {
				t.Errorf("%s: Decode(Encode(%v)) = %v", s.Name, s.Input, got)
			}
		}
	}
	// Any bytes decode, to a spec the fakes accept.
	for _, data := range [][]byte{nil, {0}, bytes.Repeat([]byte{0xff}, 200), []byte("hello, fuzzer; this is not a spec")} {
		in := Decode(data, nil)
		if _, err := faults.Parse(in.Spec(), in.Seed); err != nil {
			t.Errorf("Decode(%q) gives a spec the fakes reject: %v", data, err)
		}
	}
}

// TestVocabularyCoversCatalog checks that the mutator can make every
// fault of the fakes' catalogue.
func TestVocabularyCoversCatalog(t *testing.T) {
	have := map[string]bool{}
	for _, s := range vocabulary {
		have[s.op] = true
	}
	for _, info := range faults.Catalog() {
		// A fault the mutator makes under another of its names.
		if have[info.Name] && info.AliasOf != "" {
			have[info.AliasOf] = true
		}
	}
	for _, info := range faults.Catalog() {
		if info.Kind == "process" {
			// Which processes make up the CLI: nothing the in-process
			// targets have, and nothing a stream mutation changes.
			continue
		}
		if !have[info.Name] {
			t.Errorf("fault %s is not in the mutator's vocabulary", info.Name)
		}
	}
}

// TestBuildScriptListsEveryFuzzTest checks that .clusterfuzzlite/build.sh
// builds every Fuzz* function of the module, under its Fuzzer name.
func TestBuildScriptListsEveryFuzzTest(t *testing.T) {
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, ".clusterfuzzlite", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := FindFuzzTests(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) < 6 {
		t.Fatalf("found only %d fuzz tests: %v", len(tests), tests)
	}
	line := regexp.MustCompile(`(?m)^\s*compile_native_go_fuzzer\s+(\S+)\s+(\S+)\s+(\S+)`)
	listed := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(string(script), -1) {
		listed[strings.Join(m[1:], " ")] = true
	}
	var missing []string
	for _, ft := range tests {
		want := ft.ImportPath() + " " + ft.Func + " " + ft.Fuzzer()
		if !listed[want] {
			missing = append(missing, "compile_native_go_fuzzer "+want)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf(".clusterfuzzlite/build.sh does not build %d fuzz tests; add:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// TestExportSeedCorpora checks the OSS-Fuzz seed corpora: one zip per
// fuzzer, holding the F.Add seeds and the committed corpus, encoded as a
// libFuzzer build decodes them.
func TestExportSeedCorpora(t *testing.T) {
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	counts, err := ExportSeedCorpora(root, out)
	if err != nil {
		t.Fatal(err)
	}
	seeds, _ := SeedBytes(InProcessSeeds)
	name := FuzzTest{Dir: TargetsDir, Func: "Fuzz" + "ReferenceUnified"}.Fuzzer()
	if counts[name] < len(seeds) {
		t.Errorf("%s: %d inputs, want at least the %d seeds", name, counts[name], len(seeds))
	}
	zr, err := zip.OpenReader(filepath.Join(out, name+"_seed_corpus.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.ReadFrom(f)
	f.Close()
	want, _ := LibFuzzerInput([]any{seeds[0]})
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("first entry %q, want %q", buf.Bytes(), want)
	}
	for name, n := range counts {
		if n == 0 && strings.HasPrefix(name, "fuzz_targets_") {
			t.Errorf("%s: empty seed corpus", name)
		}
	}
}

// TestParseCorpusFile reads the corpus formats Go writes.
func TestParseCorpusFile(t *testing.T) {
	in := "go test fuzz v1\n[]byte(\"a\\x00b\")\nstring(\"s\")\nuint8(7)\nint64(-3)\nbool(true)\nbyte('x')\nrune('é')\n"
	got, err := ParseCorpusFile([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{[]byte("a\x00b"), "s", uint8(7), int64(-3), true, byte('x'), int32('é')}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
	b, err := LibFuzzerInput(got[:5])
	if err != nil {
		t.Fatal(err)
	}
	wantB := []byte{0, 0, 0, 3, 'a', 0, 'b', 0, 0, 0, 1, 's', 7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd, 1, 0}
	if !bytes.Equal(b, wantB) {
		t.Errorf("LibFuzzerInput = %v, want %v", b, wantB)
	}
}
