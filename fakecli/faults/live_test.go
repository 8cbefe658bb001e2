package faults

import (
	"bytes"
	"strings"
	"testing"
)

func TestLiveSupported(t *testing.T) {
	for _, ok := range []string{"", "slicer:max=7,delay_us=300", "latency:ms=30", "bandwidth:bps=32768", "crlf", "no_final_newline", "stderr_flood:bytes=4096", "banner", "start_delay:ms=10", "slicer:utf8=1,delay_us=10000"} {
		if err := LiveSupported(ok); err != nil {
			t.Errorf("LiveSupported(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"die:signal=SIGKILL,after=2", "drop:type=result", "ladder:size=65536", "exit_mid_line:code=1", "stall:after=2", "limit_data:bytes=500", "unknown_type", "launcher:style=codex"} {
		err := LiveSupported(bad)
		if err == nil || !strings.Contains(err.Error(), strings.SplitN(bad, ":", 2)[0]) {
			t.Errorf("LiveSupported(%q) = %v, want an error naming the fault", bad, err)
		}
	}
}

// live runs lines through a Live of spec and returns stdout and stderr.
func live(t *testing.T, spec string, lines ...string) (string, string) {
	t.Helper()
	p, err := Parse(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	l, err := NewLive(p, &out, &errb)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range lines {
		if _, err := l.Line([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	return out.String(), errb.String()
}

func TestLive(t *testing.T) {
	for _, c := range []struct{ spec, out, err string }{
		{"", "a\nb\n", ""},
		{"crlf", "a\r\nb\r\n", ""},
		{"no_final_newline", "a\nb", ""},
		{"banner:text=hi,at=2", "a\nhi\nb\n", ""},
		{"crlf;no_final_newline", "a\r\nb", ""},
	} {
		out, errs := live(t, c.spec, "a\n", "b\n")
		if out != c.out || errs != c.err {
			t.Errorf("%q: stdout %q stderr %q, want %q %q", c.spec, out, errs, c.out, c.err)
		}
	}
	out, errs := live(t, "stderr_flood:bytes=3000", "a\n")
	if out != "a\n" || len(errs) != 3000 || strings.Count(errs, "\n") != 3 {
		t.Errorf("stderr_flood: stdout %q, %d stderr bytes in %d lines, want 3000 in 3", out, len(errs), strings.Count(errs, "\n"))
	}
	if _, err := NewLive(mustPlan(t, "drop:type=result"), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("NewLive accepted drop, a fault a live stream cannot carry")
	}
}

func mustPlan(t *testing.T, spec string) *Plan {
	t.Helper()
	p, err := Parse(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
