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

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/reports"
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
	publish := os.Getenv("AGENTCONFORM_PUBLISH") == "1"
	for _, s := range goZoo {
		t.Run(s.label(), func(t *testing.T) {
			bin := buildGoDriver(t, s)
			res := runGoBattery(t, s, bin)
			logFindings(t, res)
			checkTriage(t, s, res)
			t.Logf("%s %s: %d cases in %.1fs", s.pkg, res.Meta.Hello.Version, len(res.Cases), res.Meta.Duration)
			if publish {
				path := filepath.Join(examplesDir, "zoo-"+s.label()+".json")
				if err := reports.WriteResultsFile(path, reports.NewDocument(res)); err != nil {
					t.Fatalf("writing %s: %v", path, err)
				}
				t.Logf("wrote %s", path)
			}
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

// runGoBattery runs every case the Go driver's hello asks for.
func runGoBattery(t *testing.T, s sdk, bin string) *conformance.Results {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a := conformance.Adapter{
		Name:      s.name(),
		Reproduce: "go build -o driver ./conformance/drivers/" + s.dir + " && ./driver",
		Command:   func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, bin) },
	}
	bl, err := conformance.ReadBaseline(filepath.Join("..", "conformance", "drivers", s.dir, s.baseline()))
	if err != nil {
		t.Fatalf("every finding of a driver's battery is triaged in its %s: %v", s.baseline(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	work := t.TempDir()
	res, err := conformance.Run(ctx, conformance.Config{Adapter: a, FakeExe: exe, Seed: 1, Timeout: batteryTimeout, WorkDir: work, Baseline: bl, Pool: pool})
	if err != nil {
		t.Fatalf("the battery could not run against the %s driver: %v", s.dir, err)
	}
	if res.Meta.Hello == nil || res.Meta.Hello.Version != "v0.13.0" && s.dir == "acp-go-sdk" {
		t.Fatalf("the %s driver's hello: %+v; want the module's version from its build info", s.dir, res.Meta.Hello)
	}
	if len(res.Cases) == 0 {
		t.Fatalf("no case ran against the %s driver (hello agents %v)", s.dir, res.Meta.Hello.Agents)
	}
	prereqOnce.Do(checkPrereqs) // the drivers' directory, node where it is
	scrubMachinePaths(res, work, exe, bin, "driver")
	return res
}
