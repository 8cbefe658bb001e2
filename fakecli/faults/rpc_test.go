package faults

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/fixtures/acpfixtures"
	"github.com/agentconform/agentconform/fixtures/appserver"
	"github.com/agentconform/agentconform/transcript"
)

func rpcSteps(t *testing.T, spec string, steps []transcript.Step) ([]transcript.Step, []Applied) {
	t.Helper()
	p, err := Parse(spec, 7)
	if err != nil {
		t.Fatal(err)
	}
	out := p.Steps("", steps)
	return out, p.Applied()
}

// TestRPCFaultsServeBothProtocols: one set of JSON-RPC faults acts on an
// ACP agent's session and on codex app-server's alike, each inserted line
// in the stream's dialect, and the acp_* names are aliases that change
// exactly what their targets with the preset parameters change.
func TestRPCFaultsServeBothProtocols(t *testing.T) {
	acpT, err := acpfixtures.Load("gemini/single-tool")
	if err != nil {
		t.Fatal(err)
	}
	asT, err := appserver.Load("codex/app-server-single-tool")
	if err != nil {
		t.Fatal(err)
	}
	acpSteps, asSteps := acpT.Processes()[0], asT.Processes()[0]
	for alias, target := range map[string]string{
		"acp_answer_twice:nth=1":      "answer_twice:method=session/prompt,nth=1",
		"acp_no_response:nth=1":       "answer_never:nth=1,method=session/prompt",
		"acp_unknown_method:after=4":  "unknown_method:after=4",
		"acp_unknown_request:after=4": "unknown_request:after=4",
	} {
		a, _ := rpcSteps(t, alias, acpSteps)
		b, _ := rpcSteps(t, target, acpSteps)
		if d := cmp.Diff(b, a); d != "" {
			t.Errorf("%s is not %s (-target +alias):\n%s", alias, target, d)
		}
	}
	// The answer to the first session/prompt, written twice: its id is
	// the prompt's (a template of the capture of its "in" step).
	twice, _ := rpcSteps(t, "answer_twice:method=session/prompt,nth=1", acpSteps)
	if n, m := len(outTexts(twice)), len(outTexts(acpSteps)); n != m+1 {
		t.Errorf("answer_twice: %d stdout lines, want %d", n, m+1)
	}
	// On the app-server, method picks the answer to turn/start; any picks
	// initialize's first.
	for spec, want := range map[string]string{"answer_never:method=turn/start,nth=1": `"turn":{`, "answer_never:nth=1": `"userAgent"`} {
		never, applied := rpcSteps(t, spec, asSteps)
		gone := ""
		kept := map[string]bool{}
		for _, s := range outTexts(never) {
			kept[s] = true
		}
		for _, s := range outTexts(asSteps) {
			if !kept[s] {
				gone = s
			}
		}
		if !strings.Contains(gone, want) || len(applied) != 1 {
			t.Errorf("%s dropped %.120q (applied %v), want the answer holding %s", spec, gone, applied, want)
		}
	}
	// Inserted lines speak the stream's dialect.
	for _, tc := range []struct {
		steps []transcript.Step
		open  string
	}{{acpSteps, `{"jsonrpc":"2.0","method":"agentconform/unknown_notification"`}, {asSteps, `{"method":"agentconform/unknown_notification"`}} {
		got, _ := rpcSteps(t, "unknown_method:after=2", tc.steps)
		if texts := outTexts(got); !strings.HasPrefix(texts[2], tc.open) {
			t.Errorf("unknown_method inserted %q, want it to open %s", texts[2], tc.open)
		}
		got, _ = rpcSteps(t, "unknown_request:after=2", tc.steps)
		if texts := outTexts(got); !strings.Contains(texts[2], `"id":"agentconform-1","method":"agentconform/unknown_request"`) {
			t.Errorf("unknown_request inserted %q", texts[2])
		}
	}
	// A stream that is not JSON-RPC is left alone.
	plain := []transcript.Step{{Op: transcript.OpOut, Text: `{"type":"thread.started","thread_id":"t"}`}}
	got, applied := rpcSteps(t, "unknown_method;answer_twice", plain)
	if d := cmp.Diff(plain, got); d != "" || len(applied) != 2 || !strings.Contains(applied[0].Detail, "nothing changed") {
		t.Errorf("a JSONL stream changed (%v): %s", applied, d)
	}
}
