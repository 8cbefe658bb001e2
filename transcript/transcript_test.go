package transcript

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentconform/agentconform/schemas"
)

const good = `{"transcript":"agentconform/v1","cli":"claude","cli_version":"2.1.329","scenario":"permission","source":"synthesized","session_id":"s1"}
{"in":{"type":"control_request","request":{"subtype":"initialize"}},"capture":{"init":"/request_id"},"optional":true}
{"out":"{\"type\":\"control_response\",\"response\":{\"subtype\":\"success\",\"request_id\":\"{{init}}\"}}","t":5}
{"on_signal":{"SIGINT":"goto:interrupted","SIGTERM":"exit:143"}}
{"in":{"type":"user"}}
{"out":"{\"type\":\"control_request\",\"request_id\":\"r-1\",\"request\":{\"subtype\":\"can_use_tool\"}}"}
{"in":{"type":"control_response","response":{"request_id":"r-1"}},"cases":[{"match":{"response":{"response":{"behavior":"deny"}}},"goto":"denied"}]}
{"out":"allowed"}
{"goto":"end"}
{"label":"denied"}
{"out":"denied","newline":false}
{"err":"/ul//Q==","base64":true}
{"goto":"end"}
{"label":"interrupted"}
{"err":"interrupted"}
{"label":"end"}
{"delay_ms":10,"capture":{"int":"/request_id"},"cases":[{"match":{"type":"control_request","request":{"subtype":"interrupt"}},"goto":"interrupted"}]}
{"delay_ms":10}
{"stdin_eof":true}
{"exit":0}
`

func TestLoadWriteRoundTrip(t *testing.T) {
	tr, err := Load(strings.NewReader(good), "t.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.CLI != "claude" || tr.Header.SessionID != "s1" || len(tr.Steps) != 19 {
		t.Fatalf("header %+v, %d steps", tr.Header, len(tr.Steps))
	}
	if s := tr.Steps[1]; s.Op != OpOut || s.T == nil || *s.T != 5 || !strings.Contains(s.Text, "{{init}}") {
		t.Errorf("step 2 = %+v", s)
	}
	if s := tr.Steps[5]; s.Op != OpIn || len(s.Cases) != 1 || s.Cases[0].Goto != "denied" {
		t.Errorf("step 6 = %+v", s)
	}
	if got := Labels(tr.Steps); got["end"] != 14 {
		t.Errorf("Labels = %v", got)
	}
	if s := tr.Steps[15]; s.Op != OpDelay || s.Capture["int"] != "/request_id" || len(s.Cases) != 1 || s.Cases[0].Goto != "interrupted" {
		t.Errorf("step 16 = %+v", s)
	}
	if s := tr.Steps[10]; s.Op != OpErr || s.Text != "\xfe\xe9\x7f\xfd" {
		t.Errorf("base64 line decoded to %q", s.Text)
	}
	if b := mustJSON(t, Step{Op: OpOut, Text: "<a & b>"}); b != `{"out":"<a & b>"}` {
		t.Errorf("out line escaped: %s", b)
	}
	if got := Labels(tr.Steps); got["end"] != 14 {
		t.Errorf("Labels = %v", got)
	}
	var buf bytes.Buffer
	if err := Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	again, err := Load(&buf, "again.jsonl", Options{})
	if err != nil {
		t.Fatalf("reading back what Write wrote: %v\n%s", err, buf.String())
	}
	opts := []cmp.Option{cmpopts.IgnoreFields(Step{}, "Line", "Offset"), cmpopts.IgnoreFields(Transcript{}, "Name"), cmpopts.EquateEmpty()}
	if d := cmp.Diff(tr, again, opts...); d != "" {
		t.Errorf("round trip changed the transcript (-first +again):\n%s", d)
	}
}

