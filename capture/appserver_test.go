package capture

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/agentconform/agentconform/transcript"
)

// TestMain lets the test binary act as the fake CLIs when it is started as
// claude, codex or gemini (the app-server captures drive the fake codex).
func TestMain(m *testing.M) { fakecli.Main(m) }

// idTemplate is a client id echoed in a response.
var idTemplate = regexp.MustCompile(`\{\{json:[a-z0-9_]+\}\}`)

// methods lists an app-server transcript's main path as "in M" and
// "out M" (responses as "out ="), notifications of the thread's status,
// token usage, rate limits and output deltas left out (their count varies
// from run to run).
func methods(t *testing.T, tr *transcript.Transcript) []string {
	t.Helper()
	var out []string
	for _, s := range tr.Steps {
		switch s.Op {
		case transcript.OpIn:
			if m, _ := s.Match["method"].(string); m != "" {
				out = append(out, "in "+m)
			} else {
				out = append(out, "in =")
			}
		case transcript.OpOut:
			m, err := transcript.ParseRPC([]byte(idTemplate.ReplaceAllString(s.Text, "0")))
			if err != nil {
				t.Fatalf("line %d is not JSON-RPC: %v", s.Line, err)
			}
			switch {
			case m.Method == "thread/status/changed" || m.Method == "thread/tokenUsage/updated" || m.Method == "account/rateLimits/updated",
				strings.HasSuffix(m.Method, "Delta"): // a command's output comes in as many pieces as the pipe gives
			case m.Method != "":
				out = append(out, "out "+m.Method)
			default:
				out = append(out, "out =")
			}
		case transcript.OpExit, transcript.OpLabel:
			return out
		}
	}
	return out
}

// TestCaptureAppServerFake drives the fake `codex app-server` (replaying
// the plain-text fixture, what it replays with no fixture set) through the
// app-server-plain-text scenario: the capture's JSON-RPC steps are the
// fixture's, ids templated, and it validates clean.
func TestCaptureAppServerFake(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{})
	bin := &Binary{CLI: "codex", Path: f.Path("codex"), Version: "0.169.0", Source: "flag"}
	res, err := Capture(context.Background(), bin, scenario(t, "app-server-plain-text"), Options{WorkDir: t.TempDir(), Timeout: 30 * time.Second, ExitGrace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Processes) != 1 || res.Processes[0].Exit != 0 || res.Processes[0].Killed || res.Processes[0].SessionID == "" {
		t.Fatalf("processes %+v", res.Processes)
	}
	if h := res.Transcript.Header; strings.Join(h.Argv, " ") != "codex app-server" || h.SessionID == "" || h.Source != "captured" {
		t.Errorf("header %+v", h)
	}
	want, err := transcript.ReadFile(filepath.Join("..", "testdata", "captures", "codex", "0.169.0", "app-server-plain-text.jsonl"), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, w := strings.Join(methods(t, res.Transcript), ","), strings.Join(methods(t, want), ","); got != w {
		t.Errorf("captured from the fake:\n%s\nthe real CLI's capture:\n%s", got, w)
	}
	v, err := Validate(context.Background(), res.Transcript, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Violations)+len(v.Warnings) > 0 || !strings.Contains(v.Result.SchemaFile, "appserver/") {
		t.Errorf("validation: %v %v (%s)", v.Violations, v.Warnings, v.Result.SchemaFile)
	}
}

// TestCaptureAppServerE2E captures every app-server scenario from the
// real Codex (AGENTCONFORM_CAPTURE_E2E=1; the codex of the npm cache or
// PATH, installed when missing) and checks each against its committed
// capture: the same JSON-RPC exchange, no violation, no leak.
func TestCaptureAppServerE2E(t *testing.T) {
	if os.Getenv("AGENTCONFORM_CAPTURE_E2E") != "1" {
		t.Skip("set AGENTCONFORM_CAPTURE_E2E=1 to capture the real codex app-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bin, err := Locate(ctx, "codex", LocateOptions{Install: true, Version: os.Getenv("AGENTCONFORM_CAPTURE_E2E_VERSION"), Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range Scenarios() {
		if !IsAppServer(sc.Name) {
			continue
		}
		res, err := Capture(ctx, bin, sc, Options{Log: t.Logf})
		if err != nil {
			t.Errorf("%s: %v", sc.Name, err)
			continue
		}
		for _, l := range res.Leaks {
			t.Errorf("%s: traffic outside loopback: %s", sc.Name, l)
		}
		v, err := Validate(ctx, res.Transcript, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range v.Violations {
			t.Errorf("%s: %s", sc.Name, f)
		}
		want, err := transcript.ReadFile(Path(filepath.Join("..", "testdata", "captures"), "codex", bin.Version, sc.Name), transcript.Options{})
		if err != nil {
			t.Logf("%s: no committed capture of %s to compare with: %v", sc.Name, bin.Version, err)
			continue
		}
		// Client and server run concurrently, and so do parallel
		// commands: compared are each side's messages (as a multiset),
		// the client's in order, and the server's in order but for the
		// item notifications, which parallel commands interleave.
		got, w := methods(t, res.Transcript), methods(t, want)
		if a, b := sorted(got), sorted(w); a != b {
			t.Errorf("%s: the messages differ from the committed capture's:\n%s\n%s", sc.Name, a, b)
		}
		for _, keep := range []func(string) bool{
			func(m string) bool { return strings.HasPrefix(m, "in ") },
			func(m string) bool { return strings.HasPrefix(m, "out ") && !strings.HasPrefix(m, "out item/") },
		} {
			if a, b := strings.Join(filter(got, keep), ","), strings.Join(filter(w, keep), ","); a != b {
				t.Errorf("%s: the order differs from the committed capture's:\n%s\n%s", sc.Name, a, b)
			}
		}
	}
}

// oneSide keeps the entries of one direction ("in " or "out ").
func oneSide(list []string, side string) []string {
	var out []string
	for _, s := range list {
		if strings.HasPrefix(s, side) {
			out = append(out, s)
		}
	}
	return out
}

// filter keeps the entries keep accepts.
func filter(list []string, keep func(string) bool) []string {
	var out []string
	for _, s := range list {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// sorted is the list sorted, joined.
func sorted(list []string) string {
	c := append([]string(nil), list...)
	sort.Strings(c)
	return strings.Join(c, ",")
}

// TestCaptureACPFake drives the fake `gemini --acp` (replaying the ACP
// plain-text fixture, what it replays with no fixture set) through the
// acp-plain-text scenario, as the ACP driver drives the real agent: the
// capture's JSON-RPC exchange is the real CLI's capture's.
func TestCaptureACPFake(t *testing.T) {
	f := fakecli.Start(t, fakecli.Options{})
	bin := &Binary{CLI: "gemini", Path: f.Path("gemini"), Version: "0.61.0", Source: "flag"}
	res, err := Capture(context.Background(), bin, scenario(t, "acp-plain-text"), Options{WorkDir: t.TempDir(), Timeout: 30 * time.Second, ExitGrace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Processes) != 1 || res.Processes[0].Exit != 0 || res.Processes[0].Killed || res.Processes[0].SessionID == "" {
		t.Fatalf("processes %+v", res.Processes)
	}
	want, err := transcript.ReadFile(filepath.Join("..", "testdata", "captures", "gemini", "0.61.0", "acp-plain-text.jsonl"), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, w := strings.Join(methods(t, res.Transcript), ","), strings.Join(methods(t, want), ","); got != w {
		t.Errorf("captured from the fake:\n%s\nthe real CLI's capture:\n%s", got, w)
	}
}
