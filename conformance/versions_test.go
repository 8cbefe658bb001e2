package conformance

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentconform/agentconform/conformance/internal/broken"
	"github.com/agentconform/agentconform/fixtures"
)

func TestParseCLIVersions(t *testing.T) {
	got, err := ParseCLIVersions([]string{"claude=2.1.329", " codex = 0.169.0 ,"})
	if err != nil || len(got) != 2 || got["claude"] != "2.1.329" || got["codex"] != "0.169.0" {
		t.Fatalf("ParseCLIVersions = %v, %v", got, err)
	}
	if got, err := ParseCLIVersions(nil); err != nil || len(got) != 0 {
		t.Errorf("no value: %v, %v", got, err)
	}
	known, err := KnownCLIVersions("claude")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"2.1.197", "2.1.329"} {
		if !slices.Contains(known, v) {
			t.Errorf("known claude versions %v lack %s", known, v)
		}
	}
	for _, c := range []struct{ spec, want string }{
		{"claude=9.9.9", "no fixtures of claude 9.9.9; known versions of claude: " + strings.Join(known, ", ")},
		{"cursor=1.0", `unknown CLI "cursor" (want claude, codex, gemini)`},
		{"claude", "want CLI=VERSION"},
		{"claude=", "want CLI=VERSION"},
		{"claude=2.1.329,claude=2.1.197", "claude is given twice (2.1.329 and 2.1.197)"},
	} {
		if _, err := ParseCLIVersions([]string{c.spec}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCLIVersions(%q) = %v, want an error with %q", c.spec, err, c.want)
		}
	}
	if _, err := GenerateAt([]string{"claude"}, map[string]string{"claude": "0.0.1"}); err == nil || !strings.Contains(err.Error(), "known versions of claude") {
		t.Errorf("GenerateAt at an unknown version: %v", err)
	}
}

func byID(cases []*Case) map[string]*Case {
	m := map[string]*Case{}
	for _, c := range cases {
		m[c.ID] = c
	}
	return m
}

