package reports

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// strays lists what besides the report is in dir.
func strays(t *testing.T, dir, report string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Name() != report {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestWriteFileAtomicKeepsOldOrNew: while a report is being written, and
// after a write that fails, the file holds what it held before; after a
// write that succeeds, all of the new report (with the old file's mode).
// writeFile, which WriteResultsFile uses, behaves the same.
func TestWriteFileAtomicKeepsOldOrNew(t *testing.T) {
	for name, write := range map[string]func(string, func(io.Writer) error) error{
		"WriteFileAtomic": WriteFileAtomic,
		"writeFile":       writeFile,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "report.html")
			old := []byte("<p>the old report</p>\n")
			if err := os.WriteFile(path, old, 0o600); err != nil {
				t.Fatal(err)
			}
			boom := errors.New("disk on fire")
			err := write(path, func(w io.Writer) error {
				w.Write(bytes.Repeat([]byte("<p>half of the new report</p>\n"), 10000))
				if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
					t.Errorf("during the write the file holds %d bytes, not the old report", len(got))
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Errorf("err = %v, want the write's error", err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
				t.Errorf("after a failed write the file holds %q, not the old report", clipText(string(got), 80))
			}
			if s := strays(t, dir, "report.html"); len(s) > 0 {
				t.Errorf("a failed write left %v behind", s)
			}

			fresh := bytes.Repeat([]byte("<p>the new report</p>\n"), 50000)
			if err := write(path, func(w io.Writer) error { _, err := w.Write(fresh); return err }); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if !bytes.Equal(got, fresh) {
				t.Errorf("after the write the file holds %d bytes, want the %d of the new report", len(got), len(fresh))
			}
			if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("mode after replacing a 0600 file: %v %v", st.Mode(), err)
			}
			if s := strays(t, dir, "report.html"); len(s) > 0 {
				t.Errorf("a write left %v behind", s)
			}

			// A new file in a new directory gets 0644.
			nested := filepath.Join(dir, "a", "b", "results.json")
			if err := write(nested, func(w io.Writer) error { _, err := io.WriteString(w, "{}\n"); return err }); err != nil {
				t.Fatal(err)
			}
			if st, err := os.Stat(nested); err != nil || st.Mode().Perm() != 0o644 {
				t.Errorf("mode of a new file: %v %v", st, err)
			}
		})
	}
}

// TestWriteFileAtomicSurvivesSIGKILL kills a process in the middle of
// writing a report: the file still holds the old report, whole.
func TestWriteFileAtomicSurvivesSIGKILL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.xml")
	old := []byte("<testsuites name=\"old\"></testsuites>\n")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestAtomicWriterChild$")
	cmd.Env = append(os.Environ(), "REPORTS_ATOMIC_CHILD="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child says "writing" once it has written a few MB.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, "writing") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Errorf("after SIGKILL mid-write the file holds %d bytes (%q...), not the old report", len(got), clipText(string(got), 60))
	}
}

// TestAtomicWriterChild is the process TestWriteFileAtomicSurvivesSIGKILL
// kills: it writes a report that never ends.
func TestAtomicWriterChild(t *testing.T) {
	path := os.Getenv("REPORTS_ATOMIC_CHILD")
	if path == "" {
		t.Skip("run by TestWriteFileAtomicSurvivesSIGKILL")
	}
	WriteFileAtomic(path, func(w io.Writer) error {
		chunk := bytes.Repeat([]byte("<testcase name=\"new\"/>\n"), 4096)
		for i := 0; ; i++ {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
			if i == 40 {
				os.Stdout.WriteString("writing\n")
			}
			if i > 40 {
				time.Sleep(10 * time.Millisecond)
			}
		}
	})
}
