//go:build agentconform_planted

package reference

// plantedBug plants two translation bugs, for conformance's
// TestPlantedTranslationBug and nothing else: Claude text streamed as
// deltas is said again whole (its assistant line repeated), and each Codex
// turn's usage is the thread's running total instead of the turn's own.
// Both profiles share them, as they share the parsers; a judge whose
// oracle were this translator would find nothing wrong.
const plantedBug = true
