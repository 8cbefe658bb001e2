//go:build unix

package fakecli_test

import (
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

func TestCodexModelNotice(t *testing.T) {
	for _, c := range []struct {
		version, model string
		unknown        bool
	}{
		{"0.171.0", "gpt-5.3-codex", true},
		{"0.171.0", "gpt-5", true},
		{"0.171.0", "o3", true},
		{"0.171.0", "gpt-5.5", false},
		{"0.171.0", "gpt-5.5-codex", false},
		{"0.171.0", "gpt-6.2-sol", false},
		{"0.169.0", "gpt-6.2-sol", true},
		{"0.171.0", "", false},
		{"0.100.0", "gpt-5.3-codex", false}, // a catalog not known here
	} {
		if got := fakecli.CodexModelUnknown(c.version, c.model); got != c.unknown {
			t.Errorf("codexModelUnknown(%s, %q) = %v, want %v", c.version, c.model, got, c.unknown)
		}
	}
	f := fakecli.Start(t, fakecli.Options{Fixture: "codex/single-tool"})
	out := runFake(t, f, "codex", []string{"exec", "--json", "--skip-git-repo-check", "-m", "gpt-5.3-codex", "hi"}, cmdOpts{}).stdout
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "thread.started") ||
		lines[1] != "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"error\",\"message\":\"Model metadata for `gpt-5.3-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.\"}}" {
		t.Fatalf("the notice is not right after thread.started:\n%s", out)
	}
	if strings.Count(out, `"id":"item_0"`) != 1 {
		t.Errorf("item_0 twice: the turn's items are not numbered after the notice:\n%s", out)
	}
}
