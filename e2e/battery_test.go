//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/conformance"
	"github.com/agentconform/agentconform/reports"
)

// libTemp matches a temporary path a library under test made.
// Only where a path begins: a fixture's /home/user/tmp/... is no path of
// this machine.
var libTemp = regexp.MustCompile(`(^|[^A-Za-z0-9_./~$-])/tmp/([A-Za-z0-9._-]+)`)

// examplesDir is where the SDKs' results are published, next to the
// reference adapters' (agentconform report publish reads sdk-*.json there).
var examplesDir = filepath.Join("..", "reports", "examples")

// batteryTimeout bounds each case of the SDK battery, as `agentconform run`
// does (its default).
const batteryTimeout = 20 * time.Second

// TestSDKBattery runs the whole conformance battery against the drivers
// of the official SDKs, as `agentconform run --adapter 'node
// conformance/drivers/<sdk>/driver.mjs'` does; with AGENTCONFORM_PUBLISH=1
// it writes the results to reports/examples/sdk-<sdk>.json, the published
// example (a plain test run leaves the tree as it was). Every failure
// must be listed in the driver's expected.baseline (checkTriage). What the
// battery finds there is what the SDKs do, and is reported, not failed:
// the test fails only when the battery cannot run.
func TestSDKBattery(t *testing.T) {
	for _, s := range []sdk{claudeSDK, codexSDK} {
		t.Run(s.dir, func(t *testing.T) {
			t.Parallel()
			driver := requireDriver(t, s)
			res := runBattery(t, s, driver)
			logFindings(t, res)
			checkTriage(t, s, res)
			publishResults(t, s, res)
		})
	}
}

// publishResults writes res to reports/examples (sdk-<dir>.json,
// zoo-<label>.json) when AGENTCONFORM_PUBLISH=1, and does nothing
// otherwise: the tests write nothing in the tree unless asked.
func publishResults(t *testing.T, s sdk, res *conformance.Results) {
	t.Helper()
	if os.Getenv("AGENTCONFORM_PUBLISH") != "1" {
		return
	}
	group := s.group
	if group == "" {
		group = "sdk"
	}
	path := filepath.Join(examplesDir, group+"-"+strings.ReplaceAll(s.label(), "@", "-")+".json")
	if err := reports.WriteResultsFile(path, reports.NewDocument(res)); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	t.Logf("wrote %s: %d cases in %.1fs", path, len(res.Cases), res.Meta.Duration)
}

// pool is the slots every battery's cases share: the batteries of the
// SDKs, the zoo and the ACP profile run at once, each case starting Node.
var pool = conformance.NewPool(0)

// runBattery runs every case the Node driver's hello asks for and scrubs
// the paths of this machine from the results.
func runBattery(t *testing.T, s sdk, driver string) *conformance.Results {
	t.Helper()
	rel := "conformance/drivers/" + s.dir + "/driver.mjs"
	argv := append([]string{nodePath, driver}, s.args()...)
	return runBatteryOf(t, s, argv, strings.Join(append([]string{"node", rel}, s.args()...), " "), driver, rel)
}

