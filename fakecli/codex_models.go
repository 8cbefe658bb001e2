package fakecli

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentconform/agentconform/transcript"
)

// codexModelCatalog is the models.json Codex bundles, per version: the
// slugs of the models it has metadata for (read from the 0.169.0 and
// 0.171.0 linux-x64 binaries of the npm packages). A model is known when
// its name starts with one of them (gpt-5.5-codex is; gpt-5 and
// gpt-5.3-codex are not, on either version).
var codexModelCatalog = map[string][]string{
	"0.169.0": {"codex-auto-review", "gpt-5.5", "gpt-5.6-luna", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-6-astra", "gpt-6-luna", "gpt-6-sol",
		"gpt-6.1-sol", "gpt-6.1-terra", "gpt-daybreak-blue-latest", "gpt-daybreak-red-latest"},
	"0.171.0": {"codex-auto-review", "gpt-5.5", "gpt-5.6-luna", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-6-astra", "gpt-6-luna", "gpt-6-sol",
		"gpt-6.1-sol", "gpt-6.1-terra", "gpt-6.2-astra", "gpt-6.2-sol", "gpt-daybreak-blue-latest", "gpt-daybreak-red-latest"},
}

// CodexModelUnknown reports whether Codex of version has no metadata for
// model: then, right after thread.started, it writes a completed item of
// type error, "Model metadata for `M` not found. Defaulting to fallback
// metadata; this can degrade performance and cause issues.", as item_0,
// and numbers the turn's items from item_1 (0.171.0 with -m gpt-5.3-codex,
// docs/protocols/codex.md#model-metadata). A version whose catalog is not
// known here, or no model named, is taken as known.
func CodexModelUnknown(version, model string) bool {
	slugs, ok := codexModelCatalog[version]
	if !ok || model == "" {
		return false
	}
	for _, s := range slugs {
		if strings.HasPrefix(model, s) {
			return false
		}
	}
	return true
}

// codexItemID is an item id of exec --json ("item_3").
var codexItemID = regexp.MustCompile(`"id":"item_([0-9]+)"`)

// codexModelNotice is steps with Codex's notice of a model it has no
// metadata for (CodexModelUnknown) after the thread.started line, and
// every later item id one higher.
func codexModelNotice(steps []transcript.Step, version, model string) []transcript.Step {
	if !CodexModelUnknown(version, model) {
		return steps
	}
	msg, _ := json.Marshal("Model metadata for `" + model + "` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.")
	notice := transcript.Step{Op: transcript.OpOut, Text: `{"type":"item.completed","item":{"id":"item_0","type":"error","message":` + string(msg) + `}}`}
	out := make([]transcript.Step, 0, len(steps)+1)
	inserted := false
	for _, st := range steps {
		if inserted && st.Op == transcript.OpOut {
			st.Text = codexItemID.ReplaceAllStringFunc(st.Text, func(m string) string {
				n, _ := strconv.Atoi(codexItemID.FindStringSubmatch(m)[1])
				return `"id":"item_` + strconv.Itoa(n+1) + `"`
			})
		}
		out = append(out, st)
		if !inserted && st.Op == transcript.OpOut && strings.Contains(st.Text, `"type":"thread.started"`) {
			out = append(out, notice)
			inserted = true
		}
	}
	if !inserted {
		return steps
	}
	return out
}

// codexModel is the model an exec invocation names: -m/--model, else the
// last -c model=... override ("" for none: the configuration's).
func codexModel(f *codexFlags) string {
	if f.model != "" {
		return f.model
	}
	model := ""
	for _, c := range f.configs {
		if k, v, ok := strings.Cut(c, "="); ok && strings.TrimSpace(k) == "model" {
			model = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return model
}
