package reference

import (
	"strings"
	"testing"

	"github.com/agentconform/agentconform/fixtures"
)

// TestCapturesValidate translates every real capture to both profiles and
// validates the output strictly: no violation, no warning, no drift.
func TestCapturesValidate(t *testing.T) {
	for _, agent := range Agents {
		for _, name := range captureNames(t, agent) {
			t.Run(string(agent)+"/"+name, func(t *testing.T) {
				turns := captureTurns(t, agent, name)
				u, _ := unifiedOf(t, agent, turns)
				checkStream(t, name, ProfileUnified, encode(t, u))
				s, _ := shimOf(t, agent, turns)
				checkStream(t, name, ProfileShim, encode(t, s))
			})
		}
	}
}

// TestFixturesValidate does the same for every golden fixture, along each
// scripted branch.
func TestFixturesValidate(t *testing.T) {
	all, err := fixtures.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range all {
		for _, branch := range fixtureBranches(fx.Name) {
			t.Run(fx.Name+"/"+branch, func(t *testing.T) {
				agent, turns := fixtureTurns(t, fx.Name, branch)
				u, _ := unifiedOf(t, agent, turns)
				checkStream(t, fx.Name, ProfileUnified, encode(t, u))
				s, _ := shimOf(t, agent, turns)
				checkStream(t, fx.Name, ProfileShim, encode(t, s))
			})
		}
	}
}

// fixtureBranches are the branches worth walking in a fixture.
func fixtureBranches(name string) []string {
	if strings.Contains(name, "permission") {
		return []string{"allow", "deny"}
	}
	return []string{"default"}
}
