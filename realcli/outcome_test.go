package realcli

import (
	"testing"
)

func TestResumeWatch(t *testing.T) {
	var w resumeWatch
	if r := w.server([]byte(`{"id":7,"error":{"code":-32600,"message":"no rollout found for thread id x"}}`)); r != nil {
		t.Errorf("an error with no resume pending: %v", r)
	}
	w.client([]byte(`{"id":7,"method":"thread/resume","params":{"threadId":"5e55104e-0000-4000-8000-0000000ee003"}}`))
	w.client([]byte(`{"id":8,"method":"thread/start","params":{}}`))
	if r := w.server([]byte(`{"id":8,"error":{"code":-32600,"message":"something else"}}`)); r != nil {
		t.Errorf("an error answering thread/start: %v", r)
	}
	r := w.server([]byte(`{"id":7,"error":{"code":-32600,"message":"no rollout found for thread id 5e55104e-0000-4000-8000-0000000ee003"}}`))
	if len(r) != 1 || r[0].kind != "session_error" || r[0].kv[3] != "5e55104e-0000-4000-8000-0000000ee003" {
		t.Fatalf("refusal of thread/resume: %+v", r)
	}
	if r := w.server([]byte(`{"id":7,"error":{"code":-32600,"message":"again"}}`)); r != nil {
		t.Errorf("a second answer to the same request: %v", r)
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		cli, tail string
		code      int
		lines     int
		want      string
	}{
		{"claude", "error: unknown option '--bogus'\n", 1, 0, "flags_error"},
		{"codex", "WARNING: x\nerror: unexpected argument '--bogus' found\n\nUsage: codex exec\n", 2, 0, "flags_error"},
		{"gemini", "Unknown argument: bogus\nUsage: gemini [options]\n", 1, 0, "flags_error"},
		{"claude", "No conversation found with session ID: 5e55104e-0000-4000-8000-0000000ee003\n", 1, 1, "session_error"},
		{"codex", "Error: thread/resume: thread/resume failed: no rollout found for thread id 5e55104e-0000-4000-8000-0000000ee003 (code -32600)\n", 1, 0, "session_error"},
		{"gemini", "Error resuming session: No previous sessions found for this project.\n", 42, 0, "session_error"},
		{"claude", "API Error: 401\n", 1, 3, ""},
	} {
		got := refusals(c.cli, []string{"--resume", "5e55104e-0000-4000-8000-0000000ee003"}, c.code, &summary{StdoutLines: c.lines, StderrTail: c.tail})
		kind := ""
		if len(got) > 0 {
			kind = got[0].kind
		}
		if kind != c.want {
			t.Errorf("%s %q exit %d: %q, want %q", c.cli, c.tail, c.code, kind, c.want)
		}
	}
}

func TestStderrSession(t *testing.T) {
	header := "OpenAI Codex v0.171.0\n--------\nworkdir: /w\nmodel: gpt-5.5\nsession id: 01a2106b-3e44-78a3-8704-3e0820d03feb\n--------\nuser\nhi\n"
	if got := stderrSession("codex", []byte(header)); got != "01a2106b-3e44-78a3-8704-3e0820d03feb" {
		t.Errorf("codex header: %q", got)
	}
	if got := stderrSession("codex", []byte("session id: 01a2106b-3e44")); got != "" {
		t.Errorf("a cut line: %q", got)
	}
	if got := stderrSession("claude", []byte(header)); got != "" {
		t.Errorf("claude: %q", got)
	}
}
