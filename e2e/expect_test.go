//go:build unix

package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/transcript"
)

// What an SDK must hand its caller is built from what the fake wrote: the
// observation log names, in order, the transcript line of every stdout
// line (0 for a line the fake made up, such as an interrupt's messages),
// so the expected events are the fixture's out lines along the path
// actually taken, decoded, seen through the SDK's documented
// transformations (sdkView). Lines the fake made up are described by the
// test (synthetic), in the order the fake writes them.

// synthetic is one line a fake wrote without a transcript step.
// hostState is a system/session_state_changed line marked
// "sdk_host_only": the TypeScript SDK starts the CLI with
// CLAUDE_CODE_SDK_READS_SESSION_STATE=1 (sdk.mjs), and the real CLI then
// writes "running" first in each turn (before system/init),
// "requires_action" and "running" around a can_use_tool request, and
// "idle" after each result; the SDK reads them to end a run and hands them
// to nobody.
var hostState = synthetic{control: "session_state_changed"}

type synthetic struct {
	// control is the type of a control message, which the SDK consumes
	// and never hands on ("control_response" ...).
	control string
	// event is otherwise the event the SDK must hand on; strings may be
	// wildcards (anyUUID, anyTimestamp, anyMS).
	event any
}

// Wildcards for the fields of made-up lines that take a fresh value on
// every run.
const (
	anyUUID      = "<any uuid>"
	anyTimestamp = "<any timestamp>"
	anyMS        = "<any duration in ms>"
	anyID        = "<any non-empty string>"
)

var (
	uuidRE      = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)
)

// wildcards is the cmp option that lets a wildcard match its kind of value.
var wildcards = cmp.FilterValues(func(x, y any) bool {
	return isWildcard(x) || isWildcard(y)
}, cmp.Comparer(func(x, y any) bool {
	if isWildcard(y) {
		x, y = y, x
	}
	if isWildcard(y) {
		return x == y
	}
	switch x {
	case anyUUID:
		s, ok := y.(string)
		return ok && uuidRE.MatchString(s)
	case anyTimestamp:
		s, ok := y.(string)
		return ok && timestampRE.MatchString(s)
	case anyMS:
		f, ok := y.(float64)
		return ok && f >= 0 && f == float64(int64(f))
	case anyID:
		s, ok := y.(string)
		return ok && s != ""
	}
	return false
}))

func isWildcard(v any) bool {
	s, ok := v.(string)
	return ok && (s == anyUUID || s == anyTimestamp || s == anyMS || s == anyID)
}

// sdkView is what an SDK does to one stdout line of the CLI before its
// caller sees it: the event to expect, or false when the SDK hands nothing
// on for the line.
type sdkView func(t *testing.T, text string) (any, bool)

// claudeView: the Claude Agent SDK reads stdout with readline (no length
// cap), skips blank lines, logs and skips lines that are not JSON
// ("Non-JSON stdout: ..."; sdk.mjs, ProcessTransport.readMessages), and
// its Query consumes the control protocol (control_request,
// control_response, control_cancel_request) and keep_alive itself
// (Query.readMessages); every other message goes to the caller as
// JSON.parse made it.
func claudeView(t *testing.T, text string) (any, bool) {
	if strings.TrimSpace(text) == "" {
		return nil, false
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(text), &ev); err != nil {
		return nil, false
	}
	switch ev["type"] {
	case "control_request", "control_response", "control_cancel_request", "keep_alive":
		return nil, false
	}
	return ev, true
}