// runBatteryOf runs every case the hello of the driver started with argv
// asks for (reproduce is how a reader starts it) and scrubs the paths of
// this machine from the results (scrub: more old, new pairs).
func runBatteryOf(t *testing.T, s sdk, argv []string, reproduce string, scrub ...string) *conformance.Results {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prereqOnce.Do(checkPrereqs) // the drivers' directory, node where it is
	work := t.TempDir()
	a := conformance.Adapter{
		Name:      s.name(),
		Reproduce: reproduce,
		Command: func(ctx context.Context) *exec.Cmd {
			return exec.CommandContext(ctx, argv[0], argv[1:]...)
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bl, err := conformance.ReadBaseline(filepath.Join(driversDir, s.dir, s.baseline()))
	if err != nil {
		t.Fatalf("every finding of a driver's battery is triaged in its %s: %v", s.baseline(), err)
	}
	res, err := conformance.Run(ctx, conformance.Config{Adapter: a, FakeExe: exe, Seed: 1, Timeout: batteryTimeout, WorkDir: work, Baseline: bl, Pool: pool})
	if err != nil {
		t.Fatalf("the battery could not run against the %s driver: %v", s.dir, err)
	}
	if res.Meta.Hello == nil {
		t.Fatalf("the %s driver wrote no hello record", s.dir)
	}
	if len(res.Cases) == 0 {
		t.Fatalf("no case ran against the %s driver (hello agents %v)", s.dir, res.Meta.Hello.Agents)
	}
	for _, c := range res.Cases {
		if len(c.Checks) != len(conformance.Catalog()) {
			t.Fatalf("case %s has %d check results, want one per check (%d)", c.ID, len(c.Checks), len(conformance.Catalog()))
		}
	}
	scrubMachinePaths(res, work, exe, scrub...)
	return res
}

// scrubMachinePaths replaces the paths of this machine in res with what
// a reader can use: the case's work directory ($WORK), this test binary
// (agentconform), node, the drivers' directory, the home (~), temporary
// files of a library's own ($TMP); more are further old, new pairs,
// replaced first.
func scrubMachinePaths(res *conformance.Results, work, exe string, more ...string) {
	pairs := append(more, work, "$WORK", exe, "agentconform", nodePath, "node", driversDir, "conformance/drivers")
	if real, err := filepath.EvalSymlinks(work); err == nil && real != work {
		pairs = append(pairs, real, "$WORK")
	}
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
		pairs = append(pairs, home, "~")
	}
	var repl []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != "" { // a prerequisite not found here (node) names no path
			repl = append(repl, pairs[i], pairs[i+1])
		}
	}
	doc := reports.NewDocument(res)
	r := strings.NewReplacer(repl...)
	reports.Scrub(doc, func(s string) string {
		// Temporary files a library makes for itself (a last-message
		// file, a socket) have random names of this machine's /tmp.
		return libTemp.ReplaceAllString(r.Replace(s), "${1}$$TMP/${2}")
	})
}

// checkTriage fails the test for every failure the driver's
// expected.baseline does not list: each finding of a published library
// must have a confirmed bug behind it (conformance/drivers/TRIAGE.md),
// or it is a false verdict of the battery. Listed failures that did not
// happen are logged (a timing-dependent bug may not show on every run).
func checkTriage(t *testing.T, s sdk, res *conformance.Results) {
	t.Helper()
	for _, c := range res.Cases {
		for _, r := range c.Checks {
			if r.Verdict.Failed(false) && !r.Baselined {
				t.Errorf("%s: untriaged %s %s %s: %s\n  add it to conformance/drivers/%s/%s with the bug behind it, or fix the battery",
					s.label(), r.Verdict, c.ID, r.Check, firstLine(r.Actual), s.dir, s.baseline())
			}
		}
	}
	for _, e := range res.Gate.Stale {
		t.Logf("%s: %s lists %s, which did not fail this time", s.label(), s.baseline(), e)
	}
}

// logFindings logs what the battery found, grouped by check: a finding of
// a published library is a fact about it, not a failure of this test.
func logFindings(t *testing.T, res *conformance.Results) {
	t.Helper()
	byCheck := map[string][]string{}
	for _, c := range res.Cases {
		for _, r := range c.Checks {
			if r.Verdict == conformance.Pass || r.Verdict == conformance.Skip {
				continue
			}
			byCheck[r.Check] = append(byCheck[r.Check], fmt.Sprintf("%s %s: %s", r.Verdict, c.ID, firstLine(r.Actual)))
		}
	}
	if len(byCheck) == 0 {
		t.Logf("%s: every check passed or did not apply", res.Meta.Adapter)
		return
	}
	checks := make([]string, 0, len(byCheck))
	for c := range byCheck {
		checks = append(checks, c)
	}
	sort.Strings(checks)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: findings (gate: %d new):\n", res.Meta.Adapter, len(res.Gate.New))
	for _, c := range checks {
		fmt.Fprintf(&b, "  %s (%d)\n", c, len(byCheck[c]))
		for _, f := range byCheck[c] {
			fmt.Fprintf(&b, "    %s\n", f)
		}
	}
	t.Log(b.String())
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
