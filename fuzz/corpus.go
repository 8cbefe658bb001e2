package fuzz

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// corpusHeader is the first line of a file of Go's fuzzing corpus.
const corpusHeader = "go test fuzz v1\n"

// CorpusFile renders one []byte value as a file of Go's corpus format
// (testdata/fuzz/<FuzzName>/<file>).
func CorpusFile(b []byte) []byte {
	return []byte(corpusHeader + "[]byte(" + strconv.Quote(string(b)) + ")\n")
}

// ParseCorpusFile reads a file of Go's corpus format into its values
// ([]byte, string, bool, the integer types, byte and rune).
func ParseCorpusFile(data []byte) ([]any, error) {
	s := string(data)
	if !strings.HasPrefix(s, corpusHeader) {
		return nil, fmt.Errorf("not a Go fuzz corpus file (no %q line)", strings.TrimSpace(corpusHeader))
	}
	var vals []any
	for i, line := range strings.Split(strings.TrimPrefix(s, corpusHeader), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := parseCorpusValue(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+2, err)
		}
		vals = append(vals, v)
	}
	return vals, nil
}

// parseCorpusValue parses one `type(literal)` line, as Go's own corpus
// reader does (with go/parser).
func parseCorpusValue(line string) (any, error) {
	expr, err := parser.ParseExpr(line)
	if err != nil {
		return nil, err
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, fmt.Errorf("%q is not a type(value) expression", line)
	}
	typ := ""
	switch f := call.Fun.(type) {
	case *ast.Ident:
		typ = f.Name
	case *ast.ArrayType:
		if id, ok := f.Elt.(*ast.Ident); ok && f.Len == nil && (id.Name == "byte" || id.Name == "uint8") {
			typ = "[]byte"
		}
	}
	arg := call.Args[0]
	neg := false
	if u, ok := arg.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, arg = true, u.X
	}
	if id, ok := arg.(*ast.Ident); ok && typ == "bool" {
		return id.Name == "true", nil
	}
	lit, ok := arg.(*ast.BasicLit)
	if !ok {
		return nil, fmt.Errorf("%q: unsupported value", line)
	}
	switch typ {
	case "[]byte", "string":
		if lit.Kind != token.STRING {
			return nil, fmt.Errorf("%q: want a string literal", line)
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return nil, err
		}
		if typ == "string" {
			return s, nil
		}
		return []byte(s), nil
	case "byte", "rune":
		if lit.Kind == token.CHAR {
			r, _, _, err := strconv.UnquoteChar(lit.Value[1:len(lit.Value)-1], '\'')
			if err != nil {
				return nil, err
			}
			if typ == "byte" {
				return byte(r), nil
			}
			return r, nil
		}
	}
	if lit.Kind != token.INT {
		return nil, fmt.Errorf("%q: unsupported value", line)
	}
	text := lit.Value
	if neg {
		text = "-" + text
	}
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "rune":
		n, err := strconv.ParseInt(text, 0, 64)
		return signed(typ, n), err
	case "uint", "uint8", "byte", "uint16", "uint32", "uint64":
		n, err := strconv.ParseUint(text, 0, 64)
		return unsigned(typ, n), err
	}
	return nil, fmt.Errorf("%q: unsupported type %q", line, typ)
}

func signed(typ string, n int64) any {
	switch typ {
	case "int8":
		return int8(n)
	case "int16":
		return int16(n)
	case "int32", "rune":
		return int32(n)
	case "int64":
		return n
	}
	return int(n)
}

func unsigned(typ string, n uint64) any {
	switch typ {
	case "uint8", "byte":
		return uint8(n)
	case "uint16":
		return uint16(n)
	case "uint32":
		return uint32(n)
	case "uint64":
		return n
	}
	return uint(n)
}

// LibFuzzerInput encodes a Go fuzz target's arguments as the single byte
// string a libFuzzer build of it (OSS-Fuzz's compile_native_go_fuzzer,
// go-118-fuzz-build) decodes them from, with go-fuzz-headers: []byte and
// string as a 4-byte big-endian length then the bytes, integers of 8, 16
// and 64 bits as their bytes (big-endian) followed by a byte saying so,
// 32-bit ones as 4 bytes, bool as one byte (even: true). It fails for
// what that decoder cannot produce (an empty []byte, floats).
func LibFuzzerInput(vals []any) ([]byte, error) {
	var out []byte
	u64 := func(n uint64) { out = binary.BigEndian.AppendUint64(out, n); out = append(out, 1) }
	for _, v := range vals {
		switch x := v.(type) {
		case []byte:
			if len(x) == 0 {
				return nil, fmt.Errorf("an empty []byte cannot be encoded")
			}
			out = binary.BigEndian.AppendUint32(out, uint32(len(x)))
			out = append(out, x...)
		case string:
			out = binary.BigEndian.AppendUint32(out, uint32(len(x)))
			out = append(out, x...)
		case bool:
			if x {
				out = append(out, 0)
			} else {
				out = append(out, 1)
			}
		case int8:
			out = append(out, byte(x))
		case uint8:
			out = append(out, x)
		case int16:
			out = binary.BigEndian.AppendUint16(out, uint16(x))
			out = append(out, 1)
		case uint16:
			out = binary.BigEndian.AppendUint16(out, x)
			out = append(out, 1)
		case int32:
			out = binary.BigEndian.AppendUint32(out, uint32(x))
		case uint32:
			out = binary.BigEndian.AppendUint32(out, x)
		case int:
			u64(uint64(x))
		case int64:
			u64(uint64(x))
		case uint:
			u64(uint64(x))
		case uint64:
			u64(x)
		default:
			return nil, fmt.Errorf("a %T cannot be encoded", v)
		}
	}
	return out, nil
}

