//go:build unix

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvSpeed turns on TestReadmeFirstCommandSpeed, a measurement of several
// minutes; its value is the number of rounds (1 when it is not a number).
const EnvSpeed = "AGENTCONFORM_README_SPEED"

// TestReadmeFirstCommandSpeed measures the README's first command as
// written, `go run ./cmd/agentconform run`, in a fresh clone with nothing
// installed (an empty user cache; the Go build cache as it is), against
// the same tree installed side by side (CGO_ENABLED=0 go build of the
// three commands into one directory): the first run, then rounds of the
// second run and the install's run, interleaved, each round with the
// load average before it. It logs the numbers and asserts no time: the
// README's speed paragraph quotes them. Later runs must not build again.
//
//	AGENTCONFORM_README_SPEED=3 go test -run TestReadmeFirstCommandSpeed -v -timeout 30m ./e2e
func TestReadmeFirstCommandSpeed(t *testing.T) {
	rounds, err := strconv.Atoi(os.Getenv(EnvSpeed))
	if os.Getenv(EnvSpeed) == "" {
		t.Skip("a measurement of several minutes: set " + EnvSpeed + "=ROUNDS")
	}
	if err != nil || rounds < 1 {
		rounds = 1
	}
	if !strings.Contains(readme(t), "go run ./cmd/agentconform run ") {
		t.Fatal("the README's first command is no longer go run ./cmd/agentconform run")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	clone := filepath.Join(work, "agentconform")
	if out, err := exec.Command("git", "clone", "--quiet", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	// An empty user cache, but the Go build cache as it is: the go command
	// would otherwise take its default under XDG_CACHE_HOME, and start
	// cold.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	env := append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(work, "cache"), "GOCACHE="+strings.TrimSpace(string(gocache)),
		"GITHUB_ACTIONS=", "NO_COLOR=1")
	timed := func(name string, args ...string) (time.Duration, string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = clone, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
		}
		if !strings.Contains(out.String(), "PASS: reference/shim: 195 cases") {
			t.Errorf("%s %s did not judge 195 cases per reference adapter:\n%s", name, strings.Join(args, " "), out.String())
		}
		return d, out.String()
	}
	readmeCmd := []string{"run", "./cmd/agentconform", "run"}
	first, out := timed("go", readmeCmd...)
	if !strings.Contains(out, "building agentconform-fake and agentconform-adapter") {
		t.Errorf("the first run did not build the lean binaries:\n%s", out)
	}
	inst := filepath.Join(work, "bin")
	build := exec.Command("go", "build", "-o", inst+"/", "./cmd/agentconform", "./cmd/agentconform-fake", "./cmd/agentconform-adapter")
	build.Dir, build.Env = clone, append(env, "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the side-by-side install: %v\n%s", err, out)
	}
	var gorun, installed []time.Duration
	var loads []string
	for i := 0; i < rounds; i++ {
		loads = append(loads, loadAverage())
		d, out := timed("go", readmeCmd...)
		if strings.Contains(out, "building") {
			t.Errorf("round %d: the README's command built again:\n%s", i+1, out)
		}
		gorun = append(gorun, d)
		d, _ = timed(filepath.Join(inst, "agentconform"), "run")
		installed = append(installed, d)
	}
	g, n := median(gorun), median(installed)
	t.Logf("first run of the README's command (building the lean binaries): %s", first.Round(100*time.Millisecond))
	t.Logf("README's command, go run ./cmd/agentconform run (second run on): %s; median %s", seconds(gorun), g.Round(100*time.Millisecond))
	t.Logf("side-by-side install, agentconform run:                         %s; median %s", seconds(installed), n.Round(100*time.Millisecond))
	t.Logf("ratio of the medians %.2f; load average before each round: %s", float64(g)/float64(n), strings.Join(loads, "; "))
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func seconds(ds []time.Duration) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%.1f s", d.Seconds()))
	}
	return strings.Join(parts, ", ")
}

// loadAverage is the 1-minute load average, or "?" where /proc has none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
