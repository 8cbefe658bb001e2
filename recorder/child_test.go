//go:build unix

package recorder

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The test binary doubles as the CLI under recording: started with
// RECORDER_TEST_CHILD=<mode> it behaves as below instead of running tests
// (see TestMain), and started as "codex" with AGENTCONFORM_RECORD_DIR set
// it is the recording shim.

// Made-up credentials the child prints.
var (
	keyA  = "sk-ant-api03-" + strings.Repeat("Kq7_", 12)
	keyB  = "sk-proj-" + strings.Repeat("Zx9", 14)
	email = "dev.person@example.com"
)

const childVersion = "7.8.9"

func childMain(mode string, args []string) int {
	for _, a := range args {
		if a == "--version" {
			if os.Getenv("RECORDER_TEST_NO_VERSION") != "" {
				fmt.Fprintln(os.Stderr, "error: unknown option --version")
				return 1
			}
			fmt.Printf("%s (Test CLI)\n", childVersion)
			return 0
		}
	}
	switch mode {
	case "echo":
		return childEcho()
	case "bytes":
		os.Stdout.Write(childStdout())
		os.Stderr.Write(childStderr())
		return 3
	case "signal":
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		fmt.Println("ready")
		select {
		case s := <-sigs:
			fmt.Printf("got %s\n", signalNames[s.(syscall.Signal)])
			if s == syscall.SIGINT {
				return 130
			}
			return 143
		case <-time.After(time.Minute):
			return 99
		}
	case "die":
		fmt.Println("dying")
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(time.Minute)
		return 99
	case "hang":
		// Ignore the polite signals, start a grandchild in the same
		// process group, and wait to be killed.
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		exe, err := os.Executable()
		if err != nil {
			return 98
		}
		gc := exec.Command(exe)
		gc.Env = append(os.Environ(), "RECORDER_TEST_CHILD=sleep")
		if err := gc.Start(); err != nil {
			fmt.Println("grandchild failed:", err)
			return 98
		}
		fmt.Printf("grandchild %d\n", gc.Process.Pid)
		time.Sleep(time.Minute)
		return 99
	case "closestdin":
		os.Stdin.Close()
		fmt.Println("closed")
		time.Sleep(time.Second)
		return 0
	case "sleep":
		time.Sleep(time.Minute)
		return 99
	case "lines":
		// Print the file RECORDER_TEST_LINES names, as it is.
		data, err := os.ReadFile(os.Getenv("RECORDER_TEST_LINES"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 98
		}
		os.Stdout.Write(data)
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown RECORDER_TEST_CHILD mode", mode)
	return 2
}

// childEcho prints an init line (with secrets, the home and working
// directories unless RECORDER_TEST_PLAIN is set), answers every stdin
// line, and at stdin EOF prints a result and, with RECORDER_TEST_PARTIAL,
// a last line without a newline. It exits with RECORDER_TEST_EXIT.
func childEcho() int {
	plain := os.Getenv("RECORDER_TEST_PLAIN") != ""
	cwd, _ := os.Getwd()
	out := bufio.NewWriter(os.Stdout)
	emit := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	if plain {
		emit(map[string]any{"type": "system", "subtype": "init", "session_id": "sess-42", "model": "m"})
	} else {
		emit(map[string]any{"type": "system", "subtype": "init", "session_id": "sess-42", "cwd": cwd,
			"memory": os.Getenv("HOME") + "/.claude/projects/x", "apiKeySource": "ANTHROPIC_API_KEY"})
		emit(map[string]any{"type": "assistant", "text": "key " + keyA + " and " + keyB + ", mail " + email})
		emit(map[string]any{"type": "assistant", "text": "again " + keyA, "file": cwd + "/main.go"})
		fmt.Fprintf(os.Stderr, "warning: using %s from %s\n", keyA, os.Getenv("HOME"))
	}
	fmt.Fprintln(os.Stderr, "starting")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for in.Scan() {
		n++
		line := in.Text()
		var msg struct {
			Type      string `json:"type"`
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Type == "control_request" {
			emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": msg.RequestID}})
			continue
		}
		emit(map[string]any{"type": "echo", "n": n, "text": line})
	}
	fmt.Fprintf(os.Stderr, "read %d lines\n", n)
	emit(map[string]any{"type": "result", "ok": true})
	if os.Getenv("RECORDER_TEST_PARTIAL") != "" {
		out.WriteString(`{"type":"partial"`)
		out.Flush()
	}
	code, _ := strconv.Atoi(os.Getenv("RECORDER_TEST_EXIT"))
	return code
}

// childStdout is awkward output: CRLF, a blank line, invalid UTF-8, a NUL,
// a long line, written in several writes, ending mid-line.
func childStdout() []byte {
	var b []byte
	b = append(b, "{\"type\":\"a\"}\r\n\n"...)
	b = append(b, "bad \xff\xfe utf-8 and \x00 nul\n"...)
	b = append(b, `{"long":"`...)
	b = append(b, strings.Repeat("x", 300_000)...)
	b = append(b, "\"}\n"...)
	b = append(b, "no newline at the end"...)
	return b
}

func childStderr() []byte {
	return []byte("error: something\r\n\xffraw\npartial")
}
