package capture

import "github.com/agentconform/agentconform/capture/mock"

// unicodeScenario is a text answer in several scripts, for the three
// CLIs' headless runs: characters of two, three and four bytes in UTF-8
// and a combining mark, in three chunks, as the ACP and app-server
// unicode scenarios have them. It is the real twin of the synthesized
// unicode fixtures (and their split-characters variants, whose slicer
// cuts every multibyte character across two reads).
func unicodeScenario() Scenario {
	return Scenario{Name: "unicode", Summary: "a text answer in several scripts (2-, 3- and 4-byte UTF-8, a combining mark)", plan: func(cli string) *plan {
		return &plan{
			description: "A text answer with multibyte UTF-8 (accented Latin, CJK, an emoji with a skin tone, a combining mark) in three chunks; no tools.",
			script:      mock.Script{Turns: []mock.Turn{mock.Text("Grüße, ", "你好, ", "👋🏽 — cafe\u0301.")}},
			procs:       []proc{oneShot(cli, "Greet me in three languages.", false)},
		}
	}}
}

// unknownModelScenario is Codex asked for a model its bundled catalog has
// no metadata for (-m gpt-5.3-codex, the default of an AI SDK provider):
// the notice Codex writes before the turn, then a plain text answer.
func unknownModelScenario() Scenario {
	return Scenario{Name: "unknown-model", Summary: "Codex: -m a model its bundled catalog has no metadata for", plan: func(cli string) *plan {
		if cli != "codex" {
			return nil
		}
		p := codexExec(promptHello)
		p.args = append([]string{"exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "-m", "gpt-5.3-codex"}, p.args[len(p.args)-1])
		return &plan{
			description: "codex exec -m gpt-5.3-codex, a model the bundled models.json has no metadata for: a completed error item (the notice) before the turn, then a text answer.",
			script:      mock.Script{Turns: []mock.Turn{mock.Text("Hello! ", "How can I help you today?")}},
			procs:       []proc{p},
		}
	}}
}
