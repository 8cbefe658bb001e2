package fakecli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
)

// The wire copy holds exactly what the adapter read, faults included: here
// limit_data cuts stdout mid-line and the copy must end at the same byte.
func TestWireCopyIsWhatStdoutGot(t *testing.T) {
	for _, faults := range []string{"", "limit_data:bytes=200", "slicer:max=3"} {
		wire := t.TempDir()
		f := fakecli.Start(t, fakecli.Options{Fixture: "codex/single-tool", Faults: faults})
		r := runFake(t, f, "codex", []string{"exec", "--json", "--skip-git-repo-check", "list files"},
			cmdOpts{env: []string{fakecli.EnvWire + "=" + wire}})
		obs, err := f.Observations()
		if err != nil || len(obs) == 0 {
			t.Fatalf("observations: %v", err)
		}
		got, err := os.ReadFile(filepath.Join(wire, strconv.Itoa(obs[0].PID)+".out"))
		if err != nil {
			t.Fatalf("faults %q: no wire copy: %v", faults, err)
		}
		if string(got) != r.stdout {
			t.Errorf("faults %q: wire copy (%d bytes) differs from stdout (%d bytes)", faults, len(got), len(r.stdout))
		}
		if faults == "limit_data:bytes=200" && len(got) != 200 {
			t.Errorf("limit_data: wire copy has %d bytes, want 200", len(got))
		}
	}
}
