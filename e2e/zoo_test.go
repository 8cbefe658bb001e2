//go:build unix

package e2e

import (
	"os"
	"testing"
)

// The zoo: published third-party adapters this project did not write,
// each behind a thin driver in conformance/drivers (README.md there;
// conformance/drivers/TRIAGE.md sorts what the battery finds into the
// libraries' bugs and the battery's false verdicts).
var zoo = []sdk{
	{dir: "codex-cli-provider", pkg: "ai-sdk-provider-codex-cli", group: "zoo"},
	{dir: "codex-app-server-provider", pkg: "ai-sdk-provider-codex-cli", group: "zoo"},
	{dir: "codex-mcp-server", pkg: "codex-mcp-server", group: "zoo"},
	{dir: "gemini-mcp-tool", pkg: "gemini-mcp-tool", group: "zoo"},
	{dir: "claude-code-mcp", pkg: "@steipete/claude-code-mcp", group: "zoo"},
	{dir: "claude-code-sdk-ts", pkg: "@instantlyeasy/claude-code-sdk-ts", group: "zoo"},
	{dir: "claude-agent-acp", pkg: "@zed-industries/claude-agent-acp", group: "zoo"},
	{dir: "acp-ai-provider", pkg: "@mcpc-tech/acp-ai-provider", group: "zoo"},
	{dir: "mcp-gemini-cli", pkg: "@choplin/mcp-gemini-cli", group: "zoo"},
	{dir: "claude-code-provider", pkg: "ai-sdk-provider-claude-code", group: "zoo"},
	// The same libraries shown as an application would show them, in the
	// unified profile: what the lossless checks judge exactly.
	{dir: "claude-code-mcp", pkg: "@steipete/claude-code-mcp", group: "zoo", profile: "unified"},
	{dir: "mcp-gemini-cli", pkg: "@choplin/mcp-gemini-cli", group: "zoo", profile: "unified"},
	{dir: "codex-cli-provider", pkg: "ai-sdk-provider-codex-cli", group: "zoo", profile: "unified"},
}

// TestZoo runs the whole conformance battery against each zoo driver, as
// `agentconform run --adapter 'node conformance/drivers/<name>/driver.mjs'`
// does, and logs what it finds. It fails when the battery cannot run, and
// on every failure the driver's expected.baseline does not list: each
// finding needs a confirmed bug of the library behind it
// (conformance/drivers/TRIAGE.md), or it is a false verdict to fix. With AGENTCONFORM_PUBLISH=1 it writes the results to
// reports/examples/zoo-<name>.json; otherwise it writes nothing in the
// tree.
//
// The subtests run one after another: each battery already runs as many
// cases at once as there are cores.
func TestZoo(t *testing.T) {
	if testing.Short() {
		t.Skip("the zoo batteries take minutes")
	}
	// claude-code-mcp runs `claude --dangerously-skip-permissions`, which the
	// real CLI (and so the fake) refuses as root unless IS_SANDBOX=1. Where
	// the tests run as root (CI containers), the fakes are the sandbox:
	// say so, or every case of that driver fails on the refusal.
	if os.Geteuid() == 0 && os.Getenv("IS_SANDBOX") != "1" {
		t.Setenv("IS_SANDBOX", "1")
	}
	for _, s := range zoo {
		t.Run(s.label(), func(t *testing.T) {
			driver := requireDriver(t, s)
			res := runBattery(t, s, driver)
			logFindings(t, res)
			checkTriage(t, s, res)
			t.Logf("%s %s: %d cases in %.1fs", s.pkg, sdkVersion(s), len(res.Cases), res.Meta.Duration)
			publishResults(t, s, res)
		})
	}
}
