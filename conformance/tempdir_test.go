package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTempDir: $TMPDIR wins; without it the case directories go to the
// memory file system when the machine has one with room.
func TestTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir, err := TempDir("agentconform-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "agentconform-test-") {
		t.Errorf("with TMPDIR=%s: %s", tmp, dir)
	}

	t.Setenv("TMPDIR", "")
	dir, err = TempDir("agentconform-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	want := memoryTempRoot()
	if want == "" {
		want = os.TempDir()
	}
	if filepath.Dir(dir) != want {
		t.Errorf("without TMPDIR: %s, want it in %s", dir, want)
	}
	if want == memoryTempRoot() && !strings.HasPrefix(filepath.Base(dir), "agentconform-test-"+ownerTag()) {
		t.Errorf("on the memory file system: %s, want its name to say which process made it (%s)", dir, ownerTag())
	}
}
