package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/validate"
)

// The output family.
var (
	CheckHello = register(&Check{Family: FamilyOutput, Rule: rule("output/hello", "MUST",
		"The adapter writes one hello record, before any event, naming its profile and agents.", srcHello),
		Applies: always, Judge: judgeHello})
	CheckValid = register(&Check{Family: FamilyOutput, Rule: rule("output/valid", "MUST",
		"Every line the adapter writes is valid for its declared profile: for unified and shim, schema-valid JSON objects in the profile's order with ids paired; for native (the adapter's own view of the CLI's events), JSON objects.", srcProfiles),
		Applies: always, Judge: judgeValid})
	CheckRecords = register(&Check{Family: FamilyOutput, Rule: rule("output/records", "MUST",
		"The adapter writes a turn_end record after every turn it ran and one end record last.", srcRecords),
		Applies: always, Judge: judgeRecords})
)

func judgeHello(o *Observation) Outcome {
	if len(o.Records) == 0 || o.Records[0].Kind != "hello" {
		return failf(`{"agentconform":"hello",...} as the first record`, "no hello record first (records: %s)", recordKinds(o))
	}
	if o.Records[0].EventsBefore > 0 {
		return failf("hello before any event", "%d events came before hello", o.Records[0].EventsBefore)
	}
	if o.Hello.Profile != "unified" && o.Hello.Profile != "shim" && o.Hello.Profile != "native" {
		return failf(`profile "unified", "shim" or "native"`, "profile %q", o.Hello.Profile)
	}
	return pass()
}

func recordKinds(o *Observation) string {
	var k []string
	for _, r := range o.Records {
		k = append(k, r.Kind)
	}
	if len(k) == 0 {
		return "none"
	}
	return strings.Join(k, ", ")
}

// outputDialect is the dialect the adapter's events are validated as.
func outputDialect(o *Observation) schemas.Dialect {
	if o.Hello == nil {
		return ""
	}
	switch o.Hello.Profile {
	case "unified":
		return schemas.UnifiedEvents
	case "shim":
		return schemas.ShimEvents
	case "native":
		d, _ := schemas.ParseDialect(o.Case.Agent)
		return d
	}
	return ""
}

// validateLines validates lines as one stream of dialect d, taking
// decoded[i] as line i's decoding where there is one (validate.LinesDecoded).
// It returns the violations (at most 10, rendered) whose rule is not in
// excused, and the IDs of every rule violated.
func validateLines(lines [][]byte, decoded []validate.Decoded, d schemas.Dialect, excused map[string]bool) ([]string, map[string]bool, error) {
	var problems []string
	rules := map[string]bool{}
	_, err := validate.LinesDecoded(context.Background(), lines, decoded, "adapter", validate.Options{Dialect: d, Jobs: 1, MaxLineBytes: maxAdapterLine},
		func(f finding.Finding, sev finding.Severity) {
			if sev != finding.Violation {
				return
			}
			id := ""
			if f.Rule != nil {
				id = f.Rule.ID
			}
			rules[id] = true
			if excused[id] || len(problems) >= 10 {
				return
			}
			f.File = "adapter event"
			problems = append(problems, f.String())
		})
	return problems, rules, err
}

func judgeValid(o *Observation) Outcome {
	var problems []string
	for _, b := range o.BadLines {
		problems = append(problems, "not a JSON object: "+b)
	}
	if o.Hello != nil && o.Hello.Profile == "native" {
		// A native adapter hands its caller its own view of the CLI's
		// events (re-serialised, with events of its own): each line must
		// be a JSON object; what it carries is the lossless family's to
		// judge, not its shape.
		if len(problems) > 0 {
			return failf("one JSON object per line", "%s", strings.Join(problems, "\n"))
		}
		return pass()
	}
	d := outputDialect(o)
	if d == "" {
		return failf("a declared profile", "no hello, so no profile to validate against")
	}
	if len(o.Events) > 0 {
		raws := make([][]byte, len(o.Events))
		for i, e := range o.Events {
			raws[i] = e.Raw
		}
		ps, _, err := validateLines(raws, decodedEvents(o.Events), d, nil)
		if err != nil {
			problems = append(problems, err.Error())
		}
		problems = append(problems, ps...)
	}
	if len(problems) > 0 {
		return failf("events valid for profile "+o.Hello.Profile, "%s", strings.Join(problems, "\n"))
	}
	return pass()
}

// decodedEvents returns the runner's decodings of the events (their
// objects and findings, as it decoded them when it read them), for
// validateLines to take rather than decode a 64 MiB line once more; nil
// when one of them was not decoded so (an observation made otherwise).
func decodedEvents(events []Event) []validate.Decoded {
	out := make([]validate.Decoded, len(events))
	for i, e := range events {
		if !e.decoded {
			return nil
		}
		out[i] = validate.Decoded{Obj: e.Obj, Findings: e.parsed}
	}
	return out
}

func judgeRecords(o *Observation) Outcome {
	turns := 0
	for _, s := range o.Sent {
		if s.Op == "start" || s.Op == "send" {
			turns++
		}
	}
	if got := len(o.TurnEnds()); got < turns {
		return failf(fmt.Sprintf("%d turn_end records (one per turn started)", turns), "%d turn_end records", got)
	}
	end, ok := o.End()
	if !ok {
		return failf("an end record", "no end record (records: %s)", recordKinds(o))
	}
	if last := o.Records[len(o.Records)-1]; last.Kind != "end" || end.EventsBefore != len(o.Events) {
		return failf("end as the last line", "more output after end")
	}
	return pass()
}
