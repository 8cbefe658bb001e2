package fakecli

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// FuzzFlags feeds arbitrary command lines (NUL-separated) to the three
// flag parsers: they must never panic.
func FuzzFlags(f *testing.F) {
	for _, s := range []string{
		"-p\x00--output-format\x00stream-json\x00--verbose\x00hi",
		"--resume\x00--allowedTools\x00a\x00b\x00-pc",
		"exec\x00--json\x00-i\x00a\x00b\x00resume\x00--last\x00x",
		"-r\x00-o\x00json\x00--outputFormat=text\x00--no-yolo\x00-y",
		"--\x00-x", "-", "---", "--=", "-m",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		cf, _ := parseClaudeFlags(args)
		claudeCheck(&cf, true, true, func(string) string { return "" })
		parseCodexExec(args)
		parseGeminiFlags(args)
	})
}

// FuzzClaudeStdin replays a bidirectional fixture against arbitrary stdin:
// the fake must neither panic nor hang, whatever a client sends.
func FuzzClaudeStdin(f *testing.F) {
	f.Add([]byte(`{"type":"control_request","request_id":"r","request":{"subtype":"initialize"}}` + "\n" + `{"type":"user","message":{"role":"user","content":"x"}}` + "\n"))
	f.Add([]byte(`{"type":"user"}` + "\n" + `{"type":"control_response","response":{"request_id":"0eb4ab58-237f-4561-a5d9-f6ce5b330e45","subtype":"success","response":{"behavior":"deny"}}}` + "\n"))
	f.Add([]byte(`{"type":"control_request","request_id":"r","request":{"subtype":"interrupt"}}` + "\n" + `[1,2]` + "\n" + `{"type":1}` + "\n{"))
	f.Add([]byte("\n\n\x00\xff{}"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, stdin []byte) {
		env := map[string]string{EnvFixture: "claude/permission-deny", EnvSessions: dir}
		var stderr bytes.Buffer
		Run("claude", []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--permission-prompt-tool", "stdio"},
			bytes.NewReader(stdin), io.Discard, &stderr, func(k string) string { return env[k] })
	})
}