func TestLoadErrorsSayWhereAndWhat(t *testing.T) {
	head := `{"transcript":"agentconform/v1","cli":"codex","cli_version":"0.169.0"}` + "\n"
	tests := map[string]struct{ in, want string }{
		"two ops":         {head + `{"out":"x","err":"y"}` + "\n" + `{"exit":0}`, "t.jsonl:2: byte 71: a step must have exactly one op key"},
		"exit range":      {head + `{"exit":300}`, "t.jsonl:2: byte 71: at /exit: exit must be a status from 0 to 255"},
		"unknown field":   {head + `{"out":"x","colour":"red"}` + "\n" + `{"exit":0}`, `at /colour: unknown step field "colour"`},
		"bad signal":      {head + `{"on_signal":{"SIGFOO":"ignore"}}` + "\n" + `{"exit":0}`, `at /on_signal/SIGFOO: "SIGFOO" is not a signal name`},
		"bad action":      {head + `{"on_signal":{"SIGTERM":"shrug"}}` + "\n" + `{"exit":0}`, `at /on_signal/SIGTERM: "shrug" is not a signal action`},
		"missing label":   {head + `{"goto":"nowhere"}`, `t.jsonl:2: byte 71: at /goto: no label "nowhere"`},
		"no end":          {head + `{"out":"x"}`, "t.jsonl:2: byte 71: process 1 does not end with exit or exit_signal"},
		"bad header":      {`{"transcript":"agentconform/v1","cli":"cursor","cli_version":"1"}` + "\n" + `{"exit":0}`, `t.jsonl:1: byte 0: at /cli: cli "cursor" is not claude, codex or gemini`},
		"not json":        {head + "{\"out\":\n" + `{"exit":0}`, "t.jsonl:2: byte 71:"},
		"capture on out":  {head + `{"out":"x","capture":{"a":"/b"}}` + "\n" + `{"exit":0}`, `at /capture: capture belongs only to an "in" or a "delay_ms" step`},
		"delay capture":   {head + `{"delay_ms":5,"capture":{"a":"/b"}}` + "\n" + `{"exit":0}`, `at /capture: capture on a "delay_ms" step needs cases`},
		"delay case goto": {head + `{"delay_ms":5,"cases":[{"match":{"type":"x"},"goto":"gone"}]}` + "\n" + `{"exit":0}`, `at /cases/0/goto: no label "gone"`},
		"optional delay":  {head + `{"delay_ms":5,"optional":true}` + "\n" + `{"exit":0}`, `at /optional: optional belongs only to an "in" step`},
		"newline in line": {head + `{"out":"a\nb"}` + "\n" + `{"exit":0}`, "at /out: a line must not contain a newline"},
		"duplicate label": {head + `{"label":"a"}` + "\n" + `{"label":"a"}` + "\n" + `{"exit":0}`, `t.jsonl:3: byte 85: at /label: label "a" is already defined at line 2`},
		"adapter output":  {`{"type":"sessionStarted","id":"1","sessionId":"s","timestamp":"t","agentType":"codex"}`, "a unified stream is an adapter's output"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tt.in), "t.jsonl", Options{})
			if err == nil {
				t.Fatal("Load accepted a bad transcript")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if _, ok := IsErrors(err); !ok {
				t.Errorf("error is not transcript.Errors: %T", err)
			}
		})
	}
}

func TestSchemaAgreesWithLoader(t *testing.T) {
	v, err := schemas.NewSet(schemas.FS()).Compile("transcript/transcript.schema.json", "")
	if err != nil {
		t.Fatal(err)
	}
	valid := func(line string) bool {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		return len(v.Validate(m).Problems) == 0
	}
	for i, line := range strings.Split(strings.TrimSpace(good), "\n") {
		if !valid(line) {
			t.Errorf("schema rejects good line %d: %s\n%+v", i+1, line, v.Validate(mustMap(t, line)).Problems)
		}
	}
	for _, line := range []string{`{"out":"x","err":"y"}`, `{"exit":300}`, `{"out":"x","colour":"red"}`, `{"on_signal":{"SIGTERM":"shrug"}}`,
		`{"out":"x","capture":{"a":"/b"}}`, `{}`, `{"stdin_eof":false}`, `{"in":3}`, `{"delay_ms":5,"capture":{"a":"/b"}}`,
		`{"delay_ms":5,"optional":true}`, `{"out":"x","cases":[{"match":{},"goto":"end"}]}`} {
		if valid(line) {
			t.Errorf("schema accepts bad step %s", line)
		}
		if _, err := Load(strings.NewReader(`{"transcript":"agentconform/v1","cli":"codex","cli_version":"1"}`+"\n"+line+"\n"+`{"exit":0}`), "t", Options{}); err == nil {
			t.Errorf("loader accepts bad step %s", line)
		}
	}
}

