//go:build linux

package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepStale: the memory directories of processes that are gone (no
// such pid, a zombie, another process under the pid) are removed; those
// of running processes, of another pid namespace, and every other name
// are left alone.
func TestSweepStale(t *testing.T) {
	root := t.TempDir()
	tag := func(pid int) string {
		st, ok := procStat(pid)
		if !ok {
			t.Fatalf("no /proc/%d/stat", pid)
		}
		return fmt.Sprintf("pid%d.%d.%d-", pidNamespace(), pid, st.start)
	}
	exited := exec.Command("true")
	if err := exited.Start(); err != nil {
		t.Fatal(err)
	}
	exitedTag := tag(exited.Process.Pid)
	exited.Wait()
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zombie.Wait() })
	zombieTag := tag(zombie.Process.Pid)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if st, ok := procStat(zombie.Process.Pid); ok && st.state == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child did not become a zombie")
		}
	}
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	self, _ := procStat(os.Getpid())

	names := map[string]bool{ // name: kept
		"agentconform-run-" + exitedTag + "11":                                                         false,
		"agentconform-run-" + zombieTag + "12":                                                         false,
		"agentconform-run-" + fmt.Sprintf("pid%d.%d.%d-13", pidNamespace(), os.Getpid(), self.start+1): false,
		// Another pid namespace's (a container sharing /dev/shm): its pid
		// means nothing here.
		"agentconform-run-" + fmt.Sprintf("pid%d.%d.%d-19", pidNamespace()+1, exited.Process.Pid, 1): true,
		"agentconform-run-" + ownerTag() + "14":                                                      true,
		"agentconform-fuzz-" + tag(live.Process.Pid) + "15":                                          true,
		"agentconform-run-16":              true, // made without a tag
		"someone-else-" + exitedTag + "17": true,
	}
	for name := range names {
		if err := os.MkdirAll(filepath.Join(root, name, "case"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "agentconform-file-"+exitedTag+"18"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	names["agentconform-file-"+exitedTag+"18"] = true // not a directory

	sweepStale(root)
	for name, kept := range names {
		_, err := os.Stat(filepath.Join(root, name))
		if got := err == nil; got != kept {
			t.Errorf("%s: kept %v, want %v", name, got, kept)
		}
	}
}
