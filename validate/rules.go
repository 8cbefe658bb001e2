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

// Sources of the rules: sections of the protocol reference (docs/protocols)
// that say what each schema or rule enforces and on what evidence.
const (
	srcSpecUnified    = "docs/protocols/spec.md#unified-schema"
	srcSpecNative     = "docs/protocols/spec.md#native-schemas"
	srcUnifiedEvents  = "docs/protocols/unified.md#events"
	srcShimTypes      = "docs/protocols/shim.md#message-types"
	srcClaudeStdout   = "docs/protocols/claude.md#stdout"
	srcClaudeStdin    = "docs/protocols/claude.md#stdin"
	srcCodexEvents    = "docs/protocols/codex.md#events"
	srcGeminiEvents   = "docs/protocols/gemini.md#events"
	srcSchemaProfiles = "docs/protocols/jsonl.md#schema-profiles"
	srcDialects       = "docs/protocols/jsonl.md#dialects"
	srcTranscripts    = "docs/protocols/jsonl.md#transcripts"
)

// schemaSource says where each (profile, dialect) schema comes from.
func schemaSource(p schemas.Profile, d schemas.Dialect) string {
	switch {
	case p == schemas.Spec && d == schemas.UnifiedEvents:
		return srcSpecUnified
	case p == schemas.Spec:
		return srcSpecNative
	case d == schemas.UnifiedEvents:
		return srcUnifiedEvents
	case d == schemas.ShimEvents:
		return srcShimTypes
	case d == schemas.Claude:
		return srcClaudeStdout
	case d == schemas.ClaudeStdin:
		return srcClaudeStdin
	case d == schemas.Codex:
		return srcCodexEvents
	case d == schemas.Gemini:
		return srcGeminiEvents
	}
	return srcSchemaProfiles
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
		Source:      srcDialects,
		Requirement: "A stream must contain events that identify its dialect (claude, codex, gemini, unified or shim)."}
	// RuleNoKnownEvents fires when not one event of a stream is of a type
	// its dialect's schema knows: the stream is of another dialect, or not
	// an event stream at all, and nothing else would say so.
	RuleNoKnownEvents = &finding.Rule{ID: "stream/no-known-events", Level: finding.Must,
		Source:      srcDialects,
		Requirement: "A stream must contain at least one event of a type its dialect defines."}
	// RuleNoSchema records that the chosen profile has no schema for the
	// stream's dialect, so only framing and sequence rules were checked.
	RuleNoSchema = &finding.Rule{ID: "stream/no-schema", Level: finding.Info,
		Source:      srcSchemaProfiles,
		Requirement: "A stream is checked against the schema of its profile where one exists."}
	// RuleTranscriptLine fires on a transcript line that is not a valid
	// transcript record (dir, t_ms, line).
	RuleTranscriptLine = &finding.Rule{ID: "transcript/record", Level: finding.Must,
		Source:      srcTranscripts,
		Requirement: `Every transcript line must be a valid record: an agentconform/v1 header or step, or a capture record with "dir" (in, out, err or meta) and, for in/out/err, a string "line".`}
)
