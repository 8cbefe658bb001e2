package conformance

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
)

// A run can replay older CLI releases: Config.CLIVersions maps a CLI to
// the version whose fixtures its cases replay (fixtures, "Versioned
// fixtures"). A case whose scenario was not captured at that version is
// SKIP with the reason, never replayed from another version; the fakes
// then claim that version (`claude --version`, and every line the
// fixture recorded).

// CLIs are the CLIs the fakes imitate.
var CLIs = []string{"claude", "codex", "gemini"}

// KnownCLIVersions lists the versions of cli a run can replay, oldest
// first: every versioned fixture set, and the versions the default
// fixtures were recorded with (the newest release).
func KnownCLIVersions(cli string) ([]string, error) {
	vs, err := fixtures.Versions(cli)
	if err != nil {
		return nil, err
	}
	all, err := fixtures.All()
	if err != nil {
		return nil, err
	}
	for _, fx := range all {
		if c, _, _ := fixtures.SplitName(fx.Name); c != cli {
			continue
		}
		if v := versionOf(fx.Name); v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return fixtures.CompareVersions(vs[i], vs[j]) < 0 })
	return vs, nil
}

// ParseCLIVersions reads --cli-version values: "CLI=VERSION", several in
// one value separated by commas, each CLI at most once
// ("claude=2.1.329,codex=0.169.0"). Every CLI and version must be known
// (CheckCLIVersions).
func ParseCLIVersions(specs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, spec := range specs {
		for _, item := range strings.Split(spec, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			cli, v, ok := strings.Cut(item, "=")
			cli, v = strings.TrimSpace(cli), strings.TrimSpace(v)
			if !ok || cli == "" || v == "" {
				return nil, fmt.Errorf("--cli-version %q: want CLI=VERSION, e.g. claude=2.1.329", item)
			}
			if prev, dup := out[cli]; dup && prev != v {
				return nil, fmt.Errorf("--cli-version: %s is given twice (%s and %s); a run replays one version per CLI", cli, prev, v)
			}
			out[cli] = v
		}
	}
	if err := CheckCLIVersions(out); err != nil {
		return nil, err
	}
	return out, nil
}

