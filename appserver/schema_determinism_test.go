package appserver

import (
	"reflect"
	"testing"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/transcript"
)

// TestSchemaProblemsDeterministic: a message with more schema problems
// than are reported (five) gets the same five on every run. The
// validator's causes come in map order, and the five used to be the
// first five of that order (found by FuzzAppServer: validate gave
// different findings for the same bytes).
func TestSchemaProblemsDeterministic(t *testing.T) {
	s, err := LoadSchema("")
	if err != nil {
		t.Fatal(err)
	}
	// A thread/start result whose sandbox matches no variant and whose
	// thread lacks members: more than five leaves.
	events := []string{
		`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"c","version":"1"}}}`,
		`{"id":1,"result":{"userAgent":"c","codexHome":"/home/user/.codex","platformFamily":"unix","platformOs":"linux"}}`,
		`{"id":2,"method":"thread/start","params":{}}`,
		`{"id":2,"result":{"thread":{"id":"t"},"model":"m","modelProvider":"p","cwd":"/home/user/project","approvalPolicy":"never",` +
			`"sandbox":{"type":"nonsense","writableRoots":[],"networkAccess":"no"}}}`,
	}
	var first []finding.Finding
	for run := 0; run < 100; run++ {
		var got []finding.Finding
		c := &Checker{Schema: s, Report: func(f finding.Finding) { got = append(got, f) }}
		for i, text := range events {
			dir := FromClient
			if i%2 == 1 {
				dir = FromServer
			}
			m, err := transcript.ParseRPC([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			c.Event(Event{Dir: dir, Text: text, Msg: m, Line: i + 1})
		}
		if run == 0 {
			if len(got) < 5 {
				t.Fatalf("want at least five findings, got %d: %v", len(got), got)
			}
			first = got
			continue
		}
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d: %v\nrun 0: %v", run, got, first)
		}
	}
}
