package main

import (
	"strings"
	"testing"

	"github.com/agentconform/agentconform/capture"
)

// TestPrintDriftWithoutBaseline: a capture with no baseline was only
// validated; the report must not say "no drift" for it.
func TestPrintDriftWithoutBaseline(t *testing.T) {
	var b strings.Builder
	printDrift(&b, capture.Baseline{}, []*capture.DriftReport{
		{CLI: "gemini", Scenario: "acp-load-unknown", Version: "0.61.0"},
		{CLI: "codex", Scenario: "plain-text", Version: "0.169.0", Baseline: "fixture codex/plain-text", BaselineSource: "captured", BaselineVersion: "0.169.0"},
	}, nil)
	out := b.String()
	for _, want := range []string{
		"gemini/acp-load-unknown 0.61.0: no baseline in embedded fixtures, shape not compared (validated only): valid\n",
		"codex/plain-text 0.169.0 vs fixture codex/plain-text (captured 0.169.0): no drift\n",
		"0 of 2 captures drifted from embedded fixtures; 1 had no baseline there and were only validated\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
