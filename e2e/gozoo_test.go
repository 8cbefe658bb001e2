//go:build unix

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// goZoo are the zoo's drivers around published Go modules: each is a
// module of its own under conformance/drivers (its go.mod pins the
// library, its go.sum the checksums), so that the library is no
// dependency of agentconform's; the test builds it with the go command
// through the module proxy.
var goZoo = []sdk{
	{dir: "acp-go-sdk", pkg: "github.com/coder/acp-go-sdk", group: "zoo"},
}

// TestGoZoo runs the whole conformance battery against each Go driver, as
// `go build -o driver ./conformance/drivers/<name> && agentconform run
// --adapter ./driver` does, and fails on every failure the driver's
// expected.baseline does not list (conformance/drivers/TRIAGE.md). With
// AGENTCONFORM_PUBLISH=1 it writes reports/examples/zoo-<name>.json.
func TestGoZoo(t *testing.T) {
	if testing.Short() {
		t.Skip("the zoo batteries take minutes")
	}
	for _, s := range goZoo {
		t.Run(s.label(), func(t *testing.T) {
			bin := buildGoDriver(t, s)
			res := runBatteryOf(t, s, []string{bin}, "go build -o driver ./conformance/drivers/"+s.dir+" && ./driver", bin, "driver")
			if want := goModVersion(t, s); res.Meta.Hello.Version != want {
				t.Errorf("the driver's hello names version %q; want the one its go.mod pins, %s, from its build info", res.Meta.Hello.Version, want)
			}
			logFindings(t, res)
			checkTriage(t, s, res)
			t.Logf("%s %s: %d cases in %.1fs", s.pkg, res.Meta.Hello.Version, len(res.Cases), res.Meta.Duration)
			publishResults(t, s, res)
		})
	}
}

// buildGoDriver builds the driver of s into a temporary directory, or
// skips the test when it cannot be built here, saying why (under CI=true
// it fails instead: CI must never pass by skipping).
func buildGoDriver(t *testing.T, s sdk) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	dir, err := filepath.Abs(filepath.Join("..", "conformance", "drivers", s.dir))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), s.dir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".")
	cmd.Dir = dir
	// The driver's own module, its go.sum as written: no workspace of the
	// caller's, no update of go.mod.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		why := "building conformance/drivers/" + s.dir + " (it needs the Go module proxy for " + s.pkg + "): " + err.Error() + "\n" + strings.TrimSpace(string(out))
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return bin
}

// goModVersion is the version of s.pkg that the driver's go.mod requires.
func goModVersion(t *testing.T, s sdk) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "conformance", "drivers", s.dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require ")); len(f) >= 2 && f[0] == s.pkg {
			return f[1]
		}
	}
	t.Fatalf("conformance/drivers/%s/go.mod requires no %s", s.dir, s.pkg)
	return ""
}
