//go:build unix

package fakecli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/fixtures"
)

// TestVersionedFixtures: a fake replaying a fixture of an older CLI
// version claims that version (--version, and the version its events
// carry), and a scenario that version does not have is an error, not
// another version's fixture.
func TestVersionedFixtures(t *testing.T) {
	vs, err := fixtures.Versions("claude")
	if err != nil || len(vs) == 0 {
		t.Fatalf("claude versions: %v %v", vs, err)
	}
	def, err := fixtures.Load("claude/plain-text")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		name := fixtures.VersionName("claude", v, "plain-text")
		f := fakecli.Start(t, fakecli.Options{Fixture: name})
		if r := runFake(t, f, "claude", []string{"--version"}, cmdOpts{}); r.code != 0 || r.stdout != v+" (Claude Code)\n" {
			t.Errorf("%s: --version: exit %d, %q; want %q", name, r.code, r.stdout, v+" (Claude Code)\n")
		}
		r := runFake(t, f, "claude", []string{"-p", "hi", "--output-format", "stream-json", "--verbose"}, cmdOpts{})
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		first, _, _ := strings.Cut(r.stdout, "\n")
		var init struct {
			Type    string `json:"type"`
			Version string `json:"claude_code_version"`
		}
		if err := json.Unmarshal([]byte(first), &init); err != nil || init.Type != "system" || init.Version != v {
			t.Errorf("%s: the first line claims %q (%v): %.200s", name, init.Version, err, first)
		}
	}
	// The default set, as before.
	f := fakecli.Start(t, fakecli.Options{Fixture: "claude/plain-text"})
	if r := runFake(t, f, "claude", []string{"--version"}, cmdOpts{}); r.stdout != def.Header.CLIVersion+" (Claude Code)\n" {
		t.Errorf("default: --version %q, want %s", r.stdout, def.Header.CLIVersion)
	}
	// No such scenario at that version: the harness is told, nothing is replayed.
	f = fakecli.Start(t, fakecli.Options{Fixture: fixtures.VersionName("claude", vs[0], "no-such-scenario")})
	r := runFake(t, f, "claude", []string{"-p", "hi", "--output-format", "stream-json", "--verbose"}, cmdOpts{})
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, `no fixture "claude/`+vs[0]+`/no-such-scenario"`) {
		t.Errorf("missing versioned fixture: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