// CheckCLIVersions checks that every CLI of versions is one the fakes
// imitate and every version one a run can replay; the error lists the
// known versions.
func CheckCLIVersions(versions map[string]string) error {
	for _, cli := range sortedKeys(versions) {
		v := versions[cli]
		if !slices.Contains(CLIs, cli) {
			return fmt.Errorf("--cli-version %s=%s: unknown CLI %q (want %s)", cli, v, cli, strings.Join(CLIs, ", "))
		}
		known, err := KnownCLIVersions(cli)
		if err != nil {
			return err
		}
		if !slices.Contains(known, v) {
			return fmt.Errorf("--cli-version %s=%s: no fixtures of %s %s; known versions of %s: %s", cli, v, cli, v, cli, strings.Join(known, ", "))
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// GenerateAt is Generate with the cases of the CLIs in versions replaying
// those versions' fixtures (nil or empty: Generate). The cases are those
// of the default fixtures, with the same IDs, so that runs at different
// versions compare case by case; a case's prompts, description and
// variants follow the fixture it replays. A case whose scenario has no
// fixture at the version is kept, Unavailable, and reported SKIP.
func GenerateAt(agents []string, versions map[string]string) ([]*Case, error) {
	if err := CheckCLIVersions(versions); err != nil {
		return nil, err
	}
	return generate(agents, versions)
}

// AtVersions returns copies of cases with the CLIs in versions replaying
// those versions' fixtures, as GenerateAt does for generated cases: a case
// of a default fixture gets that version's fixture of its scenario (and
// the prompts of that fixture, when its prompts were the default
// fixture's), or is Unavailable. Cases of a transcript file or of a
// versioned fixture are left as they are.
func AtVersions(cases []*Case, versions map[string]string) ([]*Case, error) {
	if err := CheckCLIVersions(versions); err != nil {
		return nil, err
	}
	out := make([]*Case, len(cases))
	for i, c := range cases {
		cc := *c
		pinCase(&cc, versions[c.Agent], true)
		out[i] = &cc
	}
	return out, nil
}

// atVersion replaces the default fixtures of the pinned CLIs in byName by
// their version's, where it has the scenario, so that cases are built
// from what that version recorded.
func atVersion(byName map[string]*transcript.Transcript, versions map[string]string) {
	for name := range byName {
		cli, _, scenario := fixtures.SplitName(name)
		v := versions[cli]
		if v == "" {
			continue
		}
		if t, err := fixtures.LoadVersion(cli, v, scenario); err == nil {
			byName[name] = t
		}
	}
}

// pinCase points c at the fixture of its scenario at version ("" keeps
// the default set) and records the CLI version it replays; without such a
// fixture c is Unavailable. With prompts, c's prompts follow the new
// fixture when they were the default fixture's.
func pinCase(c *Case, version string, prompts bool) {
	if c.Fixture == "" {
		return
	}
	cli, v, scenario := fixtures.SplitName(c.Fixture)
	if v != "" || version == "" {
		c.CLIVersion = versionOf(c.Fixture)
		return
	}
	c.CLIVersion = version
	def, derr := loadFixture(c.Fixture)
	var t *transcript.Transcript
	if vs, _ := fixtures.Versions(cli); slices.Contains(vs, version) {
		// A versioned set is all there is of its version.
		var err error
		if t, err = fixtures.LoadVersion(cli, version, scenario); err != nil {
			c.Unavailable = unavailable(cli, version, scenario)
			return
		}
		c.Fixture = fixtures.VersionName(cli, version, scenario)
	} else if derr == nil && def.Header.CLIVersion == version {
		// The default set is that version's: its fixture stands.
		t = def
	} else {
		c.Unavailable = unavailable(cli, version, scenario)
		return
	}
	if prompts && derr == nil && slices.Equal(c.Prompts, Prompts(def)) {
		c.Prompts = Prompts(t)
	}
	if c.Permission == "deny" && !hasDenyBranch(t) {
		c.Unavailable = fmt.Sprintf("%s at %s %s has no deny branch: no deny answer to can_use_tool was captured at that version", c.Fixture, cli, version)
	}
}

// unavailable says why a scenario cannot run at a version, and what can.
func unavailable(cli, version, scenario string) string {
	var have []string
	if set, err := fixtures.AllVersion(cli, version); err == nil {
		for _, f := range set {
			_, _, sc := fixtures.SplitName(f.Name)
			have = append(have, sc)
		}
	} else if all, err := fixtures.All(); err == nil {
		for _, f := range all {
			if c, _, sc := fixtures.SplitName(f.Name); c == cli && versionOf(f.Name) == version {
				have = append(have, sc)
			}
		}
	}
	return fmt.Sprintf("no %s/%s fixture at %s %s: that scenario was not captured at that version (captured there: %s)",
		cli, scenario, cli, version, strings.Join(have, ", "))
}

// hasDenyBranch reports whether a transcript that asks for permission
// has what the CLI does after a deny answer (a case on the answer that
// selects deny); one that never asks has nothing to branch.
func hasDenyBranch(t *transcript.Transcript) bool {
	asks := false
	for _, s := range t.Steps {
		if s.Op != transcript.OpIn || s.Match["type"] != "control_response" {
			continue
		}
		asks = true
		for _, cs := range s.Cases {
			if r, _ := cs.Match["response"].(map[string]any); r != nil {
				if rr, _ := r["response"].(map[string]any); rr != nil && rr["behavior"] == "deny" {
					return true
				}
			}
		}
	}
	return !asks
}

// cliVersions maps each CLI to the versions of the fixtures the cases
// replay (cases that could not run at their version aside).
func cliVersions(cases []*Case) map[string][]string {
	out := map[string][]string{}
	for _, c := range cases {
		v := c.CLIVersion
		if v == "" && c.Fixture != "" {
			v = versionOf(c.Fixture)
		}
		if v == "" || c.Unavailable != "" || slices.Contains(out[c.Agent], v) {
			continue
		}
		out[c.Agent] = append(out[c.Agent], v)
	}
	for k := range out {
		sort.Slice(out[k], func(i, j int) bool { return fixtures.CompareVersions(out[k][i], out[k][j]) < 0 })
	}
	return out
}

// pins is a copy of cfg.CLIVersions for the results, nil when empty.
func (cfg *Config) pins() map[string]string {
	if len(cfg.CLIVersions) == 0 {
		return nil
	}
	out := make(map[string]string, len(cfg.CLIVersions))
	for k, v := range cfg.CLIVersions {
		out[k] = v
	}
	return out
}

var (
	fixtureMu    sync.Mutex
	fixtureCache = map[string]*transcript.Transcript{}
)

// loadFixture loads an embedded fixture once per process: case generation
// asks for the same few dozen many times. The transcript is shared and
// must not be changed.
func loadFixture(name string) (*transcript.Transcript, error) {
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if t, ok := fixtureCache[name]; ok {
		return t, nil
	}
	t, err := fixtures.Load(name)
	if err != nil {
		return nil, err
	}
	fixtureCache[name] = t
	return t, nil
}

// versionOf is the CLI version a fixture was recorded with ("" when it
// cannot be loaded).
func versionOf(name string) string {
	t, err := loadFixture(name)
	if err != nil {
		return ""
	}
	return t.Header.CLIVersion
}
