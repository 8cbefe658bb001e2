package fuzz

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fakecli/faults"
	"github.com/agentconform/agentconform/fixtures/acpfixtures"
	"github.com/agentconform/agentconform/transcript"
)

// notForAppServer are the faults of the fakes' catalogue that app-server
// inputs leave out, and why: a new fault must be put in
// appServerOpNames or here (TestVocabularyCoversCatalog).
var notForAppServer = map[string]string{
	"no_final_newline":    "a server that ends mid-line is exit_mid_line",
	"banner":              "no JSON-RPC server writes lines that are not messages",
	"invalid_utf8":        "no JSON-RPC server writes bytes that are not UTF-8",
	"ladder":              "pads the text of a CLI's JSONL event",
	"unknown_type":        "a JSONL event type; the JSON-RPC one is unknown_method",
	"drop":                "any stdout line, requests too; rpc_drop drops a notification",
	"duplicate":           "any stdout line: a request twice is a server reusing its id; rpc_duplicate duplicates a notification",
	"reorder":             "any stdout line; rpc_reorder moves a notification",
	"corrupt_type":        "a JSONL event's type; rpc_rename renames a method",
	"break_pair":          "a CLI's tool ids in its JSONL events",
	"repeat_id":           "a CLI's tool ids in its JSONL events",
	"unknown_block":       "a Claude content block or a Codex exec item",
	"pipe_cut":            "a quirk of Gemini CLI's stdout on a pipe",
	"linger":              "a CLI that goes on writing after SIGINT; a client interrupts the server with turn/interrupt",
	"unknown_request":     "the mutator makes it in ACP sessions, as acp_unknown_request",
	"acp_answer_twice":    "ACP sessions only (gemini --acp): answer_twice:method=session/prompt",
	"acp_no_response":     "ACP sessions only: answer_never:method=session/prompt",
	"acp_unknown_update":  "ACP sessions only",
	"acp_unknown_field":   "ACP sessions only",
	"acp_unknown_method":  "ACP sessions only: unknown_method",
	"acp_unknown_request": "ACP sessions only: unknown_request",
	"volume":              "copies a CLI's JSONL assistant text lines",
	"turns":               "repeats a turn of Claude's stream-json session",
}

// TestAppServerVocabularyCoversCatalog checks the app-server inputs'
// vocabulary against the fakes' catalogue: every fault is in it or left
// out for a reason (notForAppServer), every operation in it is a fault,
// the interrupt or a JSON-RPC edit, and every JSON-RPC fault of the
// catalogue changes the session it is made for: answer_twice,
// answer_never and unknown_method an app-server fixture, the acp_* faults
// an ACP fixture (which an ACP agent that drives `gemini --acp` replays).
func TestAppServerVocabularyCoversCatalog(t *testing.T) {
	catalog := map[string]faults.Info{}
	for _, info := range faults.Catalog() {
		catalog[info.Name] = info
		if info.Kind == "process" {
			continue
		}
		_, left := notForAppServer[info.Name]
		in := slices.Contains(appServerOpNames, info.Name)
		switch {
		case in && left:
			t.Errorf("fault %s is both in the app-server vocabulary and left out of it", info.Name)
		case !in && !left:
			t.Errorf("fault %s is neither in the app-server vocabulary nor left out of it (notForAppServer)", info.Name)
		}
	}
	for _, op := range appServerOpNames {
		if _, ok := catalog[op]; !ok && op != OpInterrupt && !isEdit(op) {
			t.Errorf("app-server operation %s is no fault, interrupt or JSON-RPC edit", op)
		}
	}
	as := loadedFixtures()["codex/app-server-single-tool"]
	acpT, err := acpfixtures.Load("gemini/single-tool")
	if err != nil {
		t.Fatal(err)
	}
	for name, fx := range map[string]*transcript.Transcript{
		"answer_twice": as, "answer_never": as, "unknown_method": as,
		"acp_answer_twice": acpT, "acp_no_response": acpT, "acp_unknown_update": acpT, "acp_unknown_field": acpT,
		"acp_unknown_method": acpT, "acp_unknown_request": acpT,
	} {
		if _, ok := catalog[name]; !ok {
			t.Errorf("the catalogue has no fault %s any more", name)
			continue
		}
		if _, ok := opSpecOf(name); !ok {
			t.Errorf("fault %s is not in the mutator's vocabulary", name)
		}
		plan, err := faults.Parse(name+":nth=1", 1)
		if strings.HasSuffix(name, "unknown_method") || name == "acp_unknown_request" {
			plan, err = faults.Parse(name+":after=3", 1)
		}
		if err != nil {
			t.Fatal(err)
		}
		part := fx.Processes()[0]
		got := plan.Steps(fx.Header.CLI, append([]transcript.Step(nil), part...))
		if reflect.DeepEqual(got, part) {
			t.Errorf("fault %s changes nothing in %s", name, fx.Name)
		}
	}
}

