package capture

import (
	"bytes"
	"context"
	"fmt"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
	"github.com/agentconform/agentconform/validate"
)

// Verdict is what package validate says about a captured transcript under
// the observed profile.
type Verdict struct {
	// Result is the validator's summary (counts, drift, schema file).
	Result *validate.Result
	// Violations and Warnings are the findings printed per line.
	Violations, Warnings []finding.Finding
}

// OK reports whether the transcript validated with no violation.
func (v *Verdict) OK() bool { return v != nil && len(v.Violations) == 0 }

// Validate validates a capture's transcript as its CLI's stream under the
// observed profile, against the observed schema for the captured version
// (the newest one not newer, as validate picks it); schemaSet nil means
// the embedded schemas.
func Validate(ctx context.Context, t *transcript.Transcript, schemaSet *schemas.Set) (*Verdict, error) {
	var buf bytes.Buffer
	if err := transcript.Write(&buf, t); err != nil {
		return nil, err
	}
	name := t.Name
	if name == "" {
		name = t.Header.CLI + "/" + t.Header.Scenario
	}
	v := &Verdict{}
	res, err := validate.Stream(ctx, &buf, name, validate.Options{Profile: schemas.Observed, Schemas: schemaSet}, func(f finding.Finding, sev finding.Severity) {
		switch sev {
		case finding.Violation:
			v.Violations = append(v.Violations, f)
		case finding.Warning:
			v.Warnings = append(v.Warnings, f)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("capture: validating %s: %w", name, err)
	}
	v.Result = res
	return v, nil
}
