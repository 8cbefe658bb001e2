package validate

import (
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/schemas"
)

// schemaRules are the rules validate itself enforces for one dialect under
// one profile: the schema rule and the four drift rules.
type schemaRules struct {
	schema                      *finding.Rule
	unknownType, unknownSubtype *finding.Rule
	unknownField, unknownValue  *finding.Rule
	byKind                      map[schemas.DriftKind]*finding.Rule
}

// sources says where each (profile, dialect) schema comes from.
func schemaSource(p schemas.Profile, d schemas.Dialect) string {
	switch {
	case p == schemas.Spec && d == schemas.UnifiedEvents:
		return "seed 000 §8.1"
	case p == schemas.Spec:
		return "seed 000 §8.2"
	case d == schemas.UnifiedEvents:
		return "seed 000 §8.1 (corrected: schemas/unified)"
	case d == schemas.ShimEvents:
		return "seed 001 §1 Canonical Stream JSON"
	case d == schemas.Claude:
		return "protocols.md §1.2"
	case d == schemas.ClaudeStdin:
		return "protocols.md §1.3"
	case d == schemas.Codex:
		return "protocols.md §2.2"
	case d == schemas.Gemini:
		return "protocols.md §3.2"
	}
	return "schemas/README.md"
}

// rulePrefix is the ID prefix of a dialect's rules under a profile: the spec
// profile's rules live apart ("spec/claude/schema") so that a baseline for
// one profile never silences the other.
func rulePrefix(p schemas.Profile, d schemas.Dialect) string {
	if p == schemas.Spec {
		return "spec/" + string(d)
	}
	return string(d)
}

// RulesFor returns the schema and drift rules validate enforces for dialect
// d under profile p (the JSONL and sequence rules are listed by their own
// packages).
func RulesFor(p schemas.Profile, d schemas.Dialect) []*finding.Rule {
	r := newSchemaRules(p, d)
	return []*finding.Rule{r.schema, r.unknownType, r.unknownSubtype, r.unknownField, r.unknownValue}
}

func newSchemaRules(p schemas.Profile, d schemas.Dialect) *schemaRules {
	prefix := rulePrefix(p, d)
	src := schemaSource(p, d)
	r := &schemaRules{
		schema: &finding.Rule{ID: prefix + "/schema", Level: finding.Must, Source: src,
			Requirement: "Every " + string(d) + " event must be valid against the " + string(p) + " schema for its type."},
		unknownType: &finding.Rule{ID: prefix + "/drift/unknown-type", Level: finding.Drift, Source: src,
			Requirement: "Every event type should be one the " + string(p) + " schema knows; consumers must ignore unknown types."},
		unknownSubtype: &finding.Rule{ID: prefix + "/drift/unknown-subtype", Level: finding.Drift, Source: src,
			Requirement: "Every event subtype should be one the " + string(p) + " schema knows; consumers must ignore unknown subtypes."},
		unknownField: &finding.Rule{ID: prefix + "/drift/unknown-field", Level: finding.Drift, Source: src,
			Requirement: "Every field should be one the " + string(p) + " schema declares; consumers must ignore unknown fields."},
		unknownValue: &finding.Rule{ID: prefix + "/drift/unknown-value", Level: finding.Drift, Source: src,
			Requirement: "Every value of an open enumeration should be one the " + string(p) + " schema lists."},
	}
	r.byKind = map[schemas.DriftKind]*finding.Rule{
		schemas.UnknownType: r.unknownType, schemas.UnknownSubtype: r.unknownSubtype,
		schemas.UnknownField: r.unknownField, schemas.UnknownValue: r.unknownValue,
	}
	return r
}

// Stream-level rules that do not belong to one dialect.
var (
	// RuleUnknownDialect fires when no event of a stream says which dialect it is.
	RuleUnknownDialect = &finding.Rule{ID: "stream/unknown-dialect", Level: finding.Must,
		Source:      "seed 000 §2.2 JSONL Format",
		Requirement: "A stream must contain events that identify its dialect (claude, codex, gemini, unified or shim)."}
	// RuleNoKnownEvents fires when not one event of a stream is of a type
	// its dialect's schema knows: the stream is of another dialect, or not
	// an event stream at all, and nothing else would say so.
	RuleNoKnownEvents = &finding.Rule{ID: "stream/no-known-events", Level: finding.Must,
		Source:      "seed 000 §2.2 JSONL Format",
		Requirement: "A stream must contain at least one event of a type its dialect defines."}
	// RuleNoSchema records that the chosen profile has no schema for the
	// stream's dialect, so only framing and sequence rules were checked.
	RuleNoSchema = &finding.Rule{ID: "stream/no-schema", Level: finding.Info,
		Source:      "schemas/README.md",
		Requirement: "A stream is checked against the schema of its profile where one exists."}
	// RuleTranscriptLine fires on a transcript line that is not a valid
	// transcript record (dir, t_ms, line).
	RuleTranscriptLine = &finding.Rule{ID: "transcript/record", Level: finding.Must,
		Source:      "README.md Transcripts; testdata/captures/README.md",
		Requirement: `Every transcript line must be a valid record: an agentconform/v1 header or step, or a capture record with "dir" (in, out, err or meta) and, for in/out/err, a string "line".`}
)
