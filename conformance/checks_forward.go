package conformance

// The forward family.
var (
	CheckForward = register(&Check{Family: FamilyForward, Rule: rule("forward/no-crash", "MUST",
		"Unknown event types and fields never crash the adapter or fail the turn.", srcForward),
		Applies: needs("", func(c *Case) bool { return c.Expect.Unknown }), Judge: judgeForward})
)

func judgeForward(o *Observation) Outcome {
	if r := judgeEnded(o); !r.OK {
		return r
	}
	return judgeReportsSuccess(o)
}
