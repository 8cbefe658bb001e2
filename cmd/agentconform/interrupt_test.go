//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunInterrupted interrupts `agentconform run` (SIGINT, as Ctrl-C
// does) once some cases have finished: it exits 130, writes the results
// and the NDJSON end record with the cases that finished, marked
// incomplete, and records none of the cases it stopped (no CRASH or
// TIMEOUT of the adapter for what the interrupt did).
func TestRunInterrupted(t *testing.T) {
	exe := agentconformBinary(t)
	dir := t.TempDir()
	o := func(n string) string { return filepath.Join(dir, n) }
	cmd := exec.Command(exe, "run", "--case", "*/single-tool*", "--jobs", "2", "-o", o("r.json"), "--ndjson", o("r.ndjson"), "--junit", o("r.xml"))
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		n := 0
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "PASS ") || strings.HasPrefix(sc.Text(), "FAIL ") {
				if n++; n == 3 {
					cmd.Process.Signal(syscall.SIGINT)
				}
			}
		}
		done <- cmd.Wait()
	}()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("agentconform run did not end after SIGINT")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130", err)
	}
	b, err := os.ReadFile(o("r.json"))
	if err != nil {
		t.Fatalf("no results written: %v", err)
	}
	var doc struct {
		Runs []struct {
			Meta struct {
				Incomplete bool `json:"incomplete"`
			} `json:"meta"`
			Cases []struct {
				ID      string `json:"id"`
				Verdict string `json:"verdict"`
			} `json:"cases"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) == 0 || !doc.Runs[len(doc.Runs)-1].Meta.Incomplete {
		t.Fatalf("the last run is not marked incomplete: %s", b[:min(len(b), 400)])
	}
	for _, r := range doc.Runs {
		for _, c := range r.Cases {
			if c.Verdict == "CRASH" || c.Verdict == "TIMEOUT" {
				t.Errorf("case %s recorded as %s: the interrupt's doing, not the adapter's", c.ID, c.Verdict)
			}
		}
	}
	nd, _ := os.ReadFile(o("r.ndjson"))
	if !strings.Contains(string(nd), `"kind":"end"`) {
		t.Error("the NDJSON stream has no end record")
	}
	if _, err := os.Stat(o("r.xml")); err != nil {
		t.Errorf("no JUnit written: %v", err)
	}
}
