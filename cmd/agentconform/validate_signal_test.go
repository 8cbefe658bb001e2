//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// unifiedLines is n valid unified events, about 100 bytes each.
func unifiedLines(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"id":"ev_0","sessionId":"s1","timestamp":"2025-12-03T10:00:00.000Z","type":"sessionStarted","agentType":"claude","config":{"agentType":"claude","model":"sonnet","approvalMode":"autoAll"}}` + "\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, `{"id":"ev_%d","sessionId":"s1","timestamp":"2025-12-03T10:00:00.000Z","type":"textChunk","content":"chunk %d","isPartial":true,"role":"assistant"}`+"\n", i, i)
	}
	return b.Bytes()
}

// procReadBytes is what the process has read so far (rchar).
func procReadBytes(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// blockedIn reports whether a thread of the process sleeps in the kernel
// function fn (its wchan).
func blockedIn(pid int, fn string) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	for _, t := range tasks {
		if w, _ := os.ReadFile(t); string(w) == fn {
			return true
		}
	}
	return false
}

// TestValidateStopsOnSignal runs the validate command as its own process
// on input that never ends or never comes (a silent stdin pipe, after some
// valid events; a FIFO nobody opens for writing; a FIFO whose writer went
// silent; /dev/zero) and sends SIGINT or SIGTERM once it is reading: it
// exits with 130 or 143 (well within the generous 10 s allowed here),
// prints no verdict, and leaves the --output file as it was.
func TestValidateStopsOnSignal(t *testing.T) {
	exe := agentconformBinary(t)
	events := unifiedLines(2000) // about 250 kB: more than a pipe holds
	type setup struct {
		args  []string
		stdin func(t *testing.T) (r *os.File, cleanup func())
		// ready reports whether the process is reading its input.
		ready func(pid int) bool
	}
	readPast := func(n int64) func(int) bool { return func(pid int) bool { return procReadBytes(pid) > n } }
	// feed writes events to w in the background; the process is reading
	// once the write has gone through (a pipe holds less).
	feed := func(t *testing.T, w *os.File) func(int) bool {
		wrote := make(chan struct{})
		go func() {
			w.Write(events)
			close(wrote)
		}()
		return func(int) bool {
			select {
			case <-wrote:
				return true
			default:
				return false
			}
		}
	}
	cases := map[string]func(t *testing.T, dir string) setup{
		"silent stdin pipe": func(t *testing.T, dir string) setup {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			return setup{args: []string{"-"}, stdin: func(*testing.T) (*os.File, func()) { return r, func() { r.Close() } }, ready: feed(t, w)}
		},
		"FIFO without a writer": func(t *testing.T, dir string) setup {
			fifo := filepath.Join(dir, "events.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			return setup{args: []string{fifo}, ready: func(pid int) bool { return blockedIn(pid, "wait_for_partner") }}
		},
		"FIFO with a silent writer": func(t *testing.T, dir string) setup {
			fifo := filepath.Join(dir, "events.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			// O_RDWR opens without waiting for a reader (Linux).
			w, err := os.OpenFile(fifo, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			return setup{args: []string{fifo}, ready: feed(t, w)}
		},
		"/dev/zero": func(t *testing.T, dir string) setup {
			return setup{args: []string{"/dev/zero"}, ready: readPast(8 << 20)}
		},
	}
	for name, mk := range cases {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(name+"/"+sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				s := mk(t, dir)
				report := filepath.Join(dir, "report.txt")
				if err := os.WriteFile(report, []byte("old report\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				args := []string{"validate"}
				if strings.Contains(name, "pipe") {
					args = append(args, "-o", report)
				}
				cmd := exec.Command(exe, append(args, s.args...)...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if s.stdin != nil {
					r, cleanup := s.stdin(t)
					defer cleanup()
					cmd.Stdin = r
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan struct{})
				go func() { cmd.Wait(); close(exited) }()
				defer func() {
					select {
					case <-exited:
					default:
						cmd.Process.Kill()
						<-exited
					}
				}()
				limit := time.Now().Add(10 * time.Second)
				for !s.ready(cmd.Process.Pid) {
					if time.Now().After(limit) {
						t.Fatalf("validate did not start reading within 10 s; stderr: %s", stderr.String())
					}
					select {
					case <-exited:
						t.Fatalf("validate ended before it was signalled: %v\nstdout: %s\nstderr: %s", cmd.ProcessState, stdout.String(), stderr.String())
					case <-time.After(5 * time.Millisecond):
					}
				}
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					t.Fatalf("validate ignored %v for 10 s\nstdout: %s\nstderr: %s", sig, stdout.String(), stderr.String())
				}
				ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if want := 128 + int(sig); ws.Signaled() || ws.ExitStatus() != want {
					t.Errorf("ended with %v, want exit status %d", cmd.ProcessState, want)
				}
				out := stdout.String()
				if strings.Contains(out, "OK") || strings.Contains(out, "FAIL") {
					t.Errorf("an interrupted run printed a verdict:\n%s", out)
				}
				if !strings.Contains(stderr.String(), "interrupted") {
					t.Errorf("stderr does not say the run was interrupted: %s", stderr.String())
				}
				if got, _ := os.ReadFile(report); string(got) != "old report\n" {
					t.Errorf("the --output file holds %q after the interrupted run", got)
				}
				if left, _ := filepath.Glob(filepath.Join(dir, ".report.txt.*")); len(left) > 0 {
					t.Errorf("temporary files left: %v", left)
				}
			})
		}
	}
}