// TestGenerateAt: the cases of a pinned CLI replay its version's
// fixtures, with the IDs of the default cases; a scenario the version
// lacks is Unavailable with the reason, never another version's fixture.
func TestGenerateAt(t *testing.T) {
	def, err := Generate([]string{"claude", "codex"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range def {
		if c.Unavailable != "" || c.CLIVersion == "" || c.CLIVersion != versionOf(c.Fixture) {
			t.Errorf("default %s: version %q, unavailable %q", c.ID, c.CLIVersion, c.Unavailable)
		}
	}
	old, err := GenerateAt([]string{"claude", "codex"}, map[string]string{"claude": "2.1.197"})
	if err != nil {
		t.Fatal(err)
	}
	set, _ := fixtures.AllVersion("claude", "2.1.197")
	have := map[string]bool{}
	for _, f := range set {
		_, _, sc := fixtures.SplitName(f.Name)
		have[sc] = true
	}
	d, o := byID(def), byID(old)
	for id, c := range o {
		dc := d[id]
		if dc == nil {
			t.Errorf("%s: not a default case", id)
			continue
		}
		if c.Agent == "codex" {
			if c.Fixture != dc.Fixture || c.CLIVersion != dc.CLIVersion {
				t.Errorf("%s: an unpinned CLI changed: %s %s", id, c.Fixture, c.CLIVersion)
			}
			continue
		}
		if c.CLIVersion != "2.1.197" {
			t.Errorf("%s: version %q", id, c.CLIVersion)
		}
		_, _, sc := fixtures.SplitName(dc.Fixture)
		switch {
		case !have[sc]:
			if c.Unavailable == "" || !strings.Contains(c.Unavailable, "no claude/"+sc+" fixture at claude 2.1.197") ||
				!strings.Contains(c.Unavailable, "captured there: multi-turn, permission-allow, plain-text, single-tool") {
				t.Errorf("%s: unavailable %q", id, c.Unavailable)
			}
		case c.Permission == "deny":
			// Only an allow answer was captured at 2.1.197.
			if !strings.Contains(c.Unavailable, "has no deny branch") {
				t.Errorf("%s: a deny policy without a deny branch: %q", id, c.Unavailable)
			}
		case c.Fixture != fixtures.VersionName("claude", "2.1.197", sc) || c.Unavailable != "":
			t.Errorf("%s: fixture %s, unavailable %q", id, c.Fixture, c.Unavailable)
		}
	}
	// 2.1.329 was captured with both answers: the deny policy runs.
	now, err := GenerateAt([]string{"claude"}, map[string]string{"claude": "2.1.329"})
	if err != nil {
		t.Fatal(err)
	}
	n := byID(now)
	if c := n["claude/permission-allow/policy-deny"]; c == nil || c.Unavailable != "" || c.Fixture != "claude/2.1.329/permission-allow" {
		t.Errorf("policy-deny at 2.1.329: %+v", c)
	}
	// The default compaction fixture is synthesized after 2.1.329; the
	// 2.1.329 set (captures only) has none, so the case does not run.
	if c := n["claude/compaction"]; c == nil || c.Unavailable == "" {
		t.Errorf("compaction at 2.1.329: %+v", c)
	}
	// The interrupt sweep follows the version's single-tool fixture.
	tr, _ := fixtures.LoadVersion("claude", "2.1.329", "single-tool")
	outs := countOut(tr.Steps)
	for k := 1; k < outs; k++ {
		if c := n["claude/single-tool/interrupt-after-"+strconv.Itoa(k)]; c == nil || c.Fixture != "claude/2.1.329/single-tool" {
			t.Errorf("interrupt-after-%d at 2.1.329: %+v", k, c)
		}
	}
	if n["claude/single-tool/interrupt-after-"+strconv.Itoa(outs)] != nil {
		t.Errorf("interrupt-after-%d beyond the fixture's %d lines", outs, outs)
	}
	// AtVersions does the same to given cases, and leaves them alone.
	given := []*Case{d["claude/plain-text"], d["claude/tool-error"]}
	pinned, err := AtVersions(given, map[string]string{"claude": "2.1.197"})
	if err != nil {
		t.Fatal(err)
	}
	if pinned[0].Fixture != "claude/2.1.197/plain-text" || pinned[1].Unavailable == "" || given[0].Fixture != "claude/plain-text" {
		t.Errorf("AtVersions: %+v %+v (given %s)", pinned[0], pinned[1], given[0].Fixture)
	}
}

// TestRunAtVersion runs the reference adapter at Claude Code 2.1.197: the
// fakes replay that version's fixtures and say so, a scenario not
// captured then is SKIP with the reason, and the results record the
// versions.
func TestRunAtVersion(t *testing.T) {
	t.Parallel()
	cfg := Config{Adapter: testAdapter(t, broken.ReferenceUnified), Match: []string{"claude/plain-text", "claude/tool-error", "codex/plain-text"},
		CLIVersions: map[string]string{"claude": "2.1.197"}, WorkDir: t.TempDir(), Keep: true, Strict: true}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.CLIVersionPins["claude"] != "2.1.197" || !slices.Equal(res.Meta.CLIVersions["claude"], []string{"2.1.197"}) ||
		len(res.Meta.CLIVersions["codex"]) != 1 {
		t.Errorf("meta: pins %v, versions %v", res.Meta.CLIVersionPins, res.Meta.CLIVersions)
	}
	got := map[string]*CaseResult{}
	for _, c := range res.Cases {
		got[c.ID] = c
	}
	pt := got["claude/plain-text"]
	if pt == nil || pt.Verdict != Pass || pt.CLIVersion != "2.1.197" || pt.Fixture != "claude/2.1.197/plain-text" ||
		!strings.Contains(pt.Reproduce, "--cli-version claude=2.1.197 --case claude/plain-text") {
		t.Fatalf("claude/plain-text: %+v", pt)
	}
	// What the fake wrote claims the version.
	outs, _ := filepath.Glob(filepath.Join(pt.Dir, "*", "*.out"))
	outs2, _ := filepath.Glob(filepath.Join(pt.Dir, "*.out"))
	outs = append(outs, outs2...)
	wire := ""
	for _, f := range outs {
		b, _ := os.ReadFile(f)
		wire += string(b)
	}
	if !strings.Contains(wire, `"claude_code_version":"2.1.197"`) || strings.Contains(wire, `"claude_code_version":"2.1.3`) {
		t.Errorf("the fake's stdout (%d files in %s) does not claim 2.1.197 alone", len(outs), pt.Dir)
	}
	te := got["claude/tool-error"]
	if te == nil || te.Verdict != Skip || te.CLIVersion != "2.1.197" || !strings.Contains(skipReason(te), "no claude/tool-error fixture at claude 2.1.197") {
		t.Errorf("claude/tool-error: %+v (%s)", te, skipReason(te))
	}
	if cp := got["codex/plain-text"]; cp == nil || cp.Verdict != Pass || cp.Fixture != "codex/plain-text" || strings.Contains(cp.Reproduce, "--cli-version") {
		t.Errorf("codex/plain-text, not pinned: %+v", cp)
	}
	if _, err := Run(context.Background(), Config{Adapter: testAdapter(t, broken.ReferenceUnified), CLIVersions: map[string]string{"claude": "1.0.0"}, WorkDir: t.TempDir()}); err == nil ||
		!strings.Contains(err.Error(), "known versions of claude") {
		t.Errorf("Run at an unknown version: %v", err)
	}
}

// TestAdapterAtVersion: the Go API's CLIVersion option.
func TestAdapterAtVersion(t *testing.T) {
	TestAdapter(t, referenceCommand(t, broken.ReferenceUnified), Strict(), CLIVersion("claude", "2.1.329"), Cases("claude/single-tool", "claude/compaction"))
}

// TestLeftAloneInterruptAtVersion: an adapter that never interrupts runs
// claude/interrupt to its end at Claude Code 2.1.329 as on the default
// set: the fake's interrupt window (30 s) runs out, the tool completes and
// the turn completes, and the reference adapter passes. (The
// 2.1.329 fixture that waited for the interrupt at an in step left such
// an adapter waiting until the case timed out.)
func TestLeftAloneInterruptAtVersion(t *testing.T) {
	t.Parallel()
	def := pickCases(t, "claude/interrupt")
	pinned, err := AtVersions(def, map[string]string{"claude": "2.1.329"})
	if err != nil {
		t.Fatal(err)
	}
	if pinned[0].Fixture != "claude/2.1.329/interrupt" || pinned[0].Unavailable != "" {
		t.Fatalf("pinned case: %s %q", pinned[0].Fixture, pinned[0].Unavailable)
	}
	var wg sync.WaitGroup
	res := make([]*Results, 2)
	errs := make([]error, 2)
	for i, c := range []*Case{def[0], pinned[0]} {
		alone := *c
		alone.ID += "/left-alone"
		alone.Interrupt, alone.Expect.Cancelled = nil, false
		alone.Timeout = 3 * time.Minute // the window is 30 s
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Silent for the window's 30 s: longer than the watchdog of
			// the reference adapter the other tests run.
			res[i], errs[i] = Run(context.Background(), Config{Adapter: testAdapter(t, broken.ReferencePatient), Cases: []*Case{&alone}, WorkDir: t.TempDir(), Strict: true})
		}()
	}
	wg.Wait()
	for i, r := range res {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		c := r.Cases[0]
		if c.Verdict != Pass || len(findings(r)) > 0 {
			t.Errorf("%s: %s %v\n%s", c.Fixture, c.Verdict, findings(r), details(r, nil))
		}
		if !strings.Contains(c.Wire, "turn_end ok=true reason=completed") || !strings.Contains(c.Wire, "exit 0") {
			t.Errorf("%s: the turn did not complete:\n%s", c.Fixture, c.Wire)
		}
	}
}
