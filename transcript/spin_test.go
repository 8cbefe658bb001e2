package transcript

import (
	"strconv"
	"strings"
	"testing"
)

// TestLoadRejectsLoopsThatSpin: a loop a replay would run without writing,
// reading or sleeping is refused with the file, the line of the step that
// jumps back and what the loop needs; loops that do wait load.
func TestLoadRejectsLoopsThatSpin(t *testing.T) {
	const head = `{"transcript":"agentconform/v1","cli":"codex","cli_version":"1"}` + "\n"
	bad := map[string]struct {
		steps string
		line  int // of the step that jumps back
		from  int // the line it jumps back to
	}{
		"zero delay": {`{"label":"a"}
{"delay_ms":0}
{"goto":"a"}`, 4, 2},
		"goto itself": {`{"out":"x"}
{"label":"a"}
{"goto":"a"}`, 4, 3},
		"on_signal and stdin_eof": {`{"out":"x"}
{"label":"a"}
{"on_signal":{"SIGINT":"exit:130"}}
{"stdin_eof":true}
{"goto":"a"}
{"exit":0}`, 6, 3},
		"two gotos": {`{"in":"go"}
{"label":"a"}
{"goto":"b"}
{"out":"unreachable"}
{"label":"b"}
{"delay_ms":0}
{"goto":"a"}`, 8, 3},
		"second process": {`{"out":"x"}
{"exit":0}
{"next_process":true}
{"label":"b"}
{"goto":"b"}`, 6, 5},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := Load(strings.NewReader(head+tc.steps+"\n"), "loop.jsonl", Options{})
			es, ok := IsErrors(err)
			if !ok {
				t.Fatalf("loaded without error (%v)", err)
			}
			var found *Error
			for _, e := range es {
				if strings.Contains(e.Msg, "spin") {
					found = e
				}
			}
			if found == nil {
				t.Fatalf("no loop error in %v", err)
			}
			msg := found.Error()
			for _, want := range []string{"loop.jsonl:", "loops back to line", "expected an out, err or in step, or a delay_ms above 0, in the loop"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message lacks %q: %s", want, msg)
				}
			}
			if found.Line != tc.line || !strings.Contains(msg, "back to line "+strconv.Itoa(tc.from)) {
				t.Errorf("reported at line %d (%s), want the step at line %d jumping back to %d", found.Line, msg, tc.line, tc.from)
			}
		})
	}

	good := map[string]string{
		"delay": `{"label":"a"}
{"delay_ms":1}
{"goto":"a"}`,
		"read": `{"label":"a"}
{"in":"more","optional":true}
{"goto":"a"}`,
		"write": `{"label":"a"}
{"on_signal":{"SIGINT":"exit:130"}}
{"err":"tick"}
{"goto":"a"}`,
		"signal goto to a label that waits": `{"on_signal":{"SIGINT":"goto:a"}}
{"in":"x"}
{"exit":0}
{"label":"a"}
{"delay_ms":5}
{"goto":"a"}`,
		"forward gotos": `{"goto":"b"}
{"label":"a"}
{"exit":1}
{"label":"b"}
{"goto":"c"}
{"label":"c"}
{"exit":0}`,
	}
	for name, steps := range good {
		t.Run("ok "+name, func(t *testing.T) {
			if _, err := Load(strings.NewReader(head+steps+"\n"), "loop.jsonl", Options{}); err != nil {
				t.Errorf("rejected: %v", err)
			}
		})
	}
}

// TestLoadRejectsGotoAcrossProcesses: labels do not cross next_process.
func TestLoadRejectsGotoAcrossProcesses(t *testing.T) {
	const tr = `{"transcript":"agentconform/v1","cli":"codex","cli_version":"1"}
{"label":"a"}
{"out":"x"}
{"exit":0}
{"next_process":true}
{"out":"y"}
{"goto":"a"}
`
	_, err := Load(strings.NewReader(tr), "x.jsonl", Options{})
	if err == nil || !strings.Contains(err.Error(), "x.jsonl:7:") || !strings.Contains(err.Error(), "another process") {
		t.Errorf("err = %v", err)
	}
}