func mustMap(t *testing.T, s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoadCaptureTranscript(t *testing.T) {
	tr, err := LoadFile(os.DirFS("../testdata/captures/claude"), "f_bidi_permission_allow.transcript.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := tr.Header
	if h.CLI != "claude" || h.CLIVersion != "2.1.197" || h.Scenario != "f_bidi_permission_allow" || len(h.Argv) == 0 {
		t.Errorf("header = %+v", h)
	}
	for _, e := range h.Env {
		if strings.Contains(e, "=") || strings.HasPrefix(e, "sk-") {
			t.Errorf("header env holds a value: %q", e)
		}
	}
	var ins, outs int
	var initOut string
	for _, s := range tr.Steps {
		switch s.Op {
		case OpIn:
			ins++
		case OpOut:
			outs++
			if initOut == "" && strings.Contains(s.Text, "control_response") {
				initOut = s.Text
			}
		}
	}
	if ins != 3 || outs != 8 {
		t.Errorf("%d in steps and %d out steps, want 3 and 8", ins, outs)
	}
	if !strings.Contains(initOut, `"request_id":"{{req1}}"`) {
		t.Errorf("the initialize response should echo the captured request id, got %.120s", initOut)
	}
	if first := tr.Steps[0]; first.Op != OpIn || first.Capture["req1"] != "/request_id" {
		t.Errorf("first step = %+v", first)
	}
	last := tr.Steps[len(tr.Steps)-1]
	if last.Op != OpExit || last.Code != 0 || tr.Steps[len(tr.Steps)-2].Op != OpStdinEOF {
		t.Errorf("ending = %+v after %+v", last, tr.Steps[len(tr.Steps)-2])
	}
}

func TestLoadPlainCapture(t *testing.T) {
	tr, err := LoadFile(os.DirFS("../testdata/captures/codex"), "c_mixed_items.stdout.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.CLI != "codex" || len(tr.Steps) != 18 || tr.Steps[17].Op != OpExit {
		t.Errorf("header %+v, %d steps", tr.Header, len(tr.Steps))
	}
	data, _ := os.ReadFile("../testdata/captures/codex/c_mixed_items.stdout.jsonl")
	var replay strings.Builder
	for _, s := range tr.Steps {
		if s.Op == OpOut {
			replay.WriteString(s.Text + "\n")
		}
	}
	if replay.String() != string(data) {
		t.Error("a plain capture must replay byte for byte")
	}
}

func TestFillAndMatch(t *testing.T) {
	vars := Vars{"req": `a"b`, "n": 3.0}
	if got := vars.Fill(`{"id":"{{req}}","n":{{n}},"x":"{{unknown}}"}`); got != `{"id":"a\"b","n":3,"x":"{{unknown}}"}` {
		t.Errorf("Fill = %s", got)
	}
	value := map[string]any{"type": "control_response", "response": map[string]any{"request_id": `a"b`, "extra": 1.0}}
	if ok, why := Match(map[string]any{"response": map[string]any{"request_id": "{{req}}"}}, value, vars); !ok {
		t.Errorf("template match failed: %s", why)
	}
	ok, why := Match(map[string]any{"response": map[string]any{"subtype": "success"}}, value, vars)
	if ok || why != "at /response/subtype: missing" {
		t.Errorf("Match = %v, %q", ok, why)
	}
	ok, why = Match(map[string]any{"type": "user"}, value, vars)
	if ok || !strings.Contains(why, `expected "user", found "control_response"`) {
		t.Errorf("Match = %v, %q", ok, why)
	}
	if v, ok := Lookup(value, "/response/request_id"); !ok || v != `a"b` {
		t.Errorf("Lookup = %v %v", v, ok)
	}
}

func mustJSON(t *testing.T, s Step) string {
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
