package schemas

import (
	"errors"
	"fmt"
	"github.com/agentconform/agentconform/dialect"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Profile selects which family of schemas a stream is judged by.
type Profile string

const (
	// Spec is §8 of the protocol spec (docs/protocols/spec.md) exactly as written, defects
	// included; it shows how a stream disagrees with the spec.
	Spec Profile = "spec"
	// Observed is what the real CLIs emit and accept today, one file per CLI
	// version; it is the default for native streams.
	Observed Profile = "observed"
	// Shim is the Claude-compatible contract for translation shims (docs/protocols/shim.md).
	Shim Profile = "shim"
	// Unified is §8.1 of the spec, written correctly, as the contract for what
	// an adapter hands its caller.
	Unified Profile = "unified"
)

// Dialect names a kind of stream; see package dialect.
type Dialect = dialect.Dialect

// The dialects, re-exported from package dialect.
const (
	Claude        = dialect.Claude
	ClaudeStdin   = dialect.ClaudeStdin
	Codex         = dialect.Codex
	Gemini        = dialect.Gemini
	UnifiedEvents = dialect.UnifiedEvents
	ShimEvents    = dialect.ShimEvents
)

// Dialects lists every dialect in a stable order.
var Dialects = dialect.Dialects

// ParseDialect checks a dialect name given on a command line.
func ParseDialect(s string) (Dialect, error) { return dialect.Parse(s) }

// Detect tells the dialect of a stream from its first decoded events.
func Detect(events []map[string]any) (Dialect, bool) { return dialect.Detect(events) }

// ParseProfile checks a profile name given on a command line.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case Spec, Observed, Shim, Unified:
		return p, nil
	}
	return "", fmt.Errorf("unknown profile %q (want spec, observed, shim or unified)", s)
}

// ErrNoSchema is returned when a profile has no schema for a dialect (the
// spec has no schema for Claude's stdin, for example).
var ErrNoSchema = errors.New("no schema")

// observedCLI maps native dialects to their directory under observed/ and
// the file name inside a version directory.
var observedFiles = map[Dialect][2]string{
	Claude:      {"claude", "stdout.schema.json"},
	ClaudeStdin: {"claude", "stdin.schema.json"},
	Codex:       {"codex", "events.schema.json"},
	Gemini:      {"gemini", "events.schema.json"},
}

var specFiles = map[Dialect]string{
	Claude:        "spec/claude-event.schema.json",
	Codex:         "spec/codex-event.schema.json",
	Gemini:        "spec/gemini-event.schema.json",
	UnifiedEvents: "spec/unified-event.schema.json",
}

// Resolve returns the path, inside the schema file system, of the schema that
// judges dialect d under profile p, and the CLI version that file was
// derived from ("" where files are not versioned). For native dialects under
// the observed profile, version picks the newest file not newer than version
// (the oldest file when version predates them all; the newest when version
// is empty). Unified and shim streams ignore p unless it is Spec, which has
// a (defective) unified schema but no shim schema.
func Resolve(fsys fs.FS, p Profile, d Dialect, version string) (file, fileVersion string, err error) {
	switch d {
	case UnifiedEvents:
		if p == Spec {
			return specFiles[d], "", nil
		}
		return "unified/unified-event.schema.json", "", nil
	case ShimEvents:
		if p == Spec {
			return "", "", fmt.Errorf("profile spec has %w for dialect shim: the spec's §8 defines none (use profile shim)", ErrNoSchema)
		}
		return "shim/shim-event.schema.json", "", nil
	}
	if !d.Native() {
		return "", "", fmt.Errorf("unknown dialect %q", d)
	}
	switch p {
	case Spec:
		f, ok := specFiles[d]
		if !ok {
			return "", "", fmt.Errorf("profile spec has %w for dialect %s: the spec's §8 defines none", ErrNoSchema, d)
		}
		return f, "", nil
	case Observed, "":
		of := observedFiles[d]
		dir := path.Join("observed", of[0])
		versions, err := Versions(fsys, of[0])
		if err != nil {
			return "", "", err
		}
		if len(versions) == 0 {
			return "", "", fmt.Errorf("profile observed has %w for %s: %s holds no version directory", ErrNoSchema, d, dir)
		}
		v := pickVersion(versions, version)
		return path.Join(dir, v, of[1]), v, nil
	}
	return "", "", fmt.Errorf("profile %s does not apply to native dialect %s (use spec or observed)", p, d)
}

// Versions lists the CLI versions that have observed schemas for cli
// ("claude", "codex", "gemini"), oldest first.
func Versions(fsys fs.FS, cli string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, path.Join("observed", cli))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing observed schemas for %s: %w", cli, err)
	}
	var vs []string
	for _, e := range entries {
		if e.IsDir() {
			vs = append(vs, e.Name())
		}
	}
	sort.Slice(vs, func(i, j int) bool { return CompareVersions(vs[i], vs[j]) < 0 })
	return vs, nil
}

// pickVersion returns the newest of versions (sorted oldest first) that is
// not newer than want; the oldest when want predates all; the newest when
// want is empty.
func pickVersion(versions []string, want string) string {
	if want == "" {
		return versions[len(versions)-1]
	}
	best := versions[0]
	for _, v := range versions {
		if CompareVersions(v, want) <= 0 {
			best = v
		}
	}
	return best
}

// CompareVersions orders dotted CLI versions numerically segment by
// segment ("0.61.0" < "0.169.0"); a non-numeric segment compares as a
// string. It returns -1, 0 or 1.
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y string
		if i < len(as) {
			x = as[i]
		}
		if i < len(bs) {
			y = bs[i]
		}
		xn, xerr := strconv.Atoi(x)
		yn, yerr := strconv.Atoi(y)
		switch {
		case xerr == nil && yerr == nil:
			if xn != yn {
				if xn < yn {
					return -1
				}
				return 1
			}
		case x != y:
			return strings.Compare(x, y)
		}
	}
	return 0
}
