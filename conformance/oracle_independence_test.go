package conformance

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPlantedTranslationBug proves that the lossless checks judge the
// reference adapter from outside: built with the agentconform_planted tag
// (reference/planted_on.go), its translator repeats Claude text that
// streamed as deltas and hands on Codex's running usage total as each
// turn's, in both profiles, and exactly the lossless checks that judge
// those fail. Were the reference translator the judge's oracle, it would
// say the same and pass.
func TestPlantedTranslationBug(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	exe := filepath.Join(t.TempDir(), "agentconform-adapter")
	build := exec.CommandContext(ctx, "go", "build", "-tags", "agentconform_planted", "-o", exe, "../cmd/agentconform-adapter")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the planted reference adapter: %v\n%s", err, out)
	}
	cases := pickCases(t, "claude/partial-messages", "codex/multi-turn", "codex/single-tool", "gemini/multi-turn")
	want := map[string]Verdict{
		"claude/partial-messages lossless/text": Fail,
		"codex/multi-turn lossless/usage":       Fail,
	}
	for _, profile := range []string{"unified", "shim"} {
		t.Run(profile, func(t *testing.T) {
			a := Adapter{Name: "planted/" + profile, Command: func(ctx context.Context) *exec.Cmd {
				return exec.CommandContext(ctx, exe, ReferenceArgs(profile, 10*time.Second)...)
			}}
			res, err := Run(ctx, Config{Adapter: a, Cases: cases, Jobs: 2, Timeout: referenceTimeout, WorkDir: t.TempDir()})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if d := cmp.Diff(want, findings(res)); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", d, details(res, want))
			}
		})
	}
}

// TestJudgeImportsNoAdapter: the judge (conformance and its packages but
// the broken adapters of its own tests) depends on no adapter package,
// the reference adapter's included, so that no adapter's translation can
// be the judge's. Its tests may run the reference as an adapter under
// test.
func TestJudgeImportsNoAdapter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const module = "github.com/agentconform/agentconform/"
	adapters := []string{module + "reference", module + "conformance/internal/broken"}
	list, err := exec.CommandContext(ctx, "go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, pkg := range strings.Fields(string(list)) {
		if isAdapterPackage(pkg, adapters) {
			continue
		}
		deps, err := exec.CommandContext(ctx, "go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		n++
		for _, d := range strings.Fields(string(deps)) {
			if isAdapterPackage(d, adapters) {
				t.Errorf("the judge's package %s imports the adapter package %s", pkg, d)
			}
		}
	}
	if n < 3 {
		t.Fatalf("only %d packages of the judge listed: %s", n, list)
	}
	if !isAdapterPackage(module+"reference/unified", adapters) || isAdapterPackage(module+"referencex", adapters) {
		t.Fatal("isAdapterPackage does not tell the reference's packages apart")
	}
}

// isAdapterPackage reports whether pkg is one of adapters or inside one.
func isAdapterPackage(pkg string, adapters []string) bool {
	for _, a := range adapters {
		if pkg == a || strings.HasPrefix(pkg, a+"/") {
			return true
		}
	}
	return false
}
