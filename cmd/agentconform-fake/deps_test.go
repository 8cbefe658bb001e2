package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLean keeps the fake lean: it starts once per CLI process of every
// case, so a package whose init does work (the JSON Schema compiler
// compiles its meta-schemas at init, a few milliseconds) costs the run
// that much per process. The validators that need it live apart
// (acp/acpschema, appserver), not in what the fake links.
func TestLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/santhosh-tekuri/jsonschema", "golang.org/x/text", "github.com/agentconform/agentconform/appserver", "github.com/agentconform/agentconform/acp/acpschema"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("the fake links %s", dep)
			}
		}
	}
}