// A FuzzTest is one Fuzz* function of the module.
type FuzzTest struct {
	// Dir is the package's directory relative to the module root ("fuzz").
	Dir string
	// Func is the function's name ("FuzzReferenceUnified").
	Func string
}

// Fuzzer is the name the target is built under for ClusterFuzzLite and
// OSS-Fuzz: the package directory (slashes as underscores), then the
// function ("fuzz_FuzzReferenceUnified", "fakecli_faults_FuzzParse").
func (t FuzzTest) Fuzzer() string {
	return strings.ReplaceAll(t.Dir, "/", "_") + "_" + t.Func
}

// FindFuzzTests lists every Fuzz* function in the _test.go files under
// root (a module root), sorted.
func FindFuzzTests(root string) ([]FuzzTest, error) {
	var out []FuzzTest
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil // not ours to judge; go vet will
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Fuzz") || fn.Type.Params.NumFields() != 1 {
				continue
			}
			if star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr); ok {
				if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "F" {
					out = append(out, FuzzTest{Dir: filepath.ToSlash(rel), Func: fn.Name.Name})
				}
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Dir != out[j].Dir {
			return out[i].Dir < out[j].Dir
		}
		return out[i].Func < out[j].Func
	})
	return out, err
}

// TargetsDir is the package of the fuzz targets, relative to the module
// root.
const TargetsDir = "fuzz/targets"

// TargetSeeds returns the seeds F.Add adds for each fuzz target of package
// targets, by function name. (The names are spelled in two pieces here:
// compile_native_go_fuzzer finds a target's file by grepping its package
// for the name, which must then occur in that file only. This one is in
// another package, but the habit is cheap.)
func TargetSeeds() map[string][][]byte {
	set := func(s SeedSet) [][]byte { b, _ := SeedBytes(s); return b }
	return map[string][][]byte{
		"Fuzz" + "Validate":         RawSeeds(RawValidate),
		"Fuzz" + "Transcript":       RawSeeds(RawTranscript),
		"Fuzz" + "FakeFlags":        RawSeeds(RawFakeFlags),
		"Fuzz" + "RPCMessage":       RawSeeds(RawRPCMessage),
		"Fuzz" + "ACP":              RawSeeds(RawACP),
		"Fuzz" + "AppServer":        RawSeeds(RawAppServer),
		"Fuzz" + "ReferenceUnified": set(InProcessSeeds),
		"Fuzz" + "ReferenceShim":    set(InProcessSeeds),
		"Fuzz" + "ExternalAdapter":  set(ExternalSeeds),
	}
}

// seedsOf returns the F.Add seeds of the structure-aware targets, which a
// libFuzzer build never sees.
func seedsOf(t FuzzTest) [][]any {
	if t.Dir != TargetsDir {
		return nil
	}
	var out [][]any
	for _, b := range TargetSeeds()[t.Func] {
		out = append(out, []any{b})
	}
	return out
}

// ExportSeedCorpora writes <fuzzer>_seed_corpus.zip into out for every
// fuzz test under root: its committed corpus (testdata/fuzz/<Func>) and,
// for this package's targets, the seeds their F.Add calls add (OSS-Fuzz
// ignores F.Add), each encoded as LibFuzzerInput. It returns the number
// of inputs written per fuzzer; inputs that cannot be encoded are skipped.
func ExportSeedCorpora(root, out string) (map[string]int, error) {
	tests, err := FindFuzzTests(root)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, t := range tests {
		inputs := seedsOf(t)
		dir := filepath.Join(root, filepath.FromSlash(t.Dir), "testdata", "fuzz", t.Func)
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			vals, err := ParseCorpusFile(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			inputs = append(inputs, vals)
		}
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		seen := map[string]bool{}
		n := 0
		for _, vals := range inputs {
			b, err := LibFuzzerInput(vals)
			if err != nil || seen[string(b)] {
				continue
			}
			seen[string(b)] = true
			w, err := zw.Create(fmt.Sprintf("seed-%04d", n))
			if err != nil {
				return nil, err
			}
			w.Write(b)
			n++
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		name := t.Fuzzer() + "_seed_corpus.zip"
		if err := os.WriteFile(filepath.Join(out, name), buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		counts[t.Fuzzer()] = n
	}
	return counts, nil
}

// ModuleRoot finds the agentconform module above dir: the directory whose
// go.mod declares it.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePath(b) == ModulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no checkout of %s here or above", ModulePath)
		}
		dir = parent
	}
}

// EnvSrc names a checkout of agentconform, for commands run outside one.
const EnvSrc = "AGENTCONFORM_SRC"

// CheckoutRoot finds the checkout of agentconform: above the working
// directory, else at $AGENTCONFORM_SRC.
func CheckoutRoot() (string, error) {
	root, err := ModuleRoot(".")
	if err != nil && os.Getenv(EnvSrc) != "" {
		return ModuleRoot(os.Getenv(EnvSrc))
	}
	return root, err
}

// ModulePath is the module agentconform is.
const ModulePath = "github.com/agentconform/agentconform"

func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// ImportPath is the package's import path.
func (t FuzzTest) ImportPath() string { return path.Join(ModulePath, t.Dir) }
