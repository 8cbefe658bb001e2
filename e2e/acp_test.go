//go:build unix

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentconform/agentconform/acp/editor"
	"github.com/agentconform/agentconform/conformance"
)

// TestACPProfile runs the whole battery against a published ACP agent,
// @zed-industries/claude-agent-acp, with no driver: agentconform's editor
// drives it over ACP (run --profile acp), the fake claude under it. Every
// failure must be listed in conformance/drivers/claude-agent-acp/
// acp-profile.baseline with the bug behind it (TRIAGE.md).
func TestACPProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("the battery takes minutes")
	}
	s := sdk{dir: "claude-agent-acp", pkg: "@zed-industries/claude-agent-acp", group: "acp"}
	requireDriver(t, s)
	if os.Geteuid() == 0 && os.Getenv("IS_SANDBOX") != "1" {
		t.Setenv("IS_SANDBOX", "1") // the agent passes --allow-dangerously-skip-permissions
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	agent := nodePath + " " + filepath.Join(driversDir, "node_modules", "@zed-industries", "claude-agent-acp", "dist", "index.js")
	argv := editor.Argv(exe, agent)
	a := conformance.Adapter{Name: s.name(), Profile: "acp",
		Reproduce: "node conformance/drivers/node_modules/@zed-industries/claude-agent-acp/dist/index.js",
		Command: func(ctx context.Context) *exec.Cmd {
			return exec.CommandContext(ctx, argv[0], argv[1:]...)
		}}
	bl, err := conformance.ReadBaseline(filepath.Join(driversDir, s.dir, "acp-profile.baseline"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	// A longer deadline than the zoo's: the agent passes a 64 MiB line
	// through Node twice (the SDK, then ACP), which takes most of 20 s on
	// a loaded machine.
	res, err := conformance.Run(ctx, conformance.Config{Adapter: a, FakeExe: exe, Seed: 1, Timeout: 3 * batteryTimeout, WorkDir: t.TempDir(), Baseline: bl, Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.Meta.Hello; h == nil || h.Protocol != editor.Protocol || len(res.Cases) == 0 {
		t.Fatalf("hello %+v, %d cases", res.Meta.Hello, len(res.Cases))
	}
	logFindings(t, res)
	checkTriage(t, s, res)
}