// codexView: the Codex SDK hands every line on as JSON.parse made it,
// except that it patches turn.completed usage of older CLIs with
// `parsed.usage.cache_write_input_tokens ??= 0` (dist/index.js,
// Thread.runStreamedInternal). The fixtures are of 0.169.0, which writes
// the field, so the patch changes nothing there; it is applied here so
// that a fixture without the field expects what the SDK does. A line that
// is not JSON ends the stream with an error ("Failed to parse item"), which
// a view cannot express: tests that write one expect it themselves.
func codexView(t *testing.T, text string) (any, bool) {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(text), &ev); err != nil {
		t.Fatalf("codexView: a stdout line that is not JSON (%v): the test must expect the SDK's failure itself", err)
	}
	if ev["type"] == "turn.completed" {
		if u, ok := ev["usage"].(map[string]any); ok {
			if _, has := u["cache_write_input_tokens"]; !has {
				u["cache_write_input_tokens"] = float64(0)
			}
		}
	}
	return ev, true
}

// loadFixture loads a fixture and maps its step lines to the steps.
func loadFixture(t *testing.T, name string) (*transcript.Transcript, map[int]transcript.Step) {
	t.Helper()
	tr, err := fixtures.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return tr, stepsByLine(tr)
}

func stepsByLine(tr *transcript.Transcript) map[int]transcript.Step {
	steps := map[int]transcript.Step{}
	for _, s := range tr.Steps {
		steps[s.Line] = s
	}
	return steps
}

// fixtureEvent decodes the out line at a fixture's step line.
func fixtureEvent(t *testing.T, steps map[int]transcript.Step, at int) map[string]any {
	t.Helper()
	s, ok := steps[at]
	if !ok || s.Op != transcript.OpOut {
		t.Fatalf("the fixture has no out step at line %d", at)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(s.Text), &ev); err != nil {
		t.Fatalf("fixture line %d: %v", at, err)
	}
	return ev
}

// wantEvents is what the SDK must hand its caller, given what the fakes
// wrote (procs, from the observation log), the fixture, the lines the
// fakes made up, and the SDK's view.
func wantEvents(t *testing.T, fixture string, procs []*cliProcess, synth []synthetic, view sdkView) []any {
	t.Helper()
	tr, _ := loadFixture(t, fixture)
	return wantEventsOf(t, tr, procs, synth, view)
}

// wantEventsOf is wantEvents for any transcript.
func wantEventsOf(t *testing.T, tr *transcript.Transcript, procs []*cliProcess, synth []synthetic, view sdkView) []any {
	t.Helper()
	steps := stepsByLine(tr)
	var want []any
	si := 0
	for _, p := range procs {
		for _, at := range p.outSteps() {
			if at == 0 {
				if si >= len(synth) {
					t.Fatalf("the fake made up more stdout lines than the test describes (%d)", len(synth))
				}
				s := synth[si]
				si++
				if s.control == "" {
					want = append(want, s.event)
				}
				continue
			}
			st, ok := steps[at]
			if !ok || st.Op != transcript.OpOut {
				t.Fatalf("the fake wrote transcript line %d, which is no out step", at)
			}
			ev, keep := view(t, st.Text)
			if keep && strings.Contains(st.Text, "{{") {
				// Only control responses carry templates in the fixtures,
				// and the SDKs consume those; anything else would need the
				// fake's captures to predict.
				t.Fatalf("transcript line %d has a template and is an event the SDK hands on", at)
			}
			if keep {
				want = append(want, ev)
			}
		}
	}
	if si != len(synth) {
		t.Fatalf("the test describes %d made-up lines, the fake wrote %d", len(synth), si)
	}
	return want
}

// sameEvents compares what the SDK handed on with what it must have.
func sameEvents(t *testing.T, s sdk, want, got []any) {
	t.Helper()
	if diff := cmp.Diff(want, got, wildcards); diff != "" {
		t.Errorf("%s handed its caller other messages than the CLI wrote (-want +got):\n%s", s.pkg, diff)
	}
}

// samePath requires each fake process to have written the given transcript
// lines (0: a made-up line), in order.
func samePath(t *testing.T, procs []*cliProcess, want ...[]int) {
	t.Helper()
	var got [][]int
	for _, p := range procs {
		got = append(got, p.outSteps())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the fakes took another path through the fixture (stdout lines by transcript line, per process; -want +got):\n%s", diff)
	}
}

// decode decodes one JSON line of a test's own.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return v
}