// TestAppServerEncodeDecode checks that the app-server seeds decode to
// themselves, for the app-server agent alone and beside a CLI, and that
// any bytes decode to an app-server input whose operations are the
// surface's and whose fault spec the fakes accept.
func TestAppServerEncodeDecode(t *testing.T) {
	for _, agents := range [][]string{{AgentAppServer}, {"codex", AgentAppServer}} {
		seeds, err := SeedsFor(agents)
		if err != nil {
			t.Fatal(err)
		}
		var want []Input
		for _, s := range Seeds(ExternalSeeds) {
			if strings.HasPrefix(s.Input.Fixture, "codex/") && slices.Contains(agents, "codex") {
				want = append(want, s.Input)
			}
		}
		for _, s := range Seeds(AppServerSeeds) {
			want = append(want, s.Input)
		}
		if len(seeds) != len(want) {
			t.Fatalf("%v: %d seeds, want %d", agents, len(seeds), len(want))
		}
		for i, b := range seeds {
			got := Decode(b, agents)
			if got.Fixture != want[i].Fixture || got.Seed != want[i].Seed || !reflect.DeepEqual(got.Mutations, want[i].Mutations) &&
				len(got.Mutations)+len(want[i].Mutations) > 0 {
				t.Errorf("%v: seed %d decodes to %v, want %v", agents, i, got, want[i])
			}
		}
	}
	allowed := map[string]bool{}
	for _, op := range appServerOpNames {
		allowed[op] = true
	}
	for _, data := range [][]byte{nil, {0}, []byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\xef\xee"),
		[]byte("hello, fuzzer; this is not a spec, and goes on for a while")} {
		in := Decode(data, []string{AgentAppServer})
		if in.Agent() != AgentAppServer {
			t.Errorf("Decode(%q) chose %s, not an app-server fixture", data, in.Fixture)
		}
		for _, m := range in.Mutations {
			if !allowed[m.Op] {
				t.Errorf("Decode(%q) made %s, which is not an app-server operation", data, m.Op)
			}
		}
		if _, err := faults.Parse(in.Spec(), in.Seed); err != nil {
			t.Errorf("Decode(%q) gives a spec the fakes reject: %v", data, err)
		}
		if _, err := CaseOf(in); err != nil {
			t.Errorf("Decode(%q): %v", data, err)
		}
	}
}

// TestEdits checks each JSON-RPC aware edit on an app-server fixture: it
// changes the nth notification (rpc_rename: message with a method) and
// nothing else, and leaves the client's lines alone.
func TestEdits(t *testing.T) {
	fx := loadedFixtures()["codex/app-server-single-tool"]
	notes := 0
	for _, r := range rpcSteps(fx.Steps) {
		if r.kind == transcript.RPCNotification {
			notes++
		}
	}
	outs := func(tr *transcript.Transcript) []string {
		var out []string
		for _, s := range tr.Steps {
			if s.Op == transcript.OpOut {
				out = append(out, s.Text)
			}
		}
		return out
	}
	ins := func(tr *transcript.Transcript) int {
		n := 0
		for _, s := range tr.Steps {
			if s.Op == transcript.OpIn {
				n++
			}
		}
		return n
	}
	before := outs(fx)
	for _, op := range []string{"rpc_drop", "rpc_duplicate", "rpc_reorder", "rpc_rename"} {
		for nth := 1; nth <= notes+1; nth++ {
			in := Input{Fixture: fx.Name, Mutations: []Mutation{{Op: op, Params: []Param{{"nth", strconv.Itoa(nth)}}}}}
			c, err := CaseOf(in)
			if err != nil {
				t.Fatal(err)
			}
			if c.Edits == "" || c.Faults != "" {
				t.Fatalf("%s: edits %q, faults %q", in, c.Edits, c.Faults)
			}
			if ins(c.Transcript) != ins(fx) {
				t.Errorf("%s: the client's steps changed", in)
			}
			after := outs(c.Transcript)
			switch op {
			case "rpc_drop":
				if nth <= notes && len(after) != len(before)-1 || nth > notes && len(after) != len(before) {
					t.Errorf("%s: %d stdout lines, from %d", in, len(after), len(before))
				}
			case "rpc_duplicate":
				if nth <= notes && len(after) != len(before)+1 {
					t.Errorf("%s: %d stdout lines, from %d", in, len(after), len(before))
				}
			case "rpc_rename":
				renamed := 0
				for _, l := range after {
					if strings.Contains(l, `"method":"`+renamedPrefix) {
						renamed++
					}
				}
				if nth <= notes && renamed != 1 {
					t.Errorf("%s: %d methods renamed", in, renamed)
				}
			case "rpc_reorder":
				if len(after) != len(before) {
					t.Errorf("%s: %d stdout lines, from %d", in, len(after), len(before))
				}
				a, b := slices.Clone(before), slices.Clone(after)
				slices.Sort(a)
				slices.Sort(b)
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%s: the lines changed, not only their order", in)
				}
			}
		}
	}
	if !reflect.DeepEqual(outs(fx), before) {
		t.Error("the edits changed the fixture itself")
	}
}
