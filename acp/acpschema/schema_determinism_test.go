package acpschema

import (
	"reflect"
	"testing"

	"github.com/agentconform/agentconform/acp"
)

// TestSchemaProblemDeterministic: a result that breaks the schema in two
// members as deep as each other (here "modes" and "models") is reported
// the same way on every run. The validator's causes come in map order,
// and the finding used to follow it (found by FuzzACP: validate gave
// different findings for the same bytes).
func TestSchemaProblemDeterministic(t *testing.T) {
	sv, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/user/project","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s","modes":{"availableModeX":[],"currentModeId":"default"},` +
			`"models":{"availableModels":[{"modelId":"auto","name":"Auto"},{"modelIX":"x","name":"x"}],"currentModelId":"auto"}}}`,
	}
	var first []acp.SchemaProblem
	for run := 0; run < 100; run++ {
		entries := make([]acp.Entry, len(lines))
		for i, l := range lines {
			from := acp.Client
			if i%2 == 1 {
				from = acp.Agent
			}
			entries[i] = acp.NewEntry(from, []byte(l))
		}
		got := sv.Check(acp.NewTrace(entries))
		if len(got) == 0 {
			t.Fatal("no schema problem found")
		}
		if run == 0 {
			first = got
			continue
		}
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d: %+v\nrun 0: %+v", run, got, first)
		}
	}
}
